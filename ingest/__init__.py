"""Collectors and producers: traces, statistics and the workload generator into Kafka."""

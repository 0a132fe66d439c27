"""Advice with evidence: a memory budget across pools, object placement verified by
simulation, thresholds and settings, each with the command to run."""

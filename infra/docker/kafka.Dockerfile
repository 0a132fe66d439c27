# Kafka (KRaft) for docker-compose.yml: the jar set `poolsight install` resolves for the native
# launcher (infra/install.py kafka_lib, KAFKA_VERSION from infra/versions.toml), on Java 17.
# server.properties is written at start from the KAFKA_* variables (kafka-run.sh).
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG KAFKA_VERSION
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 poolsight \
 && useradd --system --uid 10001 --gid poolsight --home-dir /var/lib/kafka poolsight \
 && install -d -o poolsight -g poolsight /var/lib/kafka/data /etc/kafka
COPY .cache/jars/kafka-${KAFKA_VERSION} /opt/kafka/libs
COPY infra/conf/kafka-log4j2.properties /opt/kafka/log4j2.properties
COPY infra/docker/kafka-run.sh /opt/kafka/kafka-run.sh
USER poolsight
CMD ["sh", "/opt/kafka/kafka-run.sh"]

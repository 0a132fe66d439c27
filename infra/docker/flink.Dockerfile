# Flink with PyFlink and the connector jars the native launcher puts in its lib folder.
ARG FLINK_IMAGE
FROM ${FLINK_IMAGE}
ARG FLINK_VERSION
ARG KAFKA_CONNECTOR
ARG FLINK_AVRO
ARG ICEBERG
ARG POSTGRES_JDBC
ARG HADOOP
ARG MAVEN=https://repo.maven.apache.org/maven2
RUN apt-get update && apt-get install -y --no-install-recommends python3 python3-pip python3-venv \
 && python3 -m venv /opt/pyflink && /opt/pyflink/bin/pip install --no-cache-dir apache-flink==${FLINK_VERSION} \
 && rm -rf /var/lib/apt/lists/*
RUN cd /opt/flink/lib \
 && wget -q ${MAVEN}/org/apache/flink/flink-sql-connector-kafka/${KAFKA_CONNECTOR}/flink-sql-connector-kafka-${KAFKA_CONNECTOR}.jar \
 && wget -q ${MAVEN}/org/apache/flink/flink-sql-avro/${FLINK_AVRO}/flink-sql-avro-${FLINK_AVRO}.jar \
 && wget -q ${MAVEN}/org/apache/flink/flink-sql-avro-confluent-registry/${FLINK_AVRO}/flink-sql-avro-confluent-registry-${FLINK_AVRO}.jar \
 && wget -q ${MAVEN}/org/apache/iceberg/iceberg-flink-runtime-2.0/${ICEBERG}/iceberg-flink-runtime-2.0-${ICEBERG}.jar \
 && wget -q ${MAVEN}/org/postgresql/postgresql/${POSTGRES_JDBC}/postgresql-${POSTGRES_JDBC}.jar \
 && wget -q ${MAVEN}/org/apache/hadoop/hadoop-client-api/${HADOOP}/hadoop-client-api-${HADOOP}.jar \
 && wget -q ${MAVEN}/org/apache/hadoop/hadoop-client-runtime/${HADOOP}/hadoop-client-runtime-${HADOOP}.jar
ENV PATH=/opt/pyflink/bin:$PATH

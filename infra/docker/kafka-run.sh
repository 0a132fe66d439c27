#!/bin/sh
# Start one KRaft node: server.properties from the KAFKA_* variables (KAFKA_NODE_ID -> node.id, as
# the official image does), the storage formatted once with CLUSTER_ID (or a new id), then Kafka.
set -eu
props=/etc/kafka/server.properties
: "${KAFKA_LOG_DIRS:=/var/lib/kafka/data}"
export KAFKA_LOG_DIRS
env | sed -n 's/^KAFKA_\([A-Z0-9_]*\)=\(.*\)$/\1=\2/p' | while IFS='=' read -r key value; do
  [ "$key" = HEAP_OPTS ] && continue
  printf '%s=%s\n' "$(echo "$key" | tr 'A-Z_' 'a-z.')" "$value"
done > "$props"
cp="/opt/kafka/libs/*"
if [ ! -f "$KAFKA_LOG_DIRS/meta.properties" ]; then
  id="${CLUSTER_ID:-$(java -cp "$cp" kafka.tools.StorageTool random-uuid | tail -n 1)}"
  java -cp "$cp" kafka.tools.StorageTool format -t "$id" -c "$props"
fi
exec java ${KAFKA_HEAP_OPTS:--Xms768m -Xmx768m -XX:+AlwaysPreTouch} -XX:+UseG1GC -Djava.awt.headless=true \
  -Dlog4j2.configurationFile=/opt/kafka/log4j2.properties -Dkafka.logs.dir=/tmp \
  -cp "$cp" kafka.Kafka "$props"

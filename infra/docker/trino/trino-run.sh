#!/bin/sh
# Trino as the launcher starts it (infra/services.py prepare_trino): the heap from TRINO_HEAP
# (POOLSIGHT_TRINO_HEAP natively), touched whole at start, the launcher's JVM options (infra/conf/trino-jvm.config), a node
# id kept in the data folder, and the generated configuration in /etc/trino.
set -eu
data=/var/lib/trino
[ -f "$data/node-id" ] || cat /proc/sys/kernel/random/uuid > "$data/node-id"
exec java "-Xms${TRINO_HEAP:-4G}" "-Xmx${TRINO_HEAP:-4G}" -XX:+AlwaysPreTouch $(grep -v '^#' /etc/trino/trino-jvm.config) \
  -Dnode.environment=poolsight "-Dnode.id=$(cat "$data/node-id")" "-Dnode.data-dir=$data" \
  "-Dnode.internal-address=${TRINO_INTERNAL_ADDRESS:-trino}" \
  -Dconfig=/etc/trino/config.properties -Dlog.levels-file=/etc/trino/trino-log.properties \
  -cp "/opt/trino/lib/*" io.trino.server.TrinoServer

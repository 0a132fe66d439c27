#!/bin/sh
# The catalog's PostgreSQL: initdb once (local socket trust, TCP scram-sha-256 as the launcher's),
# the catalog role and database created in single-user mode, then the server on every address of
# the container, port PGPORT. The catalog's own tables come from the init service (bootstrap).
set -eu
: "${POOLSIGHT_CATALOG_PASSWORD:?set POOLSIGHT_CATALOG_PASSWORD}"
role="${CATALOG_ROLE:-poolsight}" database="${CATALOG_DATABASE:-iceberg_catalog}"
if [ ! -f "$PGDATA/PG_VERSION" ]; then
  initdb -D "$PGDATA" -U postgres --auth-local=trust --auth-host=scram-sha-256 -E UTF8 --locale=C.UTF-8
  echo "host all all all scram-sha-256" >> "$PGDATA/pg_hba.conf"
  password=$(printf '%s' "$POOLSIGHT_CATALOG_PASSWORD" | sed "s/'/''/g")
  printf "CREATE ROLE \"%s\" WITH LOGIN PASSWORD '%s';\n" "$role" "$password" \
    | postgres --single -D "$PGDATA" -j postgres >/dev/null
  printf 'CREATE DATABASE "%s" OWNER "%s";\n' "$database" "$role" \
    | postgres --single -D "$PGDATA" -j postgres >/dev/null
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -p "${PGPORT:-5433}" -c logging_collector=off

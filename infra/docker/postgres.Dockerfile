# PostgreSQL for the Iceberg JDBC catalog in docker-compose.yml: Debian's postgresql-<major>
# (POSTGRES_MAJOR from infra/versions.toml), as the launcher runs it. postgres-run.sh creates the
# catalog role and database once (as the launcher's bootstrap does), with the password from
# POOLSIGHT_CATALOG_PASSWORD, and listens on the launcher's port.
ARG BASE_IMAGE=debian:bookworm-slim
FROM ${BASE_IMAGE}
ARG POSTGRES_MAJOR
RUN apt-get update && apt-get install -y --no-install-recommends postgresql-${POSTGRES_MAJOR} \
 && rm -rf /var/lib/apt/lists/* \
 && install -d -o postgres -g postgres /var/lib/postgresql/data /var/run/postgresql
ENV PATH=/usr/lib/postgresql/${POSTGRES_MAJOR}/bin:$PATH PGDATA=/var/lib/postgresql/data
COPY infra/docker/postgres-run.sh /usr/local/bin/postgres-run.sh
USER postgres
CMD ["sh", "/usr/local/bin/postgres-run.sh"]

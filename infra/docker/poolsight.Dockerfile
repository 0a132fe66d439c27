# poolsight's own images for docker-compose.yml, built from one Debian base (BASE_IMAGE; under
# podman compose.podman.yml names a local debootstrap image). Two targets:
#   poolsight  the Python services: dashboard, alerts, advice, maintenance
#   flink      the same package and virtualenv + Java 17 + the Flink lib jars of the launcher: the
#              JobManager and TaskManagers (run by poolsight.infra.container), the `init` service
#              (`poolsight up` against the containers) and job submission (`poolsight jobs submit`)
# Every package folder of pyproject.toml's [tool.setuptools.package-dir] is copied; bench/ and tests/
# are not (tests/infra/test_compose.py reads the COPY lines and ../../.dockerignore).
ARG BASE_IMAGE=debian:bookworm-slim

FROM ${BASE_IMAGE} AS build
# `pip install .` builds the simulator's Rust kernel (setuptools-rust): Debian's rustc-web/cargo-web
# (a current Rust in bookworm) and a C linker.
RUN apt-get update && apt-get install -y --no-install-recommends \
      python3 python3-venv gcc libc6-dev rustc-web cargo-web ca-certificates \
 && rm -rf /var/lib/apt/lists/*
# Behind a TLS-intercepting proxy: its CA bundle, mounted into the build (podman build -v), for pip,
# cargo and Python's urllib (bench/compose_check.py passes the host's); nothing of it stays in the image.
ARG PIP_CERT
ARG CARGO_HTTP_CAINFO
ARG SSL_CERT_FILE
COPY pyproject.toml README.md /src/
COPY poolsight /src/poolsight
COPY infra /src/infra
COPY simulator /src/simulator
COPY schemas /src/schemas
COPY ingest /src/ingest
COPY sql /src/sql
COPY flink-jobs /src/flink-jobs
COPY dashboards /src/dashboards
COPY advice /src/advice
RUN python3 -m venv /opt/poolsight && /opt/poolsight/bin/pip install --no-cache-dir /src
# The dashboard serves ECharts from its cache (never a CDN): fetched and verified now, not at run time.
RUN POOLSIGHT_HOME=/var/lib/poolsight /opt/poolsight/bin/python -c \
    "from poolsight.infra.config import load_settings; from poolsight.infra.install import dashboard_assets; \
print(dashboard_assets(load_settings()))"

FROM ${BASE_IMAGE} AS poolsight
RUN apt-get update && apt-get install -y --no-install-recommends python3 ca-certificates \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 poolsight \
 && useradd --system --uid 10001 --gid poolsight --home-dir /var/lib/poolsight --create-home poolsight
COPY --from=build /opt/poolsight /opt/poolsight
COPY --from=build --chown=poolsight:poolsight /var/lib/poolsight/.cache/dashboard /var/lib/poolsight/.cache/dashboard
# POOLSIGHT_HOME: settings, caches, data (var/data: Flink's state, the file:// warehouse) and the
# evaluators' heartbeats (var/run) live here.
ENV PATH=/opt/poolsight/bin:$PATH POOLSIGHT_HOME=/var/lib/poolsight PYTHONUNBUFFERED=1
# Every level owned by poolsight (install -d makes missing parents root's): var/run and var/log are
# created at run time; the volumes mounted on data/flink and data/warehouse take this ownership.
RUN cd /var/lib/poolsight && install -d -o poolsight -g poolsight var var/data var/data/flink var/data/warehouse
USER poolsight
WORKDIR /var/lib/poolsight

FROM poolsight AS flink
USER root
# Flink runs on Java 17 (Hadoop inside Iceberg's Flink path fails on 21+); bash for Flink's scripts.
RUN apt-get update && apt-get install -y --no-install-recommends openjdk-17-jre-headless bash procps \
 && rm -rf /var/lib/apt/lists/*
# The connector, Avro, Iceberg, JDBC and Hadoop jars exactly as `poolsight install` resolved them
# (infra/install.py flink_lib; its .complete stamp included), so flink_lib() finds them and
# links PyFlink's own jars beside them into .cache/flink-<version>-lib.
ARG FLINK_VERSION
COPY --chown=poolsight:poolsight .cache/jars/flink-${FLINK_VERSION}-extra /var/lib/poolsight/.cache/jars/flink-${FLINK_VERSION}-extra
USER poolsight
RUN python -c "from poolsight.infra.config import load_settings; from poolsight.infra.install import flink_lib; \
print(flink_lib(load_settings()))"

# poolsight's own Python services (the dashboard and the alert evaluator) for docker-compose.yml.
# `pip install .` builds the simulator's Rust kernel (setuptools-rust, pyproject.toml), so the
# build stage takes the Rust toolchain from the official rust image and a C linker from Debian;
# the final image holds only the virtualenv and the dashboard's pinned, checked ECharts.
ARG PYTHON_IMAGE=python:3.11-slim
ARG RUST_IMAGE=rust:1.93-slim

FROM ${RUST_IMAGE} AS rust

FROM ${PYTHON_IMAGE} AS build
# rustc links through `cc`: gcc and the C library headers.
RUN apt-get update && apt-get install -y --no-install-recommends gcc libc6-dev \
 && rm -rf /var/lib/apt/lists/*
COPY --from=rust /usr/local/rustup /usr/local/rustup
COPY --from=rust /usr/local/cargo /usr/local/cargo
ENV RUSTUP_HOME=/usr/local/rustup CARGO_HOME=/usr/local/cargo PATH=/usr/local/cargo/bin:$PATH
# Only what the package is built from (see poolsight.Dockerfile.dockerignore).
COPY pyproject.toml README.md /src/
COPY poolsight /src/poolsight
COPY infra /src/infra
COPY simulator /src/simulator
COPY schemas /src/schemas
COPY ingest /src/ingest
COPY sql /src/sql
COPY flink-jobs /src/flink-jobs
COPY dashboards /src/dashboards
RUN python -m venv /opt/poolsight && /opt/poolsight/bin/pip install --no-cache-dir /src
# The dashboard serves ECharts from its cache (never a CDN): fetch and verify it now, not at run time.
RUN POOLSIGHT_HOME=/var/lib/poolsight /opt/poolsight/bin/python -c \
    "from poolsight.infra.config import load_settings; from poolsight.infra.install import dashboard_assets; \
print(dashboard_assets(load_settings()))"

FROM ${PYTHON_IMAGE}
RUN groupadd --system poolsight \
 && useradd --system --gid poolsight --home-dir /var/lib/poolsight --create-home poolsight
COPY --from=build /opt/poolsight /opt/poolsight
COPY --from=build --chown=poolsight:poolsight /var/lib/poolsight/.cache/dashboard /var/lib/poolsight/.cache/dashboard
# POOLSIGHT_HOME: settings, caches and the alert evaluator's heartbeat (var/run/alerts) live here.
ENV PATH=/opt/poolsight/bin:$PATH POOLSIGHT_HOME=/var/lib/poolsight PYTHONUNBUFFERED=1
USER poolsight
WORKDIR /var/lib/poolsight

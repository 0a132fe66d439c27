# Trino for docker-compose.yml: the server tarball `poolsight install` downloads and checks
# (infra/install.py trino_home, TRINO_VERSION from infra/versions.toml), unpacked by ADD (its hard
# links kept) on a Java 24+ (JAVA_IMAGE, as the registry's),
# started as the launcher starts it (infra/services.py prepare_trino; trino-run.sh). Its
# configuration (infra/docker/trino/) is what the launcher writes for the compose addresses
# (tests/infra/test_compose.py compares them).
ARG BASE_IMAGE=debian:bookworm-slim
ARG JAVA_IMAGE=eclipse-temurin:25-jre
FROM ${JAVA_IMAGE} AS java
FROM ${BASE_IMAGE}
ARG TRINO_VERSION
RUN groupadd --system --gid 10001 poolsight \
 && useradd --system --uid 10001 --gid poolsight --home-dir /var/lib/trino poolsight \
 && install -d -o poolsight -g poolsight /var/lib/trino /var/lib/poolsight /var/lib/poolsight/var \
      /var/lib/poolsight/var/data /var/lib/poolsight/var/data/warehouse
COPY --from=java /opt/java/openjdk /opt/java/openjdk
ADD .cache/downloads/trino-server-${TRINO_VERSION}.tar.gz /opt/
RUN ln -s /opt/trino-server-${TRINO_VERSION} /opt/trino
COPY infra/conf/trino-jvm.config infra/conf/trino-log.properties /etc/trino/
COPY infra/docker/trino/ /etc/trino/
ENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:$PATH
USER poolsight
WORKDIR /var/lib/trino
CMD ["sh", "/etc/trino/trino-run.sh"]

# Apicurio Registry for docker-compose.yml: the distribution `poolsight install` unpacks
# (infra/install.py registry_home, REGISTRY_VERSION from infra/versions.toml) on a Java 21+
# (JAVA_IMAGE: a Temurin image; its /opt/java/openjdk is copied). Its options are the
# launcher's (infra/services.py registry_options), given as the service's command.
ARG BASE_IMAGE=debian:bookworm-slim
ARG JAVA_IMAGE=eclipse-temurin:25-jre
FROM ${JAVA_IMAGE} AS java
FROM ${BASE_IMAGE}
ARG REGISTRY_VERSION
RUN groupadd --system --gid 10001 poolsight \
 && useradd --system --uid 10001 --gid poolsight --home-dir /opt/apicurio poolsight
COPY --from=java /opt/java/openjdk /opt/java/openjdk
COPY .cache/apicurio-registry-${REGISTRY_VERSION} /opt/apicurio
ENV JAVA_HOME=/opt/java/openjdk PATH=/opt/java/openjdk/bin:$PATH
USER poolsight
WORKDIR /opt/apicurio

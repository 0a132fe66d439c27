"""An s3:// warehouse's object store: where it is, and how each client logs in to it.

The keys come from POOLSIGHT_S3_ACCESS_KEY / POOLSIGHT_S3_SECRET_KEY or `[s3]` in
poolsight.toml. Without them every client uses the AWS SDK's default chain (the AWS_*
variables, ~/.aws/credentials, an instance profile), as a shop on AWS expects. They reach
Flink's JVMs and the PyFlink clients as the AWS SDK's own variables, and Trino as variables
its catalog file names: never a command line, a file under the runtime folder, or a log.
"""

from __future__ import annotations

from dataclasses import dataclass

from .config import ConfigError, Settings, is_true

S3_SCHEME = "s3://"
DEFAULT_REGION = "us-east-1"
# The variables Trino's catalog file reads the keys from (services.trino_catalog_properties).
TRINO_ACCESS_KEY_ENV, TRINO_SECRET_KEY_ENV = "POOLSIGHT_S3_ACCESS_KEY", "POOLSIGHT_S3_SECRET_KEY"


@dataclass(frozen=True)
class S3Store:
    endpoint: str
    region: str
    path_style: bool  # bucket in the path (S3-compatible servers), not in the host name
    access_key: str | None  # None: the AWS SDK's default credentials chain
    secret_key: str | None

    @property
    def keys(self) -> tuple[str, str] | None:
        """(access key, secret key); None: the AWS SDK's default chain."""
        return (self.access_key, self.secret_key) if self.access_key and self.secret_key else None


def s3_store(s: Settings) -> S3Store | None:
    """The object store of an s3:// warehouse; None for a file:// one."""
    if not s.warehouse.startswith(S3_SCHEME):
        return None
    access, secret = s.s3.get("access_key") or None, s.s3.get("secret_key") or None
    if (access is None) != (secret is None):
        raise ConfigError(
            "an s3:// warehouse needs both POOLSIGHT_S3_ACCESS_KEY and POOLSIGHT_S3_SECRET_KEY, or neither"
        )
    return S3Store(
        endpoint=s.s3["endpoint"],
        region=s.s3.get("region") or DEFAULT_REGION,
        path_style=is_true(s.s3.get("path_style", "true")),
        access_key=access,
        secret_key=secret,
    )


def iceberg_properties(store: S3Store) -> dict[str, str]:
    """Iceberg's S3FileIO in Flink's catalog: no keys (they come from the environment)."""
    return {
        "io-impl": "org.apache.iceberg.aws.s3.S3FileIO",
        "s3.endpoint": store.endpoint,
        "s3.path-style-access": str(store.path_style).lower(),
        "client.region": store.region,
    }


def aws_env(s: Settings) -> dict[str, str]:
    """The AWS SDK's variables for Flink's processes and the PyFlink clients (S3FileIO's
    default credentials chain reads them); empty for a file:// warehouse or no keys."""
    if (store := s3_store(s)) is None or (keys := store.keys) is None:
        return {}
    access, secret = keys
    return {"AWS_ACCESS_KEY_ID": access, "AWS_SECRET_ACCESS_KEY": secret, "AWS_REGION": store.region}


def trino_properties(store: S3Store) -> list[str]:
    """Trino's native S3 file system in the iceberg catalog; the keys by variable name only."""
    lines = [
        "fs.native-s3.enabled=true",
        f"s3.endpoint={store.endpoint}",
        f"s3.region={store.region}",
        f"s3.path-style-access={str(store.path_style).lower()}",
    ]
    if store.keys is not None:
        lines += [
            f"s3.aws-access-key=${{ENV:{TRINO_ACCESS_KEY_ENV}}}",
            f"s3.aws-secret-key=${{ENV:{TRINO_SECRET_KEY_ENV}}}",
        ]
    return lines


def trino_env(s: Settings) -> dict[str, str]:
    """The variables trino_properties names, for Trino's process."""
    if (store := s3_store(s)) is None or (keys := store.keys) is None:
        return {}
    access, secret = keys
    return {TRINO_ACCESS_KEY_ENV: access, TRINO_SECRET_KEY_ENV: secret}

"""An s3:// warehouse's settings reach each engine: the keys by environment only."""

from __future__ import annotations

import pytest

from poolsight.infra.config import ConfigError, load_settings
from poolsight.infra.flinksql import iceberg_catalog_ddl
from poolsight.infra.s3_store import aws_env, s3_store, trino_env
from poolsight.infra.service_security import security
from poolsight.infra.services import trino_catalog_properties


@pytest.fixture
def s3(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("POOLSIGHT_WAREHOUSE", "s3://lake/poolsight")
    monkeypatch.setenv("POOLSIGHT_S3_ENDPOINT", "https://objects.example:9000")
    monkeypatch.setenv("POOLSIGHT_S3_REGION", "eu-west-3")
    monkeypatch.setenv("POOLSIGHT_S3_ACCESS_KEY", "AKIAEXAMPLE")
    monkeypatch.setenv("POOLSIGHT_S3_SECRET_KEY", "s3cr3t/key")
    monkeypatch.setenv("POOLSIGHT_CATALOG_URI", "jdbc:postgresql://pg.example:5432/lake")
    monkeypatch.setenv("POOLSIGHT_CATALOG_PASSWORD", "pw")


@pytest.mark.usefixtures("s3")
def test_flink_writes_through_s3fileio_with_the_keys_in_its_environment() -> None:
    s = load_settings()
    ddl = iceberg_catalog_ddl(s)
    for prop in (
        "'io-impl'='org.apache.iceberg.aws.s3.S3FileIO'",
        "'s3.endpoint'='https://objects.example:9000'",
        "'s3.path-style-access'='true'",
        "'client.region'='eu-west-3'",
        "'warehouse'='s3://lake/poolsight'",
    ):
        assert prop in ddl
    assert "s3cr3t" not in ddl and "AKIAEXAMPLE" not in ddl
    assert aws_env(s) == {
        "AWS_ACCESS_KEY_ID": "AKIAEXAMPLE",
        "AWS_SECRET_ACCESS_KEY": "s3cr3t/key",
        "AWS_REGION": "eu-west-3",
    }


@pytest.mark.usefixtures("s3")
def test_trino_reads_the_keys_by_variable_name() -> None:
    s = load_settings()
    props = trino_catalog_properties(s).splitlines()
    assert [p for p in props if p.startswith(("fs.", "s3."))] == [
        "fs.native-s3.enabled=true",
        "s3.endpoint=https://objects.example:9000",
        "s3.region=eu-west-3",
        "s3.path-style-access=true",
        "s3.aws-access-key=${ENV:POOLSIGHT_S3_ACCESS_KEY}",
        "s3.aws-secret-key=${ENV:POOLSIGHT_S3_SECRET_KEY}",
    ]
    assert trino_env(s) == {"POOLSIGHT_S3_ACCESS_KEY": "AKIAEXAMPLE", "POOLSIGHT_S3_SECRET_KEY": "s3cr3t/key"}
    assert security(s, "warehouse") == "TLS, keys"


@pytest.mark.usefixtures("s3")
def test_without_keys_every_engine_uses_the_aws_default_chain(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POOLSIGHT_S3_ACCESS_KEY")
    monkeypatch.delenv("POOLSIGHT_S3_SECRET_KEY")
    monkeypatch.setenv("POOLSIGHT_S3_PATH_STYLE", "false")
    s = load_settings()
    assert aws_env(s) == {} and trino_env(s) == {}
    props = trino_catalog_properties(s)
    assert "aws-access-key" not in props and "s3.path-style-access=false" in props
    assert "'s3.path-style-access'='false'" in iceberg_catalog_ddl(s)
    assert security(s, "warehouse") == "TLS, AWS default chain"


@pytest.mark.usefixtures("s3")
def test_half_a_key_pair_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POOLSIGHT_S3_SECRET_KEY")
    with pytest.raises(ConfigError, match="both POOLSIGHT_S3_ACCESS_KEY and POOLSIGHT_S3_SECRET_KEY"):
        s3_store(load_settings())


def test_a_file_warehouse_gives_no_s3_settings_anywhere(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("POOLSIGHT_WAREHOUSE", raising=False)
    s = load_settings()
    assert s3_store(s) is None and aws_env(s) == {}
    assert "fs.native-local.enabled=true" in trino_catalog_properties(s)
    assert "S3FileIO" not in iceberg_catalog_ddl(s)
    assert security(s, "warehouse") == "-"

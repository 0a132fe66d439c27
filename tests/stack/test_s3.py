"""An s3:// warehouse end to end, with every service secured: generator -> Kafka (SASL_SSL) ->
Flink -> Iceberg on an S3-compatible object store -> Trino (HTTPS, password), every getpage
exact, and the object store's keys in no command line, log or file.

The object store is moto's S3 server (PyPI, a dev dependency), started here with signature checks
on: its first calls create an IAM user allowed s3:* and that user's keys, and from then on every
request must be signed with them.
The home under test runs its own Kafka with SASL_SSL, registry (its journal on that Kafka), catalog
(PostgreSQL), Flink and Trino on ports of its own, all on the s3:// warehouse.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from poolsight.infra.process import port_in_use
from poolsight.infra.trino import trino_rows
from tests.conftest import ROOT, free_port, poolsight, ports_moved
from tests.stack.conftest import environment, generate, settings_with, truth

pytestmark = [pytest.mark.stack, pytest.mark.usefixtures("stack")]

BUCKET = "poolsight-s3test"
PORTS = ports_moved(7_000)  # not test_launcher_failures' (10_000): one home each
SERVICES = ("kafka", "registry", "flink-taskmanager", "trino")  # and what they need: postgres, the JobManager


@dataclass(frozen=True)
class Home:
    env: dict[str, str]
    root: Path
    endpoint: str
    secret_key: str

    def query(self, sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
        return trino_rows(settings_with(self.env), sql, params)[1]


def _s3(endpoint: str, access: str, secret: str) -> Any:
    import boto3

    return boto3.client(
        "s3", endpoint_url=endpoint, aws_access_key_id=access, aws_secret_access_key=secret, region_name="us-east-1"
    )


_IAM_CALLS = ("create_user", "put_user_policy", "create_access_key")  # unsigned, before the checks start
_ALLOW_S3 = '{"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}'


def _user(endpoint: str) -> tuple[str, str]:
    """The object store's user for poolsight, made by the store's first (unchecked) calls: its keys."""
    import boto3

    iam = boto3.client(
        "iam", endpoint_url=endpoint, aws_access_key_id="x", aws_secret_access_key="x", region_name="us-east-1"
    )
    iam.create_user(UserName="poolsight")
    iam.put_user_policy(UserName="poolsight", PolicyName="s3", PolicyDocument=_ALLOW_S3)
    key = iam.create_access_key(UserName="poolsight")["AccessKey"]
    return str(key["AccessKeyId"]), str(key["SecretAccessKey"])


@pytest.fixture(scope="module")
def home() -> Iterator[Home]:
    root = ROOT / "var" / "test-s3"  # under the project: PostgreSQL's own account must reach it
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    store = subprocess.Popen(
        [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
        stdout=(root / "moto.log").open("w"),
        stderr=subprocess.STDOUT,
        env={**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": str(len(_IAM_CALLS))},
    )
    env = {f"POOLSIGHT_{k}_PORT": str(v) for k, v in PORTS.items()} | {
        "POOLSIGHT_DATA_DIR": str(root / "data"),
        "POOLSIGHT_RUN_DIR": str(root / "run"),
        "POOLSIGHT_LOG_DIR": str(root / "log"),
        # The session's stack runs Kafka in plaintext: here it is SASL_SSL, with the registry's journal on it.
        "POOLSIGHT_KAFKA_SECURITY": "sasl_ssl",
        "POOLSIGHT_WAREHOUSE": f"s3://{BUCKET}/warehouse",
        "POOLSIGHT_S3_ENDPOINT": endpoint,
        # Beside the session's stack: a smaller TaskManager and Trino (the default 4G heap is for
        # page latency; two stacks of the defaults would not fit in the 24 GB the tests run in).
        "POOLSIGHT_FLINK_TM_MEMORY": "3072m",
        "POOLSIGHT_TRINO_HEAP": "2G",
    }
    try:
        deadline = time.monotonic() + 30
        while not port_in_use(port, "127.0.0.1") and time.monotonic() < deadline:
            time.sleep(0.2)
        access, secret = _user(endpoint)
        env |= {"POOLSIGHT_S3_ACCESS_KEY": access, "POOLSIGHT_S3_SECRET_KEY": secret}
        _s3(endpoint, access, secret).create_bucket(Bucket=BUCKET)
        r = poolsight("up", "--no-resume-jobs", *SERVICES, env=env, timeout=600)
        assert r.returncode == 0, f"poolsight up failed:\n{r.stdout}\n{r.stderr}\nlogs in {root / 'log'}"
        yield Home(env=env, root=root, endpoint=endpoint, secret_key=secret)
    finally:
        poolsight("jobs", "cancel", "--all", "--no-savepoint", env=env, timeout=180)
        down = poolsight("down", env=env, timeout=300)
        store.terminate()
        store.wait(timeout=30)
    assert down.returncode == 0, down.stderr
    shutil.rmtree(root, ignore_errors=True)


def _objects(h: Home) -> set[str]:
    """Every key in the bucket, listed by the object store itself."""
    env = h.env
    client = _s3(h.endpoint, env["POOLSIGHT_S3_ACCESS_KEY"], env["POOLSIGHT_S3_SECRET_KEY"])
    keys: set[str] = set()
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=BUCKET):
        keys |= {o["Key"] for o in page.get("Contents", [])}
    return keys


def test_a_stream_lands_in_the_s3_warehouse_exactly(home: Home, tmp_path: Path) -> None:
    r = poolsight("jobs", "submit", "--checkpoint-seconds", "2", "--idle-flush", "5", "--mode", "exact", env=home.env)
    assert r.returncode == 0, f"jobs submit failed:\n{r.stdout}\n{r.stderr}"
    member = f"S{uuid.uuid4().hex[:6].upper()}"
    with environment(home.env):
        generate(member, tmp_path, duration=60)
        produced = generate(member, None, duration=60)
    want = truth(tmp_path / "trace.csv")
    assert sum(want.values()) == produced["getpages"]

    sql = "SELECT pool, sum(getpages) FROM iceberg.poolsight.pool_pane WHERE source = ? GROUP BY pool"
    got: dict[str, int] = {}
    deadline = time.monotonic() + 300
    while True:
        got = {str(p): int(n) for p, n in home.query(sql, (member,))}
        if got == want or time.monotonic() > deadline:
            break
        time.sleep(2)
    assert got == want
    dup = home.query(
        "SELECT count(*) FROM (SELECT pool, pane_start FROM iceberg.poolsight.pool_pane WHERE source = ? "
        "GROUP BY pool, pane_start HAVING count(*) > 1)",
        (member,),
    )
    assert dup == [[0]]

    # The files Iceberg names are the object store's objects; nothing went to a local folder.
    files = [str(f) for (f,) in home.query('SELECT file_path FROM iceberg.poolsight."pool_pane$files"')]
    prefix = f"s3://{BUCKET}/warehouse/poolsight/"
    assert files and all(f.startswith(prefix) for f in files), files[:3]
    objects = _objects(home)
    missing = {f.removeprefix(f"s3://{BUCKET}/") for f in files} - objects
    assert not missing, sorted(missing)[:3]
    assert not (Path(home.env["POOLSIGHT_DATA_DIR"]) / "warehouse").exists()
    assert home.query("SELECT count(*) FROM iceberg.poolsight.dead_letter") == [[0]]


def _read(path: Path) -> bytes:
    """A file's bytes; nothing for a link or a file gone meanwhile (Flink drops old checkpoints
    while the folders are walked)."""
    try:
        return path.read_bytes() if path.is_file() and not path.is_symlink() else b""
    except (FileNotFoundError, IsADirectoryError):
        return b""


def test_the_keys_are_in_no_command_line_log_or_file(home: Home) -> None:
    ps = subprocess.run(["ps", "-eww", "-o", "args"], capture_output=True, text=True, check=True).stdout
    assert str(home.root / "run" / "trino") in ps  # ps sees the home's processes, Trino's among them
    assert home.secret_key not in ps
    # os.walk, not rglob: a folder Flink drops meanwhile is skipped, not an error.
    leaks = [
        f"{top}/{name}"
        for folder in ("POOLSIGHT_RUN_DIR", "POOLSIGHT_LOG_DIR", "POOLSIGHT_DATA_DIR")
        for top, _, names in os.walk(home.env[folder])
        for name in names
        if home.secret_key.encode() in _read(Path(top) / name)
    ]
    assert not leaks
    # Trino's catalog names the variables, not the keys.
    catalog = (Path(home.env["POOLSIGHT_RUN_DIR"]) / "trino" / "etc" / "catalog" / "iceberg.properties").read_text()
    assert "s3.aws-secret-key=${ENV:POOLSIGHT_S3_SECRET_KEY}" in catalog


def test_the_object_store_refuses_a_wrong_key(home: Home) -> None:
    """So the stream above was written and read with the keys the settings gave Flink and Trino."""
    from botocore.exceptions import ClientError

    wrong = _s3(home.endpoint, home.env["POOLSIGHT_S3_ACCESS_KEY"], home.secret_key[::-1])
    with pytest.raises(ClientError, match="SignatureDoesNotMatch"):
        wrong.list_objects_v2(Bucket=BUCKET)


def test_status_shows_the_object_store_and_what_each_service_asks(home: Home) -> None:
    r = poolsight("status", "--json", env=home.env, timeout=120)
    rows = {row["name"]: row for row in json.loads(r.stdout)["services"]}
    assert {k: rows["warehouse"][k] for k in ("kind", "state", "address", "security")} == {
        "kind": "external",
        "state": "healthy",
        "address": home.endpoint,
        "security": "keys",
    }
    assert rows["trino"]["security"] == "TLS, password"
    assert rows["kafka"]["security"] == "TLS, SCRAM-SHA-512; brokers: mutual TLS"

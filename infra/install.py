"""Installing each service's software into the cache folder (idempotent)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from .config import Settings
from .download import DownloadError, fetch, fetch_integrity, maven_jars, maven_url, unpack
from .java import find_java
from .versions import pin, pins


@dataclass(frozen=True)
class Installed:
    """Where each piece of software is; None for a service configured as external (not installed)."""

    kafka_lib: Path | None
    registry_home: Path | None
    trino_home: Path | None
    trino_cli: Path | None
    flink_lib: Path  # PyFlink clients need it even when the cluster is external
    flink_home: Path
    postgres_bin: Path | None
    dashboard_assets: Path


def _java17() -> Path:
    return find_java(exact=int(pins()["java"]["flink"]), purpose="Kafka, Flink and Maven").home


def kafka_lib(s: Settings) -> Path:
    scala, version = pin("kafka", "scala"), pin("kafka")
    deps = [
        f"org.apache.kafka:kafka_{scala}:{version}",
        f"org.apache.logging.log4j:log4j-slf4j-impl:{pin('kafka', 'log4j')}",
    ]
    return maven_jars(f"kafka-{version}", deps, s.cache_dir, transitive=True, java_home=_java17())


def registry_home(s: Settings) -> Path:
    version = pin("registry")
    coords = f"io.apicurio:apicurio-registry-app:{version}:all:tar.gz"
    archive = fetch(maven_url(coords), s.cache_dir / "downloads" / f"apicurio-registry-{version}.tar.gz")
    return unpack(archive, s.cache_dir / f"apicurio-registry-{version}")


def trino_home(s: Settings) -> tuple[Path, Path]:
    version = pin("trino")
    archive = fetch(
        maven_url(f"io.trino:trino-server:{version}:tar.gz"),
        s.cache_dir / "downloads" / f"trino-server-{version}.tar.gz",
    )
    cli = fetch(
        maven_url(f"io.trino:trino-cli:{version}:executable:jar"),
        s.cache_dir / "downloads" / f"trino-cli-{version}.jar",
    )
    return unpack(archive, s.cache_dir / f"trino-server-{version}"), cli


def pyflink_home() -> Path:
    try:
        # lazy: PyFlink takes seconds to load; only Flink's steps need its home
        import pyflink
    except ImportError as exc:
        raise DownloadError("PyFlink is not installed in this Python: run `make install`") from exc
    home = Path(pyflink.__file__).parent
    version = pin("flink")
    if not (home / "lib" / f"flink-dist-{version}.jar").exists():
        raise DownloadError(f"PyFlink at {home} is not Flink {version}: run `make install`")
    return home


def flink_lib(s: Settings) -> Path:
    """The cluster's lib folder: PyFlink's own jars plus connectors, Iceberg, JDBC and Hadoop."""
    f = pins()["flink"]
    deps = [
        f"org.apache.flink:flink-sql-connector-kafka:{f['kafka_connector']}",
        f"org.apache.flink:flink-sql-avro:{f['avro']}",
        f"org.apache.flink:flink-sql-avro-confluent-registry:{f['avro']}",
        f"org.apache.iceberg:iceberg-flink-runtime-2.0:{f['iceberg']}",
        # S3FileIO and the AWS SDK it uses: an s3:// warehouse (infra/flinksql.py).
        f"org.apache.iceberg:iceberg-aws-bundle:{f['iceberg']}",
        f"org.postgresql:postgresql:{f['postgres_jdbc']}",
        # Hadoop goes on the JVM classpath (lib/), never pipeline.jars: Flink
        # loads org.apache.hadoop.* parent-first.
        f"org.apache.hadoop:hadoop-client-api:{f['hadoop']}",
        f"org.apache.hadoop:hadoop-client-runtime:{f['hadoop']}",
    ]
    extra = maven_jars(f"flink-{f['version']}-extra", deps, s.cache_dir, transitive=False, java_home=_java17())
    lib = s.cache_dir / f"flink-{f['version']}-lib"
    home = pyflink_home()
    # flink-python runs the PyFlink DataStream operators on the cluster.
    jars = [*(home / "lib").glob("*.jar"), *(home / "opt").glob("flink-python-*.jar"), *extra.glob("*.jar")]
    wanted = {p.name: p for p in jars}
    lib.mkdir(parents=True, exist_ok=True)
    for stale in lib.iterdir():
        if stale.name not in wanted or stale.resolve() != wanted[stale.name].resolve():
            stale.unlink()
    for name, target in wanted.items():
        if not (lib / name).exists():
            (lib / name).symlink_to(target)
    return lib


def postgres_bin() -> Path:
    major = pin("postgres", "major")
    bin_dir = Path(f"/usr/lib/postgresql/{major}/bin")
    if (bin_dir / "postgres").exists():
        return bin_dir
    if shutil.which("apt-get") and _is_root():
        print(f"installing PostgreSQL {major} from Debian packages", file=sys.stderr)
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", f"postgresql-{major}"]):
            if subprocess.run(cmd, env=env).returncode != 0:
                raise DownloadError(f"`{' '.join(cmd)}` failed: install postgresql-{major} by hand")
    if not (bin_dir / "postgres").exists():
        raise DownloadError(f"PostgreSQL {major} not found at {bin_dir}: apt-get install postgresql-{major}")
    return bin_dir


def dashboard_assets(s: Settings) -> Path:
    """The dashboard's JavaScript libraries, unpacked from the npm registry once (pinned and checked)."""
    version = pin("dashboard", "echarts")
    out = s.cache_dir / "dashboard" / f"echarts-{version}"
    if (out / "echarts.min.js").exists():
        return out
    registry = pin("dashboard", "npm_registry").rstrip("/")
    archive = fetch_integrity(
        f"{registry}/echarts/-/echarts-{version}.tgz",
        s.cache_dir / "downloads" / f"echarts-{version}.tgz",
        pin("dashboard", "echarts_integrity"),
    )
    package = unpack(archive, s.cache_dir / "downloads" / f"echarts-{version}")
    out.mkdir(parents=True, exist_ok=True)
    for name in ("echarts.min.js", "LICENSE"):
        src = package / ("dist" if name.endswith(".js") else "") / name
        shutil.copyfile(src, out / f"{name}.part")
        (out / f"{name}.part").rename(out / name)
    return out


def chromium() -> Path:
    """Debian's Chromium for the browser tests (Playwright launches it; it downloads no browser)."""
    path = Path("/usr/bin/chromium")
    if path.exists():
        return path
    package = pin("dashboard", "chromium_package")
    if shutil.which("apt-get") and _is_root():
        print(f"installing {package} from Debian packages (browser tests)", file=sys.stderr)
        env = {"DEBIAN_FRONTEND": "noninteractive", "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"}
        for cmd in (["apt-get", "update", "-q"], ["apt-get", "install", "-y", "-q", package]):
            if subprocess.run(cmd, env=env).returncode != 0:
                raise DownloadError(f"`{' '.join(cmd)}` failed: install {package} by hand")
    if not path.exists():
        raise DownloadError(f"Chromium not found at {path}: apt-get install {package}")
    return path


def _is_root() -> bool:

    return os.geteuid() == 0


def install_all(s: Settings) -> Installed:
    """Everything the launcher runs, but for the services configured as external; a second call
    downloads nothing."""
    ext = s.external
    trino, cli = trino_home(s) if "trino" not in ext else (None, None)
    return Installed(
        kafka_lib=kafka_lib(s) if "kafka" not in ext else None,
        registry_home=registry_home(s) if "registry" not in ext else None,
        trino_home=trino,
        trino_cli=cli,
        flink_lib=flink_lib(s),
        flink_home=pyflink_home(),
        postgres_bin=postgres_bin() if "postgres" not in ext else None,
        dashboard_assets=dashboard_assets(s),
    )

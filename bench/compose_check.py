"""`make compose-check`: docker-compose.yml end to end in containers (podman by default), never
part of `make test`.

1. Builds every image of docker-compose.yml one at a time, exactly as its build section says,
   on a local base image (POOLSIGHT_BASE_IMAGE, default localhost/debian-base:bookworm, a
   debootstrap import) and, unless POOLSIGHT_JAVA_IMAGE names one, this machine's Java 24+
   imported as an image. The host's CA bundle is mounted into each build (a TLS-intercepting
   proxy's CA reaches pip, cargo and urllib through PIP_CERT, CARGO_HTTP_CAINFO, SSL_CERT_FILE).
2. Starts the stack with every published port moved by --offset (POOLSIGHT_<NAME>_PORT, the
   launcher's own variables), waits for the `init` service (`poolsight up`: the bootstrap).
3. Submits both jobs from the JobManager's container, generates a scenario from the host into
   Kafka through its host listener (127.0.0.1), and reads the getpages back from Trino on the
   host until they equal what was generated. The event time starts now: panes older than the
   retention (14 days) are rolled up and removed by the maintenance service within minutes.
4. `compose down -v` (unless --keep).
--cluster adds docker-compose.cluster.yml (3 KRaft brokers, each with its host listener; 2
TaskManagers; jobs at parallelism 2).

Needs `make install` first (the images copy the jars and distributions from .cache/).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import yaml

from poolsight.infra.config import DEFAULT_PORTS, KAFKA_PORT_STEP, port_variable
from poolsight.infra.java import find_java

ROOT = Path(__file__).resolve().parents[1]
PROJECT = "poolsight-check"
PUBLISHED = ("postgres", "kafka", "registry", "flink_rest", "trino", "dashboard")
HOST_CA = Path("/etc/ssl/certs/ca-certificates.crt")
BUILD_CA = "/run/build-ca.crt"
_VAR = re.compile(r"\$\{(\w+)(?::?-([^}]*)|:?\?[^}]*)?\}")


def _say(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def _resolve(value: object, env: dict[str, str]) -> str:
    return _VAR.sub(lambda m: env.get(m[1]) or m[2] or "", str(value))


def _run(cmd: list[str], env: dict[str, str] | None = None, **kw: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, env=env, text=True, cwd=ROOT, check=False, **kw)


def _image_exists(engine: str, image: str) -> bool:
    return _run([engine, "image", "exists", image], capture_output=True).returncode == 0


def java_image(engine: str) -> str:
    """This machine's Java 24+ as an image holding /opt/java/openjdk (what the Dockerfiles copy)."""
    image = "localhost/poolsight-java:host"
    if not _image_exists(engine, image):
        java = find_java(minimum=24, purpose="the registry and Trino images")
        _say(f"importing {java.home} (Java {java.major}) as {image}")
        tar = subprocess.Popen(
            ["tar", "-C", str(java.home), "--transform", "s,^\\.,opt/java/openjdk,", "-cf", "-", "."],
            stdout=subprocess.PIPE,
        )
        subprocess.run([engine, "import", "-", image], stdin=tar.stdout, check=True, capture_output=True)
        tar.wait()
    return image


def build_all(engine: str, env: dict[str, str], rebuild: bool) -> dict[str, float]:
    """Every image of docker-compose.yml, one at a time; seconds per image built."""
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    built: dict[str, float] = {}
    for name, svc in services.items():
        image, build = svc["image"], svc["build"]
        if image in built or (not rebuild and _image_exists(engine, image)):
            built.setdefault(image, 0.0)
            continue
        cmd = [engine, "build", "-t", image, "-f", build["dockerfile"]]
        if "target" in build:
            cmd += ["--target", build["target"]]
        for key, value in build.get("args", {}).items():
            cmd += ["--build-arg", f"{key}={_resolve(value, env)}"]
        declared = (ROOT / build["dockerfile"]).read_text()
        ca_args = [k for k in ("PIP_CERT", "CARGO_HTTP_CAINFO", "SSL_CERT_FILE") if f"ARG {k}\n" in declared]
        if HOST_CA.exists() and ca_args:
            cmd += ["-v", f"{HOST_CA}:{BUILD_CA}:ro", *(f"--build-arg={k}={BUILD_CA}" for k in ca_args)]
        cmd.append(build.get("context", "."))
        _say(f"building {image} (for {name})")
        t0 = time.monotonic()
        log = ROOT / "var" / "compose-check" / f"build-{name}.log"
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w") as fh:
            proc = _run(["nice", "-n", "10", *cmd], env=env, stdout=fh, stderr=subprocess.STDOUT)
        built[image] = round(time.monotonic() - t0, 1)
        if proc.returncode != 0:
            raise SystemExit(f"building {image} failed after {built[image]} s: see {log}")
        _say(f"built {image} in {built[image]} s")
    return built


def _containers(engine: str, service: str) -> list[str]:
    labels = [f"io.podman.compose.project={PROJECT}", f"com.docker.compose.service={service}"]
    out = _run([engine, "ps", "-a", "-q", *(f"--filter=label={label}" for label in labels)], capture_output=True)
    return out.stdout.split()


def _state(engine: str, container: str) -> tuple[str, int]:
    out = _run([engine, "inspect", "-f", "{{.State.Status}} {{.State.ExitCode}}", container], capture_output=True)
    status, code = [*out.stdout.split(), "?", "-1"][:2]
    return status, int(code)


def wait_init(engine: str, timeout: float) -> float:
    t0 = time.monotonic()
    while time.monotonic() < t0 + timeout:
        for c in _containers(engine, "init"):
            status, code = _state(engine, c)
            if status == "exited" and code == 0:
                return round(time.monotonic() - t0, 1)
        time.sleep(5)
    for c in _containers(engine, "init"):
        print(_run([engine, "logs", "--tail", "40", c], capture_output=True).stderr, file=sys.stderr)
    raise SystemExit(f"init did not finish within {timeout:.0f} s")


def trino_getpages(member: str) -> tuple[int, int, int]:
    """(getpages, panes, pools) of a source in pool_pane, read through the host's Trino port."""
    # lazy: the Trino client reads the environment set up for the host
    from poolsight.infra.config import load_settings
    from poolsight.infra.trino import trino_connection

    with trino_connection(load_settings()) as conn:
        cur = conn.cursor()
        cur.execute(
            "SELECT coalesce(sum(getpages), 0), count(*), count(DISTINCT pool) "
            "FROM iceberg.poolsight.pool_pane WHERE source = ?",
            [member],
        )
        [[getpages, panes, pools]] = cur.fetchall()
    return int(getpages), int(panes), int(pools)


def _interrupted(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--engine", default="podman")
    p.add_argument("--compose", default="podman-compose", help="the compose command (podman-compose, docker compose)")
    p.add_argument("--offset", type=int, default=20000, help="added to every published port")
    p.add_argument("--scenario", default="mixed")
    p.add_argument("--getpages", type=int, default=200_000)
    p.add_argument("--timeout", type=float, default=900.0, help="seconds for init, and again for the totals")
    p.add_argument("--rebuild", action="store_true", help="build images that already exist again")
    p.add_argument("--keep", action="store_true", help="leave the stack running")
    p.add_argument(
        "--cluster",
        action="store_true",
        help="add docker-compose.cluster.yml: 3 brokers, 2 TaskManagers, parallelism 2",
    )
    a = p.parse_args(argv)
    # A SIGTERM (a stopped make) still runs `compose down -v` below.
    signal.signal(signal.SIGTERM, _interrupted)

    env = {k: v for k, v in os.environ.items() if not k.startswith("POOLSIGHT_")}
    env["POOLSIGHT_BASE_IMAGE"] = os.environ.get("POOLSIGHT_BASE_IMAGE", "localhost/debian-base:bookworm")
    env["POOLSIGHT_JAVA_IMAGE"] = os.environ.get("POOLSIGHT_JAVA_IMAGE") or java_image(a.engine)
    env["POOLSIGHT_CATALOG_PASSWORD"] = secrets.token_urlsafe(18)
    ports = {key: DEFAULT_PORTS[key] + a.offset for key in PUBLISHED}
    env |= {port_variable(key): str(port) for key, port in ports.items()}
    if a.cluster:  # brokers 2 and 3 publish the launcher's ports for them (+10 per node), moved too
        for node in (2, 3):
            env[f"POOLSIGHT_KAFKA_{node}_PORT"] = str(ports["kafka"] + KAFKA_PORT_STEP * (node - 1))
    if not _image_exists(a.engine, env["POOLSIGHT_BASE_IMAGE"]):
        raise SystemExit(f"no base image {env['POOLSIGHT_BASE_IMAGE']}: debootstrap one and import it")
    compose = [*a.compose.split(), "-p", PROJECT, "-f", "docker-compose.yml"]
    if a.cluster:
        compose += ["-f", "docker-compose.cluster.yml"]
    report: dict[str, Any] = {"ports": ports}

    t0 = time.monotonic()
    report["build_seconds"] = build_all(a.engine, env, a.rebuild)
    try:
        _say("starting the stack")
        up = _run([*compose, "up", "-d"], env=env, capture_output=True)
        if up.returncode != 0:
            print(up.stdout[-3000:], up.stderr[-3000:], file=sys.stderr)
            raise SystemExit("compose up failed")
        report["init_seconds"] = wait_init(a.engine, a.timeout)
        _say(f"init (poolsight up: the bootstrap) done in {report['init_seconds']} s")

        [jobmanager] = _containers(a.engine, "flink-jobmanager")
        parallelism = ["--parallelism", "2" if a.cluster else "1"]
        submit = _run(
            [a.engine, "exec", jobmanager, "poolsight", "jobs", "submit", "all", "--idle-flush", "5", *parallelism],
            capture_output=True,
        )
        _say(f"jobs submitted in the JobManager's container: {submit.stdout.strip()} {submit.stderr.strip()[-500:]}")
        if submit.returncode != 0:
            raise SystemExit("jobs submit failed")

        # The host: every service external, at 127.0.0.1 and the published ports.
        host = ROOT / "var" / "compose-check" / "home"
        host.mkdir(parents=True, exist_ok=True)
        os.environ.update(
            POOLSIGHT_HOME=str(host),
            POOLSIGHT_KAFKA_BOOTSTRAP=f"127.0.0.1:{ports['kafka']}",
            POOLSIGHT_REGISTRY_URL=f"http://127.0.0.1:{ports['registry']}/apis/ccompat/v7",
            POOLSIGHT_TRINO_URL=f"http://127.0.0.1:{ports['trino']}",
            POOLSIGHT_FLINK_REST_URL=f"http://127.0.0.1:{ports['flink_rest']}",
        )
        member = f"CK{secrets.token_hex(2).upper()}"
        poolsight = shutil.which("poolsight", path=str(Path(sys.executable).parent)) or "poolsight"
        gen = _run(
            [poolsight, "generate", a.scenario, "--getpages", str(a.getpages), "--members", member, "--start", "now"],
            env={**os.environ},
            capture_output=True,
        )
        if gen.returncode != 0:
            print(gen.stderr[-3000:], file=sys.stderr)
            raise SystemExit("poolsight generate from the host failed")
        generated = json.loads(gen.stdout.strip().splitlines()[-1])
        report["generated"] = {"source": member, "getpages": generated["getpages"]}
        _say(f"generated {generated['getpages']:,} getpages as {member} from the host into 127.0.0.1:{ports['kafka']}")

        t1 = time.monotonic()
        got = (0, 0, 0)
        while time.monotonic() < t1 + a.timeout:
            try:
                got = trino_getpages(member)
            except Exception as exc:  # the tables may lag the first checkpoint: keep asking
                _say(f"Trino: {type(exc).__name__}: {str(exc)[:200]}")
            if got[0] == generated["getpages"]:
                break
            time.sleep(10)
        report["trino"] = {"getpages": got[0], "panes": got[1], "pools": got[2]}
        report["seconds_to_totals"] = round(time.monotonic() - t1, 1)
        report["ok"] = got[0] == generated["getpages"]
        _say(f"Trino pool_pane for {member}: {got[0]:,} getpages in {got[1]} panes of {got[2]} pools")
    finally:
        report["total_seconds"] = round(time.monotonic() - t0, 1)
        if not a.keep:
            _say("compose down -v")
            _run([*compose, "down", "-v"], env=env, capture_output=True)
        print(json.dumps(report))
    return 0 if report.get("ok") else 1


if __name__ == "__main__":
    sys.exit(main())

"""Flink's JobManager and TaskManagers as containers (docker-compose.yml), started as the launcher
starts them: `python -m poolsight.infra.container flink-jobmanager|flink-taskmanager`.

A container gets the compose addresses as configuration, so to it every service is external
(infra/endpoints.py); this writes the launcher's own config.yaml (flink_service.write_flink_conf)
and runs the launcher's command (Flink's script in the foreground, PyFlink's distribution, the
launcher's lib folder) with what a container changes, as dynamic properties: every bind address
is the wildcard, the JobManager is found by its service name (the host of the configured REST
URL), and a TaskManager advertises its own container's address (replicas have no fixed name).
"""

from __future__ import annotations

import os
import socket
import sys

from .config import CONTAINER_BIND_HOST, Settings, load_settings
from .flink_service import prepare_flink_jobmanager, prepare_flink_taskmanager
from .install import Installed, dashboard_assets, flink_lib, pyflink_home
from .service_base import Launch

ROLES = ("flink-jobmanager", "flink-taskmanager")


def container_properties(s: Settings, role: str, own_address: str) -> dict[str, str]:
    """What differs from the native config.yaml in a container of `role`."""
    jobmanager, _ = s.flink_rest_address
    props = {
        "jobmanager.rpc.address": jobmanager,
        "jobmanager.bind-host": CONTAINER_BIND_HOST,
        "rest.bind-address": CONTAINER_BIND_HOST,
    }
    if role == "flink-taskmanager":
        props |= {"taskmanager.bind-host": CONTAINER_BIND_HOST, "taskmanager.host": own_address}
    return props


def launch(s: Settings, role: str) -> Launch:
    if role not in ROLES:
        raise SystemExit(f"unknown role {role!r}; known: {', '.join(ROLES)}")
    inst = Installed(
        kafka_lib=None,
        registry_home=None,
        trino_home=None,
        trino_cli=None,
        flink_lib=flink_lib(s),
        flink_home=pyflink_home(),
        postgres_bin=None,
        dashboard_assets=dashboard_assets(s),
    )
    base = prepare_flink_jobmanager(s, inst) if role == "flink-jobmanager" else prepare_flink_taskmanager(s, inst)
    own = socket.gethostbyname(socket.gethostname())
    # `-D key=value` as two words: jobmanager.sh takes a second word not starting with -D as the host.
    extra = [word for key, value in container_properties(s, role, own).items() for word in ("-D", f"{key}={value}")]
    return Launch(command=[*base.command, *extra], env=base.env, cwd=base.cwd)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit(f"usage: python -m poolsight.infra.container {'|'.join(ROLES)}")
    run = launch(load_settings(), args[0])
    print(" ".join(run.command), file=sys.stderr, flush=True)
    os.chdir(run.cwd)
    os.execvpe(run.command[0], run.command, run.env)  # noqa: S606 (the launcher's own command)


if __name__ == "__main__":
    main()

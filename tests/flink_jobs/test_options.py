"""The jobs' options are plain values: built and checked without PyFlink or a cluster."""

from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict

import pytest

from poolsight.flink_jobs.options import JobOptions, SimulationOptions, StatisticsOptions, pool_modes
from poolsight.infra.registry_access import RegistryAccess


def test_options_import_no_pyflink() -> None:
    code = (
        "import sys, json; import poolsight.flink_jobs.options, poolsight.flink_jobs.statistics_rows, "
        "poolsight.flink_jobs.tracker; print(json.dumps(sorted(m for m in sys.modules if m.startswith('pyflink'))))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(r.stdout) == []


def test_the_job_simulates_exact_under_the_sample_budget_and_sampled_above_by_default() -> None:
    from poolsight.simulator.engine import AUTO_SAMPLES

    c = SimulationOptions(RegistryAccess("http://r")).config_for("BP1")
    assert (c.mode, c.max_samples) == ("shards", AUTO_SAMPLES)
    assert pool_modes(["BP2=auto"]) == {"BP2": {"mode": "shards", "max_samples": AUTO_SAMPLES}}


def test_a_pools_own_settings_override_the_jobs() -> None:
    o = SimulationOptions(
        RegistryAccess("http://r"),
        sim={"mode": "exact", "window_panes": 30},
        pool_sim=pool_modes(["BP8=shards:0.05", "BP9=fixed:4096"]),
    )
    assert o.config_for("BP1").mode == "exact" and o.config_for("BP1").window_panes == 30
    bp8 = o.config_for("BP8")
    assert (bp8.mode, bp8.rate, bp8.max_samples, bp8.window_panes) == ("shards", 0.05, 0, 30)
    assert (o.config_for("BP9").mode, o.config_for("BP9").max_samples) == ("shards", 4096)


def test_costs_follow_the_options() -> None:
    c = SimulationOptions(RegistryAccess("http://r"), cpu_us_per_sync_read=45.0, sync_io_ms=2.5).costs()
    assert c.cpu_seconds_per_sync_read == pytest.approx(45e-6)
    assert c.sync_io_seconds == pytest.approx(0.0025)
    assert SimulationOptions(RegistryAccess("http://r")).costs().sync_io_seconds is None


def test_options_survive_the_json_hand_over_to_the_job_module() -> None:
    for o in (
        JobOptions("g", checkpoint_seconds=2.0, start_from="latest"),
        SimulationOptions(RegistryAccess("http://r"), sim={"mode": "shards"}, idle_flush_seconds=3.0),
        StatisticsOptions(RegistryAccess("http://r"), cpu_us_per_sync_read=12.0),
    ):
        assert type(o)(**json.loads(json.dumps(asdict(o)))) == o


@pytest.mark.parametrize("spec", ["BP1", "=exact", "BP1=lru"])
def test_a_bad_pool_mode_is_refused(spec: str) -> None:
    with pytest.raises(ValueError, match="--pool-mode"):
        pool_modes([spec])

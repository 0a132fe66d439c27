"""`poolsight simulate --group`: a hand-written trace of two members, its GBP counters computed
by hand from DATA-SHARING.md's rules, the JSON keys, the text table and the usage errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import ROOT

# At t=1 and t=2 the file has DB2B's row first; the merge puts DB2A first (member order).
# DB2C is not in the group.
TRACE = """\
time,pool,object,page,access,function,source
1.0,BP1,DB1.TS1,1,R,GP,DB2B
1.0,BP1,DB1.TS1,1,R,GP,DB2A
2.0,BP1,DB1.TS1,1,R,GP,DB2B
2.0,BP1,DB1.TS1,1,R,SWI,DB2A
3.0,BP1,DB1.TS1,1,R,SWI,DB2C
4.0,BP1,DB1.TS1,2,R,GP,DB2B
5.0,BP1,DB1.TS1,3,R,GP,DB2B
6.0,BP1,DB1.TS1,1,R,GP,DB2A
7.0,BP8K0,DB1.IX1,5,R,GP,DB2A
7.0,BP8K0,DB1.IX1,5,R,GP,DB2B
"""

COUNTER_KEYS = [
    "lbp_hits",
    "sync_reads_xi",
    "xi_data_returned",
    "xi_no_data",
    "sync_reads_nf",
    "nf_data_returned",
    "nf_no_data",
    "disk_sync_reads",
    "directory_reclaims",
    "xi_due_to_reclaims",
    "xi_due_to_writes",
    "changed_pages_written",
    "data_entry_reclaims",
    "writes_failed_no_storage",
    "castout_pages",
]


@pytest.fixture(scope="module")
def trace(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("group") / "trace.csv"
    path.write_text(TRACE)
    return path


def _simulate(trace: Path, tmp: Path, *args: str) -> tuple[subprocess.CompletedProcess[str], dict[str, Any]]:
    out = tmp / "out.json"
    r = subprocess.run(
        [sys.executable, "-m", "poolsight.cli", "simulate", str(trace), "--json", str(out), *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    return r, (json.loads(out.read_text()) if r.returncode == 0 else {})


def counters(**nonzero: int) -> dict[str, int]:
    return {**dict.fromkeys(COUNTER_KEYS, 0), **nonzero}


def test_reference_counters_computed_by_hand(trace: Path, tmp_path: Path) -> None:
    r, res = _simulate(
        trace,
        tmp_path,
        *("--group", "PLEX=DB2A,DB2B", "--pool-size", "2", "--gbp-data-entries", "1,4", "--ratios", "2"),
        "--reference",
    )
    assert r.returncode == 0, r.stderr
    gbps = res["groups"]["PLEX"]["gbps"]
    assert sorted(gbps) == ["GBP1", "GBP8K0"]
    g1 = gbps["GBP1"]
    assert g1["members"] == ["DB2A", "DB2B"]
    assert [(p["data_entries"], p["ratio"], p["directory_entries"]) for p in g1["curve"]] == [(1, 2.0, 2), (4, 2.0, 8)]
    small, big = g1["curve"]
    assert list(small) == [
        "data_entries",
        "ratio",
        "directory_entries",
        "structure_mb",
        *COUNTER_KEYS,
        "getpages",
        "gbp_hit_ratio",
        "sample",
        "members",
    ]
    # 1 data entry, 2 directory entries, LBPs of 2. In order: A reads 1, B reads 1 (NF, disk);
    # A writes 1 (B invalidated; 1 changed > 30 % of 1: cast out); B reads 1 (XI, from the GBP);
    # B reads 2 (NF, disk); B reads 3: steals 1 (A stays registered), reclaims the LRU
    # directory entry, 1's: XI of A, its clean data freed; A reads 1: XI, disk, reclaims 2: XI of B.
    assert small["members"]["DB2A"] == {
        **counters(
            sync_reads_xi=1,
            xi_no_data=1,
            sync_reads_nf=1,
            nf_no_data=1,
            disk_sync_reads=2,
            directory_reclaims=1,
            xi_due_to_reclaims=1,
            changed_pages_written=1,
            castout_pages=1,
        ),
        "getpages": 2,
        "gbp_hit_ratio": 0.0,
    }
    assert small["members"]["DB2B"] == {
        **counters(
            sync_reads_xi=1,
            xi_data_returned=1,
            sync_reads_nf=3,
            nf_no_data=3,
            disk_sync_reads=3,
            directory_reclaims=1,
            xi_due_to_reclaims=1,
            xi_due_to_writes=1,
        ),
        "getpages": 4,
        "gbp_hit_ratio": 0.25,
    }
    assert {k: small[k] for k in COUNTER_KEYS} == counters(
        sync_reads_xi=2,
        xi_data_returned=1,
        xi_no_data=1,
        sync_reads_nf=4,
        nf_no_data=4,
        disk_sync_reads=5,
        directory_reclaims=2,
        xi_due_to_reclaims=2,
        xi_due_to_writes=1,
        changed_pages_written=1,
        castout_pages=1,
    )
    assert small["gbp_hit_ratio"] == 1 / 6 and small["getpages"] == 6
    assert small["structure_mb"] == (4096 + 2 * 400) / 2**20
    # 4 data entries: no castout (1 of 4 is 25 %), no reclaim; A's buffer of 1 stays valid.
    assert {k: big[k] for k in COUNTER_KEYS} == counters(
        lbp_hits=1,
        sync_reads_xi=1,
        xi_data_returned=1,
        sync_reads_nf=4,
        nf_no_data=4,
        disk_sync_reads=4,
        xi_due_to_writes=1,
        changed_pages_written=1,
    )
    assert big["gbp_hit_ratio"] == 1 / 5
    g8 = gbps["GBP8K0"]
    assert g8["page_size"] == 8192 and g8["curve"][0]["structure_mb"] == (8192 + 2 * 400) / 2**20
    assert g8["curve"][0]["nf_no_data"] == 2
    # The text: the table and the smallest GBPs without reclaims and failed writes.
    assert "group PLEX GBP1: members DB2A, DB2B (LBP buffers DB2A 2, DB2B 2); 4 KB pages; reference model" in r.stdout
    assert "smallest GBP with zero reclaims: 0.0187 MB (RATIO 2, 4 data entries)" in r.stdout
    assert "smallest with zero failed writes: 0.00467 MB (RATIO 2, 1 data entry)" in r.stdout
    row = next(line for line in r.stdout.splitlines() if line.strip().startswith("0.00467"))
    # 5 disk reads over the 5 s of GBP1's events: 1.0/s; GBP hit 1 of 6 reads: 16.7 %.
    assert row.split() == ["0.00467", "1", "2", "5", "1.0", "16.7", "2", "2", "0", "1"]


def test_default_grid_and_inferred_dependence(trace: Path, tmp_path: Path) -> None:
    r, res = _simulate(trace, tmp_path, "--group", "PLEX=DB2A,DB2B", "--pool-size", "2")
    assert r.returncode == 0, r.stderr
    gbps = res["groups"]["PLEX"]["gbps"]
    # GBP1: DB1.TS1 is used by both and updated: 3 GBP-dependent pages -> 3, 2 (3/2), 1 (3/4 ...).
    assert [p["data_entries"] for p in gbps["GBP1"]["curve"]] == [1, 2, 3]
    assert {p["ratio"] for p in gbps["GBP1"]["curve"]} == {5.0}
    # GBP8K0: DB1.IX1 is never updated: not GBP-dependent, nothing counted.
    assert [p["getpages"] for p in gbps["GBP8K0"]["curve"]] == [0]
    assert gbps["GBP8K0"]["model"] == "inferred GBP-dependence"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--group", "PLEX=DB2A,DB2X", "--pool-size", "2"), "--group PLEX: no events of DB2X in the trace"),
        (("--group", "PLEX=DB2A,DB2B", "--pool-size", "DB2A/BP1=2"), "no LBP size for DB2B/BP1"),
        (("--group", "PLEX", "--pool-size", "2"), "write NAME=MEMBER,MEMBER"),
        (
            ("--group", "PLEX=DB2A,DB2B", "--pool-size", "2", "--ratios", "1.5", "--reference"),
            "the reference model needs RATIO >= 2",
        ),
    ],
)
def test_usage_errors(trace: Path, tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    r, _ = _simulate(trace, tmp_path, *args)
    assert r.returncode == 2
    assert message in r.stderr, r.stderr

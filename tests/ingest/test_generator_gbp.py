"""The generator's data-sharing group: the members' pools and a real group buffer pool, fed in one
global time order, as ground truth. Checked against a brute-force implementation of the reference
model of DATA-SHARING.md written here, against hand-made sequences, and for the invariants and
counters its statistics must keep."""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import math
from collections import Counter, OrderedDict
from pathlib import Path
from typing import Any

import fastavro
import numpy as np
import pytest

from poolsight.ingest.datasharing import HIT_OF_OUTCOME, GroupPool, OutcomeCounts
from poolsight.ingest.generator import Alter, FileSink, Generator
from poolsight.ingest.scenario import GbpSpec, Scenario, ScenarioError, load
from poolsight.ingest.stats_gbp_display import parse
from poolsight.schemas import parsed
from poolsight.simulator.group_grid import data_entries_for
from poolsight.simulator.trace import TraceReader

LBP_HIT, XI_GBP, XI_DISK, NF_GBP, NF_DISK, PREFETCH, NOT_A_GETPAGE = range(7)


def _jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def _csv(path: Path) -> list[dict[str, str]]:
    with path.open() as fh:
        return list(csv.DictReader(fh))


class Recorder:
    """A sink keeping the statistics and outcome rows."""

    def __init__(self) -> None:
        self.records: list[tuple[str, dict[str, Any]]] = []
        self.outcome_rows: list[OutcomeCounts] = []

    def start(self, attributes: list[dict[str, Any]], catalog: list[dict[str, Any]]) -> None: ...
    def attributes(self, attributes: list[dict[str, Any]]) -> None: ...
    def getpages(self, *_a: Any) -> None: ...
    def io(self, *_a: Any) -> None: ...
    def progress(self, *_a: Any) -> None: ...
    def stats(self, schema: str, record: dict[str, Any]) -> None:
        self.records.append((schema, record))

    def outcomes(self, rows: list[OutcomeCounts]) -> None:
        self.outcome_rows.extend(rows)

    def close(self) -> None: ...

    def gbp(self, gbp: str, scope: str) -> list[dict[str, Any]]:
        return [r for s, r in self.records if s == "gbp_stats" and r["gbp"] == gbp and r["scope"] == scope]


def _group(sc: Scenario, seconds: float, alters: list[str] = (), event_rate: float = 50_000) -> Recorder:  # type: ignore[assignment]
    rec = Recorder()
    Generator(sc, seed=2, event_rate=event_rate, alters=[Alter.parse(a) for a in alters]).run(rec, duration=seconds)
    return rec


def test_a_page_another_member_changed_meanwhile_is_refreshed_from_the_gbp() -> None:
    """A reads p at 1, B reads and updates p at 2, A reads p at 3: given member by member (as the
    old generator fed a chunk), the events still run in time order, so A's second getpage finds
    its copy cross-invalidated and refreshes it from the GBP."""
    sc = dataclasses.replace(load("data-sharing"), gbps={"GBP1": GbpSpec("GBP1", data_entries=100)})
    g = GroupPool(sc, sc.pools["BP1"], dependent=[0])
    out = g.feed(
        np.array([1.0, 3.0, 2.0, 2.5]),
        np.array([0, 0, 1, 1], dtype=np.uint8),
        np.zeros(4, dtype=np.uint32),
        np.full(4, 77, dtype=np.uint64),
        np.zeros(4, dtype=np.uint8),
        np.array([0, 0, 0, 1], dtype=np.uint8),
    )
    assert out.tolist() == [NF_DISK, XI_GBP, NF_DISK, NOT_A_GETPAGE]
    [a_bp1, b_bp1, group] = g.stats(0.0, 4.0)
    assert (a_bp1["source"], a_bp1["xi_reads_data_returned"], a_bp1["xi_due_to_writes"]) == ("DB2A", 1, 1)
    assert (b_bp1["source"], b_bp1["changed_pages_written"], b_bp1["nf_reads_no_data"]) == ("DB2B", 1, 1)
    assert (group["source"], group["scope"], group["reads_data_returned"]) == ("DSG1", "group", 1)
    assert (group["reads_no_data_dir_created"], group["reads_no_data_dir_existed"]) == (1, 1)
    assert [r.lbp_hit + r.xi_gbp + r.nf_disk for r in g.take_outcomes(4.0)] == [2, 1]


class Reference:
    """The reference model (DATA-SHARING.md, rules 1-7) by brute force: LRU lists and linear
    scans, for random getpages and updates of GBP-dependent pages."""

    def __init__(self, members: int, lbp: int, data: int, directory: int, gbpoolt: float) -> None:
        self.lbp: list[OrderedDict[tuple[str, int], bool]] = [OrderedDict() for _ in range(members)]  # MRU last
        self.cap, self.data, self.directory, self.gbpoolt = lbp, data, directory, gbpoolt
        self.dir: dict[tuple[str, int], list[Any]] = {}  # page -> [registered members, 0/1/2 none/clean/changed, tick]
        self.tick = 0
        self.c: Counter[str] = Counter()

    def _touch(self, p: tuple[str, int]) -> None:
        self.tick += 1
        self.dir[p][2] = self.tick

    def _lru(self, state: set[int]) -> tuple[str, int]:
        return min((p for p, e in self.dir.items() if e[1] in state), key=lambda p: self.dir[p][2])

    def _entry(self, p: tuple[str, int]) -> None:
        if p in self.dir:
            return
        if len(self.dir) >= self.directory:
            v = self._lru({0, 1})
            self.c["directory_reclaims"] += 1
            for r in self.dir.pop(v)[0]:
                self.c["xi_due_to_reclaims"] += 1
                self.lbp[r][v] = False
        self.tick += 1
        self.dir[p] = [set(), 0, self.tick]

    def _castout(self) -> None:
        for e in self.dir.values():
            if e[1] == 2:
                e[1] = 1
                self.c["castout_pages"] += 1

    def getpage(self, m: int, p: tuple[str, int]) -> int:
        lbp = self.lbp[m]
        xi = p in lbp
        if xi:
            lbp.move_to_end(p)
            if lbp[p]:
                return LBP_HIT
            lbp[p] = True
        else:
            if len(lbp) >= self.cap:
                v, _ = lbp.popitem(last=False)
                if v in self.dir:
                    self.dir[v][0].discard(m)
                    if not self.dir[v][0] and self.dir[v][1] == 0:
                        del self.dir[v]
            lbp[p] = True
        data = p in self.dir and self.dir[p][1] != 0
        self._entry(p)
        self.dir[p][0].add(m)
        self._touch(p)
        return {(True, True): XI_GBP, (True, False): XI_DISK, (False, True): NF_GBP, (False, False): NF_DISK}[xi, data]

    def update(self, m: int, p: tuple[str, int]) -> None:
        assert self.lbp[m].get(p), "an update follows the member's getpage of the page"
        self.c["changed_pages_written"] += 1
        self._entry(p)
        if self.dir[p][1] == 0 and sum(1 for e in self.dir.values() if e[1]) >= self.data:
            if all(e[1] != 1 for e in self.dir.values()):
                self.c["write_failed_no_storage"] += 1
                self._castout()
            self.dir[self._lru({1})][1] = 0
            self.c["data_entry_reclaims"] += 1
        e = self.dir[p]
        e[1] = 2
        for r in e[0] - {m}:
            self.c["xi_due_to_writes"] += 1
            self.lbp[r][p] = False
        e[0] = {m}
        self._touch(p)
        if sum(1 for e in self.dir.values() if e[1] == 2) > self.gbpoolt / 100 * self.data:
            self._castout()


SMALL_GROUP = """
name: small-group
members: [M1, M2, M3]
interval_seconds: 1
pools: [{{name: BP1, vpsize: 40, vpseqt: 100}}]
gbps: [{{name: GBP1, data_entries: 15, ratio: 3, gbpoolt: {gbpoolt}}}]
objects:
  - {{name: T.ONE, pool: BP1, pages: 300, gbp_dependent: true}}
  - {{name: T.TWO, pool: BP1, pages: 100, gbp_dependent: true}}
patterns:
  - {{name: one, kind: random, share: 0.6, objects: {{T.ONE: 1}}, skew: 0.6, update_ratio: 0.4}}
  - {{name: two, kind: random, share: 0.4, objects: {{T.TWO: 1}}, skew: 0.3, update_ratio: 0.2}}
"""


@pytest.mark.parametrize("gbpoolt", [40.0, 100.0])
def test_every_getpage_outcome_is_the_reference_models_in_global_time_order(tmp_path: Path, gbpoolt: float) -> None:
    """Three members, tiny pools and GBP (45 directory entries for 120 buffers): the generated
    trace replayed in time order through the brute-force reference gives each event's outcome
    and the group's counters exactly (castouts at GBPOOLT 40 %; at 100 % writes fail instead)."""
    path = tmp_path / "small.yaml"
    path.write_text(SMALL_GROUP.format(gbpoolt=gbpoolt))
    sc = load(path)
    out = tmp_path / "out"
    Generator(sc, seed=11, event_rate=10_000).run(FileSink(out), getpages=12_000)
    rows = sorted(_csv(out / "trace.csv"), key=lambda r: float(r["time"]))
    ref = Reference(3, 40, 15, 45, gbpoolt)
    got, want = [], []
    for r in rows:
        m, p = sc.members.index(r["source"]), (r["object"], int(r["page"]))
        got.append(int(r["outcome"]))
        if r["function"] == "GP":
            want.append(ref.getpage(m, p))
        else:
            ref.update(m, p)
            want.append(NOT_A_GETPAGE)
    assert got == want
    group: Counter[str] = Counter()
    for g in _jsonl(out / "gbp_stats.jsonl"):
        if g["scope"] == "group":
            group.update({k: g[k] for k in ref.c})
    assert group == ref.c
    outcomes = Counter(want)
    assert all(outcomes[k] > 100 for k in (LBP_HIT, XI_GBP, XI_DISK, NF_GBP, NF_DISK)), outcomes
    key = "castout_pages" if gbpoolt < 100 else "write_failed_no_storage"
    assert ref.c["directory_reclaims"] > 100 and ref.c["xi_due_to_reclaims"] > 100 and ref.c[key] > 10, ref.c


@pytest.fixture(scope="module")
def ds_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Generator]:
    out = tmp_path_factory.mktemp("ds") / "out"
    gen = Generator(load("data-sharing"), seed=7, event_rate=2_000)
    gen.run(FileSink(out), getpages=400_000)
    return out, gen


def test_statistics_keep_the_invariants_and_agree_with_each_getpage(ds_run: tuple[Path, Generator]) -> None:
    """Per member and GBP: GBP-dependent getpages = LBP hits + XI reads + NF reads; the reads by
    outcome equal the getpages' outcomes; disk sync reads = XI no data + NF no data = the pool's
    sync reads = its sync read I/Os; the group row adds the members up."""
    out, gen = ds_run
    gbp = _jsonl(out / "gbp_stats.jsonl")
    pools = _jsonl(out / "pool_stats.jsonl")
    outcomes = _csv(out / "gbp_outcomes.csv")
    assert gen.totals.intervals == math.ceil(gen.totals.events / 2_000 / 60) == 4
    assert len(gen.totals.outcomes) == len(outcomes)
    ends = sorted({g["interval_end"] for g in gbp})
    assert ends == sorted({p["interval_end"] for p in pools}) == sorted({int(o["interval_end"]) for o in outcomes})
    by: dict[tuple[str, str, int, str], dict[str, int]] = {}
    for o in outcomes:
        by[(o["member"], o["pool"], int(o["interval_end"]), o["gbp_dependent"])] = {
            k: int(v) for k, v in o.items() if k not in ("member", "pool", "interval_end", "gbp_dependent")
        }
    zero = dict.fromkeys(("lbp_hit", "xi_gbp", "xi_disk", "nf_gbp", "nf_disk", "prefetch"), 0)
    for g in gbp:
        if g["scope"] != "member":
            continue
        pool = g["gbp"][1:]
        dep = by.get((g["source"], pool, g["interval_end"], "Y"), zero)
        assert dep["prefetch"] == 0  # the reference: sequential getpages are getpages
        xi = g["xi_reads_data_returned"] + g["xi_reads_no_data"]
        nf = g["nf_reads_data_returned"] + g["nf_reads_no_data"]
        assert g["gbp_dependent_getpages"] == dep["lbp_hit"] + xi + nf
        assert (g["xi_reads_data_returned"], g["xi_reads_no_data"]) == (dep["xi_gbp"], dep["xi_disk"])
        assert (g["nf_reads_data_returned"], g["nf_reads_no_data"]) == (dep["nf_gbp"], dep["nf_disk"])
    for p in pools:
        dep = by.get((p["source"], p["pool"], p["interval_end"], "Y"), zero)
        other = by.get((p["source"], p["pool"], p["interval_end"], "N"), zero)
        getpages = p["getpages_random"] + p["getpages_sequential"]
        assert getpages == sum(dep.values()) + sum(other.values())
        sync = p["sync_reads_random"] + p["sync_reads_sequential"]
        assert sync == dep["xi_disk"] + dep["nf_disk"] + other["nf_disk"]
        assert p["pages_written"] == 0  # GBP-dependent changes go to the GBP; APP.HISTORY is read only
    io = Counter(
        (e["source"], e["pool"]) for e in _jsonl(out / "io.jsonl") if e["kind"] == "read" and e["io_type"] == 0
    )
    stats_sync = Counter[tuple[str, str]]()
    for p in pools:
        stats_sync[(p["source"], p["pool"])] += p["sync_reads_random"] + p["sync_reads_sequential"]
    assert io == stats_sync
    for end in ends:
        for name in ("GBP1", "GBP2"):
            rows = [g for g in gbp if g["gbp"] == name and g["interval_end"] == end]
            [group] = [g for g in rows if g["scope"] == "group"]
            members = [g for g in rows if g["scope"] == "member"]
            assert [g["source"] for g in members] == ["DB2A", "DB2B"] and group["source"] == "DSG1"
            for k in (
                "gbp_dependent_getpages",
                "xi_reads_data_returned",
                "xi_reads_no_data",
                "nf_reads_data_returned",
                "nf_reads_no_data",
                "changed_pages_written",
                "directory_reclaims",
                "data_entry_reclaims",
                "write_failed_no_storage",
                "xi_due_to_reclaims",
                "xi_due_to_writes",
                "castout_pages",
                "castout_gbp_threshold",
            ):
                assert group[k] == sum(g[k] for g in members), (name, k)
            assert group["reads_data_returned"] == group["xi_reads_data_returned"] + group["nf_reads_data_returned"]
            assert (
                group["reads_no_data_dir_existed"] + group["reads_no_data_dir_created"]
                == group["xi_reads_no_data"] + group["nf_reads_no_data"]
            )
            assert group["castouts"] <= sum(g["castouts"] for g in members)
            assert group["changed_pages_snapshot"] <= group["gbpoolt"] / 100 * group["data_entries"]


def test_gbp_stats_carry_the_structure_and_match_the_schema(ds_run: tuple[Path, Generator]) -> None:
    out, _ = ds_run
    gbp = _jsonl(out / "gbp_stats.jsonl")
    schema = parsed("gbp_stats")
    for g in gbp:
        assert fastavro.validation.validate(g, schema, strict=True)
    structure = {
        (g["gbp"], g["directory_entries"], g["data_entries"], g["ratio"], round(g["structure_mb"], 3), g["gbpoolt"])
        for g in gbp
        if g["scope"] == "group"
    }
    # size_mb 240 and 14 at RATIO 5, 4K pages: data = MB * 2**20 // (5 * 400 + 4096), directory 5 x data.
    mb1, mb2 = (41_282 * 4096 + 206_410 * 400) / 2**20, (2_408 * 4096 + 12_040 * 400) / 2**20
    assert (round(mb1, 3), round(mb2, 3)) == (239.997, 13.999)
    assert structure == {
        ("GBP1", 206_410, 41_282, 5.0, round(mb1, 3), 30.0),
        ("GBP2", 12_040, 2_408, 5.0, round(mb2, 3), 30.0),
    }
    assert all(isinstance(g["gbpoolt"], float) for g in gbp if g["scope"] == "group")
    assert {g["group_name"] for g in gbp} == {"DSG1"}
    assert all(
        g["directory_entries"] is None and g["reads_data_returned"] is None for g in gbp if g["scope"] == "member"
    )


def test_the_trace_flags_each_outcome_and_its_readers_pass_over_the_column(ds_run: tuple[Path, Generator]) -> None:
    out, _ = ds_run
    rows = _csv(out / "trace.csv")
    pairs = Counter((int(r["outcome"]), r["hit"]) for r in rows)
    assert {o for o, _ in pairs} >= {0, 1, 3, 4, 5, 6}  # 5: APP.HISTORY's scan, by prefetch
    assert all(h == "NY"[HIT_OF_OUTCOME[o]] for o, h in pairs)  # hit: the page was in the pool
    per: Counter[tuple[str, str, str]] = Counter((r["source"], r["pool"], r["outcome"]) for r in rows)
    names = ("lbp_hit", "xi_gbp", "xi_disk", "nf_gbp", "nf_disk", "prefetch")
    totals: Counter[tuple[str, str, str]] = Counter()
    for o in _csv(out / "gbp_outcomes.csv"):
        for i, n in enumerate(names):
            totals[(o["member"], o["pool"], str(i))] += int(o[n])
    assert +totals == Counter({k: v for k, v in per.items() if k[2] != "6"})
    assert sum(len(b.pages) for b in TraceReader(out / "trace.csv").batches()) == len(rows)


def test_a_seed_gives_the_same_group_and_another_seed_another(tmp_path: Path) -> None:
    def run(seed: int, name: str) -> list[str]:
        out = tmp_path / name
        Generator(load("data-sharing"), seed=seed, event_rate=20_000).run(FileSink(out), getpages=150_000)
        return [hashlib.sha256((out / f).read_bytes()).hexdigest() for f in ("trace.csv", "gbp_stats.jsonl")]

    a, b, c = run(5, "a"), run(5, "b"), run(6, "c")
    assert a == b
    assert a[0] != c[0] and a[1] != c[1]


def test_directory_reclaims_fall_to_zero_as_the_gbp_grows() -> None:
    base = load("data-sharing")
    reclaims = []
    for data in (1_200, 2_408, 4_000, 20_000):
        sc = dataclasses.replace(base, gbps={**base.gbps, "GBP2": GbpSpec("GBP2", data_entries=data)})
        rec = _group(sc, 30)
        reclaims.append(sum(g["directory_reclaims"] for g in rec.gbp("GBP2", "group")))
    assert reclaims == sorted(reclaims, reverse=True) and reclaims[0] > reclaims[1] > 0
    assert reclaims[-1] == 0


def test_a_gbp_alter_takes_effect_at_its_time() -> None:
    """GBP2 grown to 100 MB and GBP1 rebuilt at RATIO 2 after the first minute: the first interval
    is as without them, the next ones show the new structures, and GBP2 reclaims nothing more."""
    sc = load("data-sharing")
    plain = _group(sc, 130, event_rate=20_000)
    altered = _group(sc, 130, ["GBP2:SIZE=100@60", "GBP1:RATIO=2@60"], event_rate=20_000)
    for name in ("GBP1", "GBP2"):
        assert altered.gbp(name, "group")[0] == plain.gbp(name, "group")[0]
        assert altered.gbp(name, "member")[:2] == plain.gbp(name, "member")[:2]
    gbp2 = altered.gbp("GBP2", "group")
    assert [(g["data_entries"], g["directory_entries"]) for g in gbp2] == [(2_408, 12_040)] + [(17_201, 86_005)] * 2
    assert 17_201 == data_entries_for(100, 5.0, 4096) == 100 * 2**20 // (5 * 400 + 4096)
    assert plain.gbp("GBP2", "group")[1]["directory_reclaims"] > 0
    assert [g["directory_reclaims"] for g in gbp2[1:]] == [0, 0]
    gbp1 = altered.gbp("GBP1", "group")
    # Rebuilt at the same size (206,410 x 400 + 41,282 x 4096 bytes) with RATIO 2: 2 x 400 + 4096 a data entry.
    size = 206_410 * 400 + 41_282 * 4096
    assert [(g["ratio"], g["data_entries"], g["directory_entries"]) for g in gbp1[1:]] == [
        (2.0, size // 4896, 2 * (size // 4896))
    ] * 2
    assert abs(gbp1[1]["structure_mb"] - gbp1[0]["structure_mb"]) < 4896 / 2**20


def test_gbp_alters_are_parsed_and_checked() -> None:
    assert Alter.parse("GBP1:size=512@600") == Alter("GBP1", "SIZE", 512.0, 600.0)
    assert Alter.parse("GBP8K0:RATIO=10@5").of_gbp
    for bad, why in (
        ("GBP1:VPSIZE=100@5", "SIZE and RATIO are a GBP's"),
        ("BP1:SIZE=100@5", "SIZE and RATIO are a GBP's"),
        ("GBP1:SIZE=0@5", "in MB, > 0"),
        ("GBP1:RATIO=0.5@5", ">= 1"),
    ):
        with pytest.raises(ValueError, match=why):
            Alter.parse(bad)
    with pytest.raises(ValueError, match=r"no group buffer pool GBP9 \(its GBPs are GBP1, GBP2\)"):
        Generator(load("data-sharing"), alters=[Alter.parse("GBP9:SIZE=10@0")])
    with pytest.raises(ValueError, match="no data-sharing group"):
        Generator(load("mixed"), alters=[Alter.parse("GBP1:SIZE=10@0")])


def test_member_affinity_sends_an_objects_work_to_its_home_member() -> None:
    """Affinity 1: each object only on its home member (objects dealt in turn: ACCOUNTS and its
    index to DB2A, LEDGER to DB2B), so no write invalidates anyone. 0.5: three quarters at home."""
    base = load("data-sharing")
    rec = _group(dataclasses.replace(base, member_affinity=1.0), 20)
    rows = [r for name in ("GBP1", "GBP2") for r in rec.gbp(name, "member")]
    assert sum(r["xi_due_to_writes"] for r in rows) == 0
    assert {(o.member, o.pool) for o in rec.outcome_rows} == {("DB2A", "BP1"), ("DB2B", "BP1"), ("DB2A", "BP2")}
    assert [base.home(o) for o in base.objects] == ["DB2A", "DB2B", "DB2A", "DB2B"]
    half = _group(dataclasses.replace(base, member_affinity=0.5), 20)
    bp2 = Counter[str]()
    for o in half.outcome_rows:
        if o.pool == "BP2":  # the accounts index: home DB2A
            bp2[o.member] += o.getpages
    assert bp2["DB2A"] / (bp2["DB2A"] + bp2["DB2B"]) == pytest.approx(0.75, abs=0.01)


def test_group_knobs_are_checked(tmp_path: Path) -> None:
    head = "members: [A, B]\npools: [{name: BP1, vpsize: 10}]\nobjects: [{name: X, pool: BP1, pages: 5}]\n"
    pattern = "patterns: [{name: p, kind: random, share: 1, objects: {X: 1}}]\n"
    for extra, why in (
        ("gbps: [{name: GBP2, data_entries: 5}]\n", "gbp GBP2: no pool BP2"),
        ("gbps: [{name: GBP1, data_entries: 5, size_mb: 3}]\n", "data_entries or size_mb"),
        ("gbps: [{name: GBP1}]\n", "data_entries or size_mb"),
        ("gbps: [{name: GBP1, data_entries: 5, ratio: 0.5}]\n", "ratio must be >= 1"),
        ("gbps: [{name: GBP1, data_entries: 5, prefetch: all}]\n", "prefetch 'all'"),
        ("gbps: [{name: GBP1, data_entries: 5, gbpoolt: 130}]\n", "percentages"),
        ("member_affinity: 2\n", r"member_affinity must be in \[0, 1\]"),
    ):
        path = tmp_path / "g.yaml"
        path.write_text(head + pattern + extra)
        with pytest.raises(ScenarioError, match=why):
            load(path)
    path.write_text(head.replace("[A, B]", "[A]") + pattern + "gbps: [{name: GBP1, data_entries: 5}]\n")
    with pytest.raises(ScenarioError, match="two or more members"):
        load(path)
    path.write_text(head + pattern)
    sc = load(path)
    assert (sc.group, sc.gbp("BP1"), sc.gbp_data_entries("BP1")) == ("DSG1", GbpSpec("GBP1", data_entries=8), 8)


def test_a_simulated_pool_in_the_group_avoids_what_a_bigger_lru_list_holds(tmp_path: Path) -> None:
    """BP1 with SPSIZE, every object GBP-dependent: each member's DSNB432I avoidable sync reads
    (random and sequential) are its disk reads of pages not in its pool (NF, no data) that a
    plain LRU list of VPSIZE + SPSIZE over its getpages held; XI reads are no size's to avoid."""
    base = load("data-sharing")
    bp1 = dataclasses.replace(base.pools["BP1"], vpsize=3000, spsize=3000)
    objects = {n: dataclasses.replace(o, gbp_dependent=True) for n, o in base.objects.items()}
    objects["APP.HISTORY"] = dataclasses.replace(objects["APP.HISTORY"], pages=5000)  # scans come back
    sc = dataclasses.replace(base, pools={**base.pools, "BP1": bp1}, objects=objects)
    out = tmp_path / "sp"
    Generator(sc, seed=3, event_rate=20_000).run(FileSink(out), getpages=150_000)
    big: dict[str, OrderedDict[tuple[str, str], None]] = {m: OrderedDict() for m in sc.members}
    want: Counter[tuple[str, str]] = Counter()
    for r in _csv(out / "trace.csv"):  # each member's rows in its time order
        if r["pool"] != "BP1" or r["function"] != "GP":
            continue
        lru, key = big[r["source"]], (r["object"], r["page"])
        held = key in lru
        lru[key] = None
        lru.move_to_end(key)
        if len(lru) > 6000:
            lru.popitem(last=False)
        if held and r["outcome"] == str(NF_DISK):
            want[(r["source"], "sequential" if r["access"] == "S" else "random")] += 1
    got: Counter[tuple[str, str]] = Counter()
    for s in _jsonl(out / "pool_stats.jsonl"):
        if s["pool"] == "BP1":
            got[(s["source"], "random")] += s["sim_sync_reads_avoidable_random"]
            got[(s["source"], "sequential")] += s["sim_sync_reads_avoidable_sequential"]
            assert s["sim_async_pages_avoidable"] == 0  # nothing is prefetched
    assert got == want
    assert all(want[(m, k)] > 100 for m in sc.members for k in ("random", "sequential")), want


def test_the_generated_display_groupbufferpool_reads_back_as_its_statistics(tmp_path: Path) -> None:
    """generate --output writes each interval's gbp_stats again as DB2 prints -DISPLAY
    GROUPBUFFERPOOL; `ingest stats` reads that text back to the same counters."""
    out = tmp_path / "ds"
    sink = FileSink(out)
    Generator(load("data-sharing"), seed=3, event_rate=2_000).run(sink, getpages=240_000)
    sink.close()
    want = [json.loads(line) for line in (out / "gbp_stats.jsonl").read_text().splitlines()]
    got = parse((out / "display-groupbufferpool.txt").read_text(), "display-groupbufferpool.txt")
    assert not got.rejected
    # MDETAIL prints a member's reads and writes; GDETAIL the structure's reclaims and XIs.
    fields = {
        "member": (
            "xi_reads_data_returned",
            "xi_reads_no_data",
            "nf_reads_data_returned",
            "nf_reads_no_data",
            "changed_pages_written",
        ),
        "group": (
            "directory_reclaims",
            "xi_due_to_reclaims",
            "xi_due_to_writes",
            "changed_pages_written",
            "reads_data_returned",
            "data_entries",
            "directory_entries",
        ),
    }

    def key(r: dict[str, Any]) -> tuple[str, str, str, int]:
        # DB2 prints times to the hundredth of a second.
        return (r["source"], r["gbp"], r["scope"], round(r["interval_end"] / 10_000))

    by = {key(r): r for _, r in got.records}
    assert sorted(by) == sorted(key(r) for r in want)
    for w in want:
        g = by[key(w)]
        assert {f: g.get(f) for f in fields if w.get(f) is not None} == {
            f: w[f] for f in fields if w.get(f) is not None
        }, key(w)

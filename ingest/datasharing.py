"""The generator's data-sharing group: per pool name, the members' pools and their group buffer
pool in one model (`poolsight._kernel.GroupModel`, fed every member's events in time order), its
statistics as `gbp_stats` records, and the outcome of every getpage as ground truth.

The model follows the reference model of DATA-SHARING.md (rules 1-7). Objects that are not
GBP-dependent behave as in one system. Sequential and RID-list getpages of GBP-dependent objects
are, by default (`prefetch: getpages`), getpages of the reference model: a page not valid in the
pool is a synchronous read (XI or NF), from the GBP when it holds the page, else from disk (a
sync read I/O; SYNC READ I/O (S) for a sequential getpage). With `prefetch: page-list` they are
read by prefetch as Db2 does with CFLEVEL 2 or higher (IBM, Db2 13 "Prefetch processing"): one
request registers the list of pages not valid in the pool, pages the GBP holds (changed, and here
clean as well: Db2 "can get the pages from the group buffer pool ... or can include the pages in
the disk read I/O request") are read from it, the rest by one prefetch I/O; such a getpage's
outcome is PREFETCH and no XI or NF sync read is counted.

Counters a member's request caused (reads, writes, reclaims, failed writes, threshold
detections) are that member's; XIs are the invalidated member's; castout pages are the castout
owner's (the first member that wrote a changed page of the object); what no request caused (an
alter, a GBP checkpoint) is the structure owner's, the first member. The group row holds the
group's totals; its castouts count castout operations once, where each owner's row counts its part.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight._kernel import GroupModel
from poolsight.ingest.scenario import PoolSpec, Scenario, structure_mb
from poolsight.simulator.group import gbp_name
from poolsight.simulator.group_grid import data_entries_for

# Per-event outcome codes (GroupModel.feed).
OUTCOMES = ("lbp_hit", "xi_gbp", "xi_disk", "nf_gbp", "nf_disk", "prefetch")
NOT_A_GETPAGE = 6
# The trace's hit flag: 1 when the page was in the member's pool, valid or cross-invalidated (the
# buffer is found where an LRU list left it; its refresh is an XI read), 0 when it was not (an NF
# read from the GBP or disk, or a prefetch): what a simulation of the pool alone predicts.
# Updates and releases 1.
HIT_OF_OUTCOME = np.array([1, 1, 1, 0, 0, 0, 1], dtype=np.uint8)
SYNC_READ_OUTCOMES = (2, 4)  # one sync read I/O each

# gbp_stats fields each row carries from the model's counters (the rest are the structure's).
MEMBER_COUNTERS = (
    "gbp_dependent_getpages",
    "xi_reads_data_returned",
    "xi_reads_no_data",
    "nf_reads_data_returned",
    "nf_reads_no_data",
    "changed_pages_written",
    "clean_pages_written",
    "write_failed_no_storage",
    "directory_reclaims",
    "data_entry_reclaims",
    "castouts",
    "castout_pages",
    "castout_class_threshold",
    "castout_gbp_threshold",
    "gbp_checkpoints",
    "xi_due_to_reclaims",
    "xi_due_to_writes",
    "xi_explicit",
)
GROUP_COUNTERS = (
    *MEMBER_COUNTERS,
    "reads_data_returned",
    "reads_no_data_dir_existed",
    "reads_no_data_dir_created",
    "reads_no_data_dir_not_created",
)

# What a member's row leaves empty: the group's reads by directory outcome and the structure.
GROUP_ONLY = (
    *GROUP_COUNTERS[len(MEMBER_COUNTERS) :],
    "changed_pages_snapshot",
    "directory_entries",
    "data_entries",
    "ratio",
    "structure_mb",
    "gbpoolt",
    "classt",
    "gbpchkpt_minutes",
)


@dataclass(frozen=True)
class OutcomeCounts:
    """Getpages of one member's pool in one statistics interval by outcome (the ground truth)."""

    member: str
    pool: str
    interval_end: int  # µs, as the interval's records
    gbp_dependent: bool
    lbp_hit: int
    xi_gbp: int
    xi_disk: int
    nf_gbp: int
    nf_disk: int
    prefetch: int

    @property
    def getpages(self) -> int:
        return self.lbp_hit + self.xi_gbp + self.xi_disk + self.nf_gbp + self.nf_disk + self.prefetch


class GroupPool:
    """One pool name of the group: the members' pools and their GBP."""

    def __init__(self, sc: Scenario, pool: PoolSpec, dependent: list[int]) -> None:
        self.group = sc.group or "DSG1"
        self.members = list(sc.members)
        self.pool = pool
        self.spec = sc.gbp(pool.name)
        self.gbp = gbp_name(pool.name)
        self.data_entries = sc.gbp_data_entries(pool.name)
        self.ratio = self.spec.ratio
        self.model = GroupModel(
            [pool.vpsize] * len(self.members),
            self.data_entries,
            ratio=self.ratio,
            vpseqt=pool.vpseqt,
            prefetch_quantity=pool.prefetch_quantity,
            dwqt=pool.dwqt,
            vdwqt=pool.vdwqt,
            gbpoolt=self.spec.gbpoolt,
            classt=self.spec.classt,
            checkpoint_seconds=self.spec.checkpoint_seconds,
            commit_every=self.spec.commit_every,
            commit_seconds=self.spec.commit_seconds,
            page_list_prefetch=self.spec.prefetch == "page-list",
        )
        self.model.set_dependent(dependent)
        self.dependent = np.zeros(max(dependent, default=0) + 1, dtype=bool)
        self.dependent[dependent] = True
        # Getpages by member, GBP-dependent or not, outcome; counted afresh each interval.
        self.counts = np.zeros((len(self.members), 2, len(OUTCOMES)), dtype=np.int64)

    def feed(
        self,
        times: npt.NDArray[np.float64],
        member: npt.NDArray[np.uint8],
        obj: npt.NDArray[np.uint32],
        page: npt.NDArray[np.uint64],
        access: npt.NDArray[np.uint8],
        function: npt.NDArray[np.uint8],
    ) -> npt.NDArray[np.uint8]:
        """The pool's events of all members, in time order; their outcomes."""
        out = np.frombuffer(self.model.feed(times, member, obj, page, access, function), dtype=np.uint8)
        gp = out != NOT_A_GETPAGE
        dep = np.zeros(len(obj), dtype=np.int64)
        inside = obj < len(self.dependent)
        dep[inside] = self.dependent[obj[inside]]
        cell = (member[gp].astype(np.int64) * 2 + dep[gp]) * len(OUTCOMES) + out[gp]
        self.counts += np.bincount(cell, minlength=self.counts.size).reshape(self.counts.shape)
        return out

    def synchronous(self, obj: npt.NDArray[np.uint32]) -> npt.NDArray[np.bool_]:
        """Events whose sequential and RID-list getpages this pool reads one page at a time, as
        random ones (GBP-dependent objects, unless page-list prefetch)."""
        if self.spec.prefetch == "page-list":
            return np.zeros(len(obj), dtype=bool)
        out = np.zeros(len(obj), dtype=bool)
        inside = obj < len(self.dependent)
        out[inside] = self.dependent[obj[inside]]
        return out

    def take_outcomes(self, end: float) -> list[OutcomeCounts]:
        rows = [
            OutcomeCounts(m, self.pool.name, int(end * 1e6), bool(d), *(int(x) for x in self.counts[mi, d]))
            for mi, m in enumerate(self.members)
            for d in (1, 0)
            if self.counts[mi, d].any()
        ]
        self.counts[:] = 0
        return rows

    def alter(self, setting: str, value: float) -> None:
        """The CF structure resized (SIZE, MB) or rebuilt with another RATIO (the same size)."""
        page = self.pool.page_size
        if setting == "SIZE":
            size = value
        else:
            size = structure_mb(self.data_entries, self.directory_entries, page)
            self.ratio = value
        self.data_entries = data_entries_for(size, self.ratio, page)
        self.model.alter(self.data_entries, self.ratio)

    @property
    def directory_entries(self) -> int:
        return self.model.structure()[0]

    def stats(self, start: float, end: float) -> list[dict[str, Any]]:
        """The interval's gbp_stats: a row per member, then the group's row with the structure."""
        base = {
            "gbp": self.gbp,
            "interval_start": int(start * 1e6),
            "interval_end": int(end * 1e6),
            "group_name": self.group,
            "gbp_logical_reads": None,
            "gbp_physical_reads": None,
            "gbp_invalid_pages": None,
            "cf_waits": None,
            "cf_wait_ms": None,
        }
        commits = self.spec.commit_every > 0 or self.spec.commit_seconds > 0
        rows = []
        for mi, m in enumerate(self.members):
            k = self.model.take_gbp_counters(mi)
            row = {**base, "source": m, "scope": "member", **dict.fromkeys(GROUP_ONLY)}
            row.update((f, k[f]) for f in MEMBER_COUNTERS)
            row["commits"] = k["commits"] if commits else None
            rows.append(row)
        k = self.model.take_gbp_counters(None)
        directory, data, ratio, changed = self.model.structure()
        spec = self.spec
        row = {**base, "source": self.group, "scope": "group", **{f: k[f] for f in GROUP_COUNTERS}}
        row.update(
            commits=k["commits"] if commits else None,
            changed_pages_snapshot=changed,
            directory_entries=directory,
            data_entries=data,
            ratio=ratio,
            structure_mb=structure_mb(data, directory, self.pool.page_size),
            gbpoolt=float(spec.gbpoolt),
            classt=None if spec.classt is None else float(spec.classt),
            gbpchkpt_minutes=spec.checkpoint_seconds / 60 if spec.checkpoint_seconds else None,
        )
        rows.append(row)
        return rows

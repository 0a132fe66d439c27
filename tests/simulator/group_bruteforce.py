"""A brute-force implementation of the reference model of a group buffer pool.

Written from `DATA-SHARING.md`, section "Reference model", rule by rule, as the
independent truth the engine's group simulation is compared with (issue 28,
Checks). One GBP with `data_entries` data entries and `floor(ratio * data_entries)`
directory entries, the members' LBPs, GBPCACHE CHANGED, no commit delay, no class
threshold, no checkpoint. Plain dicts and OrderedDicts, linear scans.

Events are `(member, object, page, function)` tuples already in global time order;
function 0 is a getpage, 1 a set write intent (SWI), 2 a release (ignored). A page
is the pair (object, page).

Where the model text leaves a choice, this is the reading implemented:

- Attribution: directory reclaims, data entry reclaims, writes failed, castout
  pages and changed pages written count for the member whose event caused them;
  XI due to writes and XI due to reclaims for the member whose buffer was
  invalidated. Getpages implied by an SWI count as getpages with their outcome.
- SWI (rule 4) implies the getpage only when p is not in LBP(m) at all. A buffer
  invalidated since m's getpage is still "in LBP(m)" in the model's own words
  (rule 2: "p in LBP(m) but invalid"), so no getpage is implied: m writes its
  copy, which becomes the valid one (m is registered, R(p) = {m}), and the buffer
  keeps its place in the LRU chain.
- Invariant that follows: a member is registered for p exactly while p is valid
  in its LBP (rules 2-5 register on every read and on a write, unregister on
  steal, on XI due to writes and with the whole entry on a reclaim). So on an
  SWI p has a directory entry unless m's buffer is invalid because a directory
  reclaim took p's entry; only then does the write create one (rule 5), and
  that reclaim never takes p's own entry (p has none). Rule 4's order is kept:
  directory entry (rule 5) first, then the data entry (rule 6), then changed,
  XIs, MRU.
- Rule 2 and 3 with data returned move p's data entry as well as its directory
  entry to MRU (the rule says "p's data and directory entries to MRU").
- On an XI refresh (rule 2) m was unregistered when its buffer was invalidated
  (by the write, or with the reclaimed entry); the refresh registers it again,
  creating the directory entry through rule 5 when a reclaim removed it.
- Rule 3, the steal of v: after m is unregistered (a no-op when v's buffer was
  invalid, m being no longer registered), v's directory entry is freed whenever
  it has no registered member and holds no data -- checked on every steal of a
  page that has an entry. A data entry reclaim (rule 6) keeps the directory
  entry even when no member is registered for it ("its directory entry
  stays"); such an entry leaves only by a steal of that page or by rule 5.
- Rule 3 order: the steal first (it may free a directory entry, sparing a
  reclaim), then the GBP lookup for p, then the registration (rule 5).
- Rule 5 scans directory entries from LRU for the first whose data is not
  changed (no data entry, or a clean one); the reclaimed entry is never p's
  own, since rule 5 runs only when p has none.
- Rule 6: the free data entries are `data_entries` minus those held. When all
  held ones are changed: [writes failed], every changed page cast out
  [castout pages], and the write retried -- the retry needs a data entry again,
  so it reclaims the LRU (now clean) one: [data entry reclaims] + 1.
- Rule 7: castout when changed pages > GBPOOLT / 100 x data entries, strictly,
  compared exactly (Fraction), after every write including a rewrite of a page
  already changed.
- Directory entries = floor(ratio * data_entries) in floats, as the engine's
  `GbpSetting` defines it; ratio >= 2 so rule 5 always finds an entry.
"""

from __future__ import annotations

import math
from collections import Counter, OrderedDict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from fractions import Fraction

GETPAGE, SWI, RELEASE = 0, 1, 2
NAMES = (
    "getpages",
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
)

Page = tuple[str, int]  # (object, page)
Event = tuple[str, str, int, int]  # (member, object, page, function)


@dataclass
class DirEntry:
    registered: set[str] = field(default_factory=set)
    has_data: bool = False
    changed: bool = False


class Group:
    """The state of the reference model: LBPs, directory, data entries, counters."""

    def __init__(
        self,
        members: Sequence[str],
        lbp_sizes: Mapping[str, int],
        data_entries: int,
        ratio: float,
        gbpoolt: float = 30.0,
    ) -> None:
        assert ratio >= 2 and data_entries >= 1
        # LBP(m): page -> valid, in LRU order (first = LRU).
        self.lbp: dict[str, OrderedDict[Page, bool]] = {m: OrderedDict() for m in members}
        self.lbp_size = {m: lbp_sizes[m] for m in members}
        # The directory, in LRU order; and the data entries, in their own LRU order.
        self.directory: OrderedDict[Page, DirEntry] = OrderedDict()
        self.data: OrderedDict[Page, None] = OrderedDict()
        self.directory_entries = math.floor(ratio * data_entries)
        self.data_entries = data_entries
        self.castout_limit = Fraction(gbpoolt) / 100 * data_entries
        self.count: dict[str, dict[str, int]] = {m: dict.fromkeys(NAMES, 0) for m in members}
        # How often each branch where the model text left a choice was taken (for tests).
        self.paths: Counter[str] = Counter()

    def changed_pages(self) -> list[Page]:
        return [p for p, e in self.directory.items() if e.changed]

    # -- events -------------------------------------------------------------

    def getpage(self, m: str, p: Page) -> None:
        lbp, c = self.lbp[m], self.count[m]
        c["getpages"] += 1
        if lbp.get(p) is True:
            # Rule 1: LBP hit; p to MRU in LBP(m).
            c["lbp_hits"] += 1
            lbp.move_to_end(p)
            return
        if p in lbp:
            # Rule 2: p in LBP(m) but invalid: sync read XI.
            c["sync_reads_xi"] += 1
            if self.holds_data(p):
                c["xi_data_returned"] += 1
                self.data.move_to_end(p)
                self.directory.move_to_end(p)
            else:
                c["xi_no_data"] += 1
                c["disk_sync_reads"] += 1
            lbp[p] = True
            lbp.move_to_end(p)
            self.register(m, p)
            return
        # Rule 3: p not in LBP(m). Steal the LRU buffer first if LBP(m) is full.
        if len(lbp) >= self.lbp_size[m]:
            v, _ = lbp.popitem(last=False)
            self.unregister(m, v)
        c["sync_reads_nf"] += 1
        if self.holds_data(p):
            c["nf_data_returned"] += 1
            self.data.move_to_end(p)
            self.directory.move_to_end(p)
        else:
            c["nf_no_data"] += 1
            c["disk_sync_reads"] += 1
        lbp[p] = True
        self.register(m, p)

    def write(self, m: str, p: Page) -> None:
        # Rule 4: set write intent. The getpage is implied when p is not in LBP(m); an
        # invalid buffer is written as it is and becomes valid, keeping its place.
        lbp = self.lbp[m]
        if p not in lbp:
            self.getpage(m, p)
            self.paths["swi_implies_getpage"] += 1
        elif not lbp[p]:
            self.paths["swi_on_invalid_buffer"] += 1
        lbp[p] = True
        c = self.count[m]
        c["changed_pages_written"] += 1
        if p not in self.directory:  # rule 5: only after a reclaim invalidated m's buffer
            self.new_directory_entry(m, p)
            self.paths["write_creates_directory_entry"] += 1
        entry = self.directory[p]
        if not entry.has_data:  # rule 6
            self.new_data_entry(m, p)
            entry.has_data = True
        entry.changed = True
        # Every other registered member: buffer invalidated, unregistered [XI due to writes].
        for r in sorted(entry.registered - {m}):
            self.invalidate(r, p)
            self.count[r]["xi_due_to_writes"] += 1
        entry.registered = {m}
        self.data.move_to_end(p)
        self.directory.move_to_end(p)
        # Rule 7: castout by threshold, strictly above GBPOOLT % of the data entries.
        if len(self.changed_pages()) > self.castout_limit:
            self.castout(m)

    # -- the GBP ------------------------------------------------------------

    def holds_data(self, p: Page) -> bool:
        entry = self.directory.get(p)
        return entry is not None and entry.has_data

    def register(self, m: str, p: Page) -> None:
        # Rules 2, 3: m registered for p (rule 5 if p has no entry); p's directory entry to MRU.
        if p not in self.directory:
            self.new_directory_entry(m, p)
        self.directory[p].registered.add(m)
        self.directory.move_to_end(p)

    def unregister(self, m: str, v: Page) -> None:
        # Rule 3: the stolen page's entry goes when nobody is registered and it holds no data.
        entry = self.directory.get(v)
        if entry is None:
            return
        was_registered = m in entry.registered
        entry.registered.discard(m)
        if not entry.registered and not entry.has_data:
            del self.directory[v]
            self.paths["steal_frees_directory_entry" if was_registered else "steal_frees_bare_entry"] += 1

    def invalidate(self, r: str, p: Page) -> None:
        assert self.lbp[r].get(p) is True, "a registered member holds a valid buffer"
        self.lbp[r][p] = False  # stays in place in r's LRU chain

    def new_directory_entry(self, cause: str, p: Page) -> None:
        if len(self.directory) >= self.directory_entries:
            # Rule 5: reclaim the LRU directory entry whose data is not changed.
            victim = next(q for q, e in self.directory.items() if not e.changed)
            entry = self.directory.pop(victim)
            self.count[cause]["directory_reclaims"] += 1
            for r in sorted(entry.registered):
                self.invalidate(r, victim)
                self.count[r]["xi_due_to_reclaims"] += 1
            if entry.has_data:
                del self.data[victim]
                self.paths["directory_reclaim_frees_data"] += 1
        self.directory[p] = DirEntry()

    def new_data_entry(self, cause: str, p: Page) -> None:
        c = self.count[cause]
        while len(self.data) >= self.data_entries:
            # Rule 6: free the LRU data entry that is not changed; its directory entry stays.
            victim = next((q for q in self.data if not self.directory[q].changed), None)
            if victim is not None:
                del self.data[victim]
                self.directory[victim].has_data = False
                c["data_entry_reclaims"] += 1
                if not self.directory[victim].registered:
                    self.paths["data_reclaim_leaves_bare_entry"] += 1
            else:
                # All changed: write failed, cast out every changed page, retry.
                c["writes_failed_no_storage"] += 1
                self.castout(cause)
                self.paths["write_retried"] += 1
        self.data[p] = None

    def castout(self, cause: str) -> None:
        # Rules 6, 7: every changed page is cast out and stays in the GBP, clean.
        changed = self.changed_pages()
        for q in changed:
            self.directory[q].changed = False
        self.count[cause]["castout_pages"] += len(changed)

    def feed(self, events: Iterable[Event]) -> None:
        for m, obj, page, function in events:
            if function == GETPAGE:
                self.getpage(m, (obj, page))
            elif function == SWI:
                self.write(m, (obj, page))

    def counters(self) -> dict[str, dict[str, int]]:
        out = {m: dict(c) for m, c in self.count.items()}
        out["total"] = {k: sum(c[k] for c in self.count.values()) for k in NAMES}
        return out


def brute_force(
    events: Iterable[Event],
    members: Sequence[str],
    lbp_sizes: Mapping[str, int],
    data_entries: int,
    ratio: float,
    gbpoolt: float = 30.0,
) -> dict[str, dict[str, int]]:
    """The reference model's counters per member and under "total"."""
    group = Group(members, lbp_sizes, data_entries, ratio, gbpoolt)
    group.feed(events)
    return group.counters()

"""DB2 z/OS statistics report text (OMEGAMON XE for DB2 PE "STATISTICS REPORT"), buffer pool blocks
and group buffer pool blocks.

The "GROUP BPn  QUANTITY /SECOND ..." blocks become GbpStats records of the page's member (or of
its group on a group-scope page) for the page's interval, read as the BP blocks are (K/M
suffixes, N/A, the interval derived when the report states none): their labels, and which are
confirmed, are in stats_omegamon_gbp.py.

Reads the "BPn GENERAL / READ OPERATIONS / WRITE OPERATIONS  QUANTITY /SECOND ..."
blocks of seed 000, in the report's fixed-width layout (columns two or more
spaces apart) or tab-separated as copied out of a document; one or two
blocks side by side. Quantities may carry K/M/G suffixes; N/A and N/C are
"not reported". Each pool's block becomes one PoolStats record for the
interval the report states (INTERVAL FROM/TO, or INTERVAL START/END/ELAPSED
in the highlights). A block copied out of a report without its header (seed
000's samples) states no interval: its length is given (`--interval`) or
derived as QUANTITY / (/SECOND) of its counters (the record says so:
`interval_derived`), and its end must be given (`--at`); without them it is
rejected with that reason (seed 000: a statistics report without its elapsed
time is useless).

Counters mapped: see COUNTERS. Knowingly ignored: the ratios the report
derives (BPOOL HIT RATIO, GETPAGE PER SYN.READ-RANDOM, pages per read or
write: recomputed by simulator.metrics), totals whose parts are mapped (GETPAGE
REQUEST, SYNCHRONOUS READS), and gauges without a schema field (CURRENT
ACTIVE BUFFERS, DFHSM, VPOOL expansion, parallel query and prefetch
reduction counters): listed in IGNORED.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from poolsight.ingest import stats_omegamon_gbp as gbp
from poolsight.ingest.stats_common import (
    Parsed,
    ParseOptions,
    Rejected,
    StatsFormat,
    empty_gbp_stats,
    empty_pool_stats,
)

SECTIONS = ("GENERAL", "READ OPERATIONS", "WRITE OPERATIONS")

# Report label (spaces removed, upper case) -> (section, PoolStats field).
COUNTERS: dict[str, tuple[str, str]] = {
    "UNAVAIL.BUFFER-VPOOLFULL": ("GENERAL", "vpool_full"),
    "NUMBEROFDATASETOPENS": ("GENERAL", "dataset_opens"),
    "BUFFERSALLOCATED-VPOOL": ("GENERAL", "buffers_allocated"),
    "GETPAGEREQUEST-SEQUENTIAL": ("READ OPERATIONS", "getpages_sequential"),
    "GETPAGEREQUEST-RANDOM": ("READ OPERATIONS", "getpages_random"),
    "SYNCHRON.READS-SEQUENTIAL": ("READ OPERATIONS", "sync_reads_sequential"),
    "SYNCHRON.READS-RANDOM": ("READ OPERATIONS", "sync_reads_random"),
    "SEQUENTIALPREFETCHREQUEST": ("READ OPERATIONS", "seq_prefetch_requests"),
    "SEQUENTIALPREFETCHREADS": ("READ OPERATIONS", "seq_prefetch_reads"),
    "PAGESREADVIASEQ.PREFETCH": ("READ OPERATIONS", "seq_prefetch_pages"),
    "LISTPREFETCHREQUESTS": ("READ OPERATIONS", "list_prefetch_requests"),
    "LISTPREFETCHREADS": ("READ OPERATIONS", "list_prefetch_reads"),
    "PAGESREADVIALISTPREFETCH": ("READ OPERATIONS", "list_prefetch_pages"),
    "DYNAMICPREFETCHREQUESTED": ("READ OPERATIONS", "dyn_prefetch_requests"),
    "DYNAMICPREFETCHREADS": ("READ OPERATIONS", "dyn_prefetch_reads"),
    "PAGESREADVIADYN.PREFETCH": ("READ OPERATIONS", "dyn_prefetch_pages"),
    "PREF.DISABLED-NOBUFFER": ("READ OPERATIONS", "prefetch_disabled_no_buffer"),
    "PREF.DISABLED-NOREADENG": ("READ OPERATIONS", "prefetch_disabled_no_read_engine"),
    "PAGE-INSREQUIREDFORREAD": ("READ OPERATIONS", "pageins_read"),
    "BUFFERUPDATES": ("WRITE OPERATIONS", "buffer_updates"),
    "PAGESWRITTEN": ("WRITE OPERATIONS", "pages_written"),
    "SYNCHRONOUSWRITES": ("WRITE OPERATIONS", "sync_writes"),
    "ASYNCHRONOUSWRITES": ("WRITE OPERATIONS", "async_writes"),
    "HORIZ.DEF.WRITETHRESHOLD": ("WRITE OPERATIONS", "dwqt_reached"),
    "VERTI.DEF.WRITETHRESHOLD": ("WRITE OPERATIONS", "vdwqt_reached"),
    "DMTHRESHOLD": ("WRITE OPERATIONS", "dm_threshold_reached"),
    "WRITEENGINENOTAVAILABLE": ("WRITE OPERATIONS", "write_engine_not_available"),
    "PAGE-INSREQUIREDFORWRITE": ("WRITE OPERATIONS", "pageins_write"),
}
IGNORED = {
    "CURRENTACTIVEBUFFERS",
    "DFHSMMIGRATEDDATASET",
    "DFHSMRECALLTIMEOUTS",
    "VPOOLEXPANS.ORCONTRACT.",
    "VPOOLORHPOOLEXP.FAILURE",
    "CONCUR.PREF.I/OSTREAMS-HWM",
    "PREF.I/OSTREAMSREDUCTION",
    "PARALLELQUERYREQUESTS",
    "PARALL.QUERYREQ.REDUCTION",
    "PREF.QUANT.REDUCEDTO1/2",
    "PREF.QUANT.REDUCEDTO1/4",
    "BPOOLHITRATIO(%)",
    "GETPAGEREQUEST",
    "SYNCHRONOUSREADS",
    "GETPAGEPERSYN.READ-RANDOM",
    "S.PRF.PAGESREAD/S.PRF.READ",
    "L.PRF.PAGESREAD/L.PRF.READ",
    "D.PRF.PAGESREAD/D.PRF.READ",
    "BUFF.UPDATES/PAGESWRITTEN",
    "PAGESWRITTENPERWRITEI/O",
}

NUMBER = re.compile(r"^-?\d+(?:\.\d+)?[KMG]?$")
NOT_REPORTED = {"N/A", "N/C", "N/P"}
SCALE = {"K": 1e3, "M": 1e6, "G": 1e9}
# A block header's pool: any name, since a section name follows it (seed 000 prints "BF20").
HEADER = re.compile(r"^([A-Z][A-Z0-9]*\d[A-Z0-9]*)$")
STAMP = r"(\d\d/\d\d/(?:\d\d){1,2}\s+\d\d:\d\d:\d\d(?:\.\d+)?)"


def parse_quantity(text: str) -> float | None:
    """`7270.9K` -> 7270900.0; N/A, N/C -> None; anything else raises ValueError."""
    t = text.strip().replace(",", "")
    if t in NOT_REPORTED:
        return None
    if not NUMBER.match(t):
        raise ValueError(f"{text!r} is not a quantity")
    if t[-1] in SCALE:
        return float(t[:-1]) * SCALE[t[-1]]
    return float(t)


def _precision(text: str) -> float:
    """The unit of the last printed digit of a quantity: 7270.9K -> 100, 1127.00 -> 0.01."""
    t = text.strip().replace(",", "")
    scale = SCALE.get(t[-1], 1.0)
    digits = t.rstrip("KMG")
    decimals = len(digits.partition(".")[2])
    return scale * 10.0**-decimals


def _stamp(text: str) -> float | None:
    """mm/dd/yy hh:mm:ss.ff (reports print local time; taken as UTC). None when not a real time."""
    try:
        date, clock = text.split()
        fmt = "%m/%d/%y" if len(date) == 8 else "%m/%d/%Y"
        d = datetime.strptime(date, fmt).replace(tzinfo=UTC)
        h, m, s = clock.split(":")
        if int(h) > 23 or int(m) > 59 or float(s) >= 61:
            return None
        return d.timestamp() + int(h) * 3600 + int(m) * 60 + float(s)
    except ValueError:
        return None


def _elapsed(text: str) -> float | None:
    try:
        parts = [float(p) for p in text.strip().split(":")]
    except ValueError:
        return None
    seconds = 0.0
    for p in parts:
        seconds = seconds * 60 + p
    return seconds


def _cells(line: str) -> list[str]:
    parts = line.split("\t") if "\t" in line else re.split(r"\s{2,}", line)
    return [p.strip() for p in parts]


@dataclass
class _Block:
    pool: str
    first_line: int
    source: str  # the member (or subsystem) of the page the block is on
    values: dict[str, float | None] = field(default_factory=dict)
    error: Rejected | None = None
    lines: list[str] = field(default_factory=list)
    rates: list[tuple[float, float, float]] = field(default_factory=list)  # (quantity, its precision, /SECOND)
    scope: str = "member"  # GROUP BP blocks: 'group' on a group-scope page
    group: str | None = None  # GROUP BP blocks: the page's data sharing group
    labels: set[str] = field(default_factory=set)  # GROUP BP blocks: the counters seen
    last_line: int = 0  # GROUP BP blocks: the last line read into it

    def derived_seconds(self) -> float | None:
        """The interval as QUANTITY / (/SECOND), from the counter whose printed digits make the
        division most precise (a quantity printed as 7270.9K is known to 50, a rate to 0.005)."""
        best = min(self.rates, key=lambda r: r[1] / 2 / r[0] + 0.005 / r[2], default=None)
        return None if best is None else best[0] / best[2]


class OmegamonParser:
    def __init__(
        self,
        source_name: str,
        default_source: str = "DB2",
        *,
        interval_end: float | None = None,
        interval_seconds: float | None = None,
    ) -> None:
        self.name = source_name
        self.default_source = default_source
        self.result = Parsed()
        self._subsystem: str | None = None
        self._member: str | None = None
        self._start: float | None = None
        self._end: float | None = None
        self._elapsed: float | None = None
        self._sections: dict[str, str] = {}  # section -> pool of the current header
        self._blocks: dict[str, _Block] = {}
        self._group: str | None = None
        self._group_scope = False  # the page is a group-scope report's (SCOPE: GROUP)
        self._gbp_pools: list[str] = []  # GBPs of the current GROUP BP header(s), left to right
        self._gbp_blocks: dict[str, _Block] = {}
        self.given_end = interval_end  # when an interval the report does not state ended (epoch s)
        self.given_seconds = interval_seconds  # and how long it lasted, when the caller knows

    def _source(self) -> str:
        return self._member or self._subsystem or self.default_source

    def _flush(self) -> None:
        for b in self._blocks.values():
            self._emit(b)
        for b in self._gbp_blocks.values():
            self._emit_gbp(b)
        self._blocks = {}
        self._sections = {}
        self._gbp_blocks = {}
        self._gbp_pools = []

    def _new_interval(self) -> None:
        self._flush()
        self._start = self._end = self._elapsed = None

    def _emit(self, b: _Block) -> None:
        span = self._span(b)
        if span is None:
            return
        start, end, derived = span
        rec: dict[str, Any] = empty_pool_stats()
        rec.update(
            {
                "source": b.source,
                "pool": b.pool,
                "interval_start": int(start * 1e6),
                "interval_end": int(end * 1e6),
                "interval_seconds": end - start,
                "origin": "omegamon",
                "interval_derived": derived,
            }
        )
        for fld, v in b.values.items():
            rec[fld] = None if v is None else round(v)
        self.result.add("pool_stats", rec)

    def _emit_gbp(self, b: _Block) -> None:
        missing = [k for k in gbp.REQUIRED if gbp.label_key(k) not in b.labels]
        if b.error is None and b.labels and missing:
            why = f"truncated block: GROUP {b.pool[1:]} has no {missing[0]}"
            self.result.rejected.append(Rejected(self.name, b.last_line, missing[0], why, "\n".join(b.lines)))
            return
        span = self._span(b)
        if span is None:
            return
        start, end, _ = span
        rec = empty_gbp_stats()
        rec.update(gbp.record(b.pool, b.source, b.scope, b.group, b.values, start, end))
        self.result.add("gbp_stats", rec)

    def _span(self, b: _Block) -> tuple[float, float, bool] | None:
        """The interval of a block (start, end, whether its length was derived), or None with
        the block rejected: broken, empty, or in no interval the report or the caller states."""
        raw = "\n".join(b.lines)
        if b.error is not None:
            self.result.rejected.append(b.error)
            return None
        if not any(v is not None for v in b.values.values()):
            self.result.rejected.append(Rejected(self.name, b.first_line, b.pool, "truncated block: no counters", raw))
            return None
        start, end = self._start, self._end
        if start is not None and end is None and self._elapsed is not None:
            end = start + self._elapsed
        derived = False
        if start is None or end is None:
            # No interval in the report (a block copied out of it, as in seed 000): its length is
            # given, or derived from the counters and their rates; its end must be given.
            seconds = self.given_seconds
            if seconds is None:
                seconds, derived = b.derived_seconds(), True
            if seconds is None or self.given_end is None:
                how = "" if seconds is None else f" (it lasted {seconds:,.0f} s by QUANTITY / (/SECOND))"
                self.result.rejected.append(
                    Rejected(
                        self.name,
                        b.first_line,
                        "interval",
                        "the report does not say which interval it covers (no INTERVAL FROM/TO or INTERVAL "
                        f"START/ELAPSED){how}: give --at, when it ended"
                        + ("" if seconds is not None else ", and --interval, how long it lasted"),
                        raw,
                    )
                )
                return None
            start, end = self.given_end - seconds, self.given_end
        if end - start <= 0:
            self.result.rejected.append(
                Rejected(self.name, b.first_line, "interval", f"interval of {end - start:g} seconds", raw)
            )
            return None
        return start, end, derived

    def _header_info(self, line: str) -> bool:
        u = line.upper()
        if m := re.search(r"SUBSYSTEM:\s*(\S+)", u):
            self._subsystem = m.group(1)
        if (m := re.search(r"MEMBER:\s*(\S+)", u)) and m.group(1) not in NOT_REPORTED:
            self._member = m.group(1)
        if (m := re.search(r"\bGROUP:\s*(\S+)", u)) and m.group(1) not in NOT_REPORTED:
            self._group = m.group(1)
        if m := re.search(r"\bSCOPE:\s*(\S+)", u):
            self._group_scope = m.group(1) == "GROUP"
        if m := re.search(r"INTERVAL FROM:\s*" + STAMP, u):
            self._new_interval()
            self._start = _stamp(m.group(1))
            if m2 := re.search(r"\bTO:\s*" + STAMP, u[m.end() :]):
                self._end = _stamp(m2.group(1))
            return True
        if m := re.search(r"INTERVAL START\s*:\s*" + STAMP, u):
            start = _stamp(m.group(1))
            if self._start is None or start is None or abs(start - self._start) > 0.5:
                self._new_interval()
                self._start = start
            return True
        if m := re.search(r"INTERVAL END\s*:\s*" + STAMP, u):
            self._end = _stamp(m.group(1))
            return True
        if m := re.search(r"INTERVAL ELAPSED\s*:\s*([\d:.]+)", u):
            self._elapsed = _elapsed(m.group(1))
            return True
        if self._start is not None and self._end is None and (m := re.search(r"\bTO:\s*" + STAMP, u)):
            self._end = _stamp(m.group(1))  # the TO: line under INTERVAL FROM:
        return False

    def feed_line(self, lineno: int, line: str) -> None:
        if self._header_info(line):
            return
        cells = _cells(line)
        if self._feed_gbp(lineno, line, cells):
            return
        # Block headers: "BP1  GENERAL  QUANTITY ..." (one or two side by side), or "BP1 WRITE
        # OPERATIONS" in one cell, possibly beside counters of the block to its right.
        headers = []
        for i, cell in enumerate(cells):
            words = cell.upper().split(maxsplit=1)
            if len(words) == 2 and HEADER.match(words[0]) and words[1] in SECTIONS:
                headers.append((words[0], words[1]))
                cells[i] = ""
            elif HEADER.match(cell.upper()) and i + 1 < len(cells) and cells[i + 1].upper() in SECTIONS:
                headers.append((cell.upper(), cells[i + 1].upper()))
                cells[i] = cells[i + 1] = ""
        for pool, section in headers:
            self._sections[section] = pool
            self._blocks.setdefault(pool, _Block(pool, lineno, self._source())).lines.append(line)
        if not self._sections:
            return
        if (
            not headers
            and line.strip()
            and not any(NUMBER.match(c.replace(",", "")) or c in NOT_REPORTED for c in cells)
            and not set(line.strip()) <= set("-= \t")  # an underline, tab-separated as copied
        ):
            self._sections = {}  # prose after the block: the block is over
            return
        i = 0
        while i < len(cells):
            label = cells[i].upper().replace(" ", "").replace("_", ".")  # PREF_QUANT. as PREF.QUANT.
            qty = cells[i + 1] if i + 1 < len(cells) else ""
            if label in COUNTERS or label in IGNORED:
                self._rate(lineno, label, qty, cells[i + 2] if i + 2 < len(cells) else "")
            if label in COUNTERS:
                section, fld = COUNTERS[label]
                owner = self._sections.get(section)
                if owner is not None:
                    block = self._blocks.setdefault(owner, _Block(owner, lineno, self._source()))
                    block.lines.append(line)
                    try:
                        block.values[fld] = parse_quantity(qty)
                    except ValueError as exc:
                        if block.error is None:
                            block.error = Rejected(self.name, lineno, cells[i], str(exc), line)
                i += 2
            elif label in IGNORED:
                self.result.ignored[cells[i]] += 1
                i += 2
            elif (
                label
                and not NUMBER.match(label)
                and label not in NOT_REPORTED
                and qty
                and (NUMBER.match(qty.replace(",", "")) or qty in NOT_REPORTED)
            ):
                self.result.unknown[cells[i]] += 1  # a counter this parser does not know: kept out, counted
                i += 2
            else:
                i += 1

    def _feed_gbp(self, lineno: int, line: str, cells: list[str]) -> bool:
        """A GROUP BP block's header or line (True: taken); the k-th counter of a line belongs to
        the k-th of the GROUP BP blocks printed side by side."""
        pools = [p for c in cells if (p := gbp.header_pool(c))]
        if pools:
            self._sections = {}  # a BP block before it is over
            self._gbp_pools = pools
            scope, source = (
                ("group", self._group or self._source()) if self._group_scope else ("member", self._source())
            )
            for p in pools:
                block = self._gbp_blocks.setdefault(p, _Block(p, lineno, source, scope=scope, group=self._group))
                block.lines.append(line)
            return True
        if not self._gbp_pools:
            return False
        if not line.strip() or set(line.strip()) <= set("-= \t"):
            return True  # blank lines and underlines inside the block
        if not any(NUMBER.match(c.replace(",", "")) or c in NOT_REPORTED for c in cells):
            self._gbp_pools = []  # prose or another block's header: the GROUP BP block is over
            return False
        k, i = 0, 0
        while i < len(cells):
            cell, label = cells[i], gbp.label_key(cells[i])
            j = i + 2 if i + 2 < len(cells) and gbp.CALLOUT.match(cells[i + 1]) else i + 1
            qty = cells[j] if j < len(cells) else ""
            per_second = cells[j + 1] if j + 1 < len(cells) else ""
            known = label in gbp.COUNTERS or label in gbp.IGNORED
            counted = qty != "" and (NUMBER.match(qty.replace(",", "")) is not None or qty in NOT_REPORTED)
            if not known and (not counted or NUMBER.match(label) or label in NOT_REPORTED):
                i += 1
                continue
            block = self._gbp_blocks[self._gbp_pools[min(k, len(self._gbp_pools) - 1)]]
            if block.last_line != lineno:
                block.lines.append(line)
            block.last_line = lineno
            k, i = k + 1, j + 1
            if label in gbp.IGNORED:
                self.result.ignored[cell] += 1
            elif label not in gbp.COUNTERS:
                self.result.unknown[cell] += 1  # a counter this parser does not know: kept out, counted
            else:
                block.labels.add(label)
                try:
                    v = parse_quantity(qty)
                except ValueError as exc:
                    if block.error is None:
                        block.error = Rejected(self.name, lineno, cell, str(exc), line)
                    continue
                gbp.add(block.values, gbp.COUNTERS[label], v)
                try:
                    q, r = parse_quantity(qty), parse_quantity(per_second)
                except ValueError:
                    continue
                if q is not None and r is not None and q > 0 and r > 0:
                    block.rates.append((q, _precision(qty), r))
        return True

    def _rate(self, lineno: int, label: str, qty: str, per_second: str) -> None:
        """Keep (quantity, its precision, /SECOND) of a counter line for the block it belongs to."""
        section = COUNTERS[label][0] if label in COUNTERS else None
        owner = self._sections.get(section) if section else next(iter(self._sections.values()), None)
        try:
            q, r = parse_quantity(qty), parse_quantity(per_second)
        except ValueError:
            return
        if owner is None or q is None or r is None or q <= 0 or r <= 0:
            return
        block = self._blocks.setdefault(owner, _Block(owner, lineno, self._source()))
        block.rates.append((q, _precision(qty), r))

    def finish(self) -> Parsed:
        self._flush()
        return self.result


def parse(
    text: str,
    source_name: str,
    default_source: str = "DB2",
    *,
    interval_end: float | None = None,
    interval_seconds: float | None = None,
) -> Parsed:
    """Every buffer pool block of a report. A block whose report states no interval needs
    `interval_end` (epoch s); its length is `interval_seconds`, or QUANTITY / (/SECOND)."""
    p = OmegamonParser(source_name, default_source, interval_end=interval_end, interval_seconds=interval_seconds)
    for n, line in enumerate(text.splitlines(), start=1):
        p.feed_line(n, line)
    return p.finish()


def read(text: str, source_name: str, options: ParseOptions) -> Parsed:
    return parse(text, source_name, options.source or "DB2", interval_end=options.at, interval_seconds=options.interval)


FORMAT = StatsFormat(
    "omegamon",
    "DB2 statistics report text (OMEGAMON buffer pool blocks)",
    read,
    re.compile(
        r"^\s*(?:[A-Z][A-Z0-9]*\d\w*\s+(?:GENERAL|READ OPERATIONS|WRITE OPERATIONS)|GROUP\s+BP\w+)\s+QUANTITY",
        re.MULTILINE,
    ),
)

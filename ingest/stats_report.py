"""PoolStats records written as a DB2 statistics report (the OMEGAMON "STATISTICS REPORT - LONG"
buffer pool blocks of seed 000), for `poolsight generate --output DIR`.

So a generated workload also comes as the text most shops already collect, and
`poolsight ingest stats --format omegamon` reads it back: one page per member
and interval, one GENERAL, READ OPERATIONS and WRITE OPERATIONS block per
pool. Quantities are written whole (no K/M suffix) so nothing is rounded; the
report's own ratios and totals are written as a real report has them (the
parser ignores and recomputes them). A counter the record does not have is N/A.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from poolsight.ingest.stats_omegamon import COUNTERS, SECTIONS
from poolsight.simulator.metrics import SYNC_READS, pool_metrics

# Report labels in report order, per section (the parser's keys are these without blanks).
LABELS: dict[str, list[str]] = {
    "GENERAL": ["UNAVAIL.BUFFER-VPOOL FULL", "NUMBER OF DATASET OPENS", "BUFFERS ALLOCATED - VPOOL"],
    "READ OPERATIONS": [
        "BPOOL HIT RATIO (%)",
        "GETPAGE REQUEST",
        "GETPAGE REQUEST-SEQUENTIAL",
        "GETPAGE REQUEST-RANDOM",
        "SYNCHRONOUS READS",
        "SYNCHRON. READS-SEQUENTIAL",
        "SYNCHRON. READS-RANDOM",
        "SEQUENTIAL PREFETCH REQUEST",
        "SEQUENTIAL PREFETCH READS",
        "PAGES READ VIA SEQ.PREFETCH",
        "LIST PREFETCH REQUESTS",
        "LIST PREFETCH READS",
        "PAGES READ VIA LIST PREFETCH",
        "DYNAMIC PREFETCH REQUESTED",
        "DYNAMIC PREFETCH READS",
        "PAGES READ VIA DYN.PREFETCH",
        "PREF.DISABLED-NO BUFFER",
        "PREF.DISABLED-NO READ ENG",
        "PAGE-INS REQUIRED FOR READ",
    ],
    "WRITE OPERATIONS": [
        "BUFFER UPDATES",
        "PAGES WRITTEN",
        "BUFF.UPDATES/PAGES WRITTEN",
        "SYNCHRONOUS WRITES",
        "ASYNCHRONOUS WRITES",
        "PAGES WRITTEN PER WRITE I/O",
        "HORIZ.DEF.WRITE THRESHOLD",
        "VERTI.DEF.WRITE THRESHOLD",
        "DM THRESHOLD",
        "WRITE ENGINE NOT AVAILABLE",
        "PAGE-INS REQUIRED FOR WRITE",
    ],
}
GAUGES = {"BUFFERSALLOCATED-VPOOL"}  # a level, not a count: no rates
COLUMNS = "QUANTITY   /SECOND   /THREAD   /COMMIT"
RULE = "--------------------------------  --------  --------  --------  --------"


def _stamp(epoch_us: int) -> str:
    d = datetime.fromtimestamp(epoch_us / 1e6, tz=UTC)
    return d.strftime("%m/%d/%y %H:%M:%S.") + f"{d.microsecond // 10_000:02d}"


def _derived(rec: dict[str, Any]) -> dict[str, float | None]:
    """The report's own totals and ratios, from simulator.metrics where it defines them."""
    m = pool_metrics(rec)
    sync = [rec.get(k) for k in SYNC_READS]
    updates, written = rec.get("buffer_updates"), rec.get("pages_written")
    return {
        "BPOOL HIT RATIO (%)": None if m["system_hit_ratio"] is None else 100 * m["system_hit_ratio"],
        "GETPAGE REQUEST": m["getpages"],
        "SYNCHRONOUS READS": None if None in sync else sum(v for v in sync if v is not None),
        "BUFF.UPDATES/PAGES WRITTEN": None if updates is None or not written else updates / written,
        "PAGES WRITTEN PER WRITE I/O": m["pages_per_write"],
    }


def _row(label: str, *cells: str) -> str:
    """Cells at least two blanks apart, as the report's fixed-width columns are."""
    return f"{label:<32}  " + "  ".join(f"{c:>8}" for c in cells)


def _line(label: str, rec: dict[str, Any], derived: dict[str, float | None], seconds: float) -> str:
    key = label.replace(" ", "").upper()
    if key in COUNTERS:
        v = rec.get(COUNTERS[key][1])
        if v is None:
            return _row(label, "N/A", "N/A", "N/A", "N/A")
        if key in GAUGES:
            return _row(label, f"{float(v):.2f}", "N/A", "N/A", "N/A")
        return _row(label, f"{float(v):.2f}", f"{v / seconds:.2f}" if seconds > 0 else "N/C", "N/C", "N/C")
    d = derived.get(label)
    if d is None:
        return _row(label, "N/C")
    if label in ("GETPAGE REQUEST", "SYNCHRONOUS READS"):  # totals have the per-second column too
        return _row(label, f"{d:.2f}", f"{d / seconds:.2f}" if seconds > 0 else "N/C", "N/C", "N/C")
    return _row(label, f"{d:.2f}")


def page(records: list[dict[str, Any]], page_number: int) -> str:
    """One report page: the PoolStats records of one member and interval."""
    first = records[0]
    source = first["source"]
    head = [
        f"1    LOCATION: {source:<22}OMEGAMON XE FOR DB2 PERFORMANCE EXPERT (V5R4M0)      PAGE: 1-{page_number}",
        "        GROUP: N/P                    STATISTICS REPORT - LONG        REQUESTED FROM: NOT SPECIFIED",
        f"       MEMBER: {source:<22}                                            TO: NOT SPECIFIED",
        f"    SUBSYSTEM: {source:<22}                                 INTERVAL FROM: {_stamp(first['interval_start'])}",
        f"  DB2 VERSION: V13                    SCOPE: MEMBER                                TO: "
        f"{_stamp(first['interval_end'])}",
        "",
    ]
    out = head
    for rec in records:
        seconds = float(rec["interval_seconds"])
        derived = _derived(rec)
        for section in SECTIONS:
            out.append(f"{rec['pool']:<10}{section:<24}  {COLUMNS}")
            out.append(RULE)
            out += [_line(label, rec, derived, seconds) for label in LABELS[section]]
            out.append("")
    return "\n".join(out) + "\n"

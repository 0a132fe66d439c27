"""`-DISPLAY GROUPBUFFERPOOL(...) GDETAIL / MDETAIL` console output: the DSNB7xxI messages.

What the messages are (each as `DSNBnnnI <prefix><member> text`, continuation lines under it;
the member that issued the command follows the id glued to its command prefix, as in
`-DISPLAY BUFFERPOOL`; KEY = value pairs are read wherever they stand, as stats_display does):

Confirmed (the text as IBM prints it, with real spacing):
- DSNB783I .. DSNB788I, DSNB762I, DSNB790I, DSN9022I: the GDETAIL figure of "Too few data
  entries" (ibm.com/docs/en/db2-for-zos/13.0.0?topic=pool-too-few-data-entries) and of "Too few
  directory entries" (ibm.com/docs/en/db2-for-zos/12.0.0?topic=pool-too-few-directory-entries):
  `DSNB783I -DB1A CUMULATIVE GROUP DETAIL STATISTICS SINCE 15:35:23 May 17, 2002`, DSNB784I
  READS DATA RETURNED; DSNB785I DATA NOT RETURNED, DIRECTORY ENTRY EXISTED / CREATED / NOT
  CREATED (`= 332, 0`: two values); DSNB786I WRITES CHANGED PAGES, CLEAN PAGES, FAILED DUE TO
  LACK OF STORAGE, CHANGED PAGES SNAPSHOT VALUE; DSNB787I RECLAIMS FOR DIRECTORY ENTRIES, FOR
  DATA ENTRIES, CASTOUTS; DSNB788I CROSS INVALIDATIONS DUE TO DIRECTORY RECLAIMS, DUE TO WRITES,
  EXPLICIT (also its message page, .../12.0.0?topic=messages-dsnb788i). The figures mark fields
  with a letter (`DATA RETURNED A = 3845`); a one-letter word ending a key is dropped, so the
  figures read as printed.
- DSNB750I DISPLAY FOR GROUP BUFFER POOL gbpname FOLLOWS (.../13.0.0/msgs dsnb750i): the pool.
- DSNB755I CURRENT DIRECTORY TO DATA RATIO (RATIO); DSNB756I CLASS CASTOUT THRESHOLD =
  pct,buffers, GROUP BUFFER POOL CASTOUT THRESHOLD = pct %, GROUP BUFFER POOL CHECKPOINT
  INTERVAL = n MINUTES (.../13.0.0/msgs dsnb755i).
- DSNB758I ALLOCATED SIZE = asize KB; DSNB759I NUMBER OF DIRECTORY ENTRIES, NUMBER OF DATA
  PAGES, NUMBER OF CONNECTIONS (.../13.0.0?topic=messages-dsnb759i). Entries are a snapshot,
  the same in an incremental or a cumulative display (SAP's DB2W0254DE documents the field so).
- DSNB772I CUMULATIVE MEMBER DETAIL STATISTICS SINCE basetime (.../13.0.0?topic=messages-dsnb772i).
- DSNB777I ASYNCHRONOUS WRITES CHANGED PAGES, CLEAN PAGES, FAILED WRITES DUE TO LACK OF STORAGE,
  WRITE-AROUND PAGES (.../SSEPEK_12.0.0 dsnb777i); DSNB778I CASTOUT THRESHOLDS DETECTED FOR
  CLASSES, FOR GROUP BUFFER POOL, GBP CHECKPOINTS TRIGGERED, PARTICIPATION IN REBUILD and
  DSNB796I CASTOUTS PAGES CASTOUT (.../13.0.0?topic=messages-dsnb778i); DSNB797I OTHER
  INTERACTIONS ... EXPLICIT CROSS INVALIDATIONS (.../13.0.0?topic=messages-dsnb797i).
- The command (.../SSEPEK_12.0.0 db2z_cmd_displaygroupbufferpool): GDETAIL(INTERVAL), the
  default, shows what accumulated since the last GDETAIL(INTERVAL) report; GDETAIL(*) since the
  structure was allocated; MDETAIL likewise for the member the command went to (since its last
  MDETAIL(INTERVAL), or since it first connected). A structure is named groupname_gbpname.
- A shop's monitoring exec (a public REXX exec, find_string "DSNB750I") issues `-DIS GBPOOL
  TYPE(GCONN) GDETAIL(INTERVAL)` and reads DSNB782I as the incremental header, the GBP name as
  DSNB750I's 8th word (so the prefix and member follow the id), the second value of DIRECTORY
  ENTRY NOT CREATED, and FAILED DUE TO LACK OF STORAGE and DUE TO DIRECTORY RECLAIMS on the
  lines under DSNB786I and DSNB788I.

Inferred (by symmetry with the confirmed messages; no IBM text at hand):
- DSNB782I INCREMENTAL GROUP DETAIL STATISTICS SINCE basetime (as DSNB783I) and DSNB771I
  INCREMENTAL MEMBER DETAIL STATISTICS SINCE basetime (as DSNB772I).
- DSNB773I MEMBER DETAIL STATISTICS SYNCHRONOUS READS DUE TO BUFFER INVALIDATION DATA RETURNED
  / DATA NOT RETURNED (the label is confirmed by "Too few directory entries") and DSNB774I DUE TO
  DATA PAGE NOT IN BUFFER POOL DATA RETURNED / DATA NOT RETURNED; DSNB776I SYNCHRONOUS WRITES
  CHANGED PAGES / CLEAN PAGES / FAILED DUE TO LACK OF STORAGE (as DSNB777I).
- DSNB757I MVS CFRM POLICY STATUS FOR groupname_gbpname = status: the group's name.
- DSNB785I's two values of DIRECTORY ENTRY NOT CREATED: the CF's read-miss counters
  "assignment suppressed" and "target storage class full" (z/OS IXLCACHE storage class
  statistics, SMF 42 CF cache counters list the same five read outcomes as DSNB784I/785I);
  reads_no_data_dir_not_created holds both, reads_no_data_dir_full the second.

Records (gbp_stats): GDETAIL gives scope 'group' (the structure as a whole): source is the
group (from DSNB757I's structure name, else a structure name in the command line), else the
member that issued the command (group_name then null). MDETAIL gives scope 'member', source
the member. Each record carries the structure's attributes from its display (RATIO, CLASST,
GBPOOLT, GBPCHKPT, size, entries). Member writes are DSNB776I + DSNB777I (sync + async).
DSNB787I CASTOUTS is the structure's castout counter (`castouts`); pages cast out by a member
are its DSNB796I PAGES CASTOUT (`castout_pages`), null in a group record.
Intervals: an incremental display covers its SINCE to the display's time; a cumulative one
since its basetime: the first is read as one interval from the basetime, each later one of
the same pool, scope, source and basetime as the difference to the one before (the changed
pages snapshot is a level, not differenced; a counter that went down is rejected). The
display's time is the last console timestamp leading its lines (or the caller's `at`), as
for `-DISPLAY BUFFERPOOL`; without it the detail is rejected.

Ignored knowingly: DSNB755I connection and GBPCACHE, DSNB756I recovery status, DSNB757I policy
size and duplexing, DSNB758I volatility, rebuild and CF level, DSNB759I connections, DSNB762I
and DSNB764I-765I/DSNB793I (the secondary GBP), DSNB775I and DSNB789I (prefetch, register
page list), DSNB777I write-around pages, DSNB778I rebuild participation, DSNB796I and DSNB797I
requests other than pages cast out and explicit XIs, DSNB798I checkpoint, DSNB818I
asynchronous XI, the connection list (DSNB766I-769I).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from poolsight.ingest.stats_common import Parsed, ParseOptions, Rejected, StatsFormat, empty_gbp_stats
from poolsight.ingest.stats_display import LEADING_TIME, MESSAGE, MONTHS, SINCE, pairs

# The command, when the output is kept with it: it may name a structure (group_gbp).
COMMAND = re.compile(r"DIS(?:PLAY)?\s+(?:GROUPBUFFERPOOL|GBPOOL)\b\s*(?:\(\s*([^)]*)\))?", re.IGNORECASE)
STRUCTURE = re.compile(r"^([A-Z0-9$#@]+)_(GBP[0-9A-Z]+)$")
POLICY = re.compile(r"CFRM\s+POLICY\s+STATUS\s+FOR\s+(\S+)")
SIZE = re.compile(r"ALLOCATED\s+SIZE\s*=\s*([\d,]+)\s*([KMG])?B?\b")
CALLOUT = re.compile(r"\s[A-Z]$")  # a figure's field letter ending a key: "DATA RETURNED A"

GROUP_HEADERS = {"DSNB782I": False, "DSNB783I": True}  # message -> cumulative
MEMBER_HEADERS = {"DSNB771I": False, "DSNB772I": True}
# message -> [(key suffix, field)], tried in order; fields of several messages add up.
GROUP_COUNTERS: dict[str, list[tuple[str, str]]] = {
    "DSNB784I": [("DATA RETURNED", "reads_data_returned")],
    "DSNB785I": [
        ("DIRECTORY ENTRY NOT CREATED", "reads_no_data_dir_not_created"),
        ("DIRECTORY ENTRY EXISTED", "reads_no_data_dir_existed"),
        ("DIRECTORY ENTRY CREATED", "reads_no_data_dir_created"),
    ],
    "DSNB786I": [
        ("CHANGED PAGES SNAPSHOT VALUE", "changed_pages_snapshot"),
        ("CHANGED PAGES", "changed_pages_written"),
        ("CLEAN PAGES", "clean_pages_written"),
        ("LACK OF STORAGE", "write_failed_no_storage"),
    ],
    "DSNB787I": [
        ("FOR DIRECTORY ENTRIES", "directory_reclaims"),
        ("FOR DATA ENTRIES", "data_entry_reclaims"),
        ("CASTOUTS", "castouts"),
    ],
    "DSNB788I": [
        ("DUE TO DIRECTORY RECLAIMS", "xi_due_to_reclaims"),
        ("DUE TO WRITES", "xi_due_to_writes"),
        ("EXPLICIT", "xi_explicit"),
    ],
}
_WRITES = [
    ("CHANGED PAGES", "changed_pages_written"),
    ("CLEAN PAGES", "clean_pages_written"),
    ("LACK OF STORAGE", "write_failed_no_storage"),
]
MEMBER_COUNTERS: dict[str, list[tuple[str, str]]] = {
    "DSNB773I": [("DATA NOT RETURNED", "xi_reads_no_data"), ("DATA RETURNED", "xi_reads_data_returned")],
    "DSNB774I": [("DATA NOT RETURNED", "nf_reads_no_data"), ("DATA RETURNED", "nf_reads_data_returned")],
    "DSNB776I": _WRITES,  # synchronous
    "DSNB777I": _WRITES,  # asynchronous
    "DSNB778I": [
        ("FOR CLASSES", "castout_class_threshold"),
        ("FOR GROUP BUFFER POOL", "castout_gbp_threshold"),
        ("CHECKPOINTS TRIGGERED", "gbp_checkpoints"),
    ],
    "DSNB796I": [("PAGES CASTOUT", "castout_pages")],
    "DSNB797I": [("EXPLICIT CROSS INVALIDATIONS", "xi_explicit")],
}
# What a complete detail has: every message with every key (DSNB776I, inferred, may be absent).
REQUIRED = {
    "group": list(GROUP_COUNTERS),
    "member": ["DSNB773I", "DSNB774I", "DSNB777I", "DSNB778I", "DSNB796I", "DSNB797I"],
}
LEVELS = {"changed_pages_snapshot"}  # snapshots: not differenced between cumulative displays
GROUP_FIELDS = [f for m in GROUP_COUNTERS.values() for _, f in m] + ["reads_no_data_dir_full"]
MEMBER_FIELDS = list(dict.fromkeys(f for m in MEMBER_COUNTERS.values() for _, f in m))
ATTRIBUTES = (
    "group_name",
    "directory_entries",
    "data_entries",
    "ratio",
    "structure_mb",
    "gbpoolt",
    "classt",
    "gbpchkpt_minutes",
)


class _Bad(Exception):
    def __init__(self, fld: str, reason: str) -> None:
        super().__init__(reason)
        self.field = fld
        self.reason = reason


def _counts(value: str, label: str) -> list[int]:
    """`332,0` -> [332, 0]; anything but whole numbers raises _Bad naming the label."""
    parts = value.split(",")
    if not all(p.isdigit() for p in parts):
        raise _Bad(label, f"{value!r} is not a count")
    return [int(p) for p in parts]


def _number(value: str, label: str) -> float:
    v = value.rstrip("%").split(",")[0]
    try:
        return float(v)
    except ValueError:
        raise _Bad(label, f"{value!r} is not a number") from None


@dataclass
class _Detail:
    scope: str  # 'group' (GDETAIL) or 'member' (MDETAIL)
    cumulative: bool | None  # None: no SINCE header seen
    since: str | None
    line: int
    last: int = 0  # the last line read into it (where a cut-off detail ends)
    values: dict[tuple[str, str], int] = field(default_factory=dict)  # (message, field) -> count
    keys: dict[str, set[str]] = field(default_factory=dict)  # message -> key suffixes seen


@dataclass
class _Gbp:
    name: str
    line: int
    subsystem: str | None
    display: int
    attrs: dict[str, Any] = field(default_factory=dict)
    details: list[_Detail] = field(default_factory=list)
    error: Rejected | None = None
    lines: list[str] = field(default_factory=list)


def _key(k: str) -> str:
    return CALLOUT.sub("", k)


def _apply(g: _Gbp, mid: str, pieces: list[tuple[int, str]], source_name: str) -> None:
    text = " ".join(t for _, t in pieces)
    u = text.upper()
    first = pieces[0][0]
    try:
        if mid in GROUP_HEADERS or mid in MEMBER_HEADERS:
            scope = "group" if mid in GROUP_HEADERS else "member"
            sm = SINCE.search(u)
            if sm is None:
                raise _Bad(mid, f"{mid} has no 'SINCE hh:mm:ss Mon dd, yyyy'")
            cumulative = {**GROUP_HEADERS, **MEMBER_HEADERS}[mid]
            g.details.append(_Detail(scope, cumulative, " ".join(sm.groups()), first))
        elif mid in GROUP_COUNTERS or mid in MEMBER_COUNTERS:
            scope = "group" if mid in GROUP_COUNTERS else "member"
            detail = next((d for d in reversed(g.details) if d.scope == scope), None)
            if detail is None:  # counters without their SINCE line: kept, rejected when emitted
                detail = _Detail(scope, None, None, first)
                g.details.append(detail)
            detail.last = pieces[-1][0]
            table = GROUP_COUNTERS.get(mid) or MEMBER_COUNTERS[mid]
            for raw_key, value in pairs(u):
                k = _key(raw_key)
                for suffix, fld in table:
                    if not k.endswith(suffix):
                        continue
                    label = f"{mid} {suffix}"
                    if value is None:
                        raise _Bad(label, f"{mid} is cut off: no value for {suffix}")
                    counts = _counts(value, label)
                    if fld == "reads_no_data_dir_not_created":
                        detail.values[(mid, fld)] = sum(counts)
                        detail.values[(mid, "reads_no_data_dir_full")] = counts[1] if len(counts) > 1 else 0
                    elif len(counts) != 1:
                        raise _Bad(label, f"{value!r} is not a count")
                    else:
                        detail.values[(mid, fld)] = counts[0]
                    detail.keys.setdefault(mid, set()).add(suffix)
                    break
        elif mid == "DSNB755I":
            for k, v in pairs(u):
                if k.endswith("CURRENT DIRECTORY TO DATA RATIO") and v is not None:
                    g.attrs["ratio"] = _number(v, f"{mid} CURRENT DIRECTORY TO DATA RATIO")
        elif mid == "DSNB756I":
            for k, v in pairs(u):
                if v is None:
                    continue
                if k.endswith("BUFFER POOL CASTOUT THRESHOLD"):
                    g.attrs["gbpoolt"] = _number(v, f"{mid} GROUP BUFFER POOL CASTOUT THRESHOLD")
                elif k.endswith("CLASS CASTOUT THRESHOLD"):
                    g.attrs["classt"] = _number(v, f"{mid} CLASS CASTOUT THRESHOLD")
                elif k.endswith("CHECKPOINT INTERVAL"):
                    g.attrs["gbpchkpt_minutes"] = _number(v, f"{mid} GROUP BUFFER POOL CHECKPOINT INTERVAL")
        elif mid == "DSNB757I":
            if (pm := POLICY.search(u)) and (sm := STRUCTURE.match(pm.group(1))):
                g.attrs["group_name"] = sm.group(1)
        elif mid == "DSNB758I":
            if zm := SIZE.search(u):
                kb = _counts(zm.group(1).replace(",", ""), f"{mid} ALLOCATED SIZE")[0]
                g.attrs["structure_mb"] = kb * {"K": 1 / 1024, "M": 1.0, "G": 1024.0}[zm.group(2) or "K"]
        elif mid == "DSNB759I":
            for k, v in pairs(u):
                if v is not None and k.endswith("NUMBER OF DIRECTORY ENTRIES"):
                    g.attrs["directory_entries"] = _counts(v, f"{mid} NUMBER OF DIRECTORY ENTRIES")[0]
                elif v is not None and k.endswith("NUMBER OF DATA PAGES"):
                    g.attrs["data_entries"] = _counts(v, f"{mid} NUMBER OF DATA PAGES")[0]
    except _Bad as exc:
        if g.error is None:
            label = exc.field.split(" ", 1)[-1]
            line = next((n for n, t in pieces if label in t.upper()), first)
            g.error = Rejected(source_name, line, exc.field, exc.reason, "\n".join(t for _, t in pieces))


def _iso(text: str) -> float:
    return datetime.fromisoformat(text.replace(" ", "T")).replace(tzinfo=UTC).timestamp()


def _since(since: str, display_time: float) -> float | None:
    clock, mon, day, year = since.split()
    y = datetime.fromtimestamp(display_time, UTC).year if year == "YYYY" else int(year)
    h, mi, s = (int(x) for x in clock.split(":"))
    try:
        return datetime(y, MONTHS[mon], int(day), h, mi, s, tzinfo=UTC).timestamp()
    except (KeyError, ValueError):
        return None


@dataclass
class _Row:
    """One detail, read: its record and what the cumulative differencing needs."""

    line: int
    raw: str
    rec: dict[str, Any]
    cumulative: bool
    since: float


def parse(
    text: str, source_name: str, default_source: str = "DB2", at: float | None = None, pool: str | None = None
) -> Parsed:
    """Every GDETAIL and MDETAIL section of a DISPLAY GROUPBUFFERPOOL output; `at`: the time of
    the display (epoch s) when its lines carry none; `pool`: the GBP an output without DSNB750I
    (and without its command line) is about."""
    result = Parsed()
    gbps: list[_Gbp] = []
    current: _Gbp | None = None
    msg: tuple[str, list[tuple[int, str]]] | None = None
    times: list[float | None] = [None]  # each display's time: its last console timestamp
    shown: set[str] = set()
    commanded = pool
    structure_group: str | None = None  # a group named by the command's structure name

    def close_message() -> None:
        if msg is not None and current is not None:
            _apply(current, msg[0], msg[1], source_name)

    def new_display() -> None:
        if any(gb.display == len(times) - 1 for gb in gbps[-1:]):
            times.append(None)
            shown.clear()

    for n, raw in enumerate(text.splitlines(), start=1):
        m = MESSAGE.match(raw)
        c = None if m else COMMAND.search(raw)
        if c:
            close_message()
            new_display()
            msg, current = None, None
            named = (c.group(1) or "*").strip().upper()
            sm = STRUCTURE.match(named)
            structure_group = sm.group(1) if sm else None
            named = sm.group(2) if sm else named
            commanded = pool if named == "*" or "," in named else named
        elif m:
            close_message()
            mid, rest = m.group(2), m.group(3)
            subsystem = None
            if rest and not rest[0].isalnum():  # the command prefix, with the member's name glued on
                token, _, rest = rest.partition(" ")
                subsystem = token[1:] or None
            msg = (mid, [(n, rest)])
            if mid == "DSNB750I":
                pm = re.search(r"GROUP\s+BUFFER\s+POOL\s+(\w+)", rest.upper())
                name = pm.group(1) if pm else "?"
                if name in shown:
                    new_display()
                shown.add(name)
                current = _Gbp(name, n, subsystem, len(times) - 1)
                gbps.append(current)
            elif mid == "DSNB790I":
                current, msg = None, None
            elif current is None and mid.startswith("DSNB7"):
                current = _Gbp(commanded or "?", n, subsystem, len(times) - 1)
                gbps.append(current)
            if current is not None:
                current.lines.append(raw)
                if structure_group and "group_name" not in current.attrs:
                    current.attrs["group_name"] = structure_group
        elif msg is not None and raw.strip():
            msg[1].append((n, raw.strip()))
            if current is not None:
                current.lines.append(raw)
        if at is None and (t := LEADING_TIME.match(raw)):
            try:
                times[-1] = _iso(t.group(1))
            except ValueError:
                pass
    close_message()
    rows: list[_Row] = []
    for gb in gbps:
        rows += _read(gb, result, source_name, default_source, at if at is not None else times[gb.display])
    _intervals(rows, result, source_name)
    return result


def _read(g: _Gbp, result: Parsed, source_name: str, default_source: str, display_time: float | None) -> list[_Row]:
    raw = "\n".join(g.lines)
    if g.error is not None:
        result.rejected.append(g.error)
        return []
    if g.name == "?":
        why = (
            "no DSNB750I line: the output does not name its group buffer pool "
            "(keep the command line with it, or give --pool)"
        )
        result.rejected.append(Rejected(source_name, g.line, "DSNB750I", why, raw))
        return []
    rows: list[_Row] = []
    for d in g.details:
        header = "DSNB782I" if d.scope == "group" else "DSNB771I"
        missing = next(
            (
                (mid, s)
                for mid in REQUIRED[d.scope]
                for s, _ in (GROUP_COUNTERS.get(mid) or MEMBER_COUNTERS[mid])
                if s not in d.keys.get(mid, set())
            ),
            None,
        )
        if d.since is None:
            why = f"detail statistics without their start ({header} or its cumulative twin: SINCE)"
            result.rejected.append(Rejected(source_name, d.line, header, why, raw))
            continue
        if missing is not None:
            mid, s = missing
            cut = mid in d.keys  # the message is there without that counter, or not there at all
            why = f"truncated block: {mid} has no {s}" if cut else f"truncated block: no {mid}"
            result.rejected.append(Rejected(source_name, max(d.last, d.line), f"{mid} {s}" if cut else mid, why, raw))
            continue
        if display_time is None:
            why = (
                "the output has no time of display (no console timestamps, no --at): "
                "the statistics cannot be placed in time"
            )
            result.rejected.append(Rejected(source_name, d.line, "time", why, raw))
            continue
        since = _since(d.since, display_time)
        if since is None:
            result.rejected.append(Rejected(source_name, d.line, header, f"no such time: SINCE {d.since}", raw))
            continue
        fields = GROUP_FIELDS if d.scope == "group" else MEMBER_FIELDS
        counters: dict[str, int | None] = {f: None for f in fields}
        for (_, fld), v in d.values.items():
            counters[fld] = (counters[fld] or 0) + v
        member = g.subsystem or default_source
        group = g.attrs.get("group_name")
        source = (group or member) if d.scope == "group" else member
        rec: dict[str, Any] = empty_gbp_stats()
        rec.update(
            {
                "source": source,
                "gbp": g.name,
                "interval_start": int(since * 1e6),
                "interval_end": int(display_time * 1e6),
                "scope": d.scope,
                **{a: g.attrs.get(a) for a in ATTRIBUTES},
                **counters,
            }
        )
        rows.append(_Row(d.line, raw, rec, bool(d.cumulative), since))
    return rows


def _intervals(rows: list[_Row], result: Parsed, source_name: str) -> None:
    """Incremental details as they are; cumulative ones of one (scope, source, GBP, basetime)
    as the difference to the one before (the first: since its basetime)."""
    previous: dict[tuple[Any, ...], dict[str, Any]] = {}
    for row in sorted(rows, key=lambda r: r.rec["interval_end"]):
        rec = dict(row.rec)
        if row.cumulative:
            key = (rec["scope"], rec["source"], rec["gbp"], row.since)
            before = previous.get(key)
            previous[key] = row.rec
            if before is not None:
                rec["interval_start"] = before["interval_end"]
                down = [
                    k
                    for k, v in rec.items()
                    if k in {*GROUP_FIELDS, *MEMBER_FIELDS} - LEVELS
                    and v is not None
                    and before.get(k) is not None
                    and v < before[k]
                ]
                if down:
                    why = f"{down[0]} went down since the display before with the same SINCE: not cumulative"
                    result.rejected.append(Rejected(source_name, row.line, down[0], why, row.raw))
                    continue
                for k in {*GROUP_FIELDS, *MEMBER_FIELDS} - LEVELS:
                    if rec.get(k) is not None and before.get(k) is not None:
                        rec[k] = rec[k] - before[k]
        if rec["interval_end"] - rec["interval_start"] <= 0:
            seconds = (rec["interval_end"] - rec["interval_start"]) / 1e6
            result.rejected.append(
                Rejected(source_name, row.line, "interval", f"interval of {seconds:g} seconds", row.raw)
            )
            continue
        result.add("gbp_stats", rec)


def read(text: str, source_name: str, options: ParseOptions) -> Parsed:
    return parse(text, source_name, options.source or "DB2", at=options.at, pool=options.pool)


FORMAT = StatsFormat(
    "gbp-display",
    "-DISPLAY GROUPBUFFERPOOL GDETAIL/MDETAIL output (DSNB7xxI messages)",
    read,
    re.compile(r"DSNB7[5-9]\dI|DIS(?:PLAY)?\s+(?:GROUPBUFFERPOOL|GBPOOL)\b", re.IGNORECASE),
)

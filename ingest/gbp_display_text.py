"""GbpStats records written as `-DISPLAY GROUPBUFFERPOOL(GBPn) GDETAIL(INTERVAL)` (a 'group'
record) or `MDETAIL(INTERVAL)` (a 'member' record) console output, so the generator can emit the
display an operator would capture at every interval's end as ground truth.

The layout is IBM's (stats_gbp_display.py lists the sources and what is confirmed): the GDETAIL
counters DSNB782I-788I line for line as in the figure of "Too few data entries" (Db2 13), the
`=` in column 55 of the message text, keys indented by level (15, 17, 19, 21); the structure's
attributes before them (DSNB755I RATIO, DSNB756I CLASST/GBPOOLT/GBPCHKPT, DSNB757I the
structure groupname_gbpname, DSNB758I size in KB, DSNB759I entries), each only when the record
has its values; MDETAIL as DSNB771I, DSNB773I/774I reads, DSNB776I/777I writes, DSNB778I
thresholds, DSNB796I pages cast out, DSNB797I explicit XIs. Every message line leads with the
console time (the interval's end, to the hundredth, truncated) and its continuation lines are
indented by the same width, so IBM's columns stay under the message text; SINCE is the
interval's start to the second. A member's writes are all printed as synchronous (DSNB776I):
the reference model writes a changed page to the GBP at once. Figures nobody models (PENDING
ratio apart from the current one, connections, CF level, unlock-castout and other requests,
rebuilds, the secondary GBP) are left out rather than invented; a counter the record lacks is 0.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
EQUALS = 54  # the column of `=` in IBM's lines (message id at column 0)
STAMP = 23  # "2026-11-22 10:00:00.00 "

Line = tuple[int, str, Any]  # (indent, text, value or None for a heading)


def _num(v: Any) -> str:
    if v is None:
        return "0"
    f = float(v)
    return str(int(f)) if f == int(f) else f"{f:g}"


def _when(t_us: int) -> str:
    seconds, micros = divmod(int(t_us), 1_000_000)
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%d %H:%M:%S.") + f"{micros // 10_000:02d}"


def _since(t_us: int) -> str:
    d = datetime.fromtimestamp(round(int(t_us) / 1e6), UTC)
    return f"{d:%H:%M:%S} {MONTHS[d.month - 1]} {d.day}, {d.year}"


def _ibm(indent: int, text: str, value: Any) -> str:
    line = " " * indent + text
    return line if value is None else f"{line.ljust(max(EQUALS, len(line) + 1))}= {value}"


def _message(when: str, mid: str, prefix: str, lines: list[Line]) -> list[str]:
    """One message: its first line after the id and prefix at the first line's indent (at least
    one blank after the prefix), the rest as continuation lines."""
    head = f"{mid} {prefix} "
    first = _ibm(lines[0][0], lines[0][1], lines[0][2])
    out = [f"{when} {head}{first[len(head) :] if len(head) <= lines[0][0] else first.lstrip()}"]
    out += [" " * STAMP + _ibm(*ln) for ln in lines[1:]]
    return out


def _attributes(rec: dict[str, Any]) -> list[tuple[str, list[Line]]]:
    g = rec.get
    gbp = rec["gbp"]
    msgs: list[tuple[str, list[Line]]] = []
    if g("ratio") is not None:
        ratio = _num(g("ratio"))
        msgs.append(
            (
                "DSNB755I",
                [
                    (15, "DB2 GROUP BUFFER POOL STATUS", None),
                    (17, "CONNECTED", "YES"),
                    (17, "CURRENT DIRECTORY TO DATA RATIO", ratio),
                    (17, "PENDING DIRECTORY TO DATA RATIO", ratio),
                ],
            )
        )
    if None not in (g("classt"), g("gbpoolt"), g("gbpchkpt_minutes")):
        msgs.append(
            (
                "DSNB756I",
                [
                    (17, "CLASS CASTOUT THRESHOLD", f"{_num(g('classt'))}, 0"),
                    (17, "GROUP BUFFER POOL CASTOUT THRESHOLD", f"{_num(g('gbpoolt'))}%"),
                    (17, "GROUP BUFFER POOL CHECKPOINT INTERVAL", f"{_num(g('gbpchkpt_minutes'))} MINUTES"),
                ],
            )
        )
    if g("group_name"):
        msgs.append(("DSNB757I", [(15, f"MVS CFRM POLICY STATUS FOR {g('group_name')}_{gbp}", "NORMAL")]))
    if (mb := g("structure_mb")) is not None:
        msgs.append(("DSNB758I", [(17, "ALLOCATED SIZE", f"{round(float(mb) * 1024)} KB")]))
    if g("directory_entries") is not None and g("data_entries") is not None:
        msgs.append(
            (
                "DSNB759I",
                [
                    (17, "NUMBER OF DIRECTORY ENTRIES", _num(g("directory_entries"))),
                    (17, "NUMBER OF DATA PAGES", _num(g("data_entries"))),
                ],
            )
        )
    return msgs


def _group(rec: dict[str, Any]) -> list[tuple[str, list[Line]]]:
    g = rec.get
    not_created = int(g("reads_no_data_dir_not_created") or 0)
    full = int(g("reads_no_data_dir_full") or 0)
    return [
        ("DSNB782I", [(15, f"INCREMENTAL GROUP DETAIL STATISTICS SINCE {_since(rec['interval_start'])}", None)]),
        (
            "DSNB784I",
            [
                (15, "GROUP DETAIL STATISTICS", None),
                (17, "READS", None),
                (19, "DATA RETURNED", _num(g("reads_data_returned"))),
            ],
        ),
        (
            "DSNB785I",
            [
                (19, "DATA NOT RETURNED", None),
                (21, "DIRECTORY ENTRY EXISTED", _num(g("reads_no_data_dir_existed"))),
                (21, "DIRECTORY ENTRY CREATED", _num(g("reads_no_data_dir_created"))),
                (21, "DIRECTORY ENTRY NOT CREATED", f"{not_created - full}, {full}"),
            ],
        ),
        (
            "DSNB786I",
            [
                (17, "WRITES", None),
                (19, "CHANGED PAGES", _num(g("changed_pages_written"))),
                (19, "CLEAN PAGES", _num(g("clean_pages_written"))),
                (19, "FAILED DUE TO LACK OF STORAGE", _num(g("write_failed_no_storage"))),
                (17, "CHANGED PAGES SNAPSHOT VALUE", _num(g("changed_pages_snapshot"))),
            ],
        ),
        (
            "DSNB787I",
            [
                (17, "RECLAIMS", None),
                (19, "FOR DIRECTORY ENTRIES", _num(g("directory_reclaims"))),
                (19, "FOR DATA ENTRIES", _num(g("data_entry_reclaims"))),
                (17, "CASTOUTS", _num(g("castouts"))),
            ],
        ),
        (
            "DSNB788I",
            [
                (17, "CROSS INVALIDATIONS", None),
                (19, "DUE TO DIRECTORY RECLAIMS", _num(g("xi_due_to_reclaims"))),
                (19, "DUE TO WRITES", _num(g("xi_due_to_writes"))),
                (19, "EXPLICIT", _num(g("xi_explicit"))),
            ],
        ),
    ]


def _member(rec: dict[str, Any]) -> list[tuple[str, list[Line]]]:
    g = rec.get
    return [
        ("DSNB771I", [(15, f"INCREMENTAL MEMBER DETAIL STATISTICS SINCE {_since(rec['interval_start'])}", None)]),
        (
            "DSNB773I",
            [
                (15, "MEMBER DETAIL STATISTICS", None),
                (17, "SYNCHRONOUS READS", None),
                (19, "DUE TO BUFFER INVALIDATION", None),
                (21, "DATA RETURNED", _num(g("xi_reads_data_returned"))),
                (21, "DATA NOT RETURNED", _num(g("xi_reads_no_data"))),
            ],
        ),
        (
            "DSNB774I",
            [
                (19, "DUE TO DATA PAGE NOT IN BUFFER POOL", None),
                (21, "DATA RETURNED", _num(g("nf_reads_data_returned"))),
                (21, "DATA NOT RETURNED", _num(g("nf_reads_no_data"))),
            ],
        ),
        (
            "DSNB776I",
            [
                (17, "SYNCHRONOUS WRITES", None),
                (19, "CHANGED PAGES", _num(g("changed_pages_written"))),
                (19, "CLEAN PAGES", _num(g("clean_pages_written"))),
                (19, "FAILED DUE TO LACK OF STORAGE", _num(g("write_failed_no_storage"))),
            ],
        ),
        (
            "DSNB777I",
            [
                (17, "ASYNCHRONOUS WRITES", None),
                (19, "CHANGED PAGES", "0"),
                (19, "CLEAN PAGES", "0"),
                (17, "FAILED WRITES DUE TO LACK OF STORAGE", "0"),
            ],
        ),
        (
            "DSNB778I",
            [
                (17, "CASTOUT THRESHOLDS DETECTED", None),
                (19, "FOR CLASSES", _num(g("castout_class_threshold"))),
                (19, "FOR GROUP BUFFER POOL", _num(g("castout_gbp_threshold"))),
                (17, "GBP CHECKPOINTS TRIGGERED", _num(g("gbp_checkpoints"))),
            ],
        ),
        ("DSNB796I", [(17, "CASTOUTS", None), (19, "PAGES CASTOUT", _num(g("castout_pages")))]),
        ("DSNB797I", [(17, "OTHER INTERACTIONS", None), (19, "EXPLICIT CROSS INVALIDATIONS", _num(g("xi_explicit")))]),
    ]


def display(rec: dict[str, Any], member: str | None = None) -> str:
    """One GBP's display for the interval of `rec` (a gbp_stats record): GDETAIL(INTERVAL) for
    scope 'group', MDETAIL(INTERVAL) for 'member'. `member`: who issued the command (default: a
    member record's source; a group record's source when no member is given)."""
    group = rec.get("scope") == "group"
    prefix = f"-{member or rec['source']}"
    when = _when(rec["interval_end"])
    gbp = rec["gbp"]
    detail = "GDETAIL" if group else "MDETAIL"
    lines = [f"{when} {prefix} DISPLAY GROUPBUFFERPOOL({gbp}) {detail}(INTERVAL)"]
    msgs = [("DSNB750I", [(15, f"DISPLAY FOR GROUP BUFFER POOL {gbp} FOLLOWS", None)])]
    msgs += _attributes(rec) + (_group(rec) if group else _member(rec))
    msgs.append(("DSNB790I", [(15, f"DISPLAY FOR GROUP BUFFER POOL {gbp} IS COMPLETE", None)]))
    msgs.append(("DSN9022I", [(15, "DSNB1CMD 'DISPLAY GROUPBUFFERPOOL' NORMAL COMPLETION", None)]))
    for mid, body in msgs:
        lines += _message(when, mid, prefix, body)
    return "\n".join(lines) + "\n"

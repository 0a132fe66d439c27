"""The group buffer pool blocks of an OMEGAMON statistics report ("GROUP BPn  QUANTITY /SECOND
/THREAD /COMMIT"): their labels and the GbpStats record they make. stats_omegamon.py reads the
report (pages, intervals, members) and hands these blocks here.

Confirmed: the block as the Db2 13 topic "What to look for in a OMEGAMON statistics report"
prints it (ibm.com/docs/en/db2-for-zos/13.0.0?topic=pools-what-look-in-omegamon-statistics-report):
the header `GROUP BP30` with QUANTITY /SECOND /THREAD /COMMIT, an underline, the labels GROUP BP
R/W RATIO (%), GBP-DEPENDENT GETPAGES, SYN.READ(XI)-DATA RETURNED, SYN.READ(XI)-NO DATA RETURN,
SYN.READ(NF)-DATA RETURNED, SYN.READ(NF)-NO DATA RETURN, UNREGISTER PAGE, CLEAN PAGES
SYNC.WRITTEN, CLEAN PAGES ASYNC.WRTN, REG.PAGE LIST (RPL) REQUEST, NUMBER OF PAGES RETR.FROM
GBP, PAGES CASTO(UT); quantities with K and M suffixes (651.4M, 1091.6K); a blank line inside
the block; the figure's letters (A-D) between a label and its quantity (skipped). The counters
behind the other labels are documented as OMEGAMON's GBP attributes (ibm.com/docs/en/om-db2/
6.1.0?topic=attributes-db2-group-buffer-pool-gbp): castout class threshold QBGLCT, group buffer
castout threshold QBGLGT, GBP checkpoints triggered QBGLCK, explicit cross-invalidations QBGLEX,
clean pages written asynchronously QBGLAC, asynchronous GBP requests QBGLHS, delete name QBGLDN.

Inferred (the statistics report's spelling, not seen in a published figure here): CHANGED PGS
SYNC.WRTN, CHANGED PGS ASYNC.WRTN, PAGES CASTOUT, EXPLICIT X-INVALIDATIONS, CASTOUT CLASS
THRESHOLD, GROUP BP CASTOUT THRESHOLD, GBP CHECKPOINTS TRIGGERED, WRITE FAILED-NO STORAGE, and
that a group-scope report's page says SCOPE: GROUP where a member's says SCOPE: MEMBER (the
OMEGAMON group-scope report adds the members' counters up per group: om-db2 6.1 "Group-scope
reports and traces"). Such a page gives a 'group' record named by its GROUP:; any other page a
'member' record of its MEMBER: (else SUBSYSTEM:). Sync and async writes of a kind add up.

Ignored knowingly (IGNORED): the ratios (recomputed by simulator.metrics), and requests the
schema has no field for (unregister, register page list, pages retrieved, unlock castout, read
castout class or directory info or storage statistics, register page, delete name, asynchronous
requests, the secondary GBP's counters).
"""

from __future__ import annotations

import re
from typing import Any

HEADER = re.compile(r"^GROUP\s+(BP\w+?)(?:\s+CONTINUED)?$")
CALLOUT = re.compile(r"^[A-Z]$")  # a figure's letter between a label and its quantity

# Label without blanks (upper case) -> GbpStats field; labels of one field add up.
COUNTERS: dict[str, str] = {
    "GBP-DEPENDENTGETPAGES": "gbp_dependent_getpages",
    "SYN.READ(XI)-DATARETURNED": "xi_reads_data_returned",
    "SYN.READ(XI)-NODATARETURN": "xi_reads_no_data",
    "SYN.READ(NF)-DATARETURNED": "nf_reads_data_returned",
    "SYN.READ(NF)-NODATARETURN": "nf_reads_no_data",
    "CLEANPAGESSYNC.WRITTEN": "clean_pages_written",
    "CLEANPAGESASYNC.WRTN": "clean_pages_written",
    "CHANGEDPGSSYNC.WRTN": "changed_pages_written",
    "CHANGEDPGSASYNC.WRTN": "changed_pages_written",
    "PAGESCASTOUT": "castout_pages",
    "EXPLICITX-INVALIDATIONS": "xi_explicit",
    "CASTOUTCLASSTHRESHOLD": "castout_class_threshold",
    "GROUPBPCASTOUTTHRESHOLD": "castout_gbp_threshold",
    "GBPCHECKPOINTSTRIGGERED": "gbp_checkpoints",
    "WRITEFAILED-NOSTORAGE": "write_failed_no_storage",
}
IGNORED = {
    "GROUPBPR/WRATIO(%)",
    "GBPSYN.READ(XI)HITRATIO(%)",
    "UNREGISTERPAGE",
    "REG.PAGELIST(RPL)REQUEST",
    "NUMBEROFPAGESRETR.FROMGBP",
    "UNLOCKCASTOUT",
    "READCASTOUTCLASS",
    "READDIRECTORYINFO",
    "READSTORAGESTATISTICS",
    "REGISTERPAGE",
    "DELETENAME",
    "ASYNCHGBPREQUESTS",
    "WRITETOSEC-GBPFAILED",
    "DELETENAMELISTSEC-GBP",
    "DELETENAMEFROMSEC-GBP",
    "UNLOCKCASTOUTSTATSSEC-GBP",
    "ASYNCHSEC-GBPREQUESTS",
}
# The counters a complete block has (the confirmed read counters): without one it is cut off.
REQUIRED = (
    "GBP-DEPENDENT GETPAGES",
    "SYN.READ(XI)-DATA RETURNED",
    "SYN.READ(XI)-NO DATA RETURN",
    "SYN.READ(NF)-DATA RETURNED",
    "SYN.READ(NF)-NO DATA RETURN",
)
FIELDS = list(dict.fromkeys(COUNTERS.values()))


def header_pool(cell: str) -> str | None:
    """`GROUP BP30` (or `GROUP BP30 CONTINUED`) -> `GBP30`, the group buffer pool's name."""
    m = HEADER.match(" ".join(cell.upper().split()))
    return None if m is None else f"G{m.group(1)}"


def label_key(cell: str) -> str:
    """A label as the tables key it: upper case, without blanks."""
    return cell.upper().replace(" ", "")


def add(values: dict[str, float | None], fld: str, v: float | None) -> None:
    """Sync and async counts of one field add up; N/A stays None only if every part is."""
    old = values.get(fld)
    values[fld] = v if old is None else (old if v is None else old + v)


def record(
    gbp: str, source: str, scope: str, group: str | None, values: dict[str, float | None], start: float, end: float
) -> dict[str, Any]:
    """The GbpStats fields of one block (the caller starts from empty_gbp_stats())."""
    return {
        "source": source,
        "gbp": gbp,
        "interval_start": int(start * 1e6),
        "interval_end": int(end * 1e6),
        "scope": scope,
        "group_name": group,
        **{f: None if values.get(f) is None else round(values[f] or 0) for f in FIELDS},
    }

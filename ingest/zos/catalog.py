"""Object names for DBID/OBID: a CSV the shop unloads from its DB2 catalog (docs/zos-traces.md):

    SELECT DBID, PSID AS OBID, DBNAME, NAME AS SPACE, BPOOL FROM SYSIBM.SYSTABLESPACE
    UNION ALL
    SELECT DBID, ISOBID, DBNAME, INDEXSPACE, BPOOL FROM SYSIBM.SYSINDEXES

with a header line. The tables' own column names are accepted too (PSID, ISOBID, NAME,
INDEXSPACE), in any case and order, CHAR values padded or quoted. BPOOL names the pool each
object is assigned to, which the readers check the trace's pool ids against.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass, field
from pathlib import Path

from poolsight.simulator.trace import TraceFormatError

ALIASES = {
    "DBID": "DBID",
    "OBID": "OBID",
    "PSID": "OBID",
    "ISOBID": "OBID",
    "DBNAME": "DBNAME",
    "SPACE": "SPACE",
    "NAME": "SPACE",
    "INDEXSPACE": "SPACE",
    "BPOOL": "BPOOL",
}
REQUIRED = ("DBID", "OBID", "DBNAME", "SPACE")


@dataclass
class Catalog:
    """(DBID, OBID) -> DATABASE.SPACE and its buffer pool."""

    names: dict[tuple[int, int], str] = field(default_factory=dict)
    pools: dict[tuple[int, int], str] = field(default_factory=dict)

    def name(self, dbid: int, obid: int) -> str:
        """DATABASE.SPACE, or DBID/OBID (the trace format's form) when the catalog lacks it."""
        return self.names.get((dbid, obid)) or f"{dbid}/{obid}"

    def __len__(self) -> int:
        return len(self.names)

    @classmethod
    def load(cls, paths: list[Path]) -> Catalog:
        """Raises TraceFormatError (file, line, column) for a file that cannot be used."""
        cat = cls()
        for path in paths:
            cat._read(path)
        return cat

    def _read(self, path: Path) -> None:
        src = str(path)
        try:
            text = path.read_text(encoding="utf-8-sig")
        except (OSError, UnicodeDecodeError) as exc:
            raise TraceFormatError(src, 0, "file", f"cannot read the catalog: {exc}") from exc
        rows = csv.reader(text.splitlines())
        header = [ALIASES.get(h.strip().upper(), h.strip().upper()) for h in next(rows, [])]
        missing = [c for c in REQUIRED if c not in header]
        if missing:
            raise TraceFormatError(
                src, 1, ",".join(missing), f"no column {' or '.join(missing)} in the header (DBID, OBID, DBNAME, SPACE)"
            )
        idx = {c: header.index(c) for c in (*REQUIRED, "BPOOL") if c in header}
        for line, row in enumerate(rows, start=2):
            if not any(v.strip() for v in row):
                continue
            if len(row) != len(header):
                raise TraceFormatError(src, line, "row", f"{len(row)} fields, header has {len(header)}")
            try:
                key = (int(row[idx["DBID"]]), int(row[idx["OBID"]]))
            except ValueError:
                raise TraceFormatError(src, line, "DBID/OBID", "not integers") from None
            if not (0 <= key[0] < 65536 and 0 <= key[1] < 65536):
                raise TraceFormatError(src, line, "DBID/OBID", "outside 0-65535 (halfwords in the trace)")
            self.names[key] = f"{row[idx['DBNAME']].strip()}.{row[idx['SPACE']].strip()}"
            if "BPOOL" in idx and row[idx["BPOOL"]].strip():
                self.pools[key] = row[idx["BPOOL"]].strip().upper()


def write_catalog(path: Path, objects: dict[str, tuple[int, int, str]]) -> None:
    """name (DB.SPACE) -> (dbid, obid, pool), in the unload's form (the generator's catalog)."""
    with path.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["DBID", "OBID", "DBNAME", "SPACE", "BPOOL"])
        for name, (dbid, obid, pool) in sorted(objects.items(), key=lambda kv: kv[1][:2]):
            db, _, space = name.partition(".")
            w.writerow([dbid, obid, db, space, pool])

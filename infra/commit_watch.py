"""Which commits some Iceberg tables are at, from the JDBC catalog's own table in PostgreSQL: a
table's current metadata file changes with each commit, and one indexed read of PostgreSQL says
so for every table at once, where Trino would plan a statement over each table's `$refs` (0.1-0.3
s of its CPU). The maintenance service refreshes the page tables when it changes (sql/pages.py);
`make bench-pipeline` times the commits by it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from poolsight.infra.config import CATALOG_NAME, Settings
from poolsight.infra.services import pg_connect
from poolsight.names import NAMESPACE


class CommitWatch:
    """The current metadata files of some tables. `version()` is None when the catalog cannot say:
    a REST catalog, or PostgreSQL unreachable for now (the next call connects again)."""

    def __init__(self, s: Settings, tables: Sequence[str]) -> None:
        self.settings = s
        self.tables = tuple(tables)
        self.conn: Any = None

    def version(self) -> tuple[str, ...] | None:
        if self.settings.catalog_is_rest:
            return None
        try:
            if self.conn is None:
                self.conn = pg_connect(self.settings)
            rows = self.conn.execute(
                "SELECT table_name, metadata_location FROM iceberg_tables WHERE catalog_name = %s "
                "AND table_namespace = %s AND table_name = ANY(%s) ORDER BY table_name",
                (CATALOG_NAME, NAMESPACE, list(self.tables)),
            ).fetchall()
        except Exception:  # PostgreSQL busy or restarted: None now, a new connection next time
            self.close()
            return None
        return tuple(str(location) for _, location in rows)

    def close(self) -> None:
        if self.conn is not None:
            try:
                self.conn.close()
            finally:
                self.conn = None

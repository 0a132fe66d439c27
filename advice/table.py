"""The advice table and the query of its latest evaluation: what the advice service writes and
`poolsight advise` and the dashboard read (no simulator or Kafka behind it)."""

from __future__ import annotations

from poolsight.schemas.tables import BY_NAME
from poolsight.sql.views import SCHEMA

ADVICE = BY_NAME["advice"]
COLUMNS = ADVICE.column_names()

LATEST_SQL = f"""SELECT {", ".join(COLUMNS)} FROM {SCHEMA}.advice_latest
WHERE (? IS NULL OR source = ?) ORDER BY source, coalesce(avoided_sync_reads_per_s, 0) DESC, pool, kind"""

"""The advice table and the query of its latest evaluation: what the advice service writes and
`poolsight advise` and the dashboard read (no simulator or Kafka behind it). The query is the named
query advice_latest of sql/queries/advice.sql (over the view advice_latest)."""

from __future__ import annotations

from poolsight.schemas.tables import BY_NAME
from poolsight.sql.named import query

ADVICE = BY_NAME["advice"]
COLUMNS = ADVICE.column_names()

LATEST = query("advice_latest")

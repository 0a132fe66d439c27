"""The statistics parsers, registered once: `poolsight ingest stats --format` reads this table."""

from __future__ import annotations

from poolsight.ingest import stats_db2diag, stats_display, stats_luw, stats_omegamon
from poolsight.ingest.stats_common import StatsFormat

FORMATS: dict[str, StatsFormat] = {
    f.name: f for f in (stats_omegamon.FORMAT, stats_display.FORMAT, stats_luw.FORMAT, stats_db2diag.FORMAT)
}

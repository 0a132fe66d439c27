"""What each dashboard page reads from Trino: parameterised SQL over the poolsight tables and views.

Table and view names come from poolsight.sql (never from a request); every value from a URL
is a `?` parameter. Each function returns plain JSON-able data for one page's API.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from poolsight.advice.table import LATEST_SQL as ADVICE_LATEST_SQL
from poolsight.sql.catalog import BY_NAME
from poolsight.sql.grain import grain_for
from poolsight.sql.retention import Retention
from poolsight.sql.views import GRAIN_VIEWS, SCHEMA

from .cache import ResultCache
from .timerange import TimeRange

Run = Callable[[str, tuple[Any, ...]], list[dict[str, Any]]]

POOL_PANE = BY_NAME["pool_pane"].qualified
OBJECT_PANE = BY_NAME["object_pane"].qualified
POOL_STATS = BY_NAME["pool_stats"].qualified
WORKING_SET = BY_NAME["working_set"].qualified
IO_PANE = BY_NAME["io_pane"].qualified
ALERT = BY_NAME["alert"].qualified
DEAD_LETTER = BY_NAME["dead_letter"].qualified
SIM_ACCURACY_PANE = BY_NAME["sim_accuracy_pane"].qualified
SIM_ACCURACY = f"{SCHEMA}.sim_accuracy"
OBJECT_IO_COST = f"{SCHEMA}.object_io_cost"

# Pools whose newest pane is within this much of the newest pane of all are on the overview.
OVERVIEW_LOOKBACK = timedelta(days=7)


POOL_HOUR = BY_NAME["pool_hour"].qualified
EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def recent_since(run: Run, source: str, pool: str) -> datetime:
    """A time at or before the pool's newest pane whose day partitions are few: a day before its
    newest rolled-up hour (the rollups are small), or the epoch if it has none (then all panes
    are read). A pool's page reads its panes from here, not its whole history."""
    rows = run(f"SELECT max(period_start) AS h FROM {POOL_HOUR} WHERE source = ? AND pool = ?", (source, pool))
    h = rows[0]["h"] if rows else None
    return h - timedelta(days=1) if h is not None else EPOCH


def newest_pane(run: Run, source: str | None = None, pool: str | None = None) -> datetime | None:
    if source is None:
        rows = run(f"SELECT max(pane_end) AS t FROM {POOL_PANE}", ())
    else:
        assert pool is not None
        rows = run(
            f"SELECT max(pane_end) AS t FROM {POOL_PANE} WHERE source = ? AND pool = ? AND pane_start >= ?",
            (source, pool, recent_since(run, source, pool)),
        )
    return rows[0]["t"] if rows else None


OVERVIEW_SQL = f"""
SELECT source, pool,
       max(pane_end) AS latest_pane_end,
       -- The newest getpage time: a pane still filling (live) ends in the future.
       max(least(pane_end, from_unixtime(to_unixtime(pane_start) + seconds))) AS data_end,
       max(emitted_at) AS emitted_at,
       max_by(current_size, pane_start) AS vpsize,
       max_by(model, pane_start) AS model,
       max_by(getpages / nullif(seconds, 0), pane_start) AS getpages_per_s,
       max_by(observed_sync_reads / nullif(seconds, 0), pane_start) AS measured_sync_reads_per_s,
       max_by(sim_sync_reads_per_s, pane_start) AS simulated_sync_reads_per_s,
       max_by(observed_hits * 1e0 / nullif(observed_hits + observed_misses, 0), pane_start) AS trace_hit_ratio,
       max_by(sim_hit_ratio, pane_start) AS simulated_hit_ratio,
       max_by(avoided_sync_reads_per_s_2x, pane_start) AS saved_sync_reads_per_s_2x,
       max_by(working_set_pages, pane_start) AS working_set_pages
FROM {POOL_PANE}
WHERE pane_start >= ?
GROUP BY source, pool"""

OVERVIEW_STATS_SQL = f"""
SELECT source, pool, max(interval_end) AS stats_end,
       max_by(application_hit_ratio, interval_end) AS application_hit_ratio,
       max_by(system_hit_ratio, interval_end) AS system_hit_ratio,
       max_by(sync_reads_per_second, interval_end) AS stats_sync_reads_per_s,
       max_by(pages_per_write, interval_end) AS pages_per_write
FROM {POOL_STATS}
WHERE interval_end >= ?
GROUP BY source, pool"""

OVERVIEW_ACCURACY_SQL = f"""
SELECT source, pool, max_by(error_ratio, window_end) AS accuracy_error_ratio
FROM {SIM_ACCURACY_PANE}
WHERE window_end >= ?
GROUP BY source, pool"""

OPEN_ALERTS_SQL = f"""
SELECT alert_id, rule, severity, source, pool, subject, state, opened_at, resolved_at, updated_at, event_time,
       value, baseline, threshold, message
FROM {ALERT}
WHERE state = 'open' OR opened_at >= current_timestamp - INTERVAL '1' DAY
ORDER BY state = 'open' DESC, opened_at DESC
LIMIT 200"""


def overview(run: Run, now: datetime) -> dict[str, Any]:
    """Every source and pool at its newest pane, with its statistics, accuracy and open alerts."""
    newest = newest_pane(run)
    if newest is None:
        return {"pools": [], "alerts": alerts(run), "newest_pane_end": None}
    since = newest - OVERVIEW_LOOKBACK
    with ThreadPoolExecutor(4) as ex:
        main = ex.submit(run, OVERVIEW_SQL, (since,))
        extras = [ex.submit(run, sql, (since,)) for sql in (OVERVIEW_STATS_SQL, OVERVIEW_ACCURACY_SQL)]
        alert_rows = ex.submit(alerts, run)
        pools = {(r["source"], r["pool"]): r for r in main.result()}
        open_alerts = [a for a in alert_rows.result() if a["state"] == "open"]
    for extra in (f.result() for f in extras):
        for r in extra:
            key = (r.pop("source"), r.pop("pool"))
            if key in pools:
                pools[key].update(r)
    for (source, pool), r in pools.items():
        r["open_alerts"] = sum(1 for a in open_alerts if a["source"] == source and a["pool"] in (pool, None))
        r["freshness_s"] = max(0.0, (now - r["data_end"]).total_seconds())
        shr = r.get("system_hit_ratio")
        r["negative_system_hit_ratio"] = shr is not None and shr < 0
    rows = sorted(pools.values(), key=lambda r: (r["source"], r["pool"]))
    return {"pools": rows, "alerts": open_alerts, "newest_pane_end": newest}


POOLS_SQL = f"""
SELECT DISTINCT source, pool FROM {POOL_PANE} WHERE pane_start >= current_timestamp - INTERVAL '7' DAY
ORDER BY source, pool"""


def pools(run: Run) -> list[dict[str, Any]]:
    """Pools with panes in the last 7 days of the wall clock, for the page's selector."""
    return run(POOLS_SQL, ())


def alerts(run: Run) -> list[dict[str, Any]]:
    return run(OPEN_ALERTS_SQL, ())


SERIES_SQL = f"""
SELECT pane_start AS t, pane_end, seconds,
       getpages / nullif(seconds, 0) AS getpages_per_s,
       observed_sync_reads / nullif(seconds, 0) AS measured_sync_reads_per_s,
       sim_sync_reads_per_s AS simulated_sync_reads_per_s,
       observed_hits * 1e0 / nullif(observed_hits + observed_misses, 0) AS measured_hit_ratio,
       sim_hit_ratio AS simulated_hit_ratio,
       1 - sim_sync_reads / nullif(getpages_random, 0) AS simulated_random_hit_ratio,
       1 - observed_sync_reads * 1e0 / nullif(getpages_random, 0) AS measured_random_hit_ratio,
       working_set_pages, distinct_pages,
       getpages_random / nullif(seconds, 0) AS random_per_s,
       getpages_sequential / nullif(seconds, 0) AS sequential_per_s,
       getpages_rid / nullif(seconds, 0) AS list_per_s,
       current_size, vpseqt, model
FROM {POOL_PANE}
WHERE source = ? AND pool = ? AND pane_start >= ? AND pane_start < ?
ORDER BY pane_start"""

ATTRIBUTES_SQL = f"""
SELECT max_by(current_size, pane_start) AS vpsize, max_by(vpseqt, pane_start) AS vpseqt,
       max_by(model, pane_start) AS model, max_by(model_sampling_rate, pane_start) AS model_sampling_rate,
       max_by(mode, pane_start) AS mode, max_by(sampling_rate, pane_start) AS sampling_rate,
       max_by(window_panes, pane_start) AS window_panes,
       max_by(cpu_us_per_sync_read, pane_start) AS cpu_us_per_sync_read,
       max(pane_end) AS latest_pane_end, min(pane_start) AS first_pane_start, count(*) AS panes
FROM {POOL_PANE}
WHERE source = ? AND pool = ? AND pane_start >= ?"""

# The panes before recent_since, from the hourly rollups (the panes may be gone by retention).
ROLLED_PANES_SQL = f"""
SELECT min(period_start) AS first_pane_start, sum(source_rows) AS panes
FROM {POOL_HOUR}
WHERE source = ? AND pool = ? AND period_start < ?"""

STATS_SERIES_SQL = f"""
SELECT interval_end AS t, interval_seconds,
       -- random sync reads only: what the trace's misses and the simulation count
       sync_reads_random / nullif(interval_seconds, 0) AS sync_reads_per_s,
       application_hit_ratio, system_hit_ratio, pages_per_write, read_ios_per_second
FROM {POOL_STATS}
WHERE source = ? AND pool = ? AND interval_end > ? AND interval_start < ?
ORDER BY interval_end"""

# The pool's curve: the sim_curve_latest view's body with the window given (the page knows the
# newest pane) (source, pool, window start, window end; three times), so each part reads one
# day's files instead of finding every pool's newest pane over the whole history.
CURVE_WINDOW_SQL = f"""
WITH io AS (
  SELECT sum(elapsed_us) / 1e3 / nullif(sum(ios), 0) AS ms
  FROM {IO_PANE}
  WHERE source = ? AND pool = ? AND direction = 'read' AND io_type = 'sync' AND pane_end > ? AND pane_start < ?
), stats AS (
  SELECT sum(sync_reads * sync_read_avg_ms) / nullif(sum(sync_reads), 0) AS ms
  FROM {BY_NAME["object_io_stats"].qualified}
  WHERE source = ? AND pool = ? AND sync_read_avg_ms IS NOT NULL AND interval_end > ? AND interval_start < ?
), curve AS (
  SELECT min(w.window_start) AS window_start, min(w.window_end) AS window_end, c.size_pages,
         max(c.size_factor) AS size_factor, bool_or(c.is_current) AS is_current, count(*) AS panes,
         sum(c.hits) / nullif(sum(c.refs), 0) AS hit_ratio,
         sum(c.sync_reads) / nullif(sum(c.seconds), 0) AS sync_reads_per_s,
         sum(c.prefetch_pages) / nullif(sum(c.seconds), 0) AS prefetch_pages_per_s,
         sum(c.avoided_sync_reads_per_s * c.seconds) / nullif(sum(c.seconds), 0) AS avoided_sync_reads_per_s,
         sum(c.cpu_seconds_saved_per_s * c.seconds) / nullif(sum(c.seconds), 0) AS cpu_seconds_saved_per_s,
         sum(c.elapsed_seconds_saved_per_s * c.seconds) / nullif(sum(c.seconds), 0) AS configured_elapsed_saved_per_s,
         1e3 * sum(abs(c.elapsed_seconds_saved_per_s)) / nullif(sum(abs(c.avoided_sync_reads_per_s)), 0)
           AS configured_ms,
         max(coalesce(c.cpu_us_per_sync_read, 30e0)) AS cpu_us_per_sync_read
  FROM {BY_NAME["sim_curve"].qualified} c
  CROSS JOIN (SELECT CAST(? AS timestamp(6) with time zone) AS window_start,
                     CAST(? AS timestamp(6) with time zone) AS window_end) w
  WHERE c.source = ? AND c.pool = ? AND c.pane_end > w.window_start AND c.pane_start < w.window_end
    AND coalesce(c.pool_policy, true)
  GROUP BY c.size_pages
), timed AS (
  SELECT curve.*, coalesce(io.ms, stats.ms, curve.configured_ms) AS sync_read_ms,
         CASE WHEN io.ms IS NOT NULL THEN 'io-events' WHEN stats.ms IS NOT NULL THEN 'statistics'
              WHEN curve.configured_ms IS NOT NULL THEN 'configured' END AS sync_read_ms_from
  FROM curve CROSS JOIN io CROSS JOIN stats
), priced AS (
  SELECT timed.*,
         coalesce(avoided_sync_reads_per_s * sync_read_ms / 1e3, configured_elapsed_saved_per_s)
           AS elapsed_seconds_saved_per_s
  FROM timed
)
SELECT size_pages, size_factor, is_current, window_start, window_end, panes, hit_ratio, sync_reads_per_s,
       prefetch_pages_per_s, avoided_sync_reads_per_s, cpu_seconds_saved_per_s * 86400 AS cpu_seconds_saved_per_24h,
       elapsed_seconds_saved_per_s * 86400 AS elapsed_seconds_saved_per_24h, sync_read_ms, sync_read_ms_from,
       cpu_us_per_sync_read, sync_reads_per_s * cpu_us_per_sync_read * 1e-6 * 86400 AS cpu_seconds_per_24h,
       sync_reads_per_s * sync_read_ms / 1e3 * 86400 AS delay_seconds_per_24h
FROM priced
ORDER BY size_pages"""

MEASURED_WINDOW_SQL = f"""
SELECT sum(observed_sync_reads) / nullif(sum(seconds), 0) AS measured_sync_reads_per_s,
       sum(sim_sync_reads) / nullif(sum(seconds), 0) AS simulated_sync_reads_per_s,
       sum(observed_sync_reads) AS measured_sync_reads, sum(seconds) AS seconds
FROM {POOL_PANE}
WHERE source = ? AND pool = ? AND pane_end > ? AND pane_start < ?"""

# The newest trace-measured row of the sim_accuracy view, read from its table (the view adds
# statistics intervals through a join over every pool).
ACCURACY_SQL = f"""
SELECT window_start, window_end, size_pages, model, simulated_sync_reads_per_s, measured_sync_reads_per_s,
       error_ratio, measured_from, panes, getpages
FROM {SIM_ACCURACY_PANE}
WHERE source = ? AND pool = ?
ORDER BY window_end DESC
LIMIT 1"""

MIX_SQL = f"""
SELECT sum(getpages_random) AS random, sum(getpages_sequential) AS sequential, sum(getpages_rid) AS list,
       sum(getpages) AS getpages, sum(seconds) AS seconds
FROM {POOL_PANE}
WHERE source = ? AND pool = ? AND pane_start >= ? AND pane_start < ?"""


# Over ranges the panes do not answer (sql/grain.py): the same columns from the hourly or daily views.
SERIES_ROLLUP_SQL = """
SELECT period_start AS t, period_end AS pane_end, seconds, getpages_per_s, measured_sync_reads_per_s,
       simulated_sync_reads_per_s, measured_hit_ratio, simulated_hit_ratio, simulated_random_hit_ratio,
       measured_random_hit_ratio, avg_working_set_pages AS working_set_pages, max_distinct_pages AS distinct_pages,
       random_per_s, sequential_per_s, list_per_s, current_size, vpseqt, model
FROM {schema}.pool_{grainly}
WHERE source = ? AND pool = ? AND period_start >= ? AND period_start < ?
ORDER BY period_start"""

STATS_SERIES_ROLLUP_SQL = """
SELECT period_end AS t, interval_seconds, sync_reads_random_per_second AS sync_reads_per_s,
       application_hit_ratio, system_hit_ratio, pages_per_write, read_ios_per_second
FROM {schema}.pool_summary_{grainly}
WHERE source = ? AND pool = ? AND period_end > ? AND period_start < ?
ORDER BY period_end"""

MIX_ROLLUP_SQL = """
SELECT sum(getpages_random) AS random, sum(getpages_sequential) AS sequential, sum(getpages_rid) AS list,
       sum(getpages) AS getpages, sum(seconds) AS seconds
FROM {schema}.pool_{grain}
WHERE source = ? AND pool = ? AND period_start >= ? AND period_start < ?"""


def at_grain(sql: str, grain: str) -> str:
    """A *_ROLLUP_SQL statement for a rollup grain (names from sql/, never from a request)."""
    return sql.format(schema=SCHEMA, grain=grain, grainly=GRAIN_VIEWS[grain])


def pool(
    run: Run,
    source: str,
    pool_name: str,
    tr: TimeRange,
    cache: ResultCache | None = None,
    retention: Retention | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The pool page: attributes, curve with the measured point and accuracy, series over the range
    at the grain that answers it (sql/grain.py; `retention`: what is kept, default the defaults).
    With a cache, everything but the attributes is read again only when the pool has a new pane."""
    key = (source, pool_name)
    since = recent_since(run, source, pool_name)
    attributes = run(ATTRIBUTES_SQL, (*key, since))[0]
    if since > EPOCH:  # the panes before `since`, as the hourly rollups counted them
        rolled = run(ROLLED_PANES_SQL, (*key, since))[0]
        if rolled["panes"]:
            attributes["panes"] = (attributes["panes"] or 0) + int(rolled["panes"])
            firsts = [t for t in (rolled["first_pane_start"], attributes["first_pane_start"]) if t is not None]
            attributes["first_pane_start"] = min(firsts)
    if cache is not None:
        run = cache.bind(run, (source, pool_name, attributes["latest_pane_end"], attributes["panes"]))

    def curve_and_measured() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        end = attributes["latest_pane_end"]
        if end is None:
            return [], None
        w = (end - timedelta(minutes=15), end)
        curve = run(CURVE_WINDOW_SQL, (*key, *w, *key, *w, *w, *key))
        if not curve:
            return curve, None
        return curve, run(MEASURED_WINDOW_SQL, (*key, curve[0]["window_start"], curve[0]["window_end"]))[0]

    out: dict[str, Any] = {"source": source, "pool": pool_name, "attributes": attributes}
    window = tr.resolve(attributes["latest_pane_end"])
    if window is None:
        return {**out, "window": None, "series": [], "stats_series": [], "curve": [], "mix": None}
    start, end = window
    grain = grain_for(start, end, retention or Retention(), now or datetime.now(start.tzinfo))
    series_sql, stats_sql, mix_sql = (
        (SERIES_SQL, STATS_SERIES_SQL, MIX_SQL)
        if grain == "pane"
        else tuple(at_grain(q, grain) for q in (SERIES_ROLLUP_SQL, STATS_SERIES_ROLLUP_SQL, MIX_ROLLUP_SQL))
    )
    # One Trino query each, at once: the page waits for the slowest, not for the sum.
    with ThreadPoolExecutor(5) as ex:
        curve = ex.submit(curve_and_measured)
        accuracy = ex.submit(run, ACCURACY_SQL, key)
        series = ex.submit(run, series_sql, (*key, start, end))
        stats = ex.submit(run, stats_sql, (*key, start, end))
        mix = ex.submit(run, mix_sql, (*key, start, end))
        acc = accuracy.result()
        rows, stats_rows, mix_row = series.result(), stats.result(), mix.result()[0]
    if grain != "pane" and not rows:  # not rolled up (yet, or no maintenance service): the panes kept
        grain = "pane"
        rows, stats_rows = run(SERIES_SQL, (*key, start, end)), run(STATS_SERIES_SQL, (*key, start, end))
        mix_row = run(MIX_SQL, (*key, start, end))[0]
    return {
        **out,
        "window": {"start": start, "end": end},
        "grain": grain,
        "series": rows,
        "stats_series": stats_rows,
        "curve": curve.result()[0],
        "measured_at_current": curve.result()[1],
        "accuracy": acc[0] if acc else None,
        "mix": mix_row,
    }


OBJECTS_SQL = f"""
WITH o AS (
  SELECT object, sum(getpages) AS getpages, sum(getpages_random) AS random,
         sum(getpages_sequential) AS sequential, sum(getpages_rid) AS list,
         sum(sim_sync_reads) AS sim_sync_reads, count(*) AS panes,
         max_by(access_class, pane_start) AS access_class
  FROM {OBJECT_PANE}
  WHERE source = ? AND pool = ? AND pane_start >= ? AND pane_start < ?
  GROUP BY object
), all_objects AS (
  SELECT sum(sim_sync_reads) AS sim_sync_reads FROM o
), p AS (
  SELECT sum(seconds) AS seconds
  FROM {POOL_PANE}
  WHERE source = ? AND pool = ? AND pane_start >= ? AND pane_start < ?
), cost AS (
  SELECT object, basis,
         sum(sync_ios_per_second * (to_unixtime(interval_end) - to_unixtime(interval_start))) AS ios,
         sum(cpu_seconds_per_second * (to_unixtime(interval_end) - to_unixtime(interval_start))) AS cpu_seconds,
         sum(io_elapsed_seconds_per_second * (to_unixtime(interval_end) - to_unixtime(interval_start))) AS io_seconds
  FROM {OBJECT_IO_COST}
  WHERE source = ? AND pool = ? AND interval_start >= ? AND interval_start < ? AND basis IN ('simulated', 'traced')
  GROUP BY object, basis
), ws AS (
  SELECT object, avg(window_pages) AS ws_avg, max(window_pages) AS ws_max, avg(abs(change_pages)) AS ws_change,
         max_by(window_pages, pane_start) AS ws_latest
  FROM {WORKING_SET}
  WHERE source = ? AND pool = ? AND object IS NOT NULL AND pane_start >= ? AND pane_start < ?
  GROUP BY object
)
SELECT o.object, o.getpages, o.getpages / p.seconds AS getpages_per_s,
       o.random, o.sequential, o.list,
       (o.sequential + o.list) * 1e0 / nullif(o.getpages, 0) AS sequential_share, o.access_class,
       o.sim_sync_reads / p.seconds AS sim_sync_reads_per_s,
       o.sim_sync_reads / nullif(a.sim_sync_reads, 0) AS share_of_pool_sync_reads,
       s.ios / p.seconds AS sync_ios_per_s,
       s.cpu_seconds / p.seconds * 86400 AS cpu_seconds_per_24h,
       s.io_seconds / p.seconds * 86400 AS delay_seconds_per_24h,
       t.ios / p.seconds AS traced_sync_ios_per_s,
       t.io_seconds / p.seconds * 86400 AS traced_delay_seconds_per_24h,
       ws.ws_avg, ws.ws_max, ws.ws_change, ws.ws_latest, o.panes
FROM o CROSS JOIN p CROSS JOIN all_objects a
LEFT JOIN cost s ON s.object = o.object AND s.basis = 'simulated'
LEFT JOIN cost t ON t.object = o.object AND t.basis = 'traced'
LEFT JOIN ws ON ws.object = o.object
ORDER BY coalesce(s.ios, 0) DESC, o.getpages DESC"""


OBJECTS_ROLLUP_SQL = """
WITH o AS (
  SELECT object, sum(getpages) AS getpages, sum(getpages_random) AS random, sum(getpages_sequential) AS sequential,
         sum(getpages_rid) AS list, sum(sim_sync_reads) AS sim_sync_reads, sum(panes) AS panes,
         max_by(access_class, period_start) AS access_class, sum(traced_sync_ios) AS traced_ios,
         sum(sim_cpu_seconds) AS cpu_seconds, sum(io_elapsed_seconds) AS io_seconds,
         max(max_working_set_pages) AS ws_max
  FROM {schema}.object_io_cost_{grainly}
  WHERE source = ? AND pool = ? AND period_start >= ? AND period_start < ?
  GROUP BY object
), p AS (
  SELECT sum(seconds) AS seconds FROM {schema}.pool_{grain}
  WHERE source = ? AND pool = ? AND period_start >= ? AND period_start < ?
), all_objects AS (
  SELECT sum(sim_sync_reads) AS sim_sync_reads FROM o
)
SELECT o.object, o.getpages, o.getpages / p.seconds AS getpages_per_s, o.random, o.sequential, o.list,
       (o.sequential + o.list) * 1e0 / nullif(o.getpages, 0) AS sequential_share, o.access_class,
       o.sim_sync_reads / p.seconds AS sim_sync_reads_per_s,
       o.sim_sync_reads / nullif(a.sim_sync_reads, 0) AS share_of_pool_sync_reads,
       o.sim_sync_reads / p.seconds AS sync_ios_per_s,
       o.cpu_seconds / p.seconds * 86400 AS cpu_seconds_per_24h,
       o.io_seconds / p.seconds * 86400 AS delay_seconds_per_24h,
       o.traced_ios / p.seconds AS traced_sync_ios_per_s,
       CAST(NULL AS double) AS traced_delay_seconds_per_24h,
       CAST(NULL AS double) AS ws_avg, o.ws_max, CAST(NULL AS double) AS ws_change, CAST(NULL AS bigint) AS ws_latest,
       o.panes
FROM o CROSS JOIN p CROSS JOIN all_objects a
ORDER BY o.sim_sync_reads DESC, o.getpages DESC"""


def objects(
    run: Run,
    source: str,
    pool_name: str,
    tr: TimeRange,
    retention: Retention | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """Objects of a pool ranked by sync I/O (the simulation at the current size, priced), at the
    grain that answers the range."""
    window = tr.resolve(newest_pane(run, source, pool_name))
    if window is None:
        return {"source": source, "pool": pool_name, "window": None, "objects": []}
    args = (source, pool_name, *window)
    grain = grain_for(window[0], window[1], retention or Retention(), now or datetime.now(window[0].tzinfo))
    rows = [] if grain == "pane" else run(at_grain(OBJECTS_ROLLUP_SQL, grain), args * 2)
    if not rows:  # panes over short ranges, and where nothing is rolled up (yet)
        grain, rows = "pane", run(OBJECTS_SQL, args * 4)
    return {
        "source": source,
        "pool": pool_name,
        "window": {"start": window[0], "end": window[1]},
        "grain": grain,
        "objects": rows,
    }


OBJECT_SERIES_SQL = f"""
WITH io AS (
  SELECT pane_start, sum(ios) AS ios
  FROM {IO_PANE}
  WHERE source = ? AND pool = ? AND object = ? AND direction = 'read' AND io_type = 'sync'
    AND pane_start >= ? AND pane_start < ?
  GROUP BY pane_start
), ws AS (
  SELECT pane_start, max(window_pages) AS window_pages
  FROM {WORKING_SET}
  WHERE source = ? AND pool = ? AND object = ? AND pane_start >= ? AND pane_start < ?
  GROUP BY pane_start
)
SELECT o.pane_start AS t, o.getpages / nullif(o.seconds, 0) AS getpages_per_s,
       o.sim_sync_reads_per_s AS simulated_sync_reads_per_s,
       io.ios / nullif(o.seconds, 0) AS traced_sync_reads_per_s,
       o.observed_misses * 1e0 / nullif(o.seconds, 0) AS measured_misses_per_s,
       o.sequential_share, o.access_class, ws.window_pages AS working_set_pages
FROM {OBJECT_PANE} o
LEFT JOIN io ON io.pane_start = o.pane_start
LEFT JOIN ws ON ws.pane_start = o.pane_start
WHERE o.source = ? AND o.pool = ? AND o.object = ? AND o.pane_start >= ? AND o.pane_start < ?
ORDER BY o.pane_start"""


def object_history(run: Run, source: str, pool_name: str, obj: str, tr: TimeRange) -> dict[str, Any]:
    window = tr.resolve(newest_pane(run, source, pool_name))
    out = {"source": source, "pool": pool_name, "object": obj}
    if window is None:
        return {**out, "window": None, "series": []}
    args = (source, pool_name, obj, *window)
    return {**out, "window": {"start": window[0], "end": window[1]}, "series": run(OBJECT_SERIES_SQL, args * 3)}


PREDICTION_CHECKS_SQL = f"""
SELECT source, pool, changed_at, setting, old_value, new_value, predicted_sync_reads_per_s,
       measured_sync_reads_per_s, error_ratio, similarity, panes_after, measured_until, model,
       getpages_per_s_before, getpages_per_s_after, objects_new, objects_gone
FROM {BY_NAME["prediction_check"].qualified}
ORDER BY changed_at DESC
LIMIT 500"""

ACCURACY_SERIES_SQL = f"""
SELECT window_end AS t, error_ratio, simulated_sync_reads_per_s, measured_sync_reads_per_s, measured_from,
       size_pages, model
FROM {SIM_ACCURACY}
WHERE source = ? AND pool = ? AND window_end > ? AND window_end <= ?
ORDER BY window_end"""


def checks(run: Run, source: str | None, pool_name: str | None, tr: TimeRange) -> dict[str, Any]:
    """Every prediction checked against measurement after a pool was altered, and for one pool the
    accuracy of the simulation at its own settings over time (trace and statistics)."""
    out: dict[str, Any] = {"checks": run(PREDICTION_CHECKS_SQL, ()), "accuracy": [], "window": None}
    if source and pool_name:
        window = tr.resolve(newest_pane(run, source, pool_name))
        if window is not None:
            out["window"] = {"start": window[0], "end": window[1]}
            out["accuracy"] = run(ACCURACY_SERIES_SQL, (source, pool_name, *window))
    return out


FRESHNESS_SQL = " UNION ALL ".join(
    f"SELECT '{t.name}' AS table_name, max({t.time_column}) AS newest, count(*) AS row_count FROM {t.qualified}"
    for t in BY_NAME.values()
)

DEAD_LETTERS_SQL = f"""
SELECT collector, source,
       split_part(reason, ':', 1) AS reason, count(*) AS records, max(detected_at) AS latest,
       max_by(reason, detected_at) AS example, max_by(position, detected_at) AS example_position
FROM {DEAD_LETTER}
WHERE detected_at >= ?
GROUP BY collector, source, split_part(reason, ':', 1)
ORDER BY records DESC
LIMIT 100"""


def data_health(run: Run, now: datetime, dead_letter_days: int = 7) -> dict[str, Any]:
    tables = run(FRESHNESS_SQL, ())
    for t in tables:
        t["age_s"] = (now - t["newest"]).total_seconds() if t["newest"] is not None else None
    dead = run(DEAD_LETTERS_SQL, (now - timedelta(days=dead_letter_days),))
    return {"tables": sorted(tables, key=lambda t: t["table_name"]), "dead_letters": dead, "days": dead_letter_days}


def advice(run: Run, source: str | None) -> dict[str, Any]:
    """Each source's latest advice (advice_latest), its budget and confidence notes parsed."""

    rows = run(ADVICE_LATEST_SQL, (source, source))
    budgets: dict[str, Any] = {}
    out = []
    for r in rows:
        if r.get("budget"):
            budgets[r["source"]] = json.loads(r["budget"])
        conf = json.loads(r["confidence"]) if r.get("confidence") else {}
        out.append(
            {
                k: r[k]
                for k in (
                    "evaluated_at", "window_end", "source", "pool", "kind", "objects", "summary",
                    "avoided_sync_reads_per_s", "cpu_seconds_per_24h", "elapsed_seconds_per_24h", "sim_error",
                    "command",
                )
            }
            | {"confidence_note": conf.get("note")}
        )  # fmt: skip
    return {"advice": out, "budgets": budgets}

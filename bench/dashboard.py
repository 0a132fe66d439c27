"""`make bench-dashboard`: first paint of the pool page with 24 h of 1-minute panes, on the stack.

Loads a synthetic day for one pool straight into Iceberg through Trino (1,440 panes of
pool_pane, pool_stats and object_pane for 20 objects, the curve at 9 sizes for each pane),
then opens the pool page in Debian's Chromium (Playwright) --runs times and measures
navigation start -> the page's data drawn (body[data-loaded]). The peer, measured in the
same run: the page's queries sent straight to Trino one after another (what a client
without the dashboard's parallel reads would wait), and the API alone. Medians, noisy machine.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import urllib.request
from datetime import UTC, datetime, timedelta
from typing import Any

from poolsight.dashboards import queries
from poolsight.dashboards.server import Reader
from poolsight.dashboards.timerange import TimeRange
from poolsight.infra.config import load_settings
from poolsight.infra.install import chromium
from poolsight.infra.trino import trino_rows
from poolsight.launcher import up
from poolsight.schemas.tables import SIZES_CURVE
from poolsight.sql.catalog import BY_NAME

SOURCE, POOL = "BENCH24H", "BP1"
PANES = 24 * 60
SIZES = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0)
VPSIZE = 40000


def _exec(sql: str, params: tuple[Any, ...] = ()) -> list[Any]:
    return trino_rows(load_settings(), sql, params)[1]


def load_day(end: datetime) -> int:
    """A day of panes ending at `end` for SOURCE/POOL (replacing an earlier load); rows written."""
    start = end - timedelta(minutes=PANES)
    for t in ("pool_pane", "object_pane", "sim_curve", "pool_stats"):
        _exec(f"DELETE FROM {BY_NAME[t].qualified} WHERE source = ?", (SOURCE,))
    panes = f"""
      SELECT i, ? + i * INTERVAL '1' MINUTE AS t,
             20000 + 8000 * sin(i * 2 * pi() / 1440) AS gps, 0.3 + 0.1 * cos(i * 2 * pi() / 360) AS miss
      FROM UNNEST(sequence(0, {PANES - 1})) AS s(i)"""
    _exec(
        f"""INSERT INTO {BY_NAME["pool_pane"].qualified}
        (source, pool, pane_start, pane_end, seconds, getpages, getpages_random, getpages_sequential, getpages_rid,
         updates, observed_hits, observed_misses, distinct_pages, working_set_pages, window_panes, current_size,
         sim_hit_ratio, sim_sync_reads, sim_sync_reads_per_s, hit_ratio_2x, sync_reads_per_s_2x,
         avoided_sync_reads_per_s_2x, cpu_seconds_saved_per_s_2x, elapsed_seconds_saved_per_s_2x, late_getpages,
         warmup, mode, sampling_rate, batches, emitted_at, model, model_sampling_rate, observed_sync_reads,
         cpu_us_per_sync_read, vpseqt)
        SELECT ?, ?, t, t + INTERVAL '1' MINUTE, 60e0, CAST(gps * 60 AS bigint), CAST(gps * 24 AS bigint),
               CAST(gps * 30 AS bigint), CAST(gps * 6 AS bigint), CAST(gps * 3 AS bigint),
               CAST(gps * 60 * (1 - miss) AS bigint), CAST(gps * 60 * miss AS bigint), CAST(gps * 20 AS bigint),
               CAST(60000 + 20000 * sin(i / 50e0) AS bigint), 15, {VPSIZE}, 1 - miss, gps * 24 * miss,
               gps * 0.4 * miss, 1 - miss / 2, gps * 0.2 * miss, gps * 0.2 * miss, gps * 0.2 * miss * 30e-6,
               gps * 0.2 * miss * 1e-3, 0, false, 'exact', 1e0, 60, t + INTERVAL '65' SECOND, 'lru-vpseqt', 1e0,
               CAST(gps * 24 * miss * 1.01 AS bigint), 30e0, 80e0
        FROM ({panes})""",
        (SOURCE, POOL, start),
    )
    sizes = ", ".join(f"{f}e0" for f in SIZES)
    _exec(
        f"""INSERT INTO {BY_NAME["sim_curve"].qualified}
        (source, pool, pane_start, pane_end, seconds, size_pages, size_factor, is_current, refs, hits, misses,
         hit_ratio, miss_ratio, sync_reads, prefetch_pages, sync_reads_per_s, prefetch_pages_per_s,
         avoided_sync_reads_per_s, cpu_seconds_saved_per_s, elapsed_seconds_saved_per_s, model,
         model_sampling_rate, pool_policy, cpu_us_per_sync_read, vpseqt, curve)
        SELECT ?, ?, t, t + INTERVAL '1' MINUTE, 60e0, CAST({VPSIZE} * f AS bigint), f, f = 1e0,
               CAST(gps * 60 AS bigint), gps * 60 * (1 - miss / sqrt(f)), gps * 60 * miss / sqrt(f),
               1 - miss / sqrt(f), miss / sqrt(f), gps * 24 * miss / sqrt(f), gps * 36 * miss / sqrt(f),
               gps * 0.4 * miss / sqrt(f), gps * 0.6 * miss / sqrt(f), gps * 0.4 * miss * (1 - 1 / sqrt(f)),
               gps * 0.4 * miss * (1 - 1 / sqrt(f)) * 30e-6, gps * 0.4 * miss * (1 - 1 / sqrt(f)) * 1e-3,
               'lru-vpseqt', 1e0, true, 30e0, 80e0, '{SIZES_CURVE}'
        FROM ({panes}) CROSS JOIN UNNEST(ARRAY[{sizes}]) AS z(f)""",
        (SOURCE, POOL, start),
    )
    _exec(
        f"""INSERT INTO {BY_NAME["object_pane"].qualified}
        (source, pool, object, pane_start, pane_end, seconds, getpages, getpages_random, getpages_sequential,
         getpages_rid, working_set_pages, sequential_share, access_class, current_size, sim_sync_reads,
         sim_sync_reads_per_s, cpu_us_per_sync_read)
        SELECT ?, ?, 'DB' || CAST(o AS varchar) || '.TS', t, t + INTERVAL '1' MINUTE, 60e0,
               CAST(gps * 3 AS bigint), CAST(gps * 1.2 AS bigint), CAST(gps * 1.5 AS bigint),
               CAST(gps * 0.3 AS bigint), 3000 * o, 0.6, IF(o % 3 = 0, 'SAMOS', 'RAMOS'), {VPSIZE},
               gps * 1.2 * miss, gps * 0.02 * miss, 30e0
        FROM ({panes}) CROSS JOIN UNNEST(sequence(1, 20)) AS z(o)""",
        (SOURCE, POOL, start),
    )
    _exec(
        f"""INSERT INTO {BY_NAME["pool_stats"].qualified}
        (source, pool, interval_start, interval_end, interval_seconds, origin, getpages_random, getpages_sequential,
         sync_reads_random, sync_reads_sequential, getpages, application_hit_ratio, system_hit_ratio,
         sync_reads_per_second, read_ios_per_second, pages_per_write)
        SELECT ?, ?, t, t + INTERVAL '1' MINUTE, 60e0, 'bench', CAST(gps * 24 AS bigint), CAST(gps * 36 AS bigint),
               CAST(gps * 24 * miss AS bigint), 0, CAST(gps * 60 AS bigint), 1 - 0.4 * miss, 1 - miss,
               gps * 0.4 * miss, gps * 0.5 * miss, 12e0
        FROM ({panes})""",
        (SOURCE, POOL, start),
    )
    return PANES * (3 + len(SIZES) + 20)


def _median_time(fn: Any, runs: int) -> tuple[float, list[float]]:
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), times


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--runs", type=int, default=7)
    a = p.parse_args()
    s = load_settings()
    up(s, ["dashboard"])  # and what it needs: Trino, PostgreSQL
    end = datetime.now(UTC).replace(second=0, microsecond=0)
    t0 = time.perf_counter()
    rows = load_day(end)
    print(f"loaded {rows:,} rows (24 h of 1-minute panes, {SOURCE}/{POOL}) in {time.perf_counter() - t0:.1f} s")
    path = f"/pool?source={SOURCE}&pool={POOL}&range=24h"
    api_url = f"{s.dashboard_url}/api/pool?source={SOURCE}&pool={POOL}&range=24h"

    def api() -> None:
        with urllib.request.urlopen(api_url, timeout=120) as resp:  # noqa: S310 (our own loopback URL)
            body = json.loads(resp.read())
        assert len(body["series"]) == PANES, len(body["series"])

    def one_by_one() -> None:

        queries.pool(_Sequential(Reader(s).run), SOURCE, POOL, TimeRange(timedelta(hours=24), None, None))

    from playwright.sync_api import sync_playwright

    def paints(runs: int) -> list[float]:
        out = []
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(chromium()), args=["--no-sandbox"])
            for _ in range(runs):
                page = browser.new_page(viewport={"width": 1500, "height": 1100})
                t0 = time.perf_counter()
                page.goto(f"{s.dashboard_url}{path}")
                page.wait_for_selector('body[data-loaded="1"]', timeout=120_000)
                out.append(time.perf_counter() - t0)
                page.close()
            browser.close()
        return out

    # Cold: the data was just loaded, so the server has nothing cached for it (a new pane does the same).
    cold = paints(1)[0]
    warm = paints(a.runs)  # the page as a refresh or a second viewer sees it: the pool has no new pane
    api_p50, api_all = _median_time(api, a.runs)
    seq_p50, seq_all = _median_time(one_by_one, a.runs)
    paint_p50 = statistics.median(warm)
    print(f"pool page, 24 h of 1-minute panes ({PANES} points per series):")
    print(f"  first paint, cold      {cold:6.3f} s  (its queries after a new pane)")
    print(f"  first paint, warm  p50 {paint_p50:6.3f} s  max {max(warm):6.3f} s  {[round(x, 3) for x in warm]}")
    print(f"  its API, warm      p50 {api_p50:6.3f} s  {[round(x, 3) for x in api_all]}")
    print(f"  same queries in turn p50 {seq_p50:6.3f} s  {[round(x, 3) for x in seq_all]} (peer)")
    print(f"  cold paint / queries in turn: {cold / seq_p50:.2f}x; warm: {paint_p50 / seq_p50:.2f}x")
    result = {
        "pool_page_first_paint_cold_s": round(cold, 3),
        "pool_page_first_paint_s_p50": round(paint_p50, 3),
        "pool_page_first_paint_s_max": round(max(warm), 3),
        "api_pool_s_p50": round(api_p50, 3),
        "sequential_queries_s_p50": round(seq_p50, 3),
        "cold_paint_over_sequential": round(cold / seq_p50, 3),
        "paint_over_sequential": round(paint_p50 / seq_p50, 3),
        "panes": PANES,
        "rows_loaded": rows,
    }
    print(json.dumps(result))


class _Sequential:
    """A Run whose queries wait for each other (queries.pool submits them to a thread pool)."""

    def __init__(self, run: queries.Run) -> None:
        import threading

        self.run = run
        self.lock = threading.Lock()

    def __call__(self, sql: str, params: tuple[Any, ...]) -> list[dict[str, Any]]:
        with self.lock:
            return self.run(sql, params)


if __name__ == "__main__":
    main()

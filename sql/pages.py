"""The page tables: what a pool's page reads first, kept ready for every pool by the maintenance
service, so that a page load is one scan of a small table where it was two statements over the
panes (sql/README.md: the pool page 24 h from 0.67 to 0.37 s at p50, Trino's CPU 0.85 to 0.54 s).

`pool_page` is pool_anchor's answer for every pool (sql/anchor.sql's `all`), `curve_page` the
pool's curve (sql/curve.sql's `recent`), both read from `page_since(now)`, the pool page's own
guess; each refresh replaces them whole (`CREATE OR REPLACE TABLE ... AS`: one commit each,
curve_page first), so a reader sees one refresh or the next. They are a cache that knows it may
be behind: the page reads what the pool's panes and accuracy give now and takes only what its
rollups and statistics give from the row (queries/dashboard.sql pool_page_row, sql/anchor.py
`row`), and uses curve_page only where the row's newest pane and panes are the pool's now and the
curve's window ends at that pane; anything else (no row, a row behind the panes and older than
ROW_FRESH: no running keeper, a pool whose rollups lag) is asked of the panes as before
(dashboards/queries.py `pool`).

The keeper (PageKeeper, a thread of the maintenance service) refreshes when a table they are
made of has a new commit (infra/commit_watch.py: the JDBC catalog, read every second; with a REST
catalog, pool_pane's and sim_curve's `$refs` through Trino every 10 s) or the hour of
`page_since` turns, `every` seconds after the end of the last refresh at the soonest: a refresh is
about 5-8 s of Trino's CPU for 50 pools over two days, a burst the pages beside it meet
(sql/README.md). What the pool's panes and accuracy hold a page reads now; the other tables'
commits (statistics, rollups, the curve's rows and I/O events) reach a page with the next
refresh, `every` seconds and a refresh later at most, as the dashboard's cache kept them until the
pool's next pane before.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from poolsight.infra.config import Settings
from poolsight.infra.trino import QueryError, fetch, trino_connection
from poolsight.schemas.tables import (
    IO_PANE,
    OBJECT_IO_STATS,
    POOL_PANE,
    POOL_STATS,
    SIM_ACCURACY_PANE,
    SIM_CURVE,
)
from poolsight.sql.catalog import BY_NAME
from poolsight.sql.curve import WINDOW_MINUTES
from poolsight.sql.named import query
from poolsight.sql.rollup import metadata_table
from poolsight.sql.rollups import POOL
from poolsight.sql.views import SCHEMA

log = logging.getLogger("poolsight.pages")

# A pool's page reads its panes from this long before the wall clock (on the hour), read again
# from a day before its newest rolled-up hour when that is earlier: the page tables are read from it.
RECENT_GUESS = timedelta(days=2)
WINDOW_S = WINDOW_MINUTES * 60  # the curve's window, over which the measured point is read
# What the page tables are made of: a commit to any of them makes a refresh.
SOURCES = (
    *(t.name for t in (POOL_PANE, SIM_CURVE, IO_PANE, OBJECT_IO_STATS, POOL_STATS, SIM_ACCURACY_PANE)),
    POOL.table("hour").name,
)
# The page tables (made by queries/maintenance.sql's refresh statements, not by the launcher: their
# columns are their statements').
PAGE_TABLES = ("pool_page", "curve_page")
REFRESH_STATEMENTS = ("refresh_curve_page", "refresh_pool_page")  # in this order (refresh says why)
REFRESH_EVERY = 30.0  # seconds: at most one refresh this often (POOLSIGHT_PAGE_REFRESH_EVERY)
WATCH_EVERY = 1.0  # seconds between reads of the JDBC catalog (a PostgreSQL index read)
TRINO_WATCH_EVERY = 10.0  # seconds between reads of pool_pane's commit through Trino (a REST catalog)
EXPIRE_EVERY = 3600.0
# How long after its refresh a pool_page row behind its pool's panes may still answer a page: a
# running keeper refreshes within REFRESH_EVERY and a refresh of a commit (30-40 s under live
# traffic), so a row with panes since and older than this is one a stopped keeper (or
# POOLSIGHT_PAGE_REFRESH_EVERY 0, or above about 90 s) left, whose rollups and settings may be long
# out of date: the page asks pool_anchor instead. A row with no pane since is used at any age (an
# idle pool, no commit to refresh for).
ROW_FRESH = timedelta(minutes=2)


def page_since(now: datetime | None = None) -> datetime:
    """Where a pool's page reads its recent panes from: RECENT_GUESS before `now`, on the hour (an
    hour of the rollups counted before it holds no pane counted after it)."""
    return ((now or datetime.now(UTC)) - RECENT_GUESS).replace(minute=0, second=0, microsecond=0)


@dataclass(frozen=True)
class Refresh:
    since: datetime
    seconds: float  # both tables, wall clock


def refresh(cur: Any, now: datetime | None = None, run: Callable[..., list[list[Any]]] = fetch) -> Refresh:
    """Both page tables made again from the tables as they are now (curve_page first: a pool_page
    row newer than its curve would send the page to pool_curve, never the reverse)."""
    since = page_since(now)
    start = time.monotonic()
    for name in REFRESH_STATEMENTS:
        q = query(name)
        run(cur, q.sql, q.bind({k: v for k, v in (("since", since), ("window_s", WINDOW_S)) if k in q.params}))
    return Refresh(since, time.monotonic() - start)


def expire(cur: Any) -> None:
    """The page tables' replaced versions removed (a snapshot a refresh, an hour kept), and the
    files of a refresh killed before its commit."""
    fetch(cur, "SET SESSION iceberg.expire_snapshots_min_retention = '0s'")
    fetch(cur, "SET SESSION iceberg.remove_orphan_files_min_retention = '0s'")
    for name in PAGE_TABLES:  # the keeper is the tables' only writer, in turn: no commit is under way
        for procedure in ("expire_snapshots", "remove_orphan_files"):
            fetch(cur, f"ALTER TABLE {SCHEMA}.{name} EXECUTE {procedure}(retention_threshold => '1h')")


def trino_version(cur: Any) -> tuple[str, ...]:
    """pool_pane's and sim_curve's current snapshots through Trino (one statement)."""
    refs = ", ".join(
        f"(SELECT CAST(snapshot_id AS varchar) FROM {metadata_table(BY_NAME[t.name], 'refs')} WHERE name = 'main')"
        for t in (POOL_PANE, SIM_CURVE)
    )
    return tuple(str(v) for v in fetch(cur, f"SELECT {refs}")[0])


@dataclass
class KeeperState:
    """What the maintenance service's heartbeat shows of the keeper."""

    refreshes: int = 0
    last_refresh_s: float | None = None
    last_refresh_at: float | None = None  # epoch s
    error: str | None = None


class PageKeeper:
    """Refreshes the page tables in a thread of its own (the maintenance service's cycles take
    minutes; the pages should not wait for them)."""

    def __init__(self, s: Settings, every: float = REFRESH_EVERY) -> None:
        self.settings = s
        self.every = every
        self.state = KeeperState()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="page-keeper", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        # lazy: the dashboard imports this module for page_since; only the service watches commits
        from poolsight.infra.commit_watch import CommitWatch

        watch = CommitWatch(self.settings, SOURCES)
        seen: tuple[Any, ...] | None = None
        last_end = last_expire = -1e18
        while not self._stop.is_set():
            try:
                with trino_connection(self.settings) as conn:
                    cur = conn.cursor()
                    while not self._stop.is_set():
                        version = watch.version()
                        pause = WATCH_EVERY
                        if version is None:  # a REST catalog (or PostgreSQL away): ask Trino, less often
                            version, pause = trino_version(cur), TRINO_WATCH_EVERY
                        key = (version, page_since())
                        # `every` from the end of the last refresh: never one refresh after another
                        if key != seen and time.monotonic() - last_end >= self.every:
                            done = refresh(cur)
                            last_end = time.monotonic()
                            seen = key  # read before the refresh: a commit during it makes another
                            self.state.refreshes += 1
                            self.state.last_refresh_s = round(done.seconds, 2)
                            self.state.last_refresh_at = time.time()
                            self.state.error = None
                        if time.monotonic() - last_expire >= EXPIRE_EVERY and seen is not None:
                            last_expire = time.monotonic()  # failed or not: again in an hour
                            try:
                                expire(cur)
                            except QueryError as exc:  # refused (a concurrent commit): not the refreshes' error
                                log.warning("page tables' expiry: %s", exc)
                        self._stop.wait(pause)
            except Exception as exc:  # Trino restarting, a table not there yet: tried again
                self.state.error = str(exc)[:300]
                log.warning("page tables: %s", self.state.error)
                self._stop.wait(TRINO_WATCH_EVERY)
        watch.close()

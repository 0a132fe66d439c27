"""What each dashboard page reads from Trino: the named queries of sql/queries/dashboard.sql
(and advice.sql's advice_latest, compare.sql through sql/compare.py) over the poolsight tables
and views.

Table and view names are in those files (never from a request; a rollup grain picks one of a
query's declared variants, `name@hour` / `name@day`); every value from a URL is a named
parameter. Each function returns plain JSON-able data for one page's API.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from typing import Any

from poolsight.sql.curve import WINDOW_MINUTES
from poolsight.sql.grain import grain_for
from poolsight.sql.named import query
from poolsight.sql.pages import RECENT_GUESS, ROW_FRESH, WINDOW_S, page_since
from poolsight.sql.retention import Retention

from .cache import ResultCache
from .timerange import TimeRange

Run = Callable[[str, tuple[Any, ...]], list[dict[str, Any]]]


def ask(run: Run, name: str, **params: Any) -> list[dict[str, Any]]:
    """The rows of one named query (sql/queries/), its parameters by name, in its `sorted by` order."""
    q = query(name)
    return q.sort(run(*q.statement(params)))


# Pools whose newest pane is within this much of the newest pane of all are on the overview.
OVERVIEW_LOOKBACK = timedelta(days=7)


EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def recent_since(run: Run, source: str, pool: str) -> datetime:
    """A time at or before the pool's newest pane whose day partitions are few: a day before its
    newest rolled-up hour (the rollups are small), or the epoch if it has none (then all panes
    are read). A pool's page reads its panes from here, not its whole history."""
    rows = ask(run, "pool_rolled_until", source=source, pool=pool)
    return since_rolled(rows[0]["h"] if rows else None)


def since_rolled(rolled_until: datetime | None) -> datetime:
    return rolled_until - timedelta(days=1) if rolled_until is not None else EPOCH


def newest_pane(
    run: Run, source: str | None = None, pool: str | None = None, now: datetime | None = None
) -> datetime | None:
    """The newest pane's end, of every source or of one pool. A live pool's is looked for from
    RECENT_GUESS before the wall clock first (a statement less than asking where its rollups
    end), then from a day before its newest rolled-up hour."""
    if source is None:
        rows = ask(run, "newest_pane_all")
        return rows[0]["t"] if rows else None
    assert pool is not None
    guess = (now or datetime.now(UTC)) - RECENT_GUESS
    rows = ask(run, "newest_pane", source=source, pool=pool, since=guess)
    if rows and rows[0]["t"] is not None:  # a pane since the guess: the newest is among them
        return rows[0]["t"]  # type: ignore[no-any-return]
    rows = ask(run, "newest_pane", source=source, pool=pool, since=recent_since(run, source, pool))
    return rows[0]["t"] if rows else None


def overview(run: Run, now: datetime) -> dict[str, Any]:
    """Every source and pool at its newest pane, with its statistics, accuracy and open alerts, and
    each source's subsystem at its newest statistics interval."""
    newest = newest_pane(run)
    if newest is None:  # statistics only (no trace yet): the subsystems still show
        subsystems = ask(run, "overview_subsystems", since=now - OVERVIEW_LOOKBACK)
        return {"pools": [], "subsystems": subsystems, "alerts": alerts(run), "newest_pane_end": None}
    since = newest - OVERVIEW_LOOKBACK
    with ThreadPoolExecutor(5) as ex:
        main = ex.submit(ask, run, "overview_pools", since=since)
        extras = [ex.submit(ask, run, name, since=since) for name in ("overview_stats", "overview_accuracy")]
        subsystem_rows = ex.submit(ask, run, "overview_subsystems", since=since)
        alert_rows = ex.submit(alerts, run)
        pools = {(r["source"], r["pool"]): r for r in main.result()}
        open_alerts = [a for a in alert_rows.result() if a["state"] == "open"]
        subsystems = subsystem_rows.result()
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
    return {"pools": rows, "subsystems": subsystems, "alerts": open_alerts, "newest_pane_end": newest}


def pools(run: Run) -> list[dict[str, Any]]:
    """Pools with panes in the last 7 days of the wall clock, for the page's selector."""
    return ask(run, "pools")


def alerts(run: Run) -> list[dict[str, Any]]:
    return ask(run, "recent_alerts")


ATTRIBUTES = (
    "vpsize", "vpseqt", "model", "model_sampling_rate", "mode", "sampling_rate", "window_panes",
    "cpu_us_per_sync_read", "latest_pane_end", "first_pane_start", "panes",
)  # fmt: skip
SETTINGS = ("pgsteal", "pgfix", "dwqt", "vdwqt", "page_size", "frame_size", "spsize", "settings_at")
# pool_anchor's columns `measured_<name>` and `accuracy_<name>`: the measured point over the curve's
# window and the newest trace-measured row of sim_accuracy.
MEASURED = ("measured_sync_reads_per_s", "simulated_sync_reads_per_s", "measured_sync_reads", "seconds")
ACCURACY = (
    "window_start", "window_end", "size_pages", "model", "simulated_sync_reads_per_s", "measured_sync_reads_per_s",
    "error_ratio", "measured_from", "panes", "getpages",
)  # fmt: skip
MIX = ("random", "sequential", "list", "getpages", "seconds")


def mix_of(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """The range's access mix: the series' getpage counts by kind and seconds added up (None where
    no row has one, as SQL's sum)."""
    out: dict[str, Any] = {}
    for k in MIX:
        values = [r[k] for r in rows if r.get(k) is not None]
        out[k] = sum(values) if values else None
    return out


def pool(
    run: Run,
    source: str,
    pool_name: str,
    tr: TimeRange,
    cache: ResultCache | None = None,
    retention: Retention | None = None,
    now: datetime | None = None,
) -> dict[str, Any]:
    """The pool page: attributes, curve with the measured point and accuracy, DB2's simulated pool
    beside the simulation (spsize_check, when the pool has an SPSIZE), series over the range
    at the grain that answers it (sql/grain.py; `retention`: what is kept, default the defaults).
    With a cache, everything but the attributes is read again only when the pool has a new pane
    or its page table row a new refresh.

    Trino's cost is per statement (planning and scheduling, sql/README.md), so the page makes
    few. First the anchor (attributes, rolled panes, settings, the measured point over the curve's
    window and the accuracy; its panes from RECENT_GUESS before `now`): pool_page_row, what the
    panes and accuracy give read now and what the rollups and statistics give from the pool's row
    of the page table pool_page (sql/pages.py), then the rest at once, the curve from curve_page
    where the row holds the pool's panes as they are now. With no row (or one behind the panes and
    older than ROW_FRESH, or rollups behind the guess, which the row is read from), pool_anchor
    instead (read again from a day before the newest rolled-up hour when that is earlier). The
    access mix is added up from the series' rows; `page_tables` says whether the page table
    answered."""
    since = page_since(now)
    found = page_row(run, source, pool_name, since)
    held = found is not None and current(found)  # the page tables hold the pool's panes as they are now
    if found is not None and not held and found["page_refreshed_at"] < datetime.now(UTC) - ROW_FRESH:
        found = None  # panes no refresh followed as a running keeper would: its settings may be old
    if found is not None and since > since_rolled(found["rolled_until"]):
        # The rollups do not reach a day past the guess: the rows read from it do not hold, and
        # the anchor is read from a day before the newest rolled hour at once.
        since, found = since_rolled(found["rolled_until"]), None
    held = held and found is not None  # curve_page answers only beside the row it was refreshed with
    anchor = found if found is not None else settled_anchor(run, source, pool_name, since)
    newest = anchor["latest_pane_end"]
    # The row's refresh in the key: it may bring new rollups or settings without a new pane.
    version = (newest, anchor["panes"], found["page_refreshed_at"] if found is not None else None)
    with ThreadPoolExecutor(6) as ex:
        if cache is not None:
            run = cache.bind(run, (source, pool_name, *version))
        window = tr.resolve(newest)  # None: no pane (a range given of a group's rows only)
        parts: dict[str, Future[list[dict[str, Any]]]] = {}
        grain = "pane"
        rng: dict[str, Any] = {}
        if window is not None:
            start, end = window
            grain = grain_for(start, end, retention or Retention(), now or datetime.now(start.tzinfo))
            at = "" if grain == "pane" else f"_rollup@{grain}"  # a declared variant of sql/queries/dashboard.sql
            rng = {"source": source, "pool": pool_name, "start": start, "end": end}
            # One Trino query each, at once: the page waits for the slowest, not for the sum.
            if newest is not None:
                # sim_curve_latest's window for this pool: the curve's one definition (sql/curve.py).
                w = {"window_start": newest - timedelta(seconds=WINDOW_S), "window_end": newest}
                parts["curve"] = ex.submit(page_curve if held else ask_curve, run, source, pool_name, w)
            parts["series"] = ex.submit(ask, run, f"pool_series{at}", **rng)
            parts["stats"] = ex.submit(ask, run, f"pool_stats_series{at}", **rng)
            # DB2's simulated pool beside the simulation: only a pool with an SPSIZE has any.
            if anchor["spsize"]:
                parts["spsize"] = ex.submit(ask, run, "pool_spsize_check", **rng)
            parts["groups"] = ex.submit(ask, run, "pool_groups", **rng)  # a data-sharing member's pool: its GBP
        attributes, settings, measured_point, accuracy = anchor_parts(run, source, pool_name, anchor)
        if window is not None and settings["spsize"] and "spsize" not in parts:  # an SPSIZE the row had not
            parts["spsize"] = ex.submit(ask, run, "pool_spsize_check", **rng)
        got = {name: f.result() for name, f in parts.items()}
    out: dict[str, Any] = {"source": source, "pool": pool_name, "attributes": attributes}
    if window is None:
        return {
            **out, "window": None, "series": [], "stats_series": [], "curve": [], "mix": None, "spsize_check": [],
            "groups": [], "settings": settings, "page_tables": found is not None,
        }  # fmt: skip
    rows, stats_rows = got["series"], got["stats"]
    if grain != "pane" and not rows:  # not rolled up (yet, or no maintenance service): the panes kept
        grain = "pane"
        rows, stats_rows = ask(run, "pool_series", **rng), ask(run, "pool_stats_series", **rng)
    curve_rows = got.get("curve", [])
    return {
        **out,
        "window": {"start": window[0], "end": window[1]},
        "grain": grain,
        "series": rows,
        "stats_series": stats_rows,
        "curve": curve_rows,
        "measured_at_current": measured_point if curve_rows else None,
        "accuracy": accuracy,
        "mix": mix_of(rows),
        "spsize_check": got.get("spsize", []) if settings["spsize"] else [],
        "groups": got["groups"],
        "settings": settings,
        "page_tables": found is not None,
    }


def settled_anchor(run: Run, source: str, pool_name: str, since: datetime) -> dict[str, Any]:
    """pool_anchor from `since`, read again from a day before the pool's newest rolled-up hour when
    the rollups do not reach that far (the panes before the guess not all rolled up yet)."""
    anchor = ask(run, "pool_anchor", source=source, pool=pool_name, since=since, window_s=WINDOW_S)[0]
    if since > since_rolled(anchor["rolled_until"]):
        since = since_rolled(anchor["rolled_until"])
        anchor = ask(run, "pool_anchor", source=source, pool=pool_name, since=since, window_s=WINDOW_S)[0]
    return anchor


def anchor_parts(
    run: Run, source: str, pool_name: str, anchor: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any], dict[str, Any] | None]:
    """The page's attributes (the panes before `since` added as the hourly rollups counted them),
    settings (the newest of all intervals where none is since `since`), measured point and
    accuracy, from pool_anchor's row or pool_page's."""
    measured_point = {k: anchor[f"measured_{k}"] for k in MEASURED}
    accuracy = {k: anchor[f"accuracy_{k}"] for k in ACCURACY} if anchor["accuracy_window_end"] is not None else None
    attributes = {k: anchor[k] for k in ATTRIBUTES}
    if anchor["rolled_panes"]:
        attributes["panes"] = (attributes["panes"] or 0) + int(anchor["rolled_panes"])
        firsts = [t for t in (anchor["rolled_first_pane_start"], attributes["first_pane_start"]) if t is not None]
        attributes["first_pane_start"] = min(firsts)
    settings = {k: anchor[k] for k in SETTINGS}
    if settings["settings_at"] is None:
        settings = ask(run, "pool_settings", source=source, pool=pool_name)[0]
    return attributes, settings, measured_point, accuracy


def page_row(run: Run, source: str, pool_name: str, since: datetime) -> dict[str, Any] | None:
    """The pool's anchor through its pool_page row read from `since` (sql/anchor.py `row`), or
    None: no row. The row's columns are this version's: bootstrap makes the table again when its
    statement changes (sql/pages.py)."""
    rows = ask(run, "pool_page_row", source=source, pool=pool_name, since=since, window_s=WINDOW_S)
    return rows[0] if rows else None


def current(row: dict[str, Any]) -> bool:
    """Whether a pool_page_row answer's page tables hold the pool's panes as they are now (none
    committed since their refresh): then curve_page holds the curve of its newest window."""
    return (row["page_pane_end"], row["page_panes"]) == (row["latest_pane_end"], row["panes"])


def ask_curve(run: Run, source: str, pool_name: str, w: dict[str, datetime]) -> list[dict[str, Any]]:
    return ask(run, "pool_curve", source=source, pool=pool_name, **w)


def page_curve(run: Run, source: str, pool_name: str, w: dict[str, datetime]) -> list[dict[str, Any]]:
    """The pool's curve from curve_page when its window is the page's (a refresh may have replaced
    pool_page and not yet curve_page, or curve_page since), else from pool_curve."""
    rows = ask(run, "pool_curve_page", source=source, pool=pool_name)
    if rows and all(r["window_start"] == w["window_start"] and r["window_end"] == w["window_end"] for r in rows):
        return rows
    return ask_curve(run, source, pool_name, w)


def groups(run: Run) -> list[dict[str, Any]]:
    """Every group and GBP simulated or reporting statistics in the last 7 days."""
    return ask(run, "groups")


def group(run: Run, group_name: str, gbp: str, tr: TimeRange, cache: ResultCache | None = None) -> dict[str, Any]:
    """The Group page: one GBP of a data-sharing group. Its curve over size and RATIO (gbp_curve_latest)
    with what the group measured over the curve's window, the members' LBP curves over that window,
    and over the range (ending at the newest pane, else the newest statistics interval): XIs by
    cause measured and simulated, each member's LBP hit ratio and invalidation rate, the accuracy.
    With a cache, all but the attributes are read again only when a pane or an interval is new."""
    attributes = ask(run, "group_attributes", group_name=group_name, gbp=gbp)[0]
    if cache is not None:
        version = (attributes["latest_pane_end"], attributes["panes"], attributes["latest_interval_end"])
        run = cache.bind(run, (group_name, gbp, *version))
    out: dict[str, Any] = {"group_name": group_name, "gbp": gbp, "attributes": attributes}

    def curve_and_measured() -> tuple[list[dict[str, Any]], dict[str, Any] | None]:
        curve = ask(run, "group_curve", group_name=group_name, gbp=gbp)
        if not curve:
            return curve, None
        w = {"window_start": curve[0]["window_start"], "window_end": curve[0]["window_end"]}
        return curve, ask(run, "group_measured_window", group_name=group_name, gbp=gbp, **w)[0]

    def lbp_curve() -> list[dict[str, Any]]:
        # The view's window rule: the panes ending in the 15 minutes before the newest.
        end = attributes["latest_pane_end"]
        if end is None:
            return []
        lw = {"window_start": end - timedelta(minutes=WINDOW_MINUTES), "window_end": end}
        return ask(run, "group_lbp_curve", group_name=group_name, gbp=gbp, **lw)

    window = tr.resolve(attributes["latest_pane_end"] or attributes["latest_interval_end"])
    if window is None:
        return {**out, "window": None, "curve": [], "measured": None, "lbp_curve": [], "stats_series": [],
                "sim_series": [], "member_series": [], "accuracy": []}  # fmt: skip
    rng = {"group_name": group_name, "gbp": gbp, "start": window[0], "end": window[1]}
    # One Trino query each, at once (the measured window after the curve that gives it).
    with ThreadPoolExecutor(6) as ex:
        curve = ex.submit(curve_and_measured)
        lbp_rows = ex.submit(lbp_curve)
        names = ("group_stats_series", "group_sim_series", "group_member_series", "group_accuracy")
        rest = {name: ex.submit(ask, run, name, **rng) for name in names}
        c, measured = curve.result()
        lbp = lbp_rows.result()
        stats, sim, members, accuracy = (rest[name].result() for name in names)
    return {
        **out,
        "window": {"start": window[0], "end": window[1]},
        "curve": c,
        "measured": measured,
        "lbp_curve": lbp,
        "stats_series": stats,
        "sim_series": sim,
        "member_series": members,
        "accuracy": accuracy,
    }


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
    window = tr.resolve(newest_pane(run, source, pool_name, now))
    if window is None:
        return {"source": source, "pool": pool_name, "window": None, "objects": []}
    rng = {"source": source, "pool": pool_name, "start": window[0], "end": window[1]}
    grain = grain_for(window[0], window[1], retention or Retention(), now or datetime.now(window[0].tzinfo))
    rows = [] if grain == "pane" else ask(run, f"objects_rollup@{grain}", **rng)
    if not rows:  # panes over short ranges, and where nothing is rolled up (yet)
        grain, rows = "pane", ask(run, "objects", **rng)
    return {
        "source": source,
        "pool": pool_name,
        "window": {"start": window[0], "end": window[1]},
        "grain": grain,
        "objects": rows,
    }


def object_history(run: Run, source: str, pool_name: str, obj: str, tr: TimeRange) -> dict[str, Any]:
    window = tr.resolve(newest_pane(run, source, pool_name))
    out = {"source": source, "pool": pool_name, "object": obj}
    if window is None:
        return {**out, "window": None, "series": []}
    series = ask(run, "object_series", source=source, pool=pool_name, object=obj, start=window[0], end=window[1])
    return {**out, "window": {"start": window[0], "end": window[1]}, "series": series}


def checks(run: Run, source: str | None, pool_name: str | None, tr: TimeRange) -> dict[str, Any]:
    """Every prediction checked against measurement after a pool was altered, and for one pool the
    accuracy of the simulation at its own settings over time (trace and statistics)."""
    out: dict[str, Any] = {"checks": ask(run, "prediction_checks"), "accuracy": [], "window": None}
    if source and pool_name:
        window = tr.resolve(newest_pane(run, source, pool_name))
        if window is not None:
            out["window"] = {"start": window[0], "end": window[1]}
            out["accuracy"] = ask(run, "accuracy_series", source=source, pool=pool_name, start=window[0], end=window[1])
    return out


def data_health(run: Run, now: datetime, dead_letter_days: int = 7) -> dict[str, Any]:
    tables = ask(run, "table_freshness")
    for t in tables:
        t["age_s"] = (now - t["newest"]).total_seconds() if t["newest"] is not None else None
    dead = ask(run, "dead_letters_by_reason", since=now - timedelta(days=dead_letter_days))
    return {"tables": sorted(tables, key=lambda t: t["table_name"]), "dead_letters": dead, "days": dead_letter_days}


def advice(run: Run, source: str | None) -> dict[str, Any]:
    """Each source's latest advice (advice_latest), its budget and confidence notes parsed."""

    rows = ask(run, "advice_latest", source=source)
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


# The statistics pages: the query of the newest row that anchors the range, and the queries of the page.
STATISTICS_PAGES = {
    "backups": ("backups_newest", ("backup_runs", "backup_threads")),
    "purescale": ("purescale_newest", ("purescale_intervals",)),
    "memory": ("memory_newest", ("memory_intervals", "memory_pools")),
    "writes": ("writes_newest", ("write_intervals",)),
}


def statistics_page(run: Run, page: str, source: str | None, tr: TimeRange) -> dict[str, Any]:
    """A statistics page (backups, pureScale, memory, writes) over the range ending at its table's
    newest row (of `source`, or of every source): each of its queries' rows under the query's name."""
    newest, parts = STATISTICS_PAGES[page]
    rows = ask(run, newest, source=source)
    window = tr.resolve(rows[0]["t"] if rows else None)
    if window is None:
        return {"window": None, **{name: [] for name in parts}}
    given = {"source": source, "start": window[0], "end": window[1]}
    with ThreadPoolExecutor(len(parts)) as ex:
        futures = {
            name: ex.submit(ask, run, name, **{k: v for k, v in given.items() if k in query(name).params})
            for name in parts
        }
    return {"window": {"start": window[0], "end": window[1]}, **{name: f.result() for name, f in futures.items()}}

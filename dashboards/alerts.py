"""Alerts on regressions: the rules of alert_rules.yaml evaluated through Trino, kept in the `alert` table.

Each rule is one named query (sql/queries/alerts.sql, values as named parameters) measuring every
subject it covers; `judge` decides which fire, `diff` sets the firing ones against the open alerts read back
from the table (a restarted evaluator goes on where it stopped), and one MERGE writes the openings, updates
and resolutions (one Iceberg snapshot per cycle). An evaluation manages only the alerts of the rules it
evaluated without error: a failing query resolves nothing, and alerts of rules no longer in the file stay.
Windows are in event time, ending at each pool's newest pane or at `--at` (backtests, tests).

`poolsight alerts evaluate|run|list`, or `python -m poolsight.dashboards.alerts run` (the launcher).
"""

from __future__ import annotations

import argparse
import json
import logging
import math
import re
import sys
import urllib.error
import urllib.request
import uuid
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import asdict, dataclass, fields, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

import yaml

from poolsight.argtypes import SECONDS, InputFile, UsageParser
from poolsight.dashboards import stats_warnings
from poolsight.infra.config import ConfigError, Settings, load_settings
from poolsight.infra.evaluator import Report
from poolsight.infra.evaluator import run_loop as evaluator_loop
from poolsight.infra.trino import service_errors, trino_connection, unreachable
from poolsight.names import TRINO_READER_USER
from poolsight.schemas.tables import BY_NAME
from poolsight.sql.named import query

log = logging.getLogger("poolsight.alerts")
RULES_FILE = Path(__file__).resolve().with_name("alert_rules.yaml")
SEVERITIES = ("warning", "critical")

ALERT = BY_NAME["alert"].qualified


# ---------------------------------------------------------------- rules


@dataclass(frozen=True)
class Param:
    default: float
    duration: bool = False  # written 90s / 10m / 1h / 7d (or a number of seconds); kept in seconds
    positive: bool = False  # must be > 0 (else >= 0)


_WINDOWS = {"window": Param(3600, True, True), "baseline_offset": Param(7 * 86400, True, True)}
KINDS: dict[str, dict[str, Param]] = {
    "sync_reads_up": {**_WINDOWS, "increase_pct": Param(25), "min_rate": Param(5)},
    "hit_ratio_drop": {**_WINDOWS, "drop_points": Param(5), "min_getpages_per_s": Param(10)},
    "sim_accuracy": {"max_error_pct": Param(10), "min_measured_per_s": Param(1)},
    "data_stale": {"max_age": Param(600, True, True), "forget_after": Param(86400, True, True)},
    "dead_letters": {"window": Param(900, True, True), "min_count": Param(1, positive=True)},
    "pages_per_write_low": {"min_pages_per_write": Param(10)},
    # Counts in a group's statistics interval above `max_*` fire; `forget_after`: a GBP whose newest
    # interval is older than that (a group gone) raises nothing, and its open alert resolves.
    "gbp_directory_reclaims": {"max_reclaims": Param(0), "forget_after": Param(86400, True, True)},
    "gbp_writes_failed": {"max_writes_failed": Param(0), "forget_after": Param(86400, True, True)},
    # The warnings of a pool's statistics (stats_warnings.py): counts in the newest interval that
    # states them above `max_count`, rates above `max_per_second`.
    "prefetch_disabled": {"max_count": Param(0)},
    "write_engine_not_available": {"max_count": Param(0)},
    "dm_threshold_reached": {"max_count": Param(0)},
    "vpool_full": {"max_count": Param(0)},
    "dwqt_over_vdwqt": {"min_count": Param(1, positive=True)},
    "sync_writes_high": {"max_share_pct": Param(5), "min_per_second": Param(1)},
    "pageins": {"max_per_second": Param(0)},
    "dataset_opens": {"max_per_second": Param(0.01)},
}
_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")
_DURATION = re.compile(r"(\d+(?:\.\d+)?)\s*([smhd])")
_UNIT = {"s": 1, "m": 60, "h": 3600, "d": 86400}


class RuleError(ValueError):
    """A rules file that cannot be used; the text names the file, the rule and the field."""


@dataclass(frozen=True)
class Rule:
    name: str
    kind: str
    severity: str
    params: Mapping[str, float]  # every parameter of the kind, durations in seconds


@dataclass(frozen=True)
class RuleSet:
    rules: tuple[Rule, ...]
    webhook_url: str | None = None


def load_rules(path: Path = RULES_FILE) -> RuleSet:
    try:
        doc = yaml.safe_load(path.read_text())
    except OSError as exc:
        raise RuleError(f"{path}: cannot read: {exc.strerror or exc}") from exc
    except yaml.YAMLError as exc:
        raise RuleError(f"{path}: not YAML: {exc}") from exc
    return parse_rules(doc, str(path))


def parse_rules(doc: Any, where: str) -> RuleSet:
    if not isinstance(doc, dict):
        raise RuleError(f"{where}: expected a mapping with `rules` (and optionally `webhook`)")
    if extra := sorted(set(doc) - {"rules", "webhook"}):
        raise RuleError(f"{where}: unknown top-level field {extra[0]!r} (rules, webhook)")
    hook = doc.get("webhook") or {}
    if not isinstance(hook, dict) or set(hook) - {"url"}:
        raise RuleError(f"{where}: field 'webhook': expected {{url: <http(s) URL or null>}}")
    url = hook.get("url")
    if url is not None and (not isinstance(url, str) or not re.match(r"https?://[^\s/]+", url)):
        raise RuleError(f"{where}: field 'webhook.url': {url!r} is not an http(s) URL")
    raw = doc.get("rules")
    if not isinstance(raw, list) or not raw:
        raise RuleError(f"{where}: field 'rules': expected a non-empty list of rules")
    rules: list[Rule] = []
    for i, r in enumerate(raw, 1):
        rule = _rule(r, where, f"#{i}")
        if any(rule.name == o.name for o in rules):
            raise RuleError(f"{where}: rule {rule.name!r}: field 'name': used by another rule")
        rules.append(rule)
    return RuleSet(tuple(rules), url)


def _rule(r: Any, where: str, number: str) -> Rule:
    name = r.get("name") if isinstance(r, dict) else None
    label = f"rule {name!r}" if isinstance(name, str) else f"rule {number}"

    def bad(field: str, why: str) -> RuleError:
        return RuleError(f"{where}: {label}: field {field!r}: {why}")

    if not isinstance(r, dict):
        raise bad("-", "expected a mapping with name, kind, severity, params")
    if extra := sorted(set(r) - {"name", "kind", "severity", "params"}):
        raise bad(extra[0], "unknown field (name, kind, severity, params)")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise bad("name", "required: letters, digits, _ . - (at most 100)")
    kind = r.get("kind")
    if kind not in KINDS:
        raise bad("kind", f"{kind!r} is none of {', '.join(KINDS)}")
    severity = r.get("severity", "warning")
    if severity not in SEVERITIES:
        raise bad("severity", f"{severity!r} is none of {', '.join(SEVERITIES)}")
    given = r.get("params") or {}
    if not isinstance(given, dict):
        raise bad("params", "expected a mapping")
    spec = KINDS[kind]
    params: dict[str, float] = {}
    for key, value in given.items():
        if key not in spec:
            raise bad(f"params.{key}", f"unknown for kind {kind} ({', '.join(spec)})")
        params[key] = _number(value, spec[key], f"params.{key}", bad)
    params = {k: params.get(k, p.default) for k, p in spec.items()}
    if "baseline_offset" in params and params["baseline_offset"] < params["window"]:
        raise bad("params.baseline_offset", "shorter than the window: the two windows would overlap")
    if "max_age" in params and params["forget_after"] <= params["max_age"]:
        raise bad("params.forget_after", "not longer than max_age")
    return Rule(name, kind, severity, params)


def _number(value: Any, p: Param, field: str, bad: Callable[[str, str], RuleError]) -> float:
    if isinstance(value, str) and p.duration and (m := _DURATION.fullmatch(value.strip())):
        out = float(m.group(1)) * _UNIT[m.group(2)]
    elif isinstance(value, int | float) and not isinstance(value, bool):
        out = float(value)
    else:
        raise bad(field, f"{value!r} is not {'a duration (90s, 10m, 1h, 7d)' if p.duration else 'a number'}")
    if not math.isfinite(out) or out < 0 or (p.positive and out == 0):
        raise bad(field, f"{value!r}: must be {'above' if p.positive else 'at least'} 0")
    return out


def duration_text(seconds: float) -> str:
    for unit in "dhm":
        if seconds >= _UNIT[unit] and seconds % _UNIT[unit] == 0:
            return f"{seconds / _UNIT[unit]:g}{unit}"
    return f"{seconds:g}s"


# ---------------------------------------------------------------- measuring: one query per rule

# Each rule kind's named query in sql/queries/alerts.sql (both pool-pane kinds read one query).
RULE_QUERIES = {
    "sync_reads_up": "alert_pool_windows",
    "hit_ratio_drop": "alert_pool_windows",
    "sim_accuracy": "alert_sim_accuracy",
    "data_stale": "alert_newest_pane",
    "dead_letters": "alert_dead_letters",
    "pages_per_write_low": "alert_pages_per_write",
    "gbp_directory_reclaims": "alert_gbp_stats",
    "gbp_writes_failed": "alert_gbp_stats",
    **{kind: "alert_pool_stats_counters" for kind in stats_warnings.KINDS},
}


@dataclass(frozen=True)
class Measurement:
    """What a rule's query measured for one subject."""

    source: str | None
    pool: str | None
    subject: str
    event_time: datetime | None
    value: float | None
    baseline: float | None = None
    volume: float | None = None  # the rate a floor applies to (kinds with a min_ parameter)
    related: float | None = None  # a count the message names beside the value (XIs due to reclaims, castouts)


def rule_query(rule: Rule, at: datetime | None) -> tuple[str, tuple[Any, ...]]:
    """(sql, parameters) of the rule's named query."""
    p = rule.params
    values: dict[str, Any] = {"at": at}
    if rule.kind in ("sync_reads_up", "hit_ratio_drop"):
        values |= {"window_ms": round(p["window"] * 1000), "offset_ms": round(p["baseline_offset"] * 1000)}
    elif rule.kind == "dead_letters":
        values["window_ms"] = round(p["window"] * 1000)
    return query(RULE_QUERIES[rule.kind]).statement(values)


def _f(v: Any) -> float | None:
    return None if v is None else float(v)


def measurements(rule: Rule, rows: Sequence[Sequence[Any]]) -> list[Measurement]:
    """The rows of rule_query as measurements."""
    out: list[Measurement] = []
    for r in rows:
        if rule.kind == "sync_reads_up":
            out.append(Measurement(r[0], r[1], "pool_pane", r[2], _f(r[3]), _f(r[4])))
        elif rule.kind == "hit_ratio_drop":
            out.append(Measurement(r[0], r[1], "pool_pane", r[2], _f(r[5]), _f(r[6]), _f(r[7])))
        elif rule.kind == "sim_accuracy":
            out.append(Measurement(r[0], r[1], r[2], r[3], _f(r[4]), None, _f(r[5])))
        elif rule.kind == "data_stale":
            out.append(Measurement(r[0], r[1], "pool_pane", r[2], None))
        elif rule.kind == "dead_letters":
            out.append(Measurement(r[0], None, r[1], r[2], _f(r[3])))
        elif rule.kind == "gbp_directory_reclaims":  # source: the group, pool: the GBP
            out.append(Measurement(r[0], r[1], "gbp_stats", r[2], _f(r[3]), related=_f(r[4])))
        elif rule.kind == "gbp_writes_failed":
            out.append(Measurement(r[0], r[1], "gbp_stats", r[5], _f(r[6]), related=_f(r[7])))
        elif rule.kind in stats_warnings.KINDS:  # a row per pool and counter; the rule takes its own
            if stats_warnings.kind_of(r[2]) == rule.kind:
                out.append(Measurement(r[0], r[1], r[2], r[3], _f(r[4]), None, _f(r[6]), _f(r[5])))
        else:
            out.append(Measurement(r[0], r[1], "pool_stats", r[2], _f(r[3]), None, _f(r[4])))
    return out


# ---------------------------------------------------------------- judging and diffing (pure)

Key = tuple[str, str | None, str | None, str]  # rule, source, pool, subject


@dataclass(frozen=True)
class Firing:
    severity: str
    value: float
    baseline: float | None
    threshold: float
    event_time: datetime | None
    message: str


def _where(m: Measurement) -> str:
    return "/".join(x for x in (m.source, m.pool) if x) or m.subject


def judge(rule: Rule, m: Measurement, now: datetime) -> Firing | None:
    """Whether a measurement fires its rule; `now` is the wall clock or --at (data_stale)."""
    p, v, b = rule.params, m.value, m.baseline

    def fire(value: float, baseline: float | None, threshold: float, text: str) -> Firing:
        return Firing(rule.severity, value, baseline, threshold, m.event_time, f"{_where(m)}: {text}")

    if rule.kind == "sync_reads_up":
        if v is None or b is None or v < p["min_rate"]:
            return None
        limit = b * (1 + p["increase_pct"] / 100)
        if v <= limit:
            return None
        up = f"+{v / b - 1:.0%}" if b > 0 else "up from 0"
        return fire(
            v,
            b,
            limit,
            f"measured sync reads {v:,.1f}/s over {duration_text(p['window'])}, {up} against {b:,.1f}/s "
            f"{duration_text(p['baseline_offset'])} earlier (limit +{p['increase_pct']:g}%)",
        )
    if rule.kind == "hit_ratio_drop":
        if v is None or b is None or m.volume is None or m.volume < p["min_getpages_per_s"]:
            return None
        limit = b - p["drop_points"] / 100
        if v >= limit:
            return None
        return fire(
            v,
            b,
            limit,
            f"measured hit ratio {v:.1%} over {duration_text(p['window'])}, down {100 * (b - v):.1f} points from "
            f"{b:.1%} {duration_text(p['baseline_offset'])} earlier (limit {p['drop_points']:g} points)",
        )
    if rule.kind == "sim_accuracy":
        bound = p["max_error_pct"] / 100
        if v is None or m.volume is None or m.volume < p["min_measured_per_s"] or abs(v) <= bound:
            return None
        basis = m.subject.split("/")[-1]
        return fire(v, None, bound, f"simulated sync reads {v:+.1%} off the measured ({basis}), bound ±{bound:.0%}")
    if rule.kind == "data_stale":
        if m.event_time is None:
            return None
        age = (now - m.event_time).total_seconds()
        if not p["max_age"] < age <= p["forget_after"]:
            return None
        return fire(
            age, None, p["max_age"], f"newest pane ended {age / 60:,.0f} min ago (limit {duration_text(p['max_age'])})"
        )
    if rule.kind == "dead_letters":
        if v is None or v < p["min_count"]:
            return None
        text = f"{v:,.0f} dead letters from {m.subject.split('/')[-1]} in the last {duration_text(p['window'])}"
        return fire(v, None, p["min_count"], text)
    if rule.kind == "pages_per_write_low":
        if v is None or not m.volume or v >= p["min_pages_per_write"]:
            return None
        return fire(
            v,
            None,
            p["min_pages_per_write"],
            f"{v:.1f} pages per write I/O, below {p['min_pages_per_write']:g}: consider lowering VDWQT",
        )
    if rule.kind in ("gbp_directory_reclaims", "gbp_writes_failed"):
        limit = p["max_reclaims" if rule.kind == "gbp_directory_reclaims" else "max_writes_failed"]
        if v is None or m.event_time is None or v <= limit:
            return None
        if (now - m.event_time).total_seconds() > p["forget_after"]:
            return None
        interval = f"in the statistics interval ending {m.event_time.astimezone(UTC):%Y-%m-%d %H:%M:%S}Z"
        if rule.kind == "gbp_directory_reclaims":
            xi = "" if m.related is None else f" ({m.related:,.0f} cross-invalidations due to reclaims)"
            text = (
                f"{v:,.0f} directory reclaims{xi} {interval}: the GBP has too few directory entries for the "
                "pages the members cache; raise RATIO or the structure size"
            )
        else:
            castout = "" if m.related is None else f" ({m.related:,.0f} pages cast out)"
            text = (
                f"{v:,.0f} writes failed for lack of storage{castout} {interval}: every data entry held changed "
                "data; the GBP is too small or castout too slow"
            )
        return fire(v, None, limit, text)
    if rule.kind in stats_warnings.KINDS:
        if v is None or m.event_time is None:
            return None
        reading = stats_warnings.Reading(v, m.volume, m.related, m.event_time)
        counter = m.subject.removeprefix(f"{stats_warnings.SUBJECT}/")
        if (found := stats_warnings.verdict(rule.kind, counter, reading, dict(p))) is None:
            return None
        value, threshold, text = found
        return fire(value, None, threshold, text)
    raise ValueError(f"rule {rule.name}: unknown kind {rule.kind}")


@dataclass(frozen=True)
class Alert:
    """A row of the alert table (fields in its column order)."""

    alert_id: str
    rule: str
    severity: str
    source: str | None
    pool: str | None
    subject: str
    state: str
    opened_at: datetime
    resolved_at: datetime | None
    updated_at: datetime
    event_time: datetime | None
    value: float | None
    baseline: float | None
    threshold: float | None
    message: str | None

    @property
    def key(self) -> Key:
        return (self.rule, self.source, self.pool, self.subject)


ALERT_COLUMNS = tuple(f.name for f in fields(Alert))


@dataclass(frozen=True)
class Action:
    op: Literal["open", "update", "resolve"]
    alert: Alert  # the row as it is after the action


def _order(key: Key) -> tuple[str, ...]:
    return tuple("" if x is None else x for x in key)


def diff(
    firing: Mapping[Key, Firing],
    open_alerts: Sequence[Alert],
    evaluated: Collection[str],
    now: datetime,
    new_id: Callable[[], str] = lambda: uuid.uuid4().hex,
) -> list[Action]:
    """Opens for firing keys without an open alert, updates for those with one, resolves for open alerts of
    evaluated rules that no longer fire. Alerts of other rules are left alone; of two open alerts of one
    key (two evaluators raced), the earlier carries on and the other resolves."""
    actions: list[Action] = []
    current: dict[Key, Alert] = {}
    for a in sorted(open_alerts, key=lambda a: (a.opened_at, a.alert_id)):
        if a.rule not in evaluated:
            continue
        if a.key in current or a.key not in firing:
            actions.append(Action("resolve", replace(a, state="resolved", resolved_at=now)))
        else:
            current[a.key] = a
    for key in sorted(firing, key=_order):
        f = firing[key]
        measured: dict[str, Any] = {
            "event_time": f.event_time,
            "value": f.value,
            "baseline": f.baseline,
            "threshold": f.threshold,
            "message": f.message,
            "updated_at": now,
        }
        if key in current:
            actions.append(Action("update", replace(current[key], **measured)))
        else:
            rule, source, pool, subject = key
            row = Alert(new_id(), rule, f.severity, source, pool, subject, "open", now, None, **measured)
            actions.append(Action("open", row))
    rank = {"open": 0, "update": 1, "resolve": 2}
    return sorted(actions, key=lambda x: (rank[x.op], _order(x.alert.key), x.alert.alert_id))


# ---------------------------------------------------------------- writing

_ROW = (
    "(?, ?, ?, ?, CAST(? AS varchar), CAST(? AS varchar), ?, CAST(? AS timestamp(6) with time zone), "
    "CAST(? AS double), CAST(? AS double), CAST(? AS double), CAST(? AS varchar))"
)


def merge_statement(actions: Sequence[Action], now: datetime) -> tuple[str, tuple[Any, ...]]:
    """One MERGE for all actions of a cycle (one snapshot). Matches open rows only, so an alert another
    evaluator resolved meanwhile is not touched."""
    params: list[Any] = []
    for x in actions:
        a = x.alert
        params += [x.op, a.alert_id, a.rule, a.severity, a.source, a.pool, a.subject]
        params += [a.event_time, a.value, a.baseline, a.threshold, a.message]
    sql = f"""
MERGE INTO {ALERT} t
USING (VALUES {", ".join([_ROW] * len(actions))})
  AS s(op, alert_id, rule, severity, source, pool, subject, event_time, value, baseline, threshold, message)
ON t.alert_id = s.alert_id AND t.state = 'open'
WHEN MATCHED AND s.op = 'resolve' THEN UPDATE SET state = 'resolved', resolved_at = ?
WHEN MATCHED AND s.op = 'update' THEN UPDATE SET updated_at = ?, event_time = s.event_time, value = s.value,
  baseline = s.baseline, threshold = s.threshold, message = s.message
WHEN NOT MATCHED AND s.op = 'open' THEN INSERT ({", ".join(ALERT_COLUMNS)})
  VALUES (s.alert_id, s.rule, s.severity, s.source, s.pool, s.subject, 'open', ?, NULL, ?, s.event_time,
          s.value, s.baseline, s.threshold, s.message)"""
    return sql, (*params, now, now, now, now)


def json_value(v: Any) -> Any:
    if isinstance(v, datetime):
        return v.astimezone(UTC).isoformat().replace("+00:00", "Z")
    raise TypeError(f"not JSON: {type(v).__name__}")


def alert_dict(a: Alert) -> dict[str, Any]:
    return dict(json.loads(json.dumps(asdict(a), default=json_value)))


def notify(url: str, event: str, alert: Alert) -> bool:
    """POST {"event": ..., "alert": ...}; a failure is logged and reported, never raised."""
    body = json.dumps({"event": event, "alert": alert_dict(alert)}).encode()
    req = urllib.request.Request(  # noqa: S310 (http(s) only: checked when the rules were loaded)
        url, data=body, method="POST", headers={"Content-Type": "application/json", "User-Agent": "poolsight-alerts"}
    )
    try:
        with urllib.request.urlopen(req, timeout=5) as resp:  # noqa: S310
            resp.read()
        return True
    except (urllib.error.URLError, OSError, ValueError) as exc:
        log.warning("webhook %s: %s %s failed: %s", url, event, alert.alert_id, exc)
        return False


# ---------------------------------------------------------------- evaluating


@dataclass
class Outcome:
    at: datetime | None
    opened: list[Alert]
    still_open: list[Alert]  # were open and still fire
    resolved: list[Alert]
    open_count: int  # open after the evaluation, of every rule
    errors: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {
            "at": self.at,
            "opened": [alert_dict(a) for a in self.opened],
            "still_open": [alert_dict(a) for a in self.still_open],
            "resolved": [alert_dict(a) for a in self.resolved],
            "open": self.open_count,
            "errors": self.errors,
        }


def read_alerts(cur: Any, *, everything: bool = False) -> list[Alert]:
    cur.execute(*query("alerts_all" if everything else "alerts_open").statement())
    return [Alert(*row) for row in cur.fetchall()]


def evaluate(
    rules: RuleSet, *, at: datetime | None = None, settings: Settings | None = None, dry_run: bool = False
) -> Outcome:
    """One evaluation of every rule, written to the alert table (unless dry_run) as the writer user.
    A rule whose query fails is reported in `errors` and its alerts stay as they are."""
    now = datetime.now(UTC)
    firing: dict[Key, Firing] = {}
    evaluated: set[str] = set()
    errors: list[str] = []
    with trino_connection(settings or load_settings()) as conn:  # the writer: it records alerts
        cur = conn.cursor()
        open_alerts = read_alerts(cur)
        read: dict[tuple[str, tuple[Any, ...]], list[Any]] = {}  # kinds that share a query read it once
        for rule in rules.rules:
            statement = rule_query(rule, at)
            try:
                if (rows := read.get(statement)) is None:
                    cur.execute(*statement)
                    rows = read[statement] = cur.fetchall()
            except service_errors() as exc:
                errors.append(f"rule {rule.name}: {type(exc).__name__}: {exc}")
                log.warning("%s", errors[-1])
                continue
            evaluated.add(rule.name)
            for m in measurements(rule, rows):
                if (f := judge(rule, m, at or now)) is not None:
                    firing[(rule.name, m.source, m.pool, m.subject)] = f
        actions = diff(firing, open_alerts, evaluated, now)
        if actions and not dry_run:
            cur.execute(*merge_statement(actions, now))
            cur.fetchall()
    by_op = {op: [x.alert for x in actions if x.op == op] for op in ("open", "update", "resolve")}
    if rules.webhook_url and not dry_run:
        for op, event in (("open", "opened"), ("resolve", "resolved")):
            for a in by_op[op]:
                notify(rules.webhook_url, event, a)
    count = len(open_alerts) + len(by_op["open"]) - len(by_op["resolve"])
    return Outcome(at, by_op["open"], by_op["update"], by_op["resolve"], count, errors)


class AlertsEvaluator:
    """The alerts service's evaluator (run by infra/evaluator.py's loop). The rules file is read
    again each cycle; a broken edit keeps the rules read before and says so in the heartbeat."""

    name = "alerts"

    def __init__(self, settings: Settings, rules_path: Path = RULES_FILE) -> None:
        self.settings = settings
        self.rules_path = rules_path
        self.rules = load_rules(rules_path)  # broken at the start: fail, so the launcher shows why

    def evaluate(self) -> Report:
        problems: list[str] = []
        try:
            self.rules = load_rules(self.rules_path)
        except RuleError as exc:
            problems.append(f"{exc} (evaluating the rules read before)")
        out = evaluate(self.rules, settings=self.settings)
        problems += out.errors
        log.info(
            "%d rules: %d opened, %d resolved, %d open",
            len(self.rules.rules),
            len(out.opened),
            len(out.resolved),
            out.open_count,
        )
        return Report({"rules": len(self.rules.rules), "open": out.open_count}, "; ".join(problems) or None)


def run_loop(rules_path: Path, every: float, settings: Settings, cycles: int | None = None) -> None:
    """`poolsight alerts run`: the service's loop in the foreground."""
    evaluator_loop(AlertsEvaluator(settings, rules_path), settings, every, cycles)


# ---------------------------------------------------------------- command line


def timestamp(text: str) -> datetime:
    """ISO 8601; without a zone, UTC."""
    try:
        t = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an ISO 8601 time (e.g. 2026-11-20T08:00)") from None
    return t.astimezone(UTC) if t.tzinfo is not None else t.replace(tzinfo=UTC)


def add_arguments(p: argparse.ArgumentParser) -> None:
    sub = p.add_subparsers(dest="action", required=True)
    ev = sub.add_parser("evaluate", help="evaluate the rules once; print opened, resolved and still-open alerts")
    ev.add_argument("--at", type=timestamp, help="evaluate as of this event time (ISO 8601, UTC if no zone)")
    ev.add_argument("--json", action="store_true", help="print one JSON object")
    ev.add_argument("--dry-run", action="store_true", help="write nothing, post nothing: what would change")
    run = sub.add_parser("run", help="evaluate for ever; a heartbeat file after each cycle")
    run.add_argument("--every", type=SECONDS, default=30.0, metavar="SECONDS", help="seconds between cycles (30)")
    for q in (ev, run):
        q.add_argument(
            "--rules", type=InputFile(), default=RULES_FILE, metavar="FILE", help="rules file (the shipped one)"
        )
    ls = sub.add_parser("list", help="open alerts (or all of them)")
    ls.add_argument("--all", action="store_true", help="resolved ones too")
    ls.add_argument("--json", action="store_true", help="print JSON")


def _line(state: str, a: Alert) -> str:
    value = "-" if a.value is None else f"{a.value:,.4g}"
    return f"{state:9}{a.severity:9}{a.rule:22}{value:>12}  {a.message}"


def run_cli(args: argparse.Namespace) -> int:
    try:
        if args.action == "evaluate":
            out = evaluate(load_rules(args.rules), at=args.at, dry_run=args.dry_run)
            if args.json:
                print(json.dumps(out.as_dict(), default=json_value))
            else:
                for state, alerts in (("opened", out.opened), ("resolved", out.resolved), ("open", out.still_open)):
                    for a in alerts:
                        print(_line(state, a))
                as_of = f" as of {args.at.isoformat()}" if args.at else ""
                print(
                    f"evaluated{as_of}: {len(out.opened)} opened, {len(out.resolved)} resolved, "
                    f"{len(out.still_open)} still open; {out.open_count} open in all"
                    + (" (dry run: nothing written)" if args.dry_run else "")
                )
                for e in out.errors:
                    print(f"poolsight alerts: {e}", file=sys.stderr)
            return 1 if out.errors else 0
        if args.action == "run":
            logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
            run_loop(args.rules, args.every, load_settings())
            return 0
        with trino_connection(load_settings(), user=TRINO_READER_USER) as conn:
            alerts = read_alerts(conn.cursor(), everything=args.all)
        if args.json:
            print(json.dumps({"alerts": [alert_dict(a) for a in alerts]}))
        else:
            for a in alerts:
                print(_line(a.state, a))
        return 0
    except (RuleError, ConfigError) as exc:
        print(f"poolsight alerts: {exc}", file=sys.stderr)
        return 2
    except service_errors() as exc:
        why = unreachable(load_settings(), exc) or f"Trino: {type(exc).__name__}: {exc}"
        print(f"poolsight alerts: {why}", file=sys.stderr)
        return 1


def main(argv: Sequence[str] | None = None) -> int:
    p = UsageParser(prog="poolsight alerts", description="Alerts on regressions, into the alert table.")
    add_arguments(p)
    try:
        return run_cli(p.parse_args(argv))
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())

"""Alert rules and the evaluator's pure parts: loading, judging, diffing, the MERGE, the webhook, the loop."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import pytest

from poolsight.cli import build_parser
from poolsight.dashboards import alerts as A
from poolsight.dashboards.alerts import Action, Alert, Firing, Measurement, Rule, RuleError
from poolsight.infra.config import load_settings
from poolsight.infra.evaluator import heartbeat_path
from poolsight.schemas.tables import BY_NAME
from poolsight.sql.named import query

T0 = datetime(2026, 11, 23, 12, 0, tzinfo=UTC)


def _rule(kind: str, name: str | None = None, **params: float) -> Rule:
    spec = {k: p.default for k, p in A.KINDS[kind].items()}
    return Rule(name or kind, kind, "warning", {**spec, **params})


# ---------------------------------------------------------------- loading


def test_the_shipped_rules_load_with_their_defaults() -> None:
    rs = A.load_rules()
    assert [r.kind for r in rs.rules] == list(A.KINDS)
    assert rs.webhook_url is None
    up = rs.rules[0]
    assert (up.name, up.severity) == ("sync_reads_up", "warning")
    assert dict(up.params) == {"window": 3600, "baseline_offset": 7 * 86400, "increase_pct": 25, "min_rate": 5}
    assert dict(rs.rules[3].params) == {"max_age": 600, "forget_after": 86400}


def test_durations_and_omitted_params() -> None:
    rs = A.parse_rules(
        {
            "webhook": {"url": "http://127.0.0.1:9/x"},
            "rules": [{"name": "a", "kind": "sync_reads_up", "params": {"window": "3m", "baseline_offset": 360}}],
        },
        "f.yaml",
    )
    assert rs.webhook_url == "http://127.0.0.1:9/x"
    assert dict(rs.rules[0].params) == {"window": 180, "baseline_offset": 360, "increase_pct": 25, "min_rate": 5}
    assert [A.duration_text(s) for s in (180, 3600, 7 * 86400, 90, 1.5)] == ["3m", "1h", "7d", "90s", "1.5s"]


DS, UP = {"name": "x", "kind": "data_stale"}, {"name": "x", "kind": "sync_reads_up"}


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ({"kind": "data_stale"}, "name"),
        ({"name": "x y", "kind": "dead_letters"}, "name"),
        ({"name": "first", "kind": "dead_letters"}, "name"),  # used twice
        ({"name": "x", "kind": "sync_reads_down"}, "kind"),
        ({**DS, "severity": "page"}, "severity"),
        ({**DS, "threshold": 3}, "threshold"),
        ({**DS, "params": [1]}, "params"),
        ({**DS, "params": {"max_age": "ten minutes"}}, "params.max_age"),
        ({**DS, "params": {"max_age": "0s"}}, "params.max_age"),
        ({**DS, "params": {"max_age": 600, "forget_after": 60}}, "params.forget_after"),
        ({**DS, "params": {"window": "1h"}}, "params.window"),
        ({**UP, "params": {"increase_pct": -5}}, "params.increase_pct"),
        ({**UP, "params": {"min_rate": True}}, "params.min_rate"),
        ({**UP, "params": {"window": "2h", "baseline_offset": "1h"}}, "params.baseline_offset"),
        ({"name": "x", "kind": "dead_letters", "params": {"min_count": 0}}, "params.min_count"),
    ],
)
def test_a_bad_rule_is_named_with_its_field(tmp_path: Path, rule: dict[str, Any], field: str) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(json.dumps({"rules": [{"name": "first", "kind": "data_stale"}, rule]}))
    with pytest.raises(RuleError) as err:
        A.load_rules(path)
    label = f"rule {rule['name']!r}" if "name" in rule else "rule #2"
    assert str(err.value).startswith(f"{path}: {label}: field '{field}': "), str(err.value)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("rules: [", "not YAML"),
        ("- a\n- b\n", "expected a mapping"),
        ("rules: []\n", "field 'rules'"),
        ("rules: [{name: a, kind: data_stale}]\nalerts: 1\n", "unknown top-level field 'alerts'"),
        ("webhook: {url: 'ftp://x'}\nrules: [{name: a, kind: data_stale}]\n", "field 'webhook.url'"),
        ("webhook: {uri: 'http://x'}\nrules: [{name: a, kind: data_stale}]\n", "field 'webhook'"),
    ],
)
def test_a_bad_file_is_named(tmp_path: Path, text: str, says: str) -> None:
    path = tmp_path / "rules.yaml"
    path.write_text(text)
    with pytest.raises(RuleError, match=says) as err:
        A.load_rules(path)
    assert str(err.value).startswith(f"{path}: ")
    with pytest.raises(RuleError, match="cannot read"):
        A.load_rules(tmp_path / "missing.yaml")


# ---------------------------------------------------------------- queries


def test_the_alert_reads_select_the_alert_fields_in_order() -> None:
    cols = ", ".join(A.ALERT_COLUMNS)
    for name in ("alerts_open", "alerts_all"):
        assert " ".join(query(name).sql.split()).startswith(f"SELECT {cols} FROM "), name


@pytest.mark.parametrize("kind", list(A.KINDS))
def test_each_rule_is_one_query_with_every_value_a_parameter(kind: str) -> None:
    rule = _rule(kind, window=180, baseline_offset=360) if "window" in A.KINDS[kind] else _rule(kind)
    sql, params = A.rule_query(rule, T0)
    assert sql.count("?") == len(params) and ":" not in sql.replace("::", "")
    assert T0 in params and "180" not in sql
    if kind in ("sync_reads_up", "dead_letters"):
        assert 180_000 in params


def test_alert_fields_are_the_table_columns() -> None:
    assert list(A.ALERT_COLUMNS) == BY_NAME["alert"].column_names()


# ---------------------------------------------------------------- judging


def _m(value: float | None, baseline: float | None = None, volume: float | None = None, **kw: Any) -> Measurement:
    return Measurement(kw.get("source", "DB2A"), kw.get("pool", "BP1"), kw.get("subject", "pool_pane"),
                       kw.get("event_time", T0), value, baseline, volume)  # fmt: skip


def test_sync_reads_up_fires_above_the_increase_and_the_floor() -> None:
    r = _rule("sync_reads_up")
    f = A.judge(r, _m(130.0, 100.0), T0)
    assert f == Firing("warning", 130.0, 100.0, 125.0, T0, f.message if f else "")
    assert f is not None and f.message.startswith("DB2A/BP1: measured sync reads 130.0/s over 1h, +30% against")
    assert A.judge(r, _m(125.0, 100.0), T0) is None  # at the limit: not above it
    assert A.judge(r, _m(4.0, 1.0), T0) is None  # below the 5/s floor
    assert A.judge(r, _m(6.0, 0.0), T0) is not None  # up from nothing
    assert A.judge(r, _m(130.0, None), T0) is None and A.judge(r, _m(None, 100.0), T0) is None


def test_hit_ratio_drop_fires_below_baseline_minus_points() -> None:
    r = _rule("hit_ratio_drop")
    f = A.judge(r, _m(0.80, 0.90, 100.0), T0)
    assert f is not None and (f.value, f.baseline) == (0.80, 0.90) and f.threshold == pytest.approx(0.85)
    assert A.judge(r, _m(0.86, 0.90, 100.0), T0) is None
    assert A.judge(r, _m(0.10, 0.90, 5.0), T0) is None  # under 10 getpages/s


def test_sim_accuracy_fires_either_way() -> None:
    r = _rule("sim_accuracy")
    for v, fires in ((0.11, True), (-0.11, True), (0.10, False), (-0.05, False), (None, False)):
        f = A.judge(r, _m(v, None, 50.0, subject="sim_accuracy/trace"), T0)
        assert (f is not None) == fires, v
    assert A.judge(r, _m(0.5, None, 0.5, subject="sim_accuracy/trace"), T0) is None  # under 1 measured read/s


def test_data_stale_counts_from_now_or_at_and_forgets_retired_pools() -> None:
    r = _rule("data_stale")
    f = A.judge(r, _m(None, event_time=T0 - timedelta(minutes=11)), T0)
    assert f is not None and (f.value, f.threshold, f.event_time) == (660.0, 600, T0 - timedelta(minutes=11))
    assert A.judge(r, _m(None, event_time=T0 - timedelta(minutes=10)), T0) is None
    assert A.judge(r, _m(None, event_time=T0 - timedelta(days=2)), T0) is None


def test_dead_letters_and_pages_per_write() -> None:
    f = A.judge(_rule("dead_letters"), _m(3.0, pool=None, subject="dead_letter/ingest-trace"), T0)
    assert f is not None and f.message == "DB2A: 3 dead letters from ingest-trace in the last 15m"
    pw = _rule("pages_per_write_low")
    assert A.judge(pw, _m(2.5, None, 600.0), T0) is not None
    assert A.judge(pw, _m(12.0, None, 600.0), T0) is None
    assert A.judge(pw, _m(2.5, None, 0.0), T0) is None  # nothing written


def test_gbp_rows_are_measured_per_group_and_gbp_for_each_counter() -> None:
    """alert_gbp_stats's row: group, GBP, then per counter its newest interval's end and counts."""
    t1, t2 = T0 - timedelta(minutes=5), T0
    row = ("DSG1", "GBP1", t2, 0, 0, t1, 4, 250)  # reclaims counted up to t2, failed writes up to t1
    [r] = A.measurements(_rule("gbp_directory_reclaims"), [row])
    assert r == Measurement("DSG1", "GBP1", "gbp_stats", t2, 0.0, related=0.0)
    [w] = A.measurements(_rule("gbp_writes_failed"), [row])
    assert w == Measurement("DSG1", "GBP1", "gbp_stats", t1, 4.0, related=250.0)


def test_gbp_directory_reclaims_fire_above_zero_and_resolve_at_zero() -> None:
    r = _rule("gbp_directory_reclaims")
    m = Measurement("DSG1", "GBP1", "gbp_stats", T0, 12.0, related=30.0)
    f = A.judge(r, m, T0 + timedelta(minutes=3))
    assert f == Firing(
        "warning", 12.0, None, 0, T0,
        "DSG1/GBP1: 12 directory reclaims (30 cross-invalidations due to reclaims) in the statistics interval "
        "ending 2026-11-23 12:00:00Z: the GBP has too few directory entries for the pages the members cache; "
        "raise RATIO or the structure size",
    )  # fmt: skip
    assert A.judge(r, replace(m, value=0.0), T0) is None  # a later interval with none: no firing, it resolves
    assert A.judge(r, replace(m, value=None), T0) is None
    assert A.judge(_rule("gbp_directory_reclaims", max_reclaims=12), m, T0) is None  # at the limit
    assert A.judge(r, m, T0 + timedelta(days=1)) is not None
    assert A.judge(r, m, T0 + timedelta(days=1, seconds=1)) is None  # the group stopped reporting a day ago


def test_gbp_writes_failed_fire_above_zero() -> None:
    r = _rule("gbp_writes_failed")
    m = Measurement("DSG1", "GBP1", "gbp_stats", T0, 3.0, related=None)
    f = A.judge(r, m, T0)
    assert f is not None and f.message == (
        "DSG1/GBP1: 3 writes failed for lack of storage in the statistics interval ending 2026-11-23 12:00:00Z: "
        "every data entry held changed data; the GBP is too small or castout too slow"
    )
    f = A.judge(r, replace(m, related=1200.0), T0)
    assert f is not None and "3 writes failed for lack of storage (1,200 pages cast out) in" in f.message
    assert A.judge(r, replace(m, value=0.0), T0) is None


# ---------------------------------------------------------------- diffing


def _open(alert_id: str, rule: str, pool: str | None, opened: int = 0) -> Alert:
    t = T0 - timedelta(minutes=30 - opened)
    return Alert(alert_id, rule, "warning", "DB2A", pool, "pool_pane", "open", t, None, t, t, 1.0, 0.5, 0.6, "old")


def _fire(value: float) -> Firing:
    return Firing("critical", value, 0.5, 0.6, T0, f"now {value}")


def test_diff_opens_updates_resolves_and_leaves_other_rules_alone() -> None:
    a1, a2, a3, a4 = (
        _open("a1", "up", "BP1"),  # still firing: update
        _open("a2", "up", "BP2"),  # no longer firing: resolve
        _open("a3", "other", "BP1"),  # a rule not evaluated (its query failed, or gone from the file): untouched
        _open("a4", "up", "BP1", opened=5),  # a second open alert of a1's key (two evaluators raced): resolve
    )
    firing: dict[A.Key, Firing] = {
        ("up", "DB2A", "BP1", "pool_pane"): _fire(2.0),
        ("up", "DB2A", "BP3", "pool_pane"): _fire(3.0),
    }
    actions = A.diff(firing, [a4, a3, a2, a1], {"up"}, T0, new_id=lambda: "n1")
    now: dict[str, Any] = {"event_time": T0, "baseline": 0.5, "threshold": 0.6, "updated_at": T0}
    new = Alert(
        "n1", "up", "critical", "DB2A", "BP3", "pool_pane", "open", T0, None, value=3.0, message="now 3.0", **now
    )
    assert actions == [
        Action("open", new),
        Action("update", replace(a1, value=2.0, message="now 2.0", **now)),
        Action("resolve", replace(a4, state="resolved", resolved_at=T0)),
        Action("resolve", replace(a2, state="resolved", resolved_at=T0)),
    ]


def test_diff_of_nothing_is_nothing_and_null_keys_sort() -> None:
    assert A.diff({}, [], {"up"}, T0) == []
    firing: dict[A.Key, Firing] = {
        ("dl", "x", None, "dead_letter/a"): _fire(1.0),
        ("dl", None, None, "dead_letter/b"): _fire(1.0),
    }
    actions = A.diff(firing, [], {"dl"}, T0)
    assert [a.alert.source for a in actions] == [None, "x"] and all(a.op == "open" for a in actions)
    assert len({a.alert.alert_id for a in actions}) == 2


def test_one_merge_for_all_actions() -> None:
    a = _open("a1", "up", "BP1")
    actions = [Action("open", a), Action("update", a), Action("resolve", a)]
    sql, params = A.merge_statement(actions, T0)
    assert sql.strip().startswith(f"MERGE INTO {A.ALERT} t") and sql.count("?") == len(params) == 3 * 12 + 4
    assert params[:7] == ("open", "a1", "up", "warning", "DB2A", "BP1", "pool_pane") and params[-4:] == (T0,) * 4


# ---------------------------------------------------------------- webhook, heartbeat, command line


@pytest.fixture
def hook() -> Iterator[tuple[str, list[dict[str, Any]]]]:
    got: list[dict[str, Any]] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            got.append(json.loads(self.rfile.read(int(self.headers["Content-Length"]))))
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/hook", got
    server.shutdown()


def test_notify_posts_the_alert_and_survives_a_dead_url(hook: tuple[str, list[dict[str, Any]]]) -> None:
    url, got = hook
    a = _open("a1", "up", "BP1")
    assert A.notify(url, "opened", a)
    assert got == [{"event": "opened", "alert": A.alert_dict(a)}]
    assert got[0]["alert"]["opened_at"] == "2026-11-23T11:30:00Z"
    assert not A.notify("http://127.0.0.1:1/nothing-listens", "resolved", a)


def test_the_loop_records_errors_in_the_heartbeat_and_goes_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text("rules: [{name: a, kind: data_stale}, {name: b, kind: dead_letters}]\n")
    monkeypatch.setenv("POOLSIGHT_RUN_DIR", str(tmp_path / "run"))
    settings = load_settings()
    calls: list[A.RuleSet] = []

    trino_down = [True, False, True, False]

    def evaluate(rs: A.RuleSet, **kw: Any) -> A.Outcome:
        calls.append(rs)
        if trino_down.pop(0):
            raise ConnectionError("Trino is down")
        return A.Outcome(None, [], [], [], 4, [])

    monkeypatch.setattr(A, "evaluate", evaluate)
    A.run_loop(rules, 0, settings, cycles=2)  # the first cycle fails, the second goes on
    beat = json.loads(heartbeat_path(settings, "alerts").read_text())
    assert len(calls) == 2 and beat["rules"] == 2 and beat["open"] == 4 and beat["error"] is None
    A.run_loop(rules, 0, settings, cycles=1)  # Trino down again
    beat = json.loads(heartbeat_path(settings, "alerts").read_text())
    assert beat.get("open") is None and beat["error"] == "ConnectionError: Trino is down" and beat["time"] > 0
    # A broken edit between cycles: the rules read before are evaluated, the heartbeat says why.
    loads: list[A.RuleSet | RuleError] = [A.load_rules(rules), RuleError(f"{rules}: rule 'a': field 'kind': bad")]

    def load(path: Path) -> A.RuleSet:
        x = loads.pop(0)
        if isinstance(x, RuleError):
            raise x
        return x

    monkeypatch.setattr(A, "load_rules", load)
    calls.clear()
    A.run_loop(rules, 0, settings, cycles=1)
    beat = json.loads(heartbeat_path(settings, "alerts").read_text())
    assert len(calls) == 1 and len(calls[0].rules) == 2 and beat["open"] == 4
    assert beat["error"] == f"{rules}: rule 'a': field 'kind': bad (evaluating the rules read before)"


def test_cli_parses_the_alerts_commands() -> None:
    p = build_parser()
    a = p.parse_args(["alerts", "evaluate", "--at", "2026-11-23T11:40", "--json"])
    assert (a.action, a.at, a.json, a.rules) == (
        "evaluate",
        datetime(2026, 11, 23, 11, 40, tzinfo=UTC),
        True,
        A.RULES_FILE,
    )
    assert p.parse_args(["alerts", "run"]).every == 30
    assert p.parse_args(["alerts", "list", "--all"]).all
    with pytest.raises(SystemExit):
        p.parse_args(["alerts", "evaluate", "--at", "yesterday"])

"""The Grafana provisioning files (dashboards/grafana/): they parse, read as the reader user, and every query
names only poolsight's tables and views, in the trino-datasource plugin's query model.

The helpers here (`expand` above all) are shared with tests/stack/test_grafana.py, which runs every
query on the real Trino.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
import yaml

from poolsight.infra.config import DEFAULT_BIND_HOST, DEFAULT_PORTS
from poolsight.infra.trino_secrets import CERTIFICATE_NAME, PASSWORD_NAMES
from poolsight.names import NAMESPACE, TRINO_CATALOG, TRINO_READER_USER
from poolsight.sql.catalog import TABLES
from poolsight.sql.views import VIEWS_SQL
from tests.conftest import ROOT

GRAFANA = ROOT / "dashboards" / "grafana"
DATASOURCES = GRAFANA / "provisioning" / "datasources" / "poolsight-trino.yaml"
PROVIDERS = GRAFANA / "provisioning" / "dashboards" / "poolsight.yaml"
DASHBOARDS = sorted((GRAFANA / "dashboards").glob("*.json"))
PLUGIN = "trino-datasource"
# The plugin's FormatOptions enum (src/types.ts): TimeSeries, Table, Logs.
FORMAT_TIME_SERIES, FORMAT_TABLE = 0, 1
PANEL_FORMATS = {"timeseries": FORMAT_TIME_SERIES, "table": FORMAT_TABLE, "trend": FORMAT_TABLE}


def objects() -> set[str]:
    """Every table and view a dashboard may read, qualified."""
    views = re.findall(r"^CREATE OR REPLACE VIEW \$\{schema\}\.(\w+)", VIEWS_SQL.read_text(), re.MULTILINE)
    return {f"{TRINO_CATALOG}.{NAMESPACE}.{name}" for name in (*(t.name for t in TABLES), *views)}


def load(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text()) if path.suffix == ".json" else yaml.safe_load(path.read_text())
    assert isinstance(data, dict), path
    return data


def datasource() -> dict[str, Any]:
    [ds] = load(DATASOURCES)["datasources"]
    assert isinstance(ds, dict)
    return ds


def panels(dashboard: dict[str, Any]) -> list[dict[str, Any]]:
    """Every panel, those inside collapsed rows too."""
    out: list[dict[str, Any]] = []
    for p in dashboard["panels"]:
        out.append(p)
        out.extend(p.get("panels", []))
    return [p for p in out if p["type"] != "row"]


def variables(dashboard: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {v["name"]: v for v in dashboard["templating"]["list"]}


def queries(dashboard: dict[str, Any]) -> Iterator[tuple[str, str]]:
    """(what, SQL) of every panel target and variable query."""
    for p in panels(dashboard):
        for t in p["targets"]:
            yield f"{dashboard['uid']} panel {p['id']} {p['title']!r} {t['refId']}", t["rawSQL"]
    for name, v in variables(dashboard).items():
        yield f"{dashboard['uid']} variable {name}", v["query"]["query"]


LABEL_REF = re.compile(r"\$\{__field\.labels\.(\w+)\}")
DATA_FIELD_REF = re.compile(r"\$\{__data\.fields\.(\w+)\}")


def expected_columns(panel: dict[str, Any]) -> set[str]:
    """The result columns a panel's configuration names, so its query must return them: `time` of a time
    series, the labels its display names use, a trend's x field, the columns a table orders (all of them),
    the fields its data links read."""
    config = json.dumps(panel["fieldConfig"])
    cols = set(LABEL_REF.findall(config)) | set(DATA_FIELD_REF.findall(config))
    if panel["type"] == "timeseries":
        cols.add("time")
    if panel["type"] == "trend":
        cols.add(panel["options"]["xField"])
    for t in panel.get("transformations", []):
        if t["id"] == "organize":
            cols |= set(t["options"]["indexByName"])
    return cols


def label_columns(panel: dict[str, Any]) -> set[str]:
    return set(LABEL_REF.findall(json.dumps(panel["fieldConfig"])))


def table_columns(panel: dict[str, Any]) -> list[str]:
    """A table panel's columns in display order (its organize transformation)."""
    [organize] = [t for t in panel.get("transformations", []) if t["id"] == "organize"]
    order: dict[str, int] = organize["options"]["indexByName"]
    return sorted(order, key=order.__getitem__)


# ---------------------------------------------------------------- macros and variables, as the plugin expands them


def _timestamp(t: datetime) -> str:
    # The plugin (pkg/trino/macros.go) writes the time in UTC without a zone; Trino reads it in the
    # session zone, which the plugin leaves to the server.
    return "TIMESTAMP '" + t.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S") + "'"


def _value(v: str | Sequence[str]) -> str:
    # The plugin's interpolateQueryStr (src/datasource.ts): a single-value variable has its quotes doubled
    # and no quotes around it (the SQL writes '$source'); a multi-value or include-all one becomes quoted
    # literals joined by commas (the SQL writes IN ($source)).
    if isinstance(v, str):
        return v.replace("'", "''")
    return ",".join("'" + x.replace("'", "''") + "'" for x in v)


def expand(sql: str, source: str | Sequence[str], pool: str | Sequence[str], start: datetime, end: datetime) -> str:
    """A dashboard query as the trino-datasource plugin sends it to Trino. Grafana substitutes `$source`,
    `${source}` (a str: single-value variable, a sequence: multi-value), the plugin's backend the macros
    `$__timeFilter(column)`, `$__timeFrom()` and `$__timeTo()`. Anything else with a `$` is an error,
    so a dashboard cannot use a macro or variable this does not know."""
    sql = re.sub(
        r"\$__timeFilter\(\s*([\w.]+)\s*\)",
        lambda m: f"{m.group(1)} BETWEEN {_timestamp(start)} AND {_timestamp(end)}",
        sql,
    )
    sql = re.sub(r"\$__timeFrom\(\s*\)", lambda _: _timestamp(start), sql)
    sql = re.sub(r"\$__timeTo\(\s*\)", lambda _: _timestamp(end), sql)
    values = {"source": _value(source), "pool": _value(pool)}

    def variable(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(2)
        if name not in values:
            raise ValueError(f"unknown variable or macro ${name} in: {sql}")
        return values[name]

    sql = re.sub(r"\$\{(\w+)\}|\$(\w+)", variable, sql)
    if "$" in sql:
        raise ValueError(f"unexpanded $ in: {sql}")
    return sql


def test_expand_writes_what_the_plugin_writes() -> None:
    start, end = datetime(2023, 1, 1, tzinfo=UTC), datetime(2023, 1, 2, tzinfo=UTC)
    # pkg/trino/macros_test.go's expectations for the same range.
    assert expand("$__timeFilter(orderdate)", "S", "P", start, end) == (
        "orderdate BETWEEN TIMESTAMP '2023-01-01 00:00:00' AND TIMESTAMP '2023-01-02 00:00:00'"
    )
    assert expand("$__timeFrom() $__timeTo()", "S", "P", start, end) == (
        "TIMESTAMP '2023-01-01 00:00:00' TIMESTAMP '2023-01-02 00:00:00'"
    )
    assert expand("s = '$source' AND p = '${pool}'", "D'B", "BP1", start, end) == "s = 'D''B' AND p = 'BP1'"
    assert expand("s IN ($source)", ["A", "B'"], "BP1", start, end) == "s IN ('A','B''')"
    for bad in ("$__timeGroup(t, '1m')", "${source:csv}", "$other"):
        with pytest.raises(ValueError):
            expand(bad, "S", "P", start, end)


# ---------------------------------------------------------------- the files


def test_every_file_parses() -> None:
    files = [p for p in GRAFANA.rglob("*") if p.suffix in (".json", ".yaml")]
    assert {p.name for p in DASHBOARDS} == {"poolsight-overview.json", "poolsight-pool.json"}
    assert {DATASOURCES, PROVIDERS} <= set(files)
    for path in files:
        assert load(path), path


def test_the_datasource_reads_as_the_reader_user_with_secrets_from_files() -> None:
    ds = datasource()
    assert load(DATASOURCES)["apiVersion"] == 1
    assert (ds["name"], ds["uid"], ds["type"]) == ("poolsight-trino", "poolsight-trino", PLUGIN)
    assert ds["url"] == f"https://{DEFAULT_BIND_HOST}:{DEFAULT_PORTS['trino']}"
    # The plugin takes the Trino user from the basic-auth user (pkg/trino/models/settings.go).
    assert ds["basicAuth"] is True and ds["basicAuthUser"] == TRINO_READER_USER
    # The password and the certificate only by reference to the files the launcher generates.
    secrets = ds["secureJsonData"]
    assert secrets == {
        "basicAuthPassword": "$__file{/opt/poolsight/var/data/secrets/trino-reader-password}",
        "tlsCACert": "$__file{/opt/poolsight/var/data/secrets/trino-tls.crt}",
    }
    assert ds["jsonData"] == {"tlsAuthWithCACert": True}
    assert secrets["basicAuthPassword"].endswith(f"/secrets/{PASSWORD_NAMES[TRINO_READER_USER]}}}")
    assert secrets["tlsCACert"].endswith(f"/secrets/{CERTIFICATE_NAME}}}")


def test_the_provider_loads_the_dashboards_folder_from_files() -> None:
    conf = load(PROVIDERS)
    [provider] = conf["providers"]
    assert conf["apiVersion"] == 1 and provider["type"] == "file"
    assert provider["options"]["path"].endswith("poolsight")


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_dashboard_model(path: Path) -> None:
    d = load(path)
    uid = datasource()["uid"]
    assert d["uid"] and d["schemaVersion"] == 39
    assert set(variables(d)) == {"source", "pool"}
    for v in variables(d).values():
        assert v["type"] == "query" and v["datasource"] == {"type": PLUGIN, "uid": uid}
        # What Grafana's editor stores for a StandardVariableSupport data source.
        assert v["query"]["refId"] == "StandardVariableQuery" and v["definition"] == v["query"]["query"]
        assert v["multi"] == v["includeAll"]
    ids = [p["id"] for p in panels(d)]
    assert len(ids) == len(set(ids))
    for p in panels(d):
        assert p["datasource"] == {"type": PLUGIN, "uid": uid}, p["title"]
        assert p["type"] in PANEL_FORMATS, p["title"]
        assert p["targets"], p["title"]
        for t in p["targets"]:
            assert t["datasource"] == p["datasource"] and t["refId"], p["title"]
            assert t["format"] == PANEL_FORMATS[p["type"]], p["title"]
            assert t["rawSQL"].strip(), p["title"]  # rawSQL: the field the plugin's frontend interpolates
        if p["type"] == "table":
            names = set(table_columns(p))
            shown = names | set(p["transformations"][0]["options"]["renameByName"].values())
        else:
            # Without a rename, a field's display name is its column's name (no labels).
            shown = expected_columns(p)
        for o in p["fieldConfig"]["overrides"]:
            assert o["matcher"]["id"] != "byName" or o["matcher"]["options"] in shown, (p["title"], o)
        assert expected_columns(p), p["title"]


FROM_OR_JOIN = re.compile(r"\b(?:FROM|JOIN)\s+(\(|[\w.]+)", re.IGNORECASE)
QUALIFIED = re.compile(r"\b\w+\.\w+\.\w+\b")
CTE = re.compile(r"(?:\bWITH|,)\s*(\w+)\s+AS\s*\(", re.IGNORECASE)


@pytest.mark.parametrize("path", DASHBOARDS, ids=lambda p: p.name)
def test_queries_read_only_poolsight_tables_and_views(path: Path) -> None:
    allowed = objects()
    start = datetime(2026, 1, 1, tzinfo=UTC)
    d = load(path)
    multi = {name for name, v in variables(d).items() if v["multi"]}
    for what, sql in queries(d):
        # Every macro and variable is one the stack test can expand.
        expand(
            sql,
            ["S"] if "source" in multi else "S",
            ["P"] if "pool" in multi else "P",
            start,
            start,
        )
        ctes = {m.lower() for m in CTE.findall(sql)}
        for target in FROM_OR_JOIN.findall(sql):
            assert target == "(" or target.upper() == "UNNEST" or target.lower() in ctes or target in allowed, (
                what,
                target,
            )
        for name in QUALIFIED.findall(sql):
            assert name in allowed, (what, name)
        assert QUALIFIED.findall(sql), what

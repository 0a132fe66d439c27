"""Named queries: every statement the dashboard, the alert evaluator, the advice service, `poolsight
compare` and `poolsight demo` run, read from the `.sql` files of sql/queries/ (one per consumer).

A file is a run of statements, each headed by

    -- name: snake_case_name
    -- One line (or more) saying what it answers.
    -- grains: hour, day        (optional: one query per rollup grain, see below)
    -- sorted by: t             (optional: the order the caller sorts the rows in, see below)

and written with `${schema}` (the catalog and namespace, as views.sql) and named parameters
`:name` (snake_case; a name may appear several times). A `:` inside a single-quoted string
('vpseqt:', '00:00'), a double-quoted identifier or a `--` comment is not a parameter, and a `?`
is never written by hand. `Query.sql` is the qmark form Trino's client takes and `Query.params`
the names in the order of the `?`s, so `Query.bind(source=..., pool=...)` gives the positional
tuple (a missing or unexpected name is an error naming the query).

Identifiers that vary are template variables with a fixed set of values, never a request's: a
`-- grains: hour, day` header makes one query per rollup grain, `name@hour` and `name@day`, with
`${grain}` the grain (pool_hour) and `${grainly}` its views' suffix (pool_hourly). `${curve_window}`
is the simulated curve of one pool over a given window, from the one definition sim_curve_latest
is also made from (sql/curve.py), `${curve_recent}` that curve for every pool; `${anchor_pool}` and
`${anchor_all}` the pool page's anchor for one pool and for every pool, `${anchor_row}` for one pool
from its pool_page row and its panes read now (sql/anchor.py).

A `-- sorted by: column, ...` header stands for a final ORDER BY the statement leaves out: in Trino
that is two stages (a partial sort and a merge), 30-50 ms of CPU for a page's few thousand
rows at most (sql/README.md), so `Query.sort` orders the rows the statement returned instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from poolsight.sql.anchor import anchor_sql
from poolsight.sql.catalog import properties_map
from poolsight.sql.curve import curve_sql
from poolsight.sql.views import GRAIN_VIEWS, SCHEMA

# Statements written once and filled in several queries: the pool page's anchor and curve, for one
# pool (the page) and for every pool (the page tables the maintenance service keeps).
TEMPLATES = {
    "anchor_pool": anchor_sql("pool"),
    "anchor_all": anchor_sql("all"),
    "anchor_row": anchor_sql("row"),
    "curve_window": curve_sql("window"),
    "curve_recent": curve_sql("recent"),
    "metadata_properties": properties_map(),
}

QUERIES_DIR = Path(__file__).resolve().parent / "queries"
NAME = re.compile(r"[a-z][a-z0-9_]*")
_PARAM = re.compile(r"[A-Za-z_]\w*")
_HEADER = re.compile(r"^--\s*(name|fragment):\s*(\S+)\s*$", re.MULTILINE)
_TEMPLATE = re.compile(r"\$\{(\w+)\}")


class QueryError(ValueError):
    """A query file that cannot be used, or a query bound with the wrong parameters."""


@dataclass(frozen=True)
class Query:
    """One named statement: `sql` in qmark form, `params` the parameter name of each `?` in order."""

    name: str
    doc: str
    sql: str
    params: tuple[str, ...]
    order: tuple[str, ...] = ()  # `-- sorted by:` columns, ascending, nulls last

    def bind(self, values: Mapping[str, Any] | None = None, /, **kw: Any) -> tuple[Any, ...]:
        """The positional parameters for `sql` from a mapping and/or keywords, each name given once."""
        given = {**(values or {}), **kw}
        missing = sorted(set(self.params) - set(given))
        extra = sorted(set(given) - set(self.params))
        if missing or extra:
            parts = [f"missing {', '.join(missing)}"] if missing else []
            parts += [f"unexpected {', '.join(extra)}"] if extra else []
            wanted = ", ".join(dict.fromkeys(self.params)) or "none"
            raise QueryError(f"query {self.name}: {'; '.join(parts)} (parameters: {wanted})")
        return tuple(given[p] for p in self.params)

    def sort(self, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The rows in the order `-- sorted by:` declares (as they came without one)."""
        if not self.order or len(rows) < 2:
            return rows
        return sorted(rows, key=lambda r: tuple((r[c] is None, r[c]) for c in self.order))

    def statement(self, values: Mapping[str, Any] | None = None, /, **kw: Any) -> tuple[str, tuple[Any, ...]]:
        """(sql, positional parameters): what a cursor's execute or the dashboard's `run` takes."""
        return self.sql, self.bind(values, **kw)

    def union_all(self, each: Sequence[Mapping[str, Any]]) -> tuple[str, tuple[Any, ...]]:
        """One statement for several sets of parameters: this one's rows for each, in a UNION ALL
        (Trino's cost is per statement, sql/README.md). A statement that orders its rows cannot be."""
        if not each:
            raise QueryError(f"query {self.name}: a UNION ALL of no parameter sets")
        if _final_order_by(self.sql) or self.order:
            raise QueryError(f"query {self.name}: an ordered statement in a UNION ALL loses its order")
        sql = "\nUNION ALL\n".join(f"(\n{self.sql}\n)" for _ in each)
        return sql, tuple(v for values in each for v in self.bind(values))


def to_qmark(name: str, text: str) -> tuple[str, tuple[str, ...]]:
    """`:name` parameters to `?`, skipping string literals, quoted identifiers and comments."""
    out: list[str] = []
    params: list[str] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in "'\"":  # a literal or quoted identifier; a doubled quote stays inside it
            j = i + 1
            while j < n:
                if text[j] == ch:
                    if j + 1 < n and text[j + 1] == ch:
                        j += 2
                        continue
                    break
                j += 1
            if j >= n:
                raise QueryError(f"query {name}: unterminated {ch} quote")
            out.append(text[i : j + 1])
            i = j + 1
        elif text.startswith("--", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(text[i:j])
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise QueryError(f"query {name}: unterminated /* comment")
            out.append(text[i : j + 2])
            i = j + 2
        elif ch == ";":
            raise QueryError(f"query {name}: more than one statement (a `;` inside it)")
        elif ch == "?":
            raise QueryError(f"query {name}: a `?` written by hand; name the parameter (:name)")
        elif (
            ch == ":"
            and (m := _PARAM.match(text, i + 1))
            and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_:"))
        ):
            if not NAME.fullmatch(m.group(0)):
                raise QueryError(f"query {name}: parameter :{m.group(0)} is not snake_case")
            params.append(m.group(0))
            out.append("?")
            i = m.end()
        else:
            out.append(ch)
            i += 1
    return "".join(out), tuple(params)


_QUOTED_OR_COMMENT = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|--[^\n]*|/\*.*?\*/", re.DOTALL)
_ORDER_BY = re.compile(r"\border\s+by\b", re.IGNORECASE)


def _final_order_by(sql: str) -> bool:
    """Whether the statement ends in an ORDER BY: one outside every bracket (a window's, a
    subquery's are inside one), literals, quoted names and comments left out."""
    text = _QUOTED_OR_COMMENT.sub(" ", sql)
    depth, top = 0, []
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        top.append(ch if depth == 0 and ch != ")" else " ")
    return bool(_ORDER_BY.search("".join(top)))


def _fill(name: str, text: str, values: Mapping[str, str]) -> str:
    def sub(m: re.Match[str]) -> str:
        if m.group(1) not in values:
            raise QueryError(f"query {name}: unknown template variable ${{{m.group(1)}}}")
        return values[m.group(1)]

    return _TEMPLATE.sub(sub, text)


def _blocks(text: str, origin: str) -> list[tuple[str, str, str]]:
    """(kind, name, text after its header) of each `-- name:` query and `-- fragment:` block."""
    heads = list(_HEADER.finditer(text))
    if not heads:
        raise QueryError(f"{origin}: no `-- name:` header")
    if any(line.strip() and not line.lstrip().startswith("--") for line in text[: heads[0].start()].splitlines()):
        raise QueryError(f"{origin}: SQL before the first `-- name:` header")
    out = []
    for k, h in enumerate(heads):
        if not NAME.fullmatch(h.group(2)):
            raise QueryError(f"{origin}: {h.group(1)} name {h.group(2)!r} is not snake_case")
        out.append((h.group(1), h.group(2), text[h.end() : heads[k + 1].start() if k + 1 < len(heads) else len(text)]))
    return out


def fragments(text: str, origin: str = "<text>") -> dict[str, str]:
    """The `-- fragment: name` blocks of a file: SQL written once that queries of any file use as
    `${name}` (e.g. a CTE several statements share), its doc comment lines dropped."""
    out: dict[str, str] = {}
    for kind, name, block in _blocks(text, origin):
        if kind == "fragment":
            body = "\n".join(ln for ln in block.strip("\n").splitlines() if not ln.lstrip().startswith("--"))
            if not body.strip():
                raise QueryError(f"{origin}: fragment {name} is empty")
            out[name] = body.strip()
    return out


def parse(text: str, origin: str = "<text>", shared: Mapping[str, str] | None = None) -> dict[str, Query]:
    """The queries of one file's text, by name (grain variants as name@grain); `shared`: the
    fragments of every file (default: this file's)."""
    frags = dict(fragments(text, origin) if shared is None else shared)
    out: dict[str, Query] = {}
    for kind, name, block in _blocks(text, origin):
        if kind == "fragment":
            continue
        lines = block.strip("\n").splitlines()
        doc: list[str] = []
        grains: list[str] = []
        order: tuple[str, ...] = ()
        while lines and lines[0].lstrip().startswith("--"):
            line = lines.pop(0).lstrip()[2:].strip()
            if line.startswith("grains:"):
                grains = [g.strip() for g in line.removeprefix("grains:").split(",") if g.strip()]
                unknown = [g for g in grains if g not in GRAIN_VIEWS]
                if unknown or not grains:
                    raise QueryError(f"{origin}: query {name}: grains must be of {', '.join(GRAIN_VIEWS)}")
            elif line.startswith("sorted by:"):
                order = tuple(c.strip() for c in line.removeprefix("sorted by:").split(",") if c.strip())
                if not order or not all(NAME.fullmatch(c) for c in order):
                    raise QueryError(f"{origin}: query {name}: sorted by must name snake_case columns")
            else:
                doc.append(line)
        if not doc:
            raise QueryError(f"{origin}: query {name} has no doc comment line")
        body = "\n".join(lines).strip().rstrip(";").strip()
        if not body:
            raise QueryError(f"{origin}: query {name} has no statement")
        if [c for c in order if not re.search(rf"\b{c}\b", body)]:
            raise QueryError(f"{origin}: query {name}: sorted by {', '.join(order)} names a column it does not select")
        base = {**frags, "schema": SCHEMA, **TEMPLATES}
        variants = [(f"{name}@{g}", {"grain": g, "grainly": GRAIN_VIEWS[g]}) for g in grains] or [(name, {})]
        for qname, extra in variants:
            if qname in out:
                raise QueryError(f"{origin}: query {qname} defined twice")
            # The templates are filled first: they hold ${schema} and named parameters of their own.
            filled = _fill(qname, _fill(qname, body, {**base, **extra}), {**base, **extra})
            sql, params = to_qmark(qname, filled)
            if order and _final_order_by(sql):
                raise QueryError(f"{origin}: query {qname}: sorted by in place of a final ORDER BY, not beside one")
            out[qname] = Query(qname, " ".join(doc), sql, params, order)
    return out


def load(path: Path, shared: Mapping[str, str] | None = None) -> dict[str, Query]:
    return parse(path.read_text(), str(path), shared)


@cache
def queries() -> dict[str, Query]:
    """Every named query of sql/queries/*.sql; a name defined in two files is an error."""
    paths = sorted(QUERIES_DIR.glob("*.sql"))
    shared: dict[str, str] = {}
    for path in paths:
        for name, frag in fragments(path.read_text(), str(path)).items():
            if name in shared:
                raise QueryError(f"{path}: fragment {name} is also defined in another file")
            shared[name] = frag
    out: dict[str, Query] = {}
    for path in paths:
        for name, q in load(path, shared).items():
            if name in out:
                raise QueryError(f"{path}: query {name} is also defined in another file")
            out[name] = q
    return out


def query(name: str) -> Query:
    """One named query (name@grain for a grain's variant)."""
    try:
        return queries()[name]
    except KeyError:
        raise QueryError(f"no named query {name!r} in {QUERIES_DIR}") from None

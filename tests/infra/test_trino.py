"""The one road to Trino: an idempotent statement is run again on a passing catalog error, and
only then."""

from __future__ import annotations

from typing import Any

import pytest

from poolsight.infra import trino as T


def _error(name: str, message: str | None = None) -> T.QueryError:
    return T.QueryError({"errorName": name, "message": message or f"{name} for the test"}, "q1")


class Cursor:
    def __init__(self, failures: list[str], message: str | None = None) -> None:
        self.failures = failures
        self.message = message
        self.calls: list[tuple[str, Any]] = []

    def execute(self, sql: str, params: Any = None) -> None:
        self.calls.append((sql, params))
        if self.failures:
            raise _error(self.failures.pop(0), self.message)

    def fetchall(self) -> list[list[int]]:
        return [[1]]


def test_passing_catalog_errors_are_retried_until_the_statement_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("poolsight.infra.trino.time.sleep", lambda s: None)
    cur = Cursor(["GENERIC_INTERNAL_ERROR", "ICEBERG_COMMIT_ERROR"])
    assert T.fetch_idempotent(cur, "UPDATE t SET k = 1 WHERE k IS NULL", [3]) == [[1]]
    assert len(cur.calls) == 3 and cur.calls[-1] == ("UPDATE t SET k = 1 WHERE k IS NULL", [3])


def test_other_errors_and_the_last_attempt_are_raised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("poolsight.infra.trino.time.sleep", lambda s: None)
    cur = Cursor(["TABLE_NOT_FOUND"])
    with pytest.raises(T.QueryError) as err:
        T.fetch_idempotent(cur, "SELECT 1")
    assert err.value.error_name == "TABLE_NOT_FOUND" and len(cur.calls) == 1
    cur = Cursor(["GENERIC_INTERNAL_ERROR"] * T.RETRIES)
    with pytest.raises(T.QueryError):
        T.fetch_idempotent(cur, "SELECT 1")
    assert len(cur.calls) == T.RETRIES


def test_rows_as_dicts_by_column_name() -> None:
    rows = T.Rows([("pool", "varchar"), ("n", "bigint")], [["BP1", 3], ["BP2", 4]])
    assert rows.dicts() == [{"pool": "BP1", "n": 3}, {"pool": "BP2", "n": 4}]
    columns, data = rows  # still unpacks as the (columns, rows) pair callers took
    assert columns[1] == ("n", "bigint") and data[1] == ["BP2", 4]


STALE = "Cannot check and eventually update SQL schema"  # Trino's words, from advice.log in `make chaos`


def test_a_read_meeting_the_catalogs_dead_connection_is_run_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("poolsight.infra.trino.time.sleep", lambda s: None)
    cur = Cursor(["GENERIC_INTERNAL_ERROR", "GENERIC_INTERNAL_ERROR"], STALE)
    assert T.fetch(cur, "  select max(x) FROM t WHERE k = ?", (1,)) == [[1]]
    assert len(cur.calls) == 3
    cur = Cursor(["GENERIC_INTERNAL_ERROR"] * 3, STALE)
    with pytest.raises(T.QueryError):  # the third failure is the caller's
        T.fetch(cur, "WITH a AS (SELECT 1) SELECT * FROM a")
    assert len(cur.calls) == 3


def test_a_write_or_another_internal_error_is_not_run_again(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("poolsight.infra.trino.time.sleep", lambda s: None)
    for sql, message in (("INSERT INTO t VALUES (1)", STALE), ("SELECT 1", "Some other internal error")):
        cur = Cursor(["GENERIC_INTERNAL_ERROR"], message)
        with pytest.raises(T.QueryError):
            T.fetch(cur, sql)
        assert len(cur.calls) == 1, sql

"""The one road to Trino: an idempotent statement is run again on a passing catalog error, and
only then."""

from __future__ import annotations

from typing import Any

import pytest

from poolsight.infra import trino as T


def _error(name: str) -> T.QueryError:
    return T.QueryError({"errorName": name, "message": f"{name} for the test"}, "q1")


class Cursor:
    def __init__(self, failures: list[str]) -> None:
        self.failures = failures
        self.calls: list[tuple[str, Any]] = []

    def execute(self, sql: str, params: Any = None) -> None:
        self.calls.append((sql, params))
        if self.failures:
            raise _error(self.failures.pop(0))

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

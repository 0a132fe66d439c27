"""The advice's rows written in parts under Trino's statement length (advice/online.py)."""

from __future__ import annotations

from typing import Any

from poolsight.advice.online import statement_parts


def _rows(sizes: dict[str, int]) -> list[dict[str, Any]]:
    return [{"source": src, "pool": f"BP{i}", "evidence": "x" * 1000} for src, n in sizes.items() for i in range(n)]


def test_every_row_once_in_order_and_no_source_split() -> None:
    sizes = {f"M{i}": 1 + i % 7 for i in range(200)}
    rows = _rows(sizes) + _rows({"BIG": 500})  # 500 kB of values: over the limit alone
    parts = statement_parts(rows, limit=20_000)
    assert [r for p in parts for r in p] == rows
    owner: dict[str, int] = {}
    for n, part in enumerate(parts):
        for r in part:
            assert owner.setdefault(r["source"], n) == n, r["source"]
    chars = [sum(len(str(v)) + 8 for r in p for v in r.values()) for p in parts]
    assert all(c <= 20_000 for c, p in zip(chars, parts, strict=True) if {r["source"] for r in p} != {"BIG"})
    assert [r["source"] for r in parts[-1]] == ["BIG"] * 500
    assert len(parts) >= sum(1 + i % 7 for i in range(200)) * 1000 // 20_000


def test_nothing_to_write_is_no_statement() -> None:
    assert statement_parts([]) == []

"""The compiled CSV block parser against pyarrow's reading of the same blocks (the peer): on
every block the kernel accepts they give the same rows, numbers to the bit and names; what it
leaves goes to pyarrow or the line path, and the reader's batches and resume positions are the
same either way."""

from __future__ import annotations

import random
from pathlib import Path

import numpy as np
import pytest

from poolsight.simulator import csv_block
from poolsight.simulator.csv_block import Block, arrow_block, kernel_block
from poolsight.simulator.trace import TraceReader

HEADER = ["time", "source", "pool", "object", "page", "access", "function", "hit"]
IDX: dict[str, int | None] = {
    k: HEADER.index(k) for k in ("time", "source", "pool", "object", "page", "access", "function")
}


def _rows(b: Block) -> list[tuple[object, ...]]:
    """Each row's values, names looked up: the two parsers may number a dictionary differently."""
    names = {k: [v[i] for i in idx] for k, (v, idx) in b.texts.items()}
    assert b.times is not None
    bits = b.times.view(np.int64).tolist()  # the doubles to the bit
    return list(zip(bits, b.pages.tolist(), *names.values(), strict=True))


def _field(rng: random.Random, kind: str) -> str:
    if kind == "time":
        return rng.choice(
            [
                f"{rng.uniform(0, 2e9):.6f}",
                f"{rng.randrange(10**12)}",
                f"{rng.random():.17g}",
                f"{rng.uniform(-5, 5):.3e}",
                f"{rng.randrange(10**20)}.{rng.randrange(10**6)}",
                f".{rng.randrange(1000)}",
            ]
        )
    if kind == "page":
        return rng.choice([str(rng.randrange(2**40)), str(rng.randrange(10)), "0042", str(2**63 - 1)])
    return rng.choice(["BP1", " BP1", "BP2 ", "", "DB2A", "SAPR3.BSEG", "Ü.TS", "R", "s", "GP", "x y", "\t"])


# What the kernel leaves to the other paths: blanks or a sign around numbers, a field too many,
# an empty line, a lone CR.
DEFECTS = (" 1.5", "+1.5", "+7", "-1", ",extra", "", "\r")


def _block(rng: random.Random, n: int) -> bytes:
    kinds = ["time", "text", "text", "text", "page", "text", "text", "text"]
    lines = [[_field(rng, k) for k in kinds] for _ in range(n)]
    if rng.random() < 0.5:  # one defect somewhere
        d, row = rng.choice(DEFECTS), rng.randrange(n)
        if d == "" or d == "\r":
            lines.insert(row, [d])
        elif d == ",extra":
            lines[row][-1] += d
        else:
            lines[row][0 if "." in d else 4] = d
    end = rng.choice(["\n", "\r\n"])
    text = end.join(",".join(x) for x in lines)
    return (text + (end if rng.random() < 0.8 else "")).encode()


def test_the_kernel_reads_every_block_it_accepts_as_pyarrow_does() -> None:
    rng = random.Random(7)
    accepted = refused = 0
    for trial in range(600):
        block = _block(rng, rng.randrange(1, 40))
        k = kernel_block(block, HEADER, IDX, every=4)
        a = arrow_block(block, HEADER, IDX)
        if k is None:
            refused += 1
            continue
        accepted += 1
        assert a is not None, block
        assert k.rows == a.rows == block.count(b"\n") + (not block.endswith(b"\n"))
        assert _rows(k) == _rows(a), block
        ends = [i + 1 for i, c in enumerate(block) if c == ord("\n")]
        ends = (ends if block.endswith(b"\n") else [*ends, len(block)])[3::4]  # the last line may lack its newline
        assert k.ends is not None and k.ends.tolist() == ends[: k.rows // 4], (trial, block)
    assert accepted > 250 and refused > 250  # both sides of the grammar were met


def test_a_plain_trace_is_read_alike_by_the_kernel_and_by_pyarrow(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rng = np.random.default_rng(3)
    n = 20_000
    f = tmp_path / "t.csv"
    lines = [
        f"{1.7e9 + t:.6f},DB2{'AB'[i % 2]},BP{i % 3},DB.TS{o},{p},{'RSL'[i % 3]},GP,{'YN'[i % 2]}\n"
        for i, (t, o, p) in enumerate(
            zip(np.sort(rng.random(n) * 600), rng.integers(0, 50, n), rng.integers(0, 10**9, n), strict=True)
        )
    ]
    f.write_text(",".join(HEADER) + "\n" + "".join(lines))

    def read() -> list[tuple[object, ...]]:
        r = TraceReader(f, batch_rows=2000, block_bytes=256 << 10)
        return [
            (b.times.tolist(), b.pools.tolist(), b.objects.tolist(), b.pages.tolist(), b.end_offset, b.end_line)
            for b in r.batches()
        ]

    by_kernel = read()
    monkeypatch.setattr(csv_block, "kernel_block", lambda *a: None)
    by_arrow = read()
    assert len(by_kernel) > 10 and by_kernel == by_arrow
    assert by_kernel[-1][-2:] == (f.stat().st_size, n + 1)

"""The typed getpage batch: what a producer builds is what a consumer reads back."""

from __future__ import annotations

import io

import fastavro
import numpy as np
import pytest

from poolsight import schemas
from poolsight.ingest.batching import make_batch
from poolsight.schemas.getpage import (
    ACCESS_CODES,
    ACCESS_LETTERS,
    FUNCTION_CODES,
    FUNCTION_LETTERS,
    Access,
    Function,
    GetpageBatch,
)


def _batch() -> GetpageBatch:
    rng = np.random.default_rng(7)
    n = 500
    return make_batch(
        "DB2A",
        "BP1",
        3,
        np.sort(1.7e9 + rng.random(n) * 30),
        rng.integers(0, 4, n),
        rng.integers(0, 10_000, n).astype(np.uint64),
        rng.integers(0, 3, n).astype(np.uint8),
        rng.choice([0, 0, 0, 1, 2], n).astype(np.uint8),
        rng.integers(0, 2, n).astype(np.uint8),
        names=["DB.TS1", "DB.TS2", "DB.IX1", "DB.IX2"],
    )


def test_a_batch_survives_avro_and_reads_back_equal() -> None:
    b = _batch()
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, schemas.parsed("getpage_batch"), b.record())
    rec = fastavro.schemaless_reader(io.BytesIO(buf.getvalue()), schemas.parsed("getpage_batch"))
    back = GetpageBatch.from_record(rec)  # type: ignore[arg-type]
    assert back.key == "DB2A|BP1" and back.sequence == 3 and back.events == 500
    assert (back.start_time, back.end_time) == (b.start_time, b.end_time)
    assert back.object_names == b.object_names
    for col in ("time_offset", "objects", "pages"):
        assert np.array_equal(getattr(back, col), getattr(b, col)), col
    assert (back.access, back.function, back.hit) == (b.access, b.function, b.hit)
    assert back.getpages == b.getpages == int((b.function_codes() == Function.GETPAGE).sum())
    assert np.allclose(back.times(), b.start_time / 1e6 + b.time_offset / 1e6)


@pytest.mark.parametrize(
    ("field", "value", "says"),
    [
        ("page", [1, 2], "field page: 2 entries for 500 events"),
        ("access", b"\0", "field access: 1 entries"),
        ("object", [9] * 500, "field object: index outside object_names"),
    ],
)
def test_columns_that_disagree_are_named(field: str, value: object, says: str) -> None:
    rec = _batch().record()
    rec[field] = value
    with pytest.raises(ValueError, match=says):
        GetpageBatch.from_record(rec)


def test_codes_are_the_schemas_and_every_spelling_maps_to_one() -> None:
    doc = {f["name"]: f["doc"] for f in schemas.parsed("getpage_batch")["fields"]}
    assert "0 random, 1 sequential" in doc["access"] and "2 RID-list" in doc["access"]
    assert "0 getpage, 1 set write intent" in doc["function"] and "2 release" in doc["function"]
    for letter, code in zip(ACCESS_LETTERS, Access, strict=True):
        assert ACCESS_CODES[letter.lower()] == code
    for letter, fcode in zip(FUNCTION_LETTERS, Function, strict=True):
        assert FUNCTION_CODES[letter.lower()] == fcode
    assert set(ACCESS_CODES.values()) == {0, 1, 2} and set(FUNCTION_CODES.values()) == {0, 1, 2}

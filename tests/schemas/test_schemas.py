"""The Avro contract: every schema parses, documents every field, and stays backward
compatible with the last released version."""

from __future__ import annotations

import io
import json
from typing import Any

import fastavro
import pytest
from fastavro.utils import generate_many

from poolsight import schemas
from poolsight.names import SCHEMA_TOPICS


def _fields(schema: Any, where: str) -> list[tuple[str, dict[str, Any]]]:
    """Every field of every record in schema, recursively, with its path."""
    out: list[tuple[str, dict[str, Any]]] = []
    if isinstance(schema, list):
        for s in schema:
            out += _fields(s, where)
    elif isinstance(schema, dict):
        if schema.get("type") == "record":
            for f in schema["fields"]:
                out.append((f"{where}.{f['name']}", f))
                out += _fields(f["type"], f"{where}.{f['name']}")
        elif schema.get("type") == "array":
            out += _fields(schema["items"], where)
    return out


@pytest.mark.parametrize("name", schemas.NAMES)
def test_schema_parses_and_documents_every_field(name: str) -> None:
    raw = json.loads(schemas.text(name))
    schemas.parsed(name)  # raises on an invalid schema
    assert raw["namespace"] == "poolsight.v1"
    assert raw.get("doc"), f"{name} has no doc"
    for path, field in _fields(raw, name):
        assert field.get("doc", "").strip(), f"{path} has no doc"
    assert name in SCHEMA_TOPICS


@pytest.mark.parametrize("name", schemas.NAMES)
def test_current_schema_reads_what_the_released_one_wrote(name: str) -> None:
    released_path = schemas.RELEASED_DIR / f"{name}.v1.avsc"
    if not released_path.exists():
        pytest.fail(f"{name} was never released: copy it to {schemas.RELEASED_DIR}")
    released = fastavro.parse_schema(json.loads(released_path.read_text()))
    current = schemas.parsed(name)
    for record in generate_many(released, 25):
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, released, record)
        buf.seek(0)
        fastavro.schemaless_reader(buf, released, current)  # raises when not resolvable


def test_an_incompatible_change_is_caught() -> None:
    """The check above can fail: a new required field without a default breaks old data."""
    released = schemas.parsed("dead_letter")
    changed = json.loads(schemas.text("dead_letter"))
    changed["fields"].append({"name": "new_required", "type": "long", "doc": "x"})
    current = fastavro.parse_schema(changed)
    record = next(iter(generate_many(released, 1)))
    buf = io.BytesIO()
    fastavro.schemaless_writer(buf, released, record)
    buf.seek(0)
    with pytest.raises(fastavro.read.SchemaResolutionError):
        fastavro.schemaless_reader(buf, released, current)

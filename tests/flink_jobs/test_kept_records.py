"""The raw records a key keeps since its snapshot are kept as zstd frames (compressed.py
`Records`), and a key whose state holds plain records (kept before) still restores from them.
Frames are checked against RFC 8878's layout, built and read by hand here, not by the library
that writes them."""

from __future__ import annotations

import struct
import time
from typing import Any

import pytest

from poolsight.flink_jobs.compressed import RECORD_MAGIC, Records
from poolsight.flink_jobs.options import SimulationOptions
from poolsight.flink_jobs.simulation_job import GETPAGE, Simulate
from poolsight.infra.registry_access import RegistryAccess

from .test_quiet_pools import Ctx, Runtime
from .test_tracker import _batches, _trace

ZSTD_MAGIC = 0xFD2FB528  # RFC 8878 3.1.1: a frame's first four bytes, little-endian
KEY = "S|BP1"


def _raw_block_frame(data: bytes) -> bytes:
    """One zstd frame holding data in a single raw (stored) block, per RFC 8878: the frame
    header descriptor 0xA0 (a 4-byte content size, single segment, no checksum, no dictionary),
    the content size, then the block header (last block, type raw, its size) in 3 bytes LE."""
    block = (len(data) << 3) | 0b001  # size, block type 0 (raw), last block
    return struct.pack("<IBI", ZSTD_MAGIC, 0xA0, len(data)) + block.to_bytes(3, "little") + data


def _content_size(frame: bytes) -> int | None:
    """A frame's content size as its header gives it (RFC 8878 3.1.1.1), None when absent."""
    assert struct.unpack_from("<I", frame)[0] == ZSTD_MAGIC
    fhd = frame[4]
    fcs_flag, single, dict_flag = fhd >> 6, (fhd >> 5) & 1, fhd & 3
    at = 5 + (0 if single else 1) + (0, 1, 2, 4)[dict_flag]
    size = (1 if single else 0, 2, 4, 8)[fcs_flag]
    if size == 0:
        return None
    value = int.from_bytes(frame[at : at + size], "little")
    return value + 256 if size == 2 else value


def test_a_kept_record_is_a_zstd_frame_of_the_record_with_its_size() -> None:
    raw = b"\x00\x00\x00\x00\x07" + bytes(range(256)) * 40  # a Confluent-framed value, schema id 7
    kept = Records().pack(raw)
    assert kept is not None and kept[:8] == RECORD_MAGIC
    assert _content_size(kept[8:]) == len(raw)
    assert len(kept) < len(raw) // 4  # repetitive: compressed, not stored
    assert Records.unpack(kept) == raw


def test_a_frame_built_by_hand_reads_back_and_a_plain_record_passes_as_it_is() -> None:
    raw = b"\x00\x00\x00\x00\x07hand-built"
    assert Records.unpack(RECORD_MAGIC + _raw_block_frame(raw)) == raw
    assert Records.unpack(raw) == raw  # kept before compression: no magic
    assert Records.pack(Records(), None) is None and Records.unpack(None) is None


def test_a_kept_record_that_does_not_decompress_is_named() -> None:
    kept = RECORD_MAGIC + _raw_block_frame(b"\x00" * 64)[:-10]  # cut inside its block
    with pytest.raises(ValueError, match=f"a PSRAWZ01 kept record of {len(kept)} bytes does not decompress"):
        Records.unpack(kept)


def _feed(f: Simulate, order: list[tuple[bytes, Any]], ctx: Ctx, rows: list[Any]) -> None:
    for i, (raw, _) in enumerate(order):
        rows.extend(r for r in f.process_element((KEY, raw, "topic", 0, i), ctx) if not isinstance(r, tuple))


def _worker(rt: Runtime, table: dict[bytes, Any], monkeypatch: pytest.MonkeyPatch) -> Simulate:
    f = Simulate(SimulationOptions(RegistryAccess("http://127.0.0.1:1")))
    f.open(rt)
    monkeypatch.setattr(f, "_read", lambda raw: table[raw])
    return f


def test_a_key_restores_from_plain_records_kept_before_and_compressed_ones_after(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(time, "time", lambda: 1_000_000.0)
    batches = [(f"gp{i}".encode(), b) for i, b in enumerate(_batches(_trace(30_000, seed=3), size=500))]
    table = {raw: (GETPAGE, b) for raw, b in batches}
    ref, whole, waiting = Runtime(), list[Any](), list[int]()
    f = _worker(ref, table, monkeypatch)
    for b in batches:  # the rows of an uninterrupted run, and how many records wait after each batch
        _feed(f, [b], Ctx(KEY), whole)
        waiting.append(len(ref.states["since_snapshot"].v))
    at = next(i for i, n in enumerate(waiting) if i > 0 and n >= 2)  # batch `at` joins one kept before it

    rt, ctx, rows = Runtime(), Ctx(KEY), list[Any]()
    old = _worker(rt, table, monkeypatch)
    monkeypatch.setattr(old.kept, "pack", lambda raw: raw)  # a worker from before: records kept plain
    _feed(old, batches[:at], ctx, rows)
    _feed(_worker(rt, table, monkeypatch), batches[at : at + 1], ctx, rows)  # the old worker lost, its state kept
    kept = [k[:8] == RECORD_MAGIC for k, _ in rt.states["since_snapshot"].v]
    assert kept.count(False) >= 1 and kept[-1]  # both kinds wait in the state
    _feed(_worker(rt, table, monkeypatch), batches[at + 1 :], ctx, rows)  # lost again: both kinds replayed
    assert len(whole) >= 5 and rows == whole

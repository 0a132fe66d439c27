"""A z/OS trace file (SMF, GTF or OMEGAMON record-trace text) as the trace reader's batches:
getpages keyed `SSID/BPn` by member and pool, objects named from the catalog (else DBID/OBID,
`:Pn` for a partition), and the read I/Os that finished in each batch's part of the file."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from poolsight.ingest.zos.binary import KINDS, BinaryReader
from poolsight.ingest.zos.catalog import Catalog
from poolsight.ingest.zos.events import (
    GetpageColumns,
    IoColumns,
    IoPairing,
    IoStart,
    ReadIo,
    Unpaired,
    ZosBlock,
    factorize,
    no_ios,
    pair_columns,
    pool_name,
)
from poolsight.ingest.zos.layout import ebcdic
from poolsight.simulator.trace import Names, ReadIos, TraceBatch, TraceFormatError

FORMATS = ("smf", "gtf", "omegamon-rectrace")
I64 = npt.NDArray[np.int64]


@dataclass
class ZosSummary:
    """What a reader met besides accepted getpages, for the command's report."""

    skipped_ifcids: dict[int, int] = field(default_factory=dict)  # other IFCIDs, by IFCID
    other_records: dict[int, int] = field(default_factory=dict)  # SMF types / GTF event ids not DB2's
    read_ios: int = 0
    open_starts: int = 0  # 006 without their 007 yet (at the end: the trace stopped mid-I/O)
    empty_prefetches: int = 0
    failed_ios: int = 0
    pool_mismatches: dict[str, int] = field(default_factory=dict)  # object -> getpages in another pool
    blocks_with_bdw: bool = False


@dataclass
class ZosTraceReader:
    """The same surface as simulator.trace.TraceReader: batches(), accepted, rejected, errors."""

    path: Path
    format: str  # smf, gtf or omegamon-rectrace
    catalog: Catalog = field(default_factory=Catalog)
    strict: bool = False
    start_offset: int = 0
    start_line: int = 0
    complete_lines_only: bool = False  # follow mode: leave a record still being written
    on_reject: Callable[[TraceFormatError], None] | None = None
    pairing: IoPairing = field(default_factory=IoPairing)
    max_kept_errors: int = 1000
    accepted: int = 0
    errors: list[TraceFormatError] = field(default_factory=list)
    summary: ZosSummary = field(default_factory=ZosSummary)
    _rejected: int = 0
    _open: IoColumns = field(default_factory=no_ios)  # binary: 006 records still waiting for their 007

    def __post_init__(self) -> None:
        self.end_offset, self.end_line = self.start_offset, self.start_line

    @property
    def rejected(self) -> int:
        return self._rejected

    def _reject(self, err: TraceFormatError) -> None:
        if self.strict:
            raise err
        self._rejected += 1
        if len(self.errors) < self.max_kept_errors:
            self.errors.append(err)
        if self.on_reject is not None:
            self.on_reject(err)

    def _blocks(self) -> Iterator[ZosBlock]:
        if self.format == "omegamon-rectrace":
            # lazy: the text reader only for text files
            from poolsight.ingest.zos.rectrace import read_rectrace

            yield from read_rectrace(
                self.path,
                start_offset=self.start_offset,
                start_line=self.start_line,
                on_reject=self._reject,
                strict=self.strict,
            )
            return
        reader = BinaryReader(
            self.path,
            KINDS[self.format],
            start_offset=self.start_offset,
            records_before=self.start_line,
            complete_only=self.complete_lines_only,
            on_reject=self._reject,
            strict=self.strict,
        )
        yield from reader.blocks()
        self.summary.blocks_with_bdw = reader.seen_bdw
        for k, v in reader.other_types.items():
            self.summary.other_records[k] = self.summary.other_records.get(k, 0) + v

    def batches(self) -> Iterator[TraceBatch]:
        for block in self._blocks():
            for k, v in block.skipped.items():
                self.summary.skipped_ifcids[k] = self.summary.skipped_ifcids.get(k, 0) + v
            batch = self._batch(block.getpages)
            batch.io = self._ios(block)
            batch.end_offset, batch.end_line = block.end_offset, block.end_line
            self.end_offset, self.end_line = block.end_offset, block.end_line
            self.accepted += len(batch)
            if len(batch) or (batch.io is not None and len(batch.io)):
                yield batch
        p = self.pairing
        self.summary.open_starts = p.open_starts + len(self._open)
        self.summary.empty_prefetches, self.summary.failed_ios = p.empty_prefetches, p.failed

    def _batch(self, g: GetpageColumns) -> TraceBatch:
        # Pools: SSID/BPn (a trace with a subsystem id keys pools by member, as CSV's source does).
        pair = g.ssid.astype(np.int64) * 256 + g.pool_id
        used, pcode = factorize(pair)
        pools = np.array([_pool_key(g.ssids[int(u) // 256], int(u) % 256) for u in used] or ["BP0"])
        obj = (g.dbid.astype(np.int64) << 48) | (g.obid.astype(np.int64) << 32) | g.partition.astype(np.int64)
        oused, ocode = factorize(obj)
        names = [self._object(int(u) >> 48, (int(u) >> 32) & 0xFFFF, int(u) & 0xFFFFFFFF) for u in oused]
        self._check_pools(g, used, pcode, oused, ocode)
        return TraceBatch(
            times=g.time_us / 1e6,
            pool_names=_names(pools, pcode),
            object_names=_names(np.array(names or ["ALL"]), ocode),
            pages=g.page,
            access=g.access,
            function=g.function,
            hit=g.hit,
        )

    def _object(self, dbid: int, obid: int, part: int) -> str:
        name = self.catalog.name(dbid, obid)
        return f"{name}:P{part}" if part else name

    def _check_pools(self, g: GetpageColumns, used: I64, pcode: I64, oused: I64, ocode: I64) -> None:
        """Getpages of an object in a pool other than the catalog's BPOOL (counted, not dropped:
        the trace says where the getpage happened; the catalog may predate an ALTER)."""
        if not self.catalog.pools:
            return
        counts = np.bincount(pcode * len(oused) + ocode, minlength=len(used) * len(oused))
        for pair in np.flatnonzero(counts).tolist():  # the few (pool, object) pairs of the read
            pc, oc, c = pair // len(oused), pair % len(oused), int(counts[pair])
            o = int(oused[oc])
            want = self.catalog.pools.get((o >> 48, (o >> 32) & 0xFFFF))
            have = pool_name(int(used[pc]) % 256)
            if want is not None and want != have:
                name = self._object(o >> 48, (o >> 32) & 0xFFFF, o & 0xFFFFFFFF)
                key = f"{name} ({want} in the catalog, {have} in the trace)"
                self.summary.pool_mismatches[key] = self.summary.pool_mismatches.get(key, 0) + int(c)

    def open_ios(self) -> list[list[object]]:
        """The I/O starts still waiting for their end, JSON-able (a collector's position keeps them)."""
        if self.format == "omegamon-rectrace":
            return self.pairing.snapshot()
        c = self._open
        return [[int(getattr(c, f.name)[i]) for f in dataclasses.fields(c)] for i in range(len(c))]

    def restore_open(self, saved: list[list[object]]) -> None:
        if self.format == "omegamon-rectrace":
            self.pairing.restore(saved)
        elif saved:
            cols = list(zip(*saved, strict=True))
            fields = dataclasses.fields(IoColumns)
            arrays: list[Any] = [
                np.array(v, dtype=np.bool_ if f.name == "is_start" else np.int64)
                for f, v in zip(fields, cols, strict=True)
            ]
            self._open = IoColumns(*arrays)

    def _ios(self, block: ZosBlock) -> ReadIos | None:
        if block.io_columns is not None:
            return self._io_columns(block.io_columns)
        done: list[ReadIo] = []
        for e in block.ios:
            if isinstance(e, IoStart):
                self.pairing.start(e)
                continue
            r = self.pairing.stop(e)
            if isinstance(r, Unpaired):
                at = int(e.where.rpartition(" ")[2]) if e.where.rpartition(" ")[2].isdigit() else 0
                unit = "byte" if self.format != "omegamon-rectrace" else "line"
                self._reject(
                    TraceFormatError(
                        str(self.path), at, "IFCID 007", "a read I/O end without its start (IFCID 006)", unit=unit
                    )
                )
            elif r is not None:
                done.append(r)
        if not done:
            return None
        self.summary.read_ios += len(done)
        pools = [_pool_key(r.ssid, r.pool_id) for r in done]
        objects = [self.catalog.name(r.dbid, r.obid) for r in done]
        return ReadIos(
            times=np.array([r.time_us for r in done], np.int64) / 1e6,
            pool_names=Names.of(pools),
            object_names=Names.of(objects),
            io_type=np.array([r.io_type for r in done], np.uint8),
            first_page=np.array([r.first_page for r in done], np.int64),
            pages=np.array([r.pages for r in done], np.int32),
            elapsed_us=np.array([r.elapsed_us for r in done], np.int64),
        )

    def _io_columns(self, c: IoColumns) -> ReadIos | None:
        paired, unpaired, self._open, empty, failed = pair_columns(c, self._open)
        if len(self._open) > self.pairing.max_open:  # bound: the oldest starts give way
            self.pairing.dropped_starts += len(self._open) - self.pairing.max_open
            self._open = self._open.take(np.arange(len(self._open) - self.pairing.max_open, len(self._open)))
        self.pairing.empty_prefetches += empty
        self.pairing.failed += failed
        for off in unpaired.tolist():
            why = "a read I/O end without its start (IFCID 006)"
            self._reject(TraceFormatError(str(self.path), int(off), "IFCID 007", why, unit="byte"))
        n = len(paired.time_us)
        if not n:
            return None
        self.summary.read_ios += n
        pool_used, pool_code = factorize((paired.ssid << 16) | paired.pool_id)
        pools = [_pool_key(ebcdic(int(u >> 16).to_bytes(4, "big")), int(u) & 0xFFFF) for u in pool_used]
        obj_used, obj_code = factorize((paired.dbid << 16) | paired.obid)
        objects = [self.catalog.name(int(u) >> 16, int(u) & 0xFFFF) for u in obj_used]
        return ReadIos(
            times=paired.time_us / 1e6,
            pool_names=_names(np.array(pools), pool_code),
            object_names=_names(np.array(objects), obj_code),
            io_type=paired.io_type.astype(np.uint8),
            first_page=paired.first_page,
            pages=paired.pages.astype(np.int32),
            elapsed_us=paired.elapsed_us,
        )


def _pool_key(ssid: str, pid: int) -> str:
    name = pool_name(pid) or f"pool id {pid}"
    return f"{ssid}/{name}" if ssid else name


def _names(table: npt.NDArray[np.str_], codes: I64) -> Names:
    return Names(codes.reshape(-1).astype(np.int32), table.astype(np.str_))

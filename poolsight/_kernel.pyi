"""Type stubs of the compiled kernel (src/lib.rs); the typed API is poolsight.simulator."""

from typing import Any

Buffer = Any  # a C-contiguous buffer (numpy array) of the documented dtype

Counts = tuple[list[int], int, list[float], float, int, int]  # refs[3], updates, cold[3], touched, latest, late

class Kernel:
    def __init__(
        self,
        mode: str = "exact",
        rate: float = 1.0,
        max_samples: int = 0,
        precision_bits: int = 12,
        seed: int = 0,
        pane_seconds: float = 60.0,
        keep_panes: int = 15,
    ) -> None: ...
    def set_policy_sizes(
        self,
        pool: int,
        policy: str,
        sizes: list[int],
        rate: float = 1.0,
        vpseqt: float = 80.0,
        start_from: list[int] = ...,
        vpseqts: list[float] = ...,
    ) -> None: ...
    def set_background(self, on: bool) -> None: ...
    def background(self) -> bool: ...
    def feed(
        self, times: Buffer, pools: Buffer, objects: Buffer, pages: Buffer, access: Buffer, function: Buffer
    ) -> int: ...
    def pools(self) -> list[int]: ...
    def curve(self, pool: int, sizes: list[int], panes: int = 0) -> list[list[float]]: ...
    def object_curves(self, pool: int, sizes: list[int], panes: int = 0) -> dict[int, list[list[float]]]: ...
    def panes(self, pool: int, panes: int = 0) -> list[tuple[int, Counts, dict[int, Counts]]]: ...
    def policy_curve(
        self, pool: int, panes: int = 0
    ) -> tuple[str, list[int], float, float, list[list[float]]] | None: ...
    def pool_info(self, pool: int) -> tuple[float, int, int | None, int | None, int]: ...
    def bucket_range(self, index: int) -> tuple[int, int]: ...
    def histogram(self, pool: int, access: int, panes: int = 0) -> list[tuple[int, float]]: ...
    def snapshot(self) -> bytes: ...
    @staticmethod
    def restore(data: bytes) -> Kernel: ...

class PoolModel:
    """A DB2-like buffer pool buffer by buffer (LRU with VPSEQT, dynamic prefetch, deferred writes)."""

    def __init__(
        self, vpsize: int, vpseqt: float = 80.0, prefetch_quantity: int = 32, dwqt: float = 30.0, vdwqt: float = 5.0
    ) -> None: ...
    def feed(self, times: Buffer, objects: Buffer, pages: Buffer, access: Buffer, function: Buffer) -> bytes: ...
    def alter(self, t: float, vpsize: int, vpseqt: float) -> None: ...
    def pages(self) -> int: ...
    def cross_invalidate(self, objects: Buffer, pages: Buffer) -> None: ...
    def take_reads(self) -> tuple[list[float], list[int], list[int], list[int], list[int]]: ...
    def take_writes(self) -> tuple[list[float], list[int], list[int], list[int]]: ...
    def take_counters(self) -> dict[str, int]: ...

class GroupSim:
    """Data sharing: members' LBPs and a GBP per grid point (group.rs); the typed API is poolsight.simulator.group."""

    def __init__(
        self,
        lbp_sizes: list[int],
        data_entries: list[int],
        ratios: list[float],
        gbpoolt: float = 30.0,
        sample: float = 1.0,
        seed: int = 0,
        curve_sizes: list[list[int]] = ...,
        commit_every: int = 0,
        commit_seconds: float | None = None,
        checkpoint_seconds: float | None = None,
        classt: float | None = None,
        infer_dependence: bool = False,
    ) -> None: ...
    def set_object(self, obj: int, gbpcache: int, never_dependent: bool) -> None: ...
    def feed(
        self, members: Buffer, objects: Buffer, pages: Buffer, function: Buffer, times: Buffer | None = None
    ) -> int: ...
    def counters(self) -> list[list[list[int]]]: ...  # [point][member][16]: COUNTERS order, then getpages
    def curve(self, member: int) -> tuple[list[int], list[list[int]]]: ...
    def rate(self) -> float: ...
    def lbp_sizes(self) -> list[int]: ...
    def gbp_sizes(self) -> list[tuple[int, int]]: ...
    def tracked_pages(self) -> int: ...
    def snapshot(self) -> bytes: ...
    @staticmethod
    def restore(data: bytes) -> GroupSim: ...

class GroupModel:
    """A data-sharing group's pool: the members' local pools (PoolModel each) and their group buffer
    pool, fed all members' events in one global time order (simulator/kernel/src/gbpmodel.rs)."""

    def __init__(
        self,
        vpsizes: list[int],
        data_entries: int,
        ratio: float = 5.0,
        vpseqt: float = 80.0,
        prefetch_quantity: int = 32,
        dwqt: float = 30.0,
        vdwqt: float = 5.0,
        gbpoolt: float = 30.0,
        classt: float | None = None,
        checkpoint_seconds: float = 0.0,
        commit_every: int = 0,
        commit_seconds: float = 0.0,
        page_list_prefetch: bool = False,
    ) -> None: ...
    def set_dependent(self, objects: list[int]) -> None: ...
    def feed(
        self, times: Buffer, members: Buffer, objects: Buffer, pages: Buffer, access: Buffer, function: Buffer
    ) -> bytes:
        """Outcome per event: 0 LBP hit, 1 XI from GBP, 2 XI from disk, 3 NF from GBP, 4 NF from disk,
        5 read by prefetch, 6 not a getpage."""
    def alter(self, data_entries: int, ratio: float) -> None: ...
    def alter_member(self, member: int, t: float, vpsize: int, vpseqt: float) -> None: ...
    def take_reads(self, member: int) -> tuple[list[float], list[int], list[int], list[int], list[int]]: ...
    def take_writes(self, member: int) -> tuple[list[float], list[int], list[int], list[int]]: ...
    def take_counters(self, member: int) -> dict[str, int]: ...
    def take_gbp_counters(self, member: int | None = None) -> dict[str, int]: ...
    def structure(self) -> tuple[int, int, float, int]:
        """(directory entries, data entries, RATIO, changed pages now)."""
    def used(self) -> tuple[int, int]:
        """(directory entries in use, data entries in use)."""
    def pages(self, member: int) -> int: ...

class AvroError(Exception):
    """Not a GetpageBatch v1 Avro body; the message names the field and the byte."""

# (source, pool, sequence, start_time, end_time, object_names, time_offset, object, partition, page,
# access, function, hit, getpages); the int columns are little-endian int64.
GetpageColumns = tuple[
    str,
    str,
    int,
    int,
    int,
    list[str],
    bytearray,
    bytearray,
    bytearray | None,
    bytearray,
    bytes,
    bytes,
    bytes | None,
    int,
]

def decode_getpage_batch(data: bytes, start: int = 0) -> GetpageColumns:
    """The GetpageBatch v1 Avro body in data[start:]. Raises AvroError (malformed) or ValueError (columns disagree)."""

def encode_getpage_batch(
    header: bytes,
    source: str,
    pool: str,
    sequence: int,
    start_time: int,
    end_time: int,
    object_names: list[str],
    time_offset: Buffer,
    object: Buffer,
    partition: Buffer | None,
    page: Buffer,
    access: bytes,
    function: bytes,
    hit: bytes | None,
) -> bytes:
    """header + the GetpageBatch v1 Avro body (fastavro's bytes). Raises ValueError (an int column out of range)."""

def frame_records(
    data: bytes | bytearray | memoryview, with_bdw: bool, min_len: int
) -> tuple[bytearray, bytearray, bytes, int, tuple[int, str, str] | None]: ...
def parse_csv_block(
    block: bytes, width: int, time: int | None, page: int, texts: list[int], every: int = 0
) -> tuple[int, bytearray | None, bytearray, list[tuple[bytearray, list[str]]], bytearray] | None: ...

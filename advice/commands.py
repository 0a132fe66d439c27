"""The commands advice ends with, in the forms DB2 documents (docs/advice.md lists the sources).

z/OS: `-ALTER BUFFERPOOL(bpname) VPSIZE(n) VPSEQT(n) DWQT(n) VDWQT(n1,n2) PGSTEAL(LRU|FIFO|NONE)
PGFIX(NO|YES) FRAMESIZE(4K|1M|2G)` (Db2 13 Command Reference), `ALTER TABLESPACE db.ts BUFFERPOOL bp`
and `ALTER INDEX creator.name BUFFERPOOL bp` (SQL Reference). LUW: `ALTER BUFFERPOOL name [MEMBER n]
SIZE n`, `CREATE BUFFERPOOL name SIZE n PAGESIZE nK`, `ALTER TABLESPACE name BUFFERPOOL name`.
Data sharing: `-ALTER GROUPBUFFERPOOL(gbpname) RATIO(r)`, the structure's size by
`SETXCF START,ALTER,STRNAME=group_gbpname,SIZE=kb` and the CFRM policy's `STRUCTURE NAME(..)
INITSIZE(..) SIZE(..)`; pureScale `UPDATE DB CFG FOR db USING CF_GBP_SZ pages`.
"""

from __future__ import annotations

import re

from poolsight.simulator.group import gbp_name

# z/OS pool names by page size (Db2 13: BP0-BP49, BP8K0-BP8K9, BP16K0-BP16K9, BP32K, BP32K1-BP32K9).
ZOS_POOLS = {
    4096: [f"BP{i}" for i in range(50)],
    8192: [f"BP8K{i}" for i in range(10)],
    16384: [f"BP16K{i}" for i in range(10)],
    32768: ["BP32K", *(f"BP32K{i}" for i in range(1, 10))],
}
# The smallest VPSIZE z/OS accepts per page size (Db2 13: BP0 2000, 8K 1000, 16K 500, 32K 250).
ZOS_MIN_VPSIZE = {4096: 1, 8192: 1000, 16384: 500, 32768: 250}


def zos_min_vpsize(pool: str, page_size: int) -> int:
    return 2000 if pool.upper() == "BP0" else ZOS_MIN_VPSIZE.get(page_size, 1)


OBJECT_MOVE_NOTE = (
    "the new pool applies when the data sets are next opened: stop the object first "
    "(-STOP DATABASE(db) SPACENAM(space), then -START) or wait for its next open"
)
_NAME = re.compile(r"^[A-Z0-9$#@_~.\-]+$", re.IGNORECASE)


def _check(name: str) -> str:
    """Names come from traces and catalogs: refuse anything that could break out of a command."""
    if not _NAME.match(name):
        raise ValueError(f"{name!r} is not a DB2 object or pool name")
    return name


def _number(v: float) -> str:
    return str(round(v))


def alter_bufferpool(
    platform: str, pool: str, *, member: int | None = None, **settings: float | str | tuple[float, float]
) -> str:
    """One pool's settings: `-ALTER BUFFERPOOL(BP2) VPSIZE(40000)` (z/OS) or `ALTER BUFFERPOOL BP2
    SIZE 40000` (LUW, size only: the other settings have no LUW equivalent; `member`: one pureScale
    member's, `ALTER BUFFERPOOL BP2 MEMBER 1 SIZE 40000`)."""
    pool = _check(pool)
    if platform == "luw":
        if set(settings) - {"VPSIZE"}:
            raise ValueError(f"LUW has no {', '.join(sorted(set(settings) - {'VPSIZE'}))} on ALTER BUFFERPOOL")
        where = f" MEMBER {int(member)}" if member is not None else ""
        return f"ALTER BUFFERPOOL {pool}{where} SIZE {_number(float(settings['VPSIZE']))}"  # type: ignore[arg-type]
    if member is not None:
        raise ValueError("z/OS routes a command to a member by its command prefix: use on_member()")
    parts = [f"-ALTER BUFFERPOOL({pool})"]
    for key in ("VPSIZE", "VPSEQT", "DWQT", "VDWQT", "PGSTEAL", "PGFIX", "FRAMESIZE"):
        if key not in settings:
            continue
        v = settings[key]
        if isinstance(v, tuple):
            parts.append(f"{key}({_number(v[0])},{_number(v[1])})")
        elif isinstance(v, str):
            parts.append(f"{key}({v})")
        else:
            parts.append(f"{key}({_number(v)})")
    return " ".join(parts)


def create_pool(platform: str, pool: str, size: int, page_size: int) -> str:
    """A pool that is not used yet: z/OS pools exist by name and get buffers by -ALTER; LUW creates one."""
    if platform == "luw":
        return f"CREATE BUFFERPOOL {_check(pool)} SIZE {size} PAGESIZE {page_size // 1024}K"
    return alter_bufferpool(platform, pool, VPSIZE=size)


def move_object(platform: str, obj: str, kind: str, pool: str) -> str:
    """Assign an object to a pool. z/OS index spaces are altered through their index: the name
    given is the index space's (DB.IX); the DBA names the index that owns it."""
    obj, pool = _check(obj), _check(pool)
    if platform == "luw":
        return f"ALTER TABLESPACE {obj.rpartition('.')[2] or obj} BUFFERPOOL {pool}"
    if kind.upper().startswith("INDEX"):
        return f"ALTER INDEX {obj} BUFFERPOOL {pool}"
    return f"ALTER TABLESPACE {obj} BUFFERPOOL {pool}"  # also when the type is unknown (evidence says so)


def page_size_of(pool: str) -> int:
    """A z/OS pool's page size from its name (BP8K0: 8K, BP16K1: 16K, BP32K: 32K; else 4K)."""
    for size, names in ZOS_POOLS.items():
        if pool.upper() in names:
            return size
    return 4096


def free_pool_name(page_size: int, used: set[str]) -> str | None:
    """The first z/OS pool name of this page size not in use (BP0 and BP8K0... are system defaults: skipped)."""
    for name in ZOS_POOLS.get(page_size, [])[1:]:
        if name not in used:
            return name
    return None


# Group buffer pool names (Db2 13: GBP0-GBP49, GBP8K0-GBP8K9, GBP16K0-GBP16K9, GBP32K, GBP32K1-GBP32K9):
# the GBP of a pool is the pool's name with G in front (BP1 -> GBP1).
_GBP = re.compile(r"^GBP(\d{1,2}|8K\d|16K\d|32K\d?)$", re.IGNORECASE)


def gbp_of(pool: str) -> str:
    """The GBP of a pool named in a command (checked, upper case): simulator.group's rule."""
    return gbp_name(_check(pool).upper())


def _gbp(name: str) -> str:
    if not _GBP.match(name):
        raise ValueError(f"{name!r} is not a group buffer pool name")
    return name.upper()


def on_member(member: str, command: str) -> str:
    """A z/OS command routed to one member by its command prefix, hyphen and subsystem name (the
    installation default): `-ALTER BUFFERPOOL(BP1) ...` -> `-DB2A ALTER BUFFERPOOL(BP1) ...`."""
    if not command.startswith("-"):
        raise ValueError(f"{command!r} is not a DB2 command")
    return f"-{_check(member)} {command[1:]}"


def _ratio(r: float) -> str:
    return str(int(r)) if float(r).is_integer() else f"{r:.1f}"


def alter_groupbufferpool(gbp: str, **settings: float | tuple[float, float]) -> str:
    """`-ALTER GROUPBUFFERPOOL(GBP1) RATIO(20)`: keywords in the syntax diagram's order (GBPCACHE and
    AUTOREC are not advised)."""
    parts = [f"-ALTER GROUPBUFFERPOOL({_gbp(gbp)})"]
    for key in ("RATIO", "CLASST", "GBPOOLT", "GBPCHKPT"):
        if key not in settings:
            continue
        v = settings[key]
        if isinstance(v, tuple):
            parts.append(f"{key}({_number(v[0])},{_number(v[1])})")
        else:
            parts.append(f"{key}({_ratio(v) if key == 'RATIO' else _number(v)})")
    return " ".join(parts)


def structure_name(group: str, gbp: str) -> str:
    """The GBP's coupling facility structure: groupname_gbpname."""
    return f"{_check(group).upper()}_{_gbp(gbp)}"


def setxcf_alter(group: str, gbp: str, size_kb: int) -> str:
    """Change the allocated structure's size (up to the CFRM policy's SIZE); both copies when duplexed."""
    return f"SETXCF START,ALTER,STRNAME={structure_name(group, gbp)},SIZE={int(size_kb)}"


def setxcf_rebuild(group: str, gbp: str) -> str:
    """Reallocate a simplex structure (a new RATIO takes effect at the next allocation)."""
    return f"SETXCF START,REBUILD,STRNAME={structure_name(group, gbp)}"


def cfrm_structure(group: str, gbp: str, initsize_kb: int, size_kb: int) -> str:
    """The structure's statement in the CFRM policy (administrative data utility IXCMIAPU)."""
    return f"STRUCTURE NAME({structure_name(group, gbp)}) INITSIZE({int(initsize_kb)}) SIZE({int(size_kb)})"


def update_cf_gbp_sz(pages_4k: int, database: str | None = None) -> str:
    """pureScale: the CF's group buffer pool memory of a database, in 4 KB pages."""
    where = f" FOR {_check(database)}" if database else ""
    return f"UPDATE DB CFG{where} USING CF_GBP_SZ {int(pages_4k)}"

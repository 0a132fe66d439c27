"""Commands in the forms DB2 documents (docs/advice.md names the sources)."""

from __future__ import annotations

import pytest

from poolsight.advice.commands import alter_bufferpool, create_pool, free_pool_name, move_object


def test_zos_alter_bufferpool_forms() -> None:
    assert alter_bufferpool("zos", "BP2", VPSIZE=40000) == "-ALTER BUFFERPOOL(BP2) VPSIZE(40000)"
    assert alter_bufferpool("zos", "BP1", VDWQT=(0, 128)) == "-ALTER BUFFERPOOL(BP1) VDWQT(0,128)"
    # Keywords in the syntax diagram's order, whatever order they are given in.
    assert (
        alter_bufferpool("zos", "BP8K1", FRAMESIZE="1M", PGFIX="YES", VPSEQT=20.0)
        == "-ALTER BUFFERPOOL(BP8K1) VPSEQT(20) PGFIX(YES) FRAMESIZE(1M)"
    )
    assert alter_bufferpool("zos", "BP3", PGSTEAL="FIFO") == "-ALTER BUFFERPOOL(BP3) PGSTEAL(FIFO)"


def test_luw_forms() -> None:
    assert alter_bufferpool("luw", "IBMDEFAULTBP", VPSIZE=250000) == "ALTER BUFFERPOOL IBMDEFAULTBP SIZE 250000"
    assert create_pool("luw", "BP_SCANS", 2000, 8192) == "CREATE BUFFERPOOL BP_SCANS SIZE 2000 PAGESIZE 8K"
    assert move_object("luw", "DB.TS_HIST", "TABLESPACE", "BP_SCANS") == "ALTER TABLESPACE TS_HIST BUFFERPOOL BP_SCANS"
    with pytest.raises(ValueError, match="VDWQT"):
        alter_bufferpool("luw", "BP1", VDWQT=(0, 128))


def test_object_moves() -> None:
    assert move_object("zos", "APP.HISTORY", "TABLESPACE", "BP3") == "ALTER TABLESPACE APP.HISTORY BUFFERPOOL BP3"
    assert move_object("zos", "APP.XORD1", "INDEXSPACE", "BP3") == "ALTER INDEX APP.XORD1 BUFFERPOOL BP3"


def test_names_from_input_cannot_break_out_of_a_command() -> None:
    with pytest.raises(ValueError, match="not a DB2 object"):
        move_object("zos", "APP.X BUFFERPOOL BP0; DROP TABLE Y", "TABLESPACE", "BP3")
    with pytest.raises(ValueError):
        alter_bufferpool("zos", "BP1) VPSIZE(0", VPSIZE=1)


def test_free_pool_names_by_page_size() -> None:
    assert free_pool_name(4096, {"BP0", "BP1", "BP2"}) == "BP3"
    assert free_pool_name(32768, set()) == "BP32K1"
    assert free_pool_name(8192, {f"BP8K{i}" for i in range(10)}) is None

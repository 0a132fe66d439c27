"""Every statistics parser is a plug-in of one shape, registered in the one table the CLI reads."""

from __future__ import annotations

import argparse
import ast
import inspect
import subprocess
import sys
from pathlib import Path

import pytest

from poolsight import schemas
from poolsight.cli import build_parser
from poolsight.ingest import cli as ingest_cli
from poolsight.ingest.stats_common import Parsed, ParseOptions, Rejected
from poolsight.ingest.stats_formats import FORMATS, detect
from tests.conftest import ROOT

CORPUS = Path(__file__).parent / "corpus"
# format -> (corpus folder, a good file, a broken file, the schemas the good file yields)
CASES = {
    "omegamon": ("omegamon", "fixed_width.txt", "highlights_and_broken.txt", {"pool_stats"}),
    "display": ("display", "detail_two_pools.txt", "broken.txt", {"pool_stats", "pool_attributes"}),
    "gbp-display": ("gbp_display", "gdetail_mdetail.txt", "broken.txt", {"gbp_stats"}),
    "luw-bufferpool": ("luw", "mon_get_bufferpool.csv", "broken.csv", {"pool_stats", "gbp_stats"}),
    "db2diag-backup": ("db2diag", "db2diag.log", "broken.log", {"backup_stats"}),
}


def _sub(p: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    for a in p._actions:
        if isinstance(a, argparse._SubParsersAction):
            return a.choices[name]  # type: ignore[no-any-return]
    raise AssertionError(f"no sub-command {name}")


def test_the_cli_offers_exactly_the_registered_formats() -> None:
    stats = _sub(_sub(build_parser(), "ingest"), "stats")
    (fmt,) = [a for a in stats._actions if a.dest == "format"]
    assert fmt.choices is not None and fmt.help is not None
    assert list(fmt.choices) == list(FORMATS) == list(CASES)
    for key, f in FORMATS.items():
        assert key == f.name and f.reads and "\n" not in f.reads
        assert f"{f.name}: {f.reads}" in fmt.help


def test_the_cli_holds_no_parsing_logic() -> None:
    """The stats command knows no format by name and imports no parser: it goes through FORMATS."""
    tree = ast.parse(inspect.getsource(ingest_cli))
    strings = {n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    assert not strings & set(FORMATS)
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) for a in n.names}
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    parsers = {f.parse.__module__.rsplit(".", 1)[-1] for f in FORMATS.values()}
    assert not {i.rsplit(".", 1)[-1] for i in imported} & parsers


@pytest.mark.parametrize("name", list(CASES))
def test_every_format_returns_the_one_result_type(name: str) -> None:
    folder, good, broken, kinds = CASES[name]
    text = (CORPUS / folder / good).read_text()
    r = FORMATS[name].parse(text, good, ParseOptions())
    assert isinstance(r, Parsed)
    assert {s for s, _ in r.records} == kinds
    assert all(s in schemas.NAMES and isinstance(rec, dict) for s, rec in r.records)
    assert r.rejected == []
    bad = FORMATS[name].parse((CORPUS / folder / broken).read_text(), broken, ParseOptions())
    assert isinstance(bad, Parsed) and bad.rejected
    for rej in bad.rejected:
        assert isinstance(rej, Rejected)
        assert rej.file == broken and rej.line >= 1 and rej.field and rej.reason and isinstance(rej.raw, str)
        assert str(rej) == f"{broken}:{rej.line}: {rej.field}: {rej.reason}"


def test_a_record_of_no_schema_is_refused() -> None:
    with pytest.raises(KeyError, match="no schema"):
        Parsed().add("pool_statz", {})


@pytest.mark.parametrize("name", list(CASES))
def test_each_format_is_detected_from_its_content(name: str) -> None:
    folder, good, broken, _ = CASES[name]
    for f in (good, broken):
        assert [x.name for x in detect((CORPUS / folder / f).read_text())] == [name], f
    assert detect("") == [] and detect("just some text\n1,2,3\n") == []


def _stats(tmp: Path, path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "poolsight.cli",
            "ingest",
            "stats",
            str(path),
            "--output",
            str(tmp / "out.jsonl"),
            "--state-dir",
            str(tmp / "state"),
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )


def test_without_format_each_file_is_read_as_its_content_shows(tmp_path: Path) -> None:
    path = tmp_path / "report.txt"
    path.write_text((CORPUS / "omegamon" / "fixed_width.txt").read_text())
    r = _stats(tmp_path, path)
    assert r.returncode == 0, r.stderr
    auto = (tmp_path / "out.jsonl").read_text()
    (tmp_path / "again").mkdir()
    r = _stats(tmp_path / "again", path, "--format", "omegamon")
    assert r.returncode == 0, r.stderr
    assert auto == (tmp_path / "again" / "out.jsonl").read_text() and auto.count('"schema": "pool_stats"') >= 2


@pytest.mark.parametrize(
    ("content", "args", "says"),
    [
        (b"", ["--format", "omegamon"], "nothing could be read as omegamon (empty, or no statistics blocks in it)"),
        (bytes(range(256)) * 40, [], "nothing could be read (format, line 1: not a statistics file of a known format"),
        (
            b"\n".join((CORPUS / "omegamon" / "fixed_width.txt").read_bytes().splitlines()[:8]),
            [],
            "nothing could be read (BP0, line 7: truncated block: no counters)",
        ),
        (
            None,
            ["--format", "display"],
            "nothing could be read as display (empty, or no statistics blocks in it); "
            "its content looks like omegamon: try --format omegamon",
        ),
    ],
)
def test_a_file_where_nothing_could_be_read_is_an_error(
    tmp_path: Path, content: bytes | None, args: list[str], says: str
) -> None:
    path = tmp_path / "input.txt"
    path.write_bytes(content if content is not None else (CORPUS / "omegamon" / "fixed_width.txt").read_bytes())
    r = _stats(tmp_path, path, *args)
    assert r.returncode == 1
    assert f"{path}: {says}" in r.stderr

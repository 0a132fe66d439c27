"""The command-line types of poolsight/argtypes.py: what each accepts and returns, where its
range ends, why it refuses; and UsageParser's one-line errors."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import pytest

from poolsight.argtypes import (
    COUNT,
    PERCENT,
    POSITIVE_COUNT,
    RATE,
    SECONDS,
    Assignment,
    InputDir,
    InputFile,
    Keyword,
    NumberList,
    OutputDir,
    OutputFile,
    UsageParser,
    real,
    whole,
)


def _refused(kind: object, text: str) -> str:
    assert callable(kind)
    with pytest.raises(argparse.ArgumentTypeError) as exc:
        kind(text)
    return str(exc.value)


def test_numbers_keep_their_kind_and_both_ends() -> None:
    assert POSITIVE_COUNT("1") == 1 and isinstance(POSITIVE_COUNT("1"), int)
    assert COUNT("0") == 0
    assert RATE("1") == 1.0 and RATE("0.01") == 0.01
    assert PERCENT("0") == 0.0 and PERCENT("100") == 100.0
    assert whole(4, 24)("24") == 24
    assert real(1.0)("1") == 1.0
    for kind, text in ((RATE, "0"), (RATE, "1.0001"), (PERCENT, "-0.1"), (PERCENT, "100.5"), (SECONDS, "0")):
        _refused(kind, text)
    assert _refused(whole(4, 24), "25") == "25 is not a whole number (4-24)"


@pytest.mark.parametrize("text", ["abc", "", " ", "nan", "inf", "-inf", "1e999", "1.5", str(10**30)])
def test_a_whole_number_is_finite_integral_and_fits(text: str) -> None:
    assert _refused(POSITIVE_COUNT, text).endswith("is not a whole number >= 1")


def test_a_reason_names_the_range() -> None:
    assert _refused(PERCENT, "500") == "500 is not a percentage (0-100)"
    assert _refused(RATE, "nan") == "nan is not a sampling rate in (0, 1]"
    assert _refused(SECONDS, "-1") == "-1 is not a number of seconds > 0"
    assert _refused(COUNT, "") == "'' is not a whole number >= 0"


def test_lists_and_assignments_say_which_part_is_bad() -> None:
    sizes = NumberList(POSITIVE_COUNT)
    assert sizes("10, 20,,30,") == [10, 20, 30]
    assert _refused(sizes, "10,abc") == "abc is not a whole number >= 1 (in 10,abc)"
    assert _refused(sizes, ",") == ", holds no value: comma-separated, a whole number >= 1"
    size = Assignment(POSITIVE_COUNT, bare=True, form="[POOL=]BUFFERS")
    assert size("DB2A/BP1=300") == ("DB2A/BP1", 300) and size("300") == (None, 300)
    assert _refused(size, "BP1=0") == "0 is not a whole number >= 1 (in BP1=0)"
    assert _refused(size, "=300") == "=300: use [POOL=]BUFFERS"
    assert _refused(Assignment(COUNT, form="POOL=BUFFERS"), "300") == "300: use POOL=BUFFERS"


def test_a_keyword_stands_for_its_meaning() -> None:
    sample = Keyword("auto", RATE, None)
    assert sample("auto") is None and sample("0.5") == 0.5
    assert _refused(sample, "2") == "2 is neither auto nor a sampling rate in (0, 1]"


def test_input_paths(tmp_path: Path) -> None:
    f = tmp_path / "t.csv"
    f.write_text("x\n")
    assert InputFile()(str(f)) == f and InputDir()(str(tmp_path)) == tmp_path
    assert _refused(InputFile(), str(tmp_path / "no.csv")) == f"{tmp_path / 'no.csv'}: no such file"
    assert _refused(InputFile(), str(tmp_path)) == f"{tmp_path} is a directory, not a file"
    assert _refused(InputDir(), str(f)) == f"{f}: not a directory"
    assert InputFile(awaited_with="follow")(str(tmp_path / "later.csv")) == tmp_path / "later.csv"


def test_output_paths(tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    assert OutputFile()(str(out)) == out
    assert OutputDir()(str(tmp_path / "new" / "deeper")) == tmp_path / "new" / "deeper"  # made when written
    missing = tmp_path / "missing" / "out.json"
    assert _refused(OutputFile(), str(missing)) == f"{missing}: its folder {missing.parent} does not exist"
    assert _refused(OutputFile(), str(tmp_path)) == f"{tmp_path} is a directory, not a file"
    out.write_text("{}")
    assert _refused(OutputDir(), str(out / "sub")) == f"{out / 'sub'}: its folder {out} is not a directory"


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads and writes whatever the permissions say")
def test_permissions_are_checked(tmp_path: Path) -> None:
    f, d = tmp_path / "t.csv", tmp_path / "ro"
    f.write_text("x\n")
    d.mkdir()
    f.chmod(0)
    d.chmod(0o500)
    try:
        assert _refused(InputFile(), str(f)) == f"{f}: not readable (permission denied)"
        assert _refused(OutputFile(), str(d / "x.json")) == f"{d / 'x.json'}: its folder {d} is not writable"
    finally:
        f.chmod(0o600)
        d.chmod(0o700)


def _parser() -> UsageParser:
    p = UsageParser(prog="tool")
    sub = p.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run")
    run.add_argument("files", nargs="+", type=InputFile(awaited_with="follow"), metavar="FILE")
    run.add_argument("--follow", action="store_true")
    run.add_argument("--vpseqt", type=PERCENT)
    return p


def test_usage_errors_are_one_line_and_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = _parser()
    missing = tmp_path / "no.csv"
    for argv, says in (
        (["run", str(missing), "--vpseqt", "500"], "tool run: argument --vpseqt: 500 is not a percentage (0-100)"),
        (["run", str(missing)], f"tool run: argument FILE: {missing}: no such file (give --follow to wait for it)"),
        (["run"], "tool run: the following arguments are required: FILE"),
        (["walk"], "tool: argument command: invalid choice: 'walk' (choose from 'run')"),
    ):
        with pytest.raises(SystemExit) as exc:
            p.parse_args(argv)
        assert exc.value.code == 2
        assert capsys.readouterr().err == says + "\n"
    assert p.parse_args(["run", str(missing), "--follow"]).files == [missing]


def test_help_is_not_an_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exc:
        _parser().parse_args(["run", "--help"])
    assert exc.value.code == 0 and "--vpseqt" in capsys.readouterr().out

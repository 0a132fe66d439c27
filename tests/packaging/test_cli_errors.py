"""Every bad value of every numeric or path argument of `poolsight` is a usage error: one line
on stderr naming the command and the argument, exit 2, no traceback.

The parsers are walked from build_parser() down, so a new option is probed as soon as it
exists; the bad values come from each argument's own type (its range, its kind of path), and
an option cannot skip validation by taking a bare int, float or Path."""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from poolsight.argtypes import (
    Assignment,
    InputDir,
    InputFile,
    Keyword,
    Number,
    NumberList,
    OutputDir,
    OutputFile,
    UsageParser,
)
from poolsight.cli import build_parser, main

CHECKED = (Number, NumberList, Assignment, Keyword, InputFile, InputDir, OutputFile, OutputDir)
# Values other types (timestamps, pool modes) may accept, for a required argument of such a type.
CANDIDATES = ("1", "2026-01-01T00:00")


def _parsers(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(command words, parser) for the parser and every sub-command's, recursively."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _parsers(child, (*path, name))


def _arguments() -> Iterator[tuple[tuple[str, ...], argparse.Action]]:
    for path, parser in _parsers(build_parser()):
        for action in parser._actions:
            if not isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
                yield path, action


def _name(action: argparse.Action) -> str:
    return str(argparse._get_action_name(action))


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def _g(x: float) -> str:
    return f"{x:g}"


def _valid_number(t: Number) -> str:
    if t.low is None:
        return "1"
    if not t.low_open:
        return _g(t.low)
    return _g(t.high) if t.high is not None and not t.high_open else _g(t.low + 1)


def _sample(action: argparse.Action, tmp: Path) -> str:
    """A value the argument accepts."""
    t = action.type
    if action.choices:
        return str(next(iter(action.choices)))
    if isinstance(t, InputFile):
        (tmp / "input.txt").write_text("x\n")
        return str(tmp / "input.txt")
    if isinstance(t, InputDir):
        return str(tmp)
    if isinstance(t, Number):
        return _valid_number(t)
    if t is None:
        return "X"
    assert callable(t)
    for candidate in CANDIDATES:
        try:
            t(candidate)
        except (argparse.ArgumentTypeError, ValueError):
            continue
        return candidate
    raise AssertionError(f"no sample value for {t}")


def _bad(t: Any, tmp: Path) -> list[str]:
    """Values outside what the type `t` accepts, from its range or its kind of path."""
    if isinstance(t, Number):
        out = ["abc", "", "nan", "inf", "1e999"] + (["1.5"] if t.kind is int else [])
        if t.low is not None:
            out.append(_g(t.low if t.low_open else t.low - 1))
        if t.high is not None:
            out.append(_g(t.high if t.high_open else t.high + 1))
        return out
    if isinstance(t, NumberList):
        return [",", *(f"{_valid_number(t.item)},{b}" for b in _bad(t.item, tmp) if b)]
    if isinstance(t, Assignment):
        return [f"={_valid_number(t.value)}", *(f"BP1={b}" for b in _bad(t.value, tmp))] + (
            [] if t.bare else [_valid_number(t.value)]
        )
    if isinstance(t, Keyword):
        return [b for b in _bad(t.inner, tmp) if b != t.word]
    a_file = tmp / "a-file"
    a_file.write_text("x\n")
    if isinstance(t, InputFile):
        return [str(tmp / "missing.csv"), str(tmp)]
    if isinstance(t, InputDir):
        return [str(tmp / "missing"), str(a_file)]
    if isinstance(t, OutputFile):
        return [str(tmp / "missing" / "out.json"), str(tmp), ""]
    if isinstance(t, OutputDir):
        return [str(a_file / "sub"), str(a_file), ""]
    raise AssertionError(f"no bad values for {t}")


def _required(path: tuple[str, ...], tmp: Path, skip: argparse.Action | None = None) -> tuple[list[str], list[str]]:
    """(options, positionals): a minimal command line the command accepts, without `skip`."""
    parser = dict(_parsers(build_parser()))[path]
    options: list[str] = []
    positionals: list[str] = []
    for action in parser._actions:
        optional = not action.required if action.option_strings else action.nargs in ("?", "*")
        if action is skip or optional or isinstance(action, argparse._SubParsersAction | argparse._HelpAction):
            continue
        values = [_sample(action, tmp) for _ in range(action.nargs if isinstance(action.nargs, int) else 1)]
        if action.option_strings:
            options += [action.option_strings[0], *values]
        else:
            positionals += values
    return options, positionals


CHECKED_ARGUMENTS = [(path, action) for path, action in _arguments() if isinstance(action.type, CHECKED)]
CASES = [pytest.param(path, action, id=f"{' '.join(path)} {_name(action)}") for path, action in CHECKED_ARGUMENTS]


def test_every_command_is_walked() -> None:
    commands = {" ".join(p) for p, _ in _parsers(build_parser())}
    assert {"simulate", "ingest trace", "ingest stats", "generate", "jobs submit", "advise", "alerts run"} <= commands
    assert {" ".join(p) for p, _ in CHECKED_ARGUMENTS} >= {"simulate", "ingest trace", "generate", "jobs submit"}


@pytest.mark.parametrize(("path", "action"), CASES)
def test_a_bad_value_is_one_line_and_exit_2(
    path: tuple[str, ...], action: argparse.Action, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    options, positionals = _required(path, tmp_path, skip=action)
    count = action.nargs if isinstance(action.nargs, int) else 1
    for bad in _bad(action.type, tmp_path):
        values = [bad, *(_sample(action, tmp_path) for _ in range(count - 1))]
        if action.option_strings:
            argv = [*path, action.option_strings[0], *values, *options, *positionals]
        else:
            argv = [*path, *options, *values, *positionals]
        with pytest.raises(SystemExit) as exc:
            main(argv)
        err = capsys.readouterr().err
        assert exc.value.code == 2, (argv, err)
        assert err.count("\n") == 1 and err.endswith("\n"), (argv, err)
        assert err.startswith(f"poolsight {' '.join(path)}: argument {_name(action)}: "), (argv, err)
        assert "Traceback" not in err


def test_the_minimal_command_lines_parse(tmp_path: Path) -> None:
    """The walk's bad values are what fails, not a missing required argument."""
    for path, parser in _parsers(build_parser()):
        if any(isinstance(a, argparse._SubParsersAction) for a in parser._actions):
            continue
        options, positionals = _required(path, tmp_path)
        build_parser().parse_args([*path, *options, *positionals])


def test_no_argument_skips_validation() -> None:
    """No bare int, float, Path (or any class) as a type, and a numeric default has a checked type."""
    for path, parser in _parsers(build_parser()):
        assert isinstance(parser, UsageParser), path
    for path, action in _arguments():
        where = f"{' '.join(path)} {_name(action)}"
        assert not isinstance(action.type, type), f"{where}: type {action.type} checks no range"
        numeric = isinstance(action.default, int | float) and not isinstance(action.default, bool)
        numeric |= isinstance(action.default, str) and action.type is None and _is_number(action.default)
        if numeric and action.const is None:
            assert isinstance(action.type, Number | Keyword), f"{where}: default {action.default!r} is unchecked"


# ------------------------------------------------------------------ checked only in combination


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    try:
        code = main(argv)
    except SystemExit as exc:
        code = int(exc.code or 0)
    return code, capsys.readouterr().err


@pytest.fixture
def trace(tmp_path: Path) -> Path:
    path = tmp_path / "trace.csv"
    path.write_text("time,pool,object,page,access,function\n0,BP1,DB.TS,1,R,GP\n")
    return path


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["--mode", "shards", "--rate", "5"], "argument --rate: 5 is not a sampling rate in (0, 1]"),
        (["--sizes", "10,abc"], "argument --sizes: abc is not a whole number >= 1 (in 10,abc)"),
        (["--vpseqt", "500"], "argument --vpseqt: 500 is not a percentage (0-100)"),
        (["--pool-size", "-5"], "argument --pool-size: -5 is not a whole number >= 1"),
        (["--gbp-data-entries", "4,0"], "argument --gbp-data-entries: 0 is not a whole number >= 1 (in 4,0)"),
    ],
)
def test_simulate_refuses_before_reading(
    trace: Path, args: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = _run(["simulate", str(trace), *args], capsys)
    assert (code, err) == (2, f"poolsight simulate: {says}\n")


def test_simulate_refuses_an_output_in_a_missing_folder(trace: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = trace.parent / "nonexistent" / "x.json"
    code, err = _run(["simulate", str(trace), "--json", str(out)], capsys)
    assert (code, err) == (2, f"poolsight simulate: argument --json: {out}: its folder {out.parent} does not exist\n")


@pytest.mark.parametrize("command", [["ingest", "trace"], ["ingest", "stats"], ["simulate"]])
def test_a_missing_input_file_is_exit_2_in_every_command(
    command: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    missing = tmp_path / "missing.csv"
    code, err = _run([*command, str(missing)], capsys)
    assert code == 2 and err.count("\n") == 1
    assert err.startswith(f"poolsight {' '.join(command)}: argument ") and f"{missing}: no such file" in err


@pytest.mark.parametrize("command", [["ingest", "trace"], ["ingest", "stats"]])
def test_a_followed_file_may_be_missing(command: list[str], tmp_path: Path) -> None:
    a = build_parser().parse_args([*command, str(tmp_path / "later.csv"), "--follow"])
    assert a.files == [tmp_path / "later.csv"]


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ("BP1=shards:5", "'BP1=shards:5': 5 is not a sampling rate in (0, 1]"),
        ("BP1=fixed:0", "'BP1=fixed:0': 0 is not a whole number >= 1"),
        ("BP1=lru", "'BP1=lru': mode is auto, exact, shards:RATE or fixed:SAMPLES"),
    ],
)
def test_jobs_submit_checks_each_pool_mode(spec: str, says: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, err = _run(["jobs", "submit", "--pool-mode", spec], capsys)
    assert (code, err) == (2, f"poolsight jobs submit: argument --pool-mode: {says}\n")


def test_compare_refuses_an_empty_range(capsys: pytest.CaptureFixture[str]) -> None:
    a, b = "2026-01-02T00:00", "2026-01-01T00:00"
    code, err = _run(["compare", "DB2A", "BP1", "--a", b, a, "--b", a, b], capsys)
    assert code == 2 and err.startswith("poolsight compare: --b: 2026-01-02") and err.count("\n") == 1


# ------------------------------------------------------------------ the services' own command lines


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--port", "0"], "argument --port: 0 is not a TCP port (1-65535)"),
        (["--port", "abc"], "argument --port: abc is not a TCP port (1-65535)"),
    ],
)
def test_the_dashboard_server_refuses_a_bad_port(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from poolsight.dashboards import server

    with pytest.raises(SystemExit) as exc:
        server.main(argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err == f"poolsight.dashboards.server: {says}\n"


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--every", "0"], "argument --every: 0 is not a number of seconds > 0"),
        (["--cycles", "0"], "argument --cycles: 0 is not a whole number >= 1"),
        (["--cycles", "nan"], "argument --cycles: nan is not a whole number >= 1"),
    ],
)
def test_an_evaluator_service_refuses_bad_values(
    argv: list[str], says: str, capsys: pytest.CaptureFixture[str]
) -> None:
    from poolsight.infra.evaluator import serve

    def make(_: Any) -> Any:
        raise AssertionError("the service must not start")

    with pytest.raises(SystemExit) as exc:
        serve("alerts", make, argv)
    assert exc.value.code == 2
    assert capsys.readouterr().err == f"poolsight alerts service: {says}\n"


def test_history_on_its_own_refuses_bad_values(capsys: pytest.CaptureFixture[str]) -> None:
    from poolsight.sql import history

    with pytest.raises(SystemExit) as exc:
        history.main(["--every", "-1"])
    assert exc.value.code == 2
    assert capsys.readouterr().err == "poolsight history: argument --every: -1 is not a number of seconds > 0\n"

"""Command-line values checked where they are parsed, and the parser that reports a bad one.

Each type refuses a bad value with argparse.ArgumentTypeError saying why; `UsageParser` turns
that (and any other usage error) into one line, `PROG: argument --OPTION: why`, and exit 2,
the exit code of every usage error (README, Exit codes). The types keep their range as
attributes, so a test can walk the parsers and probe every option from outside its range.
"""

from __future__ import annotations

import argparse
import math
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

# No count or setting of ours comes near it; beyond it a value would overflow the kernel's integers.
BIGGEST = 2**63 - 1


def _shown(text: str) -> str:
    """The value as the user typed it; quoted when blank or padded, so it can be seen."""
    return text if text and text.strip() == text else repr(text)


def _within(part: str, text: str) -> str:
    """Where a bad part sits, when the value has more than it."""
    return "" if part == text else f" (in {_shown(text)})"


@dataclass(frozen=True)
class Number:
    """An int or a finite float within [low, high]; an end is excluded when it is open."""

    kind: type[int] | type[float]
    noun: str
    low: float | None = None
    high: float | None = None
    low_open: bool = False
    high_open: bool = False

    @property
    def description(self) -> str:
        if self.low is not None and self.high is not None:
            if self.low_open or self.high_open:
                left, right = "(" if self.low_open else "[", ")" if self.high_open else "]"
                return f"{self.noun} in {left}{self.low:g}, {self.high:g}{right}"
            return f"{self.noun} ({self.low:g}-{self.high:g})"
        if self.low is not None:
            return f"{self.noun} {'>' if self.low_open else '>='} {self.low:g}"
        return self.noun

    def accepts(self, value: float) -> bool:
        if abs(value) > BIGGEST or not math.isfinite(value):  # nan compares false: isfinite catches it
            return False
        if self.low is not None and (value < self.low or (self.low_open and value == self.low)):
            return False
        return self.high is None or not (value > self.high or (self.high_open and value == self.high))

    def __call__(self, text: str) -> Any:
        try:
            value = self.kind(text)
        except ValueError:
            value = math.nan
        if not self.accepts(value):
            cut = text if len(text) <= 40 else text[:37] + "..."  # 5,000 digits say no more than 40
            raise argparse.ArgumentTypeError(f"{_shown(cut)} is not {self.description}")
        return value


def whole(low: int, high: int | None = None, noun: str = "a whole number") -> Number:
    return Number(int, noun, low, high)


def real(low: float, *, open_low: bool = False, high: float | None = None, noun: str = "a number") -> Number:
    return Number(float, noun, low, high, low_open=open_low)


COUNT = whole(0)
POSITIVE_COUNT = whole(1)
PERCENT = real(0.0, high=100.0, noun="a percentage")
RATE = Number(float, "a sampling rate", 0.0, 1.0, low_open=True)
SECONDS = real(0.0, open_low=True, noun="a number of seconds")
SECONDS_OR_ZERO = real(0.0, noun="a number of seconds")
POSITIVE = real(0.0, open_low=True)
NON_NEGATIVE = real(0.0)


@dataclass(frozen=True)
class NumberList:
    """Comma-separated numbers of one type (empty items are skipped); at least one."""

    item: Number

    def __call__(self, text: str) -> list[Any]:
        values = []
        for piece in (p.strip() for p in text.split(",")):
            if not piece:
                continue
            try:
                values.append(self.item(piece))
            except argparse.ArgumentTypeError as exc:
                raise argparse.ArgumentTypeError(f"{exc}{_within(piece, text)}") from None
        if not values:
            raise argparse.ArgumentTypeError(f"{_shown(text)} holds no value: comma-separated, {self.item.description}")
        return values


@dataclass(frozen=True)
class Assignment:
    """`NAME=VALUE` (or a bare VALUE for every name, when `bare` allows it): (NAME or None, VALUE)."""

    value: Number
    bare: bool = False
    form: str = "NAME=VALUE"  # as the help shows it, e.g. POOL=BUFFERS

    def __call__(self, text: str) -> tuple[str | None, Any]:
        name, eq, raw = text.rpartition("=")
        name = name.strip()
        if (eq and not name) or (not eq and not self.bare):
            raise argparse.ArgumentTypeError(f"{_shown(text)}: use {self.form}")
        try:
            return name or None, self.value(raw.strip())
        except argparse.ArgumentTypeError as exc:
            raise argparse.ArgumentTypeError(f"{exc}{_within(raw.strip(), text)}") from None


@dataclass(frozen=True)
class Checked:
    """Text a parser elsewhere accepts (it raises ValueError saying why), kept as text: read
    again where it is used, refused here so a bad one is a usage error."""

    check: Callable[[str], object]

    def __call__(self, text: str) -> str:
        try:
            self.check(text)
        except ValueError as exc:
            raise argparse.ArgumentTypeError(str(exc)) from None
        return text


@dataclass(frozen=True)
class Keyword:
    """A word (e.g. `max`, `-`) standing for `means`, or a value `inner` accepts."""

    word: str
    inner: Any  # one of this module's types
    means: Any  # what the word stands for

    def __call__(self, text: str) -> Any:
        if text == self.word:
            return self.means
        try:
            return self.inner(text)
        except argparse.ArgumentTypeError:
            if not isinstance(self.inner, Number):
                raise  # a path's own reason says more
            raise argparse.ArgumentTypeError(
                f"{_shown(text)} is neither {self.word} nor {self.inner.description}"
            ) from None


@dataclass(frozen=True)
class InputFile:
    """A file to read: it exists, is no directory and is readable. `awaited_with`: the option (its
    dest) under which a missing file is awaited instead (--follow); UsageParser checks it then."""

    awaited_with: str | None = None

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if not path.exists():
            if self.awaited_with is not None:
                return path
            raise argparse.ArgumentTypeError(f"{_shown(text)}: no such file")
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{_shown(text)} is a directory, not a file")
        if not os.access(path, os.R_OK):
            raise argparse.ArgumentTypeError(f"{_shown(text)}: not readable (permission denied)")
        return path


@dataclass(frozen=True)
class InputDir:
    """A directory to read: it exists and can be listed."""

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if not path.is_dir():
            why = "not a directory" if path.exists() else "no such directory"
            raise argparse.ArgumentTypeError(f"{_shown(text)}: {why}")
        if not os.access(path, os.R_OK | os.X_OK):
            raise argparse.ArgumentTypeError(f"{_shown(text)}: not readable (permission denied)")
        return path


def _writable_folder(folder: Path, text: str) -> None:
    """The folder a file or directory `text` is made in."""
    if not folder.is_dir():
        why = "is not a directory" if folder.exists() else "does not exist"
        raise argparse.ArgumentTypeError(f"{_shown(text)}: its folder {folder} {why}")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise argparse.ArgumentTypeError(f"{_shown(text)}: its folder {folder} is not writable")


@dataclass(frozen=True)
class OutputFile:
    """A file to write: not a directory, in a folder that exists and is writable (checked before
    the work, so an hour of simulation is not lost to a typo in the path)."""

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if not text:
            raise argparse.ArgumentTypeError("'' is no file name")
        if path.is_dir():
            raise argparse.ArgumentTypeError(f"{_shown(text)} is a directory, not a file")
        _writable_folder(path.parent, text)
        if path.exists() and not os.access(path, os.W_OK):
            raise argparse.ArgumentTypeError(f"{_shown(text)}: not writable (permission denied)")
        return path


@dataclass(frozen=True)
class OutputDir:
    """A directory to write into, made (with its parents) when missing: it is one, or can be made
    under the nearest folder that exists."""

    def __call__(self, text: str) -> Path:
        path = Path(text)
        if not text:
            raise argparse.ArgumentTypeError("'' is no directory name")
        if path.exists():
            if not path.is_dir():
                raise argparse.ArgumentTypeError(f"{_shown(text)} exists and is not a directory")
            if not os.access(path, os.W_OK | os.X_OK):
                raise argparse.ArgumentTypeError(f"{_shown(text)}: not writable (permission denied)")
            return path
        _writable_folder(next(p for p in path.absolute().parents if p.exists()), text)
        return path


class UsageParser(argparse.ArgumentParser):
    """An ArgumentParser whose usage errors are one line, `PROG: message`, and exit 2; its
    sub-commands' parsers are of this class too (add_subparsers takes the parent's class)."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: {' '.join(message.split())}\n")

    # One signature for typeshed's two overloads. A sub-command's parser runs this too, on its own namespace.
    def parse_known_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> tuple[argparse.Namespace, list[str]]:
        ns, rest = super().parse_known_args(args, namespace)
        self._check_awaited(ns)
        return ns, rest

    def _check_awaited(self, ns: argparse.Namespace) -> None:
        """A file that may be awaited (InputFile.awaited_with) must exist when it is not."""
        for action in self._actions:
            kind = action.type
            if not isinstance(kind, InputFile) or not kind.awaited_with or getattr(ns, kind.awaited_with, False):
                continue
            values = getattr(ns, action.dest, None)
            paths: list[Path] = values if isinstance(values, list) else [] if values is None else [values]
            for path in paths:
                if not path.exists():
                    flag = "--" + kind.awaited_with.replace("_", "-")
                    name = argparse._get_action_name(action)
                    self.error(f"argument {name}: {_shown(str(path))}: no such file (give {flag} to wait for it)")

"""The statistics parsers, registered once: `poolsight ingest stats --format` reads this table,
and a file given without --format is read by the format its content shows."""

from __future__ import annotations

from collections.abc import Callable

from poolsight.ingest import stats_db2diag, stats_display, stats_gbp_display, stats_luw, stats_omegamon
from poolsight.ingest.stats_common import Parsed, ParseOptions, Rejected, StatsFormat

FORMATS: dict[str, StatsFormat] = {
    f.name: f
    for f in (
        stats_omegamon.FORMAT,
        stats_display.FORMAT,
        stats_gbp_display.FORMAT,
        stats_luw.FORMAT,
        stats_db2diag.FORMAT,
    )
}


def detect(text: str) -> list[StatsFormat]:
    """The formats a file's text looks like (usually one; none for anything else)."""
    return [f for f in FORMATS.values() if f.looks_like(text)]


def expected() -> str:
    return "; ".join(f"{f.name}: {f.reads}" for f in FORMATS.values())


def parser(name: str | None, options: ParseOptions) -> Callable[[str, str], Parsed]:
    """(text, file name) -> Parsed, for one format, or (name None) for whichever the content shows.
    A file in no known format is rejected whole, with what was expected."""

    def parse(text: str, source_name: str) -> Parsed:
        if name is not None:
            return FORMATS[name].parse(text, source_name, options)
        found = detect(text)
        if not found:
            reason = f"not a statistics file of a known format (expected {expected()})"
            return Parsed(rejected=[Rejected(source_name, 1, "format", reason, text[:512])])
        return found[0].parse(text, source_name, options)

    return parse

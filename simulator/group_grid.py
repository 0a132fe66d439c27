"""The GBP settings a group simulation runs: the current point first (the LBP curves are taken
at it), then data entries 0.25x to 4x and RATIO halved and doubled around it. The stream job
and the offline paths (simulate, advise) use the same grid."""

from __future__ import annotations

from collections.abc import Mapping

from poolsight.simulator.group import GbpSetting

SIZE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
DEFAULT_RATIO = 5.0  # Db2 12's default RATIO
MIN_RATIO = 2.0  # the reference model's floor (DATA-SHARING.md rule 5)
# Before the GBP's size is known: data entries as this share of the members' LBPs (seed 004's
# rule of thumb: 35-40 % of the sum of the LBPs).
GBP_SHARE_OF_LBPS = 0.375


def assumed_setting(lbp_sizes: Mapping[str, int], ratio: float | None = None) -> GbpSetting:
    """A GBP for members whose GBP size is not known: seed 004's share of their LBPs."""
    return GbpSetting(max(1, round(GBP_SHARE_OF_LBPS * sum(lbp_sizes.values()))), ratio or DEFAULT_RATIO)


def gbp_grid(current: GbpSetting) -> list[GbpSetting]:
    """The current point first, then the other sizes and ratios, each once."""
    ratios = sorted({max(MIN_RATIO, current.ratio / 2), current.ratio, current.ratio * 2})
    out = [current]
    for f in SIZE_FACTORS:
        for r in ratios:
            p = GbpSetting(max(1, round(current.data_entries * f)), r)
            if p not in out:
                out.append(p)
    return out

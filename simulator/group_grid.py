"""The GBP settings a group simulation runs: the current point first (the LBP curves are taken
at it), then structures of 0.25x to 4x the current size (MB) at RATIO halved, as is and doubled,
each with the data entries that size holds at that RATIO (DATA-SHARING.md: data = S / (RATIO x
400 + page size)). So a rebuild at another RATIO of the same size, or a resize by one of the
factors, lands on a point the simulation already ran. The stream job and the offline paths
(simulate, advise) use the same grid."""

from __future__ import annotations

from collections.abc import Mapping

from poolsight.simulator.group import DIRECTORY_ENTRY_BYTES, GbpSetting

SIZE_FACTORS = (0.25, 0.5, 1.0, 2.0, 4.0)
DEFAULT_RATIO = 5.0  # Db2 12's default RATIO
MIN_RATIO = 2.0  # the reference model's floor (DATA-SHARING.md rule 5)
# Before the GBP's size is known: data entries as this share of the members' LBPs (seed 004's
# rule of thumb: 35-40 % of the sum of the LBPs).
GBP_SHARE_OF_LBPS = 0.375


def assumed_setting(lbp_sizes: Mapping[str, int], ratio: float | None = None) -> GbpSetting:
    """A GBP for members whose GBP size is not known: seed 004's share of their LBPs."""
    return GbpSetting(max(1, round(GBP_SHARE_OF_LBPS * sum(lbp_sizes.values()))), ratio or DEFAULT_RATIO)


def data_entries_for(size_mb: float, ratio: float, page_size: int) -> int:
    """Data entries a structure of `size_mb` holds at `ratio` (the generator's and DB2's sizing)."""
    return max(1, int(size_mb * 2**20 // (ratio * DIRECTORY_ENTRY_BYTES + page_size)))


def gbp_grid(current: GbpSetting, page_size: int = 4096) -> list[GbpSetting]:
    """The current point first, then the other sizes and ratios, each once."""
    ratios = sorted({max(MIN_RATIO, current.ratio / 2), current.ratio, current.ratio * 2})
    size = current.structure_mb(page_size)
    out = [current]
    for f in SIZE_FACTORS:
        for r in ratios:
            p = GbpSetting(data_entries_for(size * f, r, page_size), r)
            if p not in out and not (f == 1.0 and r == current.ratio):
                out.append(p)
    return out


# A group simulation's state per page is large (each grid point's directory slot, each member's
# LBP link, the curves' positions: about 260 bytes a page with 15 points), so a big group is
# simulated on a spatial sample: at most this many pages can hold state. Measured offline on the
# data-sharing scenario's BP1 (455,000 pages tracked exact: a 120 MB snapshot, 0.7 M events/s;
# its bound is 1.28 M): at a rate of 0.2, 24 MB and 4.3 M events/s, with the disk sync reads of
# each 60 s interval within 1.5 % of exact and the GBP hit ratio within 0.6 points in one sample
# (at 0.1: 2.4 % and 0.8); another sample put one interval's hit ratio 10 points high (the
# hottest pages' GBP hits scaled by 1/rate: docs/simulator.md). Small structures stay exact (the
# 15,000-page index pool's reclaims were 15 % off at 0.2).
GROUP_AUTO_PAGES = 262_144


def auto_sample(lbp_sizes: Mapping[str, int], settings: list[GbpSetting], budget: int = GROUP_AUTO_PAGES) -> float:
    """The spatial sampling rate that bounds the pages holding state: a page is held by some
    member's LBP or registered in some point's directory, so at most the LBPs' buffers plus the
    largest directory. Exact (1.0) when that bound is within `budget`."""
    if budget < 1:
        raise ValueError(f"budget {budget}: must be >= 1")
    bound = sum(lbp_sizes.values()) + max((s.directory_entries for s in settings), default=0)
    return 1.0 if bound <= budget else budget / bound

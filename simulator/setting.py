"""How a pool runs, read from its attributes: the policy its simulation must use."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from poolsight.simulator.engine import PolicyName


@dataclass(frozen=True)
class Setting:
    """How a pool runs, from its attributes: size, page-steal policy, VPSEQT, and the size of
    DB2's own simulated pool beyond it (SPSIZE; None: none)."""

    size: int
    policy: PolicyName
    vpseqt: float
    spsize: int | None = None

    @property
    def simulated_size(self) -> int | None:
        """VPSIZE + SPSIZE: the size DB2's simulated pool reports avoidable reads for (DSNB432I)."""
        return self.size + self.spsize if self.spsize else None

    @classmethod
    def of(cls, attributes: dict[str, Any]) -> Setting:
        """PGSTEAL FIFO is FIFO; NONE too (DB2 steals FIFO when such a pool overflows); LRU (or
        none given) is LRU with the sequential threshold VPSEQT (80 % when not given)."""
        steal = str(attributes.get("pgsteal") or "LRU").upper()
        v = attributes.get("vpseqt")
        vpseqt = 80.0 if v is None else float(v)
        policy: PolicyName = "fifo" if steal in ("FIFO", "NONE") else ("lru" if vpseqt >= 100 else "lru-vpseqt")
        sp = attributes.get("spsize")
        return cls(int(attributes["vpsize"]), policy, vpseqt, int(sp) if sp else None)

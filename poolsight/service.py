"""The evaluator services, as the launcher starts them: `python -m poolsight.service NAME
--every SECONDS`. One loop (infra/evaluator.py) runs the named evaluator; this module only wires
names to evaluators."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence

from poolsight.infra.config import Settings
from poolsight.infra.evaluator import EVERY_SECONDS, Evaluator, serve


def _alerts(s: Settings) -> Evaluator:
    # lazy: each service process loads only its own evaluator (advice's pulls in the Kafka client)
    from poolsight.dashboards.alerts import AlertsEvaluator

    return AlertsEvaluator(s)


def _advice(s: Settings) -> Evaluator:
    # lazy: as above
    from poolsight.advice.online import AdviceEvaluator

    return AdviceEvaluator(s)


def _maintenance(s: Settings) -> Evaluator:
    # lazy: as above
    from poolsight.sql.history import MaintenanceEvaluator

    return MaintenanceEvaluator(s)


EVALUATORS: dict[str, Callable[[Settings], Evaluator]] = {
    "alerts": _alerts,
    "advice": _advice,
    "maintenance": _maintenance,
}
assert set(EVALUATORS) == set(EVERY_SECONDS)
# Run only on cores the pipeline and the pages leave idle (SCHED_IDLE): their results can wait
# a backlog out. Alerts keep a share (nice +10 alone): what pages a person should not wait.
IDLE = frozenset({"advice", "maintenance"})


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] not in EVALUATORS:
        print(f"usage: python -m poolsight.service {{{','.join(EVALUATORS)}}} [--every SECONDS]", file=sys.stderr)
        return 2
    return serve(args[0], EVALUATORS[args[0]], args[1:], idle=args[0] in IDLE)


if __name__ == "__main__":
    sys.exit(main())

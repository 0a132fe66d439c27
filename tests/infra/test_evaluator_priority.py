"""yield_cores in a process of its own (a lowered priority cannot be raised again): every thread,
those started before the call and after it, at nice +10, and SCHED_IDLE when asked."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_CHILD = """
import json, os, sys, threading
from poolsight.infra.evaluator import yield_cores
from poolsight.infra.process import thread_priorities

hold = threading.Event()
before = threading.Thread(target=hold.wait)
before.start()
yield_cores(sys.argv[1] == "idle")
after = threading.Thread(target=hold.wait)
after.start()
threads = len(os.listdir("/proc/self/task"))
seen = thread_priorities(os.getpid())
hold.set()
print(json.dumps({"threads": threads, "priorities": sorted(seen)}))
"""


@pytest.mark.parametrize(("mode", "policy"), [("idle", os.SCHED_IDLE), ("share", os.SCHED_OTHER)])
def test_every_thread_yields(mode: str, policy: int) -> None:
    out = subprocess.run([sys.executable, "-c", _CHILD, mode], capture_output=True, text=True, check=True)
    got = json.loads(out.stdout)
    low = min(19, os.nice(0) + 10)
    assert got == {"threads": 3, "priorities": [[low, policy]]}

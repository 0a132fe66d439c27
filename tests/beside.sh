#!/usr/bin/env bash
# beside.sh LOG BACKGROUND -- FOREGROUND...: run BACKGROUND (one shell command) at the lowest CPU
# priority beside FOREGROUND, its output kept in LOG and printed once both ended; exit non-zero if
# either failed. `make test` runs lint and the kernel's tests so beside the stack tests: those
# wait on the services much of the time, and the checks that do not (pure CPU, no timing) fill it.
set -uo pipefail
log=$1 background=$2
shift 2
[ "${1:-}" = "--" ] && shift
mkdir -p "$(dirname "$log")"
nice -n 19 bash -c "$background" >"$log" 2>&1 &
pid=$!
"$@"
fg=$?
wait "$pid"
bg=$?
echo "---- beside the stack tests: $background (exit $bg) ----"
cat "$log"
if [ "$fg" -ne 0 ]; then exit "$fg"; fi
exit "$bg"

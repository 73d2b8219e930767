#!/usr/bin/env bash
# Who had the CPUs while the checks waited (diagnostics): one run of check.js with TRACE_DIR,
# and the scheduler's switches and wakeups of the whole machine for 20 s of its measured phase
# (perf, as root), then cpu-share.js over both.
#   bash bench/entitlements/trace/sched.sh /tmp/sched [VAR=value ...]   # e.g. RATE=300
# The variables are passed to check.js (RUNS=1 and WRITE_README=0 are set). perf adds CPU of
# its own to every switch: the latencies of such a run are not figures.
set -euo pipefail
out=${1:?usage: sched.sh <dir> [VAR=value ...]}
shift
here=$(cd "$(dirname "$0")" && pwd)
command -v perf >/dev/null || { echo "sched.sh needs perf (linux-perf)" >&2; exit 1; }
rm -rf "$out"
mkdir -p "$out/trace"
env "$@" RUNS=1 WRITE_README=0 TRACE_DIR="$out/trace" node "$here/../check.js" >"$out/bench.log" 2>&1 &
bench=$!
# The warm-up's client trace is written when the measured phase starts.
until ls "$out"/trace/client-*.txt >/dev/null 2>&1; do
  kill -0 "$bench" 2>/dev/null || { echo "check.js ended before its measured phase: $out/bench.log" >&2; exit 1; }
  sleep 0.2
done
sleep 1
ps -eo pid,args >"$out/ps.txt"
node -e 'const { performance } = require("node:perf_hooks"); const hr = Number(process.hrtime.bigint()) / 1e9; console.log((performance.timeOrigin + performance.now()) / 1000 - hr)' >"$out/offset"
perf record -k monotonic -e sched:sched_switch -e sched:sched_wakeup -a -o "$out/perf.data" -- sleep 20 >"$out/perf.log" 2>&1
wait "$bench"
perf script -i "$out/perf.data" -F comm,pid,tid,cpu,time,event,trace >"$out/perf.txt" 2>/dev/null
grep '"run"' "$out/bench.log" || true
node "$here/cpu-share.js" "$out"

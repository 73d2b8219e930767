#!/usr/bin/env bash
# The HTTP floor on this machine (bench/entitlements/README.md): CPU per request of a server
# answering POST /v1/entitlements/check behind a minimal undici proxy, at 1,000 requests/s.
#   bash bench/entitlements/floor/run.sh            # plain node:http, then express variants (V=A2 A3 A B C D E of up3.js)
#   CLIENT=undici bash bench/entitlements/floor/run.sh   # the client an undici pool (default: bench/lean-client.js)
# Needs `npx tsc -b tsconfig.build.json` first (up3.js uses libs/http).
set -euo pipefail
cd "$(dirname "$0")"
ticks() { awk '{print $14+$15}' "/proc/$1/stat"; }
measure() {
  local label=$1; shift
  "$@" & local up=$!
  node proxy.js & local px=$!
  sleep 1.5
  node client.js >/dev/null # warm-up
  local t0 p0 t1 p1 out
  t0=$(ticks $up); p0=$(ticks $px)
  out=$(node client.js)
  t1=$(ticks $up); p1=$(ticks $px)
  echo "$label: server $(echo "scale=3; ($t1-$t0)*10/20000" | bc) ms/request, proxy $(echo "scale=3; ($p1-$p0)*10/20000" | bc) ms/request, client latency $out"
  kill $up $px; wait $up $px 2>/dev/null || true
}
measure "plain node:http" node upstream.js
measure "all registry routes + mountRoute (upstream2.js)" node upstream2.js
for v in A2 A3 A B C D E; do V=$v measure "up3.js V=$v" node up3.js; done

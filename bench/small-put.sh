#!/usr/bin/env bash
# Small PUTs before and after a change, side by side in one run (see
# BENCHMARKS.md, "Small PUTs share their fsyncs"): gateways on loopback,
# each on a fresh data dir, s3-bench rounds alternating between them.
#
#   ip netns exec <netns> bench/small-put.sh OLD_BIN NEW_BIN [NAME=ENV ...]
#
# Servers: `old` (OLD_BIN), `new` (NEW_BIN, defaults) and one more NEW_BIN
# per NAME=ENV argument, started with that environment, e.g.
# `off=S3GW_SMALL_BLOCK_MAX=0`. Variables: ROUNDS (3), DURATION (4s),
# CONCS ("1 8 32 64"), SIZES (PUT object sizes, "1KiB"), GET (1: also a GET
# at each concurrency), GET_SIZE (its objects' size, "1KiB"), PUTS (0: GET
# only), BENCH (target/release/s3-bench).
set -euo pipefail
old=$1 new=$2
shift 2
rounds=${ROUNDS:-3} duration=${DURATION:-4s} concs=${CONCS:-1 8 32 64} sizes=${SIZES:-1KiB}
get_size=${GET_SIZE:-1KiB}
bench=${BENCH:-target/release/s3-bench}
# shellcheck source=bench/embedded-servers.sh
source "$(dirname "$0")/embedded-servers.sh"
run() { # name mode args...: one s3-bench run, "ops/s p50 errors cpu-µs/op"
  local name=$1 mode=$2
  shift 2
  local before after out ops
  before=$(ticks "${pid[$name]}")
  out=$(nice -n 5 "$bench" "$mode" --endpoint "$(endpoint "$name")" --bucket bench \
    --json "$@" 2>>"$work/stderr" | jq -r '.results[0] | "\(.ops) \(.ops_per_sec|floor) \(.p50_ms) \(.errors)"')
  after=$(ticks "${pid[$name]}")
  read -r ops rate p50 errors <<<"$out"
  echo "$rate ops/s p50 ${p50} ms errors $errors cpu $(((after - before) * 10000 / (ops > 0 ? ops : 1))) µs/op"
}
if [[ ${GET:-1} == 1 ]]; then
  for name in "${names[@]}"; do
    "$bench" fill --endpoint "$(endpoint "$name")" --bucket bench --prefix small/ \
      --obj-size "$get_size" --objects 1000 --concurrency 16 --json >/dev/null 2>>"$work/stderr"
  done
fi
echo "servers: ${names[*]}; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= rounds; round++)); do
  mapfile -t order < <(rotated "$round")
  echo "== round $round: ${order[*]} (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for conc in $concs; do
    for size in $sizes; do
      [[ ${PUTS:-1} == 1 ]] || continue
      for name in "${order[@]}"; do
        echo "PUT $size c$conc $name: $(run "$name" put --obj-size "$size" --concurrency "$conc" --duration "$duration")"
      done
    done
    [[ ${GET:-1} == 1 ]] || continue
    for name in "${order[@]}"; do
      echo "GET $get_size c$conc $name: $(run "$name" get --existing --prefix small/ --objects 1000 \
        --obj-size "$get_size" --concurrency "$conc" --duration "$duration")"
    done
  done
done
for name in "${names[@]}"; do
  kill -0 "${pid[$name]}" 2>/dev/null || echo "$name died: $(tail -3 "$work/$name.log")"
done
report_servers

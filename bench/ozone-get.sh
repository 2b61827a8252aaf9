#!/usr/bin/env bash
# GETs and HEADs on Ozone before and after a change, side by side in one run (see
# BENCHMARKS.md, "Ozone: a small block in one call each way"): Ozone's own
# S3 gateway and two s3-gateway --backend ozone builds on the running dev
# cluster of conformance-tests/ozone, reading the same objects (one bucket,
# written once through NEW_BIN), s3-bench rounds rotating between them.
#
#   conformance-tests/ozone/ozone-dev start --with-s3g
#   bench/ozone-get.sh OLD_BIN NEW_BIN [NAME=ENV ...]
#
# NAME=ENV: one more NEW_BIN server with that environment, as in
# bench/ozone-put.sh.
# Variables: ROUNDS (3), DURATION (6s), CONCS ("1 8 32", 1 KiB GETs and HEADs),
# OBJECTS (2000 of 1 KiB; plus 16 of 1 MiB, read at c8), WARMUP (10s per
# server, the S3G's JIT), BENCH (target/release/s3-bench).
set -euo pipefail
old=$1 new=$2
shift 2
rounds=${ROUNDS:-3} duration=${DURATION:-6s} concs=${CONCS:-1 8 32}
objects=${OBJECTS:-2000} warmup=${WARMUP:-10s}
bench=${BENCH:-target/release/s3-bench}
# shellcheck source=bench/ozone-servers.sh
source "$(dirname "$0")/ozone-servers.sh"
bucket=bench-get-$RANDOM
"$bench" fill --endpoint "$(endpoint new)" --bucket "$bucket" --prefix small/ --objects "$objects" \
  --obj-size 1KiB --concurrency 16 >/dev/null
"$bench" fill --endpoint "$(endpoint new)" --bucket "$bucket" --prefix m1/ --objects 16 \
  --obj-size 1MiB --concurrency 4 >/dev/null
run() { # name mode args...: one s3-bench get or stat run, "ops/s MiB/s p50 errors cpu-µs/op"
  local name=$1 mode=$2
  shift 2
  local before after out ops per_sec rate p50 errors
  before=$(ticks "${pid[$name]}")
  out=$("$bench" "$mode" --existing --endpoint "$(endpoint "$name")" --bucket "$bucket" \
    --json "$@" 2>>"$work/stderr" |
    jq -r '.results[0] | "\(.ops) \(.ops_per_sec | floor) \((.mib_per_sec * 10 | floor) / 10) \(.p50_ms) \(.errors)"')
  after=$(ticks "${pid[$name]}")
  read -r ops per_sec rate p50 errors <<<"$out"
  echo "$per_sec ops/s $rate MiB/s p50 ${p50} ms errors $errors cpu $(((after - before) * 10000 / (ops > 0 ? ops : 1))) µs/op"
}
small=(--prefix small/ --objects "$objects" --obj-size 1KiB)
large=(--prefix m1/ --objects 16 --obj-size 1MiB)
for name in "${names[@]}"; do
  run "$name" get "${small[@]}" --concurrency 8 --duration "$warmup" >/dev/null
  run "$name" stat "${small[@]}" --concurrency 8 --duration "$warmup" >/dev/null
done
echo "servers: ${names[*]}; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= rounds; round++)); do
  mapfile -t order < <(rotated "$round")
  echo "== round $round: ${order[*]} (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for conc in $concs; do
    for name in "${order[@]}"; do
      echo "GET 1KiB c$conc $name: $(run "$name" get "${small[@]}" --concurrency "$conc" --duration "$duration")"
      echo "HEAD 1KiB c$conc $name: $(run "$name" stat "${small[@]}" --concurrency "$conc" --duration "$duration")"
    done
  done
  for name in "${order[@]}"; do
    echo "GET 1MiB c8 $name: $(run "$name" get "${large[@]}" --concurrency 8 --duration "$duration")"
  done
done
report_servers

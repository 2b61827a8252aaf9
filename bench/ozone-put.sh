#!/usr/bin/env bash
# PUTs on Ozone before and after a change, side by side in one run (see
# BENCHMARKS.md, "Ozone: blocks in flight" for 16 MiB, "Ozone: a small
# block in one call each way" for 1 KiB): Ozone's own S3 gateway
# and s3-gateway --backend ozone builds on the running dev cluster of
# conformance-tests/ozone, s3-bench rounds rotating between them.
#
#   conformance-tests/ozone/ozone-dev start --with-s3g
#   bench/ozone-put.sh OLD_BIN NEW_BIN [NAME=ENV ...]
#
# Servers: `s3g` (the cluster's S3G), `old` (OLD_BIN), `new` (NEW_BIN,
# defaults) and one more NEW_BIN per NAME=ENV argument, started with that
# environment, e.g. `w1=S3GW_OZONE_BLOCKS_IN_FLIGHT=1`. Each round also
# PUTs PRESIGNED (32) objects of each size per server with curl, 4 at a
# time, on presigned URLs (UNSIGNED-PAYLOAD): a second load generator that
# is not s3-bench (0 skips it). Variables: ROUNDS (3), DURATION (8s), CONCS
# ("1 4"), SIZES ("16MiB"), WARMUP (10s per server, the S3G's JIT), BENCH
# (target/release/s3-bench).
set -euo pipefail
old=$1 new=$2
shift 2
rounds=${ROUNDS:-3} duration=${DURATION:-8s} concs=${CONCS:-1 4} sizes=${SIZES:-16MiB}
warmup=${WARMUP:-10s}
bench=${BENCH:-target/release/s3-bench}
# shellcheck source=bench/ozone-servers.sh
source "$(dirname "$0")/ozone-servers.sh"
run() { # name args...: one s3-bench PUT run, "ops/s MiB/s p50 errors cpu-µs/op"
  local name=$1
  shift
  local before after out ops
  before=$(ticks "${pid[$name]}")
  out=$("$bench" put --endpoint "$(endpoint "$name")" --bucket "bench-$name" \
    --json "$@" 2>>"$work/stderr" |
    jq -r '.results[0] | "\(.ops) \(.ops_per_sec | floor) \((.mib_per_sec * 10 | floor) / 10) \(.p50_ms) \(.errors)"')
  after=$(ticks "${pid[$name]}")
  read -r ops per_sec rate p50 errors <<<"$out"
  # CPU in µs per object: 1 KiB PUTs take well under a millisecond of it.
  echo "$per_sec ops/s $rate MiB/s p50 ${p50} ms errors $errors cpu $(((after - before) * 10000 / (ops > 0 ? ops : 1))) µs/op"
}
presigned=${PRESIGNED:-32}
curl_put() { # name size: PRESIGNED presigned PUTs with curl, 4 at a time, "ops/s MiB/s errors"
  local name=$1 size=$2 bytes start end failed
  bytes=$(numfmt --from=iec-i "${size%B}")
  [[ -f $work/body-$size ]] || head -c "$bytes" /dev/urandom >"$work/body-$size"
  "$bench" presign --endpoint "$(endpoint "$name")" --bucket "curl-$name-$RANDOM" --prefix p/ \
    --objects "$presigned" --obj-size 1 2>>"$work/stderr" | awk '$1 == "PUT" {print $2}' >"$work/urls-$name"
  if [[ ! -s $work/urls-$name ]]; then
    echo "presign failed (see $work/stderr)"
    return
  fi
  start=$(date +%s.%N)
  failed=$(xargs -P 4 -n 1 curl -s -o /dev/null -w '%{http_code}\n' -T "$work/body-$size" <"$work/urls-$name" |
    grep -vc '^200$' || true)
  end=$(date +%s.%N)
  awk -v n="$presigned" -v b="$bytes" -v s="$start" -v e="$end" -v f="$failed" \
    'BEGIN {printf "%.0f ops/s %.1f MiB/s errors %d", n / (e - s), n * b / 1048576 / (e - s), f}'
}
for name in "${names[@]}"; do
  for size in $sizes; do
    run "$name" --obj-size "$size" --concurrency 4 --duration "$warmup" >/dev/null
  done
done
echo "servers: ${names[*]}; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= rounds; round++)); do
  mapfile -t order < <(rotated "$round")
  echo "== round $round: ${order[*]} (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for conc in $concs; do
    for size in $sizes; do
      for name in "${order[@]}"; do
        echo "PUT $size c$conc $name: $(run "$name" --obj-size "$size" --concurrency "$conc" --duration "$duration")"
      done
    done
  done
  ((presigned > 0)) || continue
  for size in $sizes; do
    for name in "${order[@]}"; do
      echo "presigned PUT $size c4 (curl) $name: $(curl_put "$name" "$size")"
    done
  done
done
report_servers

#!/usr/bin/env bash
# DeleteObjects before and after a change, side by side in one run (see
# BENCHMARKS.md, "DeleteObjects in one storage call"): each round fills a
# bucket per server with OBJECTS objects of 1 KiB, then times s3-bench's
# delete-many (DeleteObjects of 1000 keys each) until they are gone.
#
#   bench/delete-many.sh OLD_BIN NEW_BIN            # embedded, fresh data dirs
#   OZONE=1 bench/delete-many.sh OLD_BIN NEW_BIN    # on the running dev cluster
#                                                   # of conformance-tests/ozone,
#                                                   # with its S3 gateway beside
#
# Variables: ROUNDS (3), OBJECTS (10000, a multiple of 1000), CONC
# (DeleteObjects requests at once, 2), BENCH (target/release/s3-bench),
# MODE (delete-many; `delete` times one DeleteObject per key instead).
# Prints keys deleted per second (the delete phase alone, from s3-bench's
# own clock) and the gateway's CPU per key over it.
set -euo pipefail
old=$1 new=$2
shift 2
rounds=${ROUNDS:-3} objects=${OBJECTS:-10000} conc=${CONC:-2} mode=${MODE:-delete-many}
bench=${BENCH:-target/release/s3-bench}
if [[ ${OZONE:-0} == 1 ]]; then
  # shellcheck source=bench/ozone-servers.sh
  source "$(dirname "$0")/ozone-servers.sh"
else
  # shellcheck source=bench/embedded-servers.sh
  source "$(dirname "$0")/embedded-servers.sh"
fi
echo "servers: ${names[*]}; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)"
for ((round = 1; round <= rounds; round++)); do
  mapfile -t order < <(rotated "$round")
  echo "== round $round: ${order[*]} (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for name in "${order[@]}"; do
    bucket=dm-$name-$round
    "$bench" fill --endpoint "$(endpoint "$name")" --bucket "$bucket" --prefix d/ \
      --obj-size 1KiB --objects "$objects" --concurrency 16 --json >/dev/null 2>>"$work/stderr"
    before=$(ticks "${pid[$name]}")
    out=$("$bench" "$mode" --endpoint "$(endpoint "$name")" --bucket "$bucket" --existing \
      --prefix d/ --objects "$objects" --concurrency "$conc" --duration 30m --json 2>>"$work/stderr" |
      jq -r '.results[0] | "\(.ops) \(.ops_per_sec) \(.errors) \(.p50_ms)"')
    after=$(ticks "${pid[$name]}")
    read -r ops per_sec errors p50 <<<"$out"
    awk -v n="$objects" -v r="$ops" -v rate="$per_sec" -v c="$((after - before))" \
      -v f="$errors" -v p="$p50" -v who="$name" -v conc="$conc" -v mode="$mode" \
      'BEGIN {printf "%s c%d %s: %.0f keys/s, %d requests, p50 %.1f ms, errors %d, cpu %.1f µs/key\n", mode, conc, who, rate * n / (r > 0 ? r : 1), r, p, f, c * 10000 / n}'
  done
done
report_servers

#!/usr/bin/env bash
# The gateway's peak RSS (VmHWM) under issue 20's two memory workloads
# (BENCHMARKS.md, "Memory"): each BIN on a fresh embedded data dir runs
#   1. 1 KiB PUTs (c32), 1 KiB GETs over 1,000 objects (c32), then 256 MiB
#      GETs of 4 objects (c4), printing the peak after each;
#   2. with OBJECTS set, a fill of that many 1 KiB objects (c64), GETs of
#      any of them (c32) and LIST pages (c1), printing the peak after each.
#
#   ip netns exec <netns> bench/memory.sh BIN [BIN ...]
#
# Variables: DURATION (8s, each small-object phase; the 256 MiB GETs run
# twice as long), OBJECTS (unset: skip part 2; e.g. 1000000), DATA (where
# the data dirs go, /var/tmp: part 2 needs ~2.2 GB per million),
# BENCH (target/release/s3-bench), PORT (39991). Arguments after a BIN of
# the form --flag=value are passed to it, e.g. `BIN --metadata-db-cache=64MiB`.
set -euo pipefail
if [[ ${1:-} == -h || ${1:-} == --help || $# == 0 ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
duration=${DURATION:-8s}
seconds=${duration%s}
bench=${BENCH:-target/release/s3-bench}
port=${PORT:-39991}
endpoint=http://127.0.0.1:$port
export AWS_ACCESS_KEY_ID=MEMORYKEY01234567890 AWS_SECRET_ACCESS_KEY=memorysecret0123456789abcdef0123456789

peak() { awk '/^VmHWM/ {printf "%.1f MiB", $2 / 1024}' "/proc/$gateway/status"; }
load() { "$bench" "$1" --endpoint "$endpoint" "${@:2}" | awk -v mode="${1^^}" '$1 == mode && NF > 3 {print $3 " ops/s, " $4 " MiB/s"}'; }

run() { # bin, its flags...
  local data
  data=$(mktemp -d "${DATA:-/var/tmp}/s3gw-memory.XXXX")
  S3GW_ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID S3GW_ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY S3GW_LOG_LEVEL=warn \
    "$1" --listen "127.0.0.1:$port" --data-dir "$data" "${@:2}" >"$data.log" 2>&1 &
  gateway=$!
  trap 'kill $gateway 2>/dev/null; wait $gateway 2>/dev/null; rm -rf "$data" "$data.log"' EXIT
  for _ in $(seq 100); do curl -fs "$endpoint/health" >/dev/null && break; sleep 0.1; done
  echo "== $*"
  echo "start: $(peak)"
  echo "1 KiB PUT c32: $(load put --bucket memory --obj-size 1KiB --concurrency 32 --duration "$duration"); peak $(peak)"
  echo "1 KiB GET c32: $(load get --bucket memory --obj-size 1KiB --concurrency 32 --duration "$duration" --objects 1000); peak $(peak)"
  echo "256 MiB GET c4: $(load get --bucket memory --obj-size 256MiB --concurrency 4 --duration $((seconds * 2))s --objects 4); peak $(peak)"
  if [[ -n ${OBJECTS:-} ]]; then
    local many=(--bucket many --prefix m/ --objects "$OBJECTS" --obj-size 1KiB)
    "$bench" fill --endpoint "$endpoint" "${many[@]}" --concurrency 64 >/dev/null
    echo "after a fill of $OBJECTS: peak $(peak), $(du -sh "$data" | cut -f1) on disk"
    echo "1 KiB GET c32 over all: $(load get "${many[@]}" --existing --concurrency 32 --duration "$duration"); peak $(peak)"
    echo "LIST c1: $(load list "${many[@]}" --existing --concurrency 1 --duration "$duration"); peak $(peak)"
  fi
  kill "$gateway"
  wait "$gateway" 2>/dev/null || true
  rm -rf "$data" "$data.log"
  trap - EXIT
}

# Each BIN with the --flag=value arguments that follow it.
bins=()
for arg in "$@"; do
  if [[ $arg == --* && ${#bins[@]} -gt 0 ]]; then
    bins[-1]+=" $arg"
  else
    bins+=("$arg")
  fi
done
for spec in "${bins[@]}"; do
  read -ra words <<<"$spec"
  run "${words[@]}"
done

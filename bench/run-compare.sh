#!/usr/bin/env bash
# Reproduces the s3-bench runs in BENCHMARKS.md, side by side in one run:
#   1. s3-gateway (release build, embedded store, fresh data dir):
#      4 KiB get/put/stat/mixed at concurrency 20, 16 MiB get/put at
#      concurrency 4, and the gateway's RSS during the 16 MiB GET run;
#   2. with --with-ozone: Ozone's own Java S3 gateway on a single-node Ozone
#      cluster (conformance-tests/ozone/ozone-dev start --with-s3g), same
#      4 KiB modes; the cluster is stopped afterwards.
#
# Usage: bench/run-compare.sh [--with-ozone]
# Environment: DURATION (default 10s), OUT (default target/bench-results),
#              PORT (default 39878, our gateway's port).
set -euo pipefail

cd "$(dirname "$0")/.."
with_ozone=0
case "${1:-}" in
  --with-ozone) with_ozone=1 ;;
  "") ;;
  *) echo "usage: $0 [--with-ozone]" >&2; exit 2 ;;
esac

duration=${DURATION:-10s}
out=${OUT:-target/bench-results}
port=${PORT:-39878}
mkdir -p "$out"

cargo build --release -p s3-gateway -p s3-bench
bench=target/release/s3-bench
gateway_bin=target/release/s3-gateway

data=$(mktemp -d)
gateway_pid=""
# What this script started of the Ozone cluster: nothing, only the S3G (on a
# cluster someone else runs, which stays up), or the whole cluster.
ozone_started=none
stop_all() {
  if [[ -n "$gateway_pid" ]]; then
    kill "$gateway_pid" 2>/dev/null || true
    wait "$gateway_pid" 2>/dev/null || true
  fi
  rm -rf "$data"
  case $ozone_started in
    cluster) conformance-tests/ozone/ozone-dev stop || true ;;
    s3g) conformance-tests/ozone/ozone-dev kill s3g || true ;;
  esac
}
trap stop_all EXIT

if (echo >"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "port $port is already in use; set PORT" >&2
  exit 1
fi
# Fixed benchmark-only keys, for a throwaway data dir.
export AWS_ACCESS_KEY_ID=s3benchkey
export AWS_SECRET_ACCESS_KEY=s3benchsecret0123456789
S3GW_ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID S3GW_ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY \
  S3GW_LOG_LEVEL=warn "$gateway_bin" --listen "127.0.0.1:$port" --data-dir "$data" \
  >"$out/gateway.log" 2>&1 &
gateway_pid=$!
for _ in $(seq 100); do
  curl -fs "http://127.0.0.1:$port/health" >/dev/null && break
  sleep 0.1
done
curl -fs "http://127.0.0.1:$port/health" >/dev/null || { echo "gateway did not start" >&2; exit 1; }

endpoint="http://127.0.0.1:$port"
echo "machine: $(nproc) cores; load before the runs: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/machine.txt"

run() { # name endpoint args...
  local name=$1 url=$2
  shift 2
  echo "== $name" | tee "$out/$name.txt"
  "$bench" "$@" --endpoint "$url" --duration "$duration" | tee -a "$out/$name.txt"
  echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/$name.txt"
}

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }

for mode in put get stat mixed; do
  run "s3gw-small-$mode" "$endpoint" "$mode" --obj-size 4KiB --concurrency 20 --objects 1000
done
run "s3gw-large-put" "$endpoint" put --obj-size 16MiB --concurrency 4

# RSS of the gateway, sampled every 100 ms while the large GET run lasts.
echo "gateway RSS before the large GET run: $(rss_kib "$gateway_pid") KiB" | tee "$out/s3gw-rss.txt"
run "s3gw-large-get" "$endpoint" get --obj-size 16MiB --concurrency 4 --objects 16 &
bench_pid=$!
peak=0
while kill -0 "$bench_pid" 2>/dev/null; do
  now=$(rss_kib "$gateway_pid")
  (( now > peak )) && peak=$now
  sleep 0.1
done
wait "$bench_pid"
echo "gateway peak RSS during the large GET run: $peak KiB" | tee -a "$out/s3gw-rss.txt"

kill "$gateway_pid"
wait "$gateway_pid" 2>/dev/null || true
gateway_pid=""

if [[ $with_ozone == 1 ]]; then
  if conformance-tests/ozone/ozone-dev status | grep -q '^s3g  running'; then
    echo "Ozone S3G already running; using it and leaving it up"
  elif conformance-tests/ozone/ozone-dev status | grep -q running; then
    ozone_started=s3g
  else
    ozone_started=cluster
  fi
  conformance-tests/ozone/ozone-dev start --with-s3g
  # A fresh JVM runs interpreted until the JIT has compiled the hot paths
  # (HEAD was 7x slower on a just-started S3G), so warm it up first and
  # keep the warm-up results apart.
  for mode in put get stat mixed; do
    "$bench" "$mode" --endpoint "http://127.0.0.1:${OZONE_DEV_S3G_PORT:-29878}" --duration 5s \
      --obj-size 4KiB --concurrency 20 --objects 200 >>"$out/ozone-warmup.txt" 2>&1
  done
  for mode in put get stat mixed; do
    run "ozone-small-$mode" "http://127.0.0.1:${OZONE_DEV_S3G_PORT:-29878}" "$mode" \
      --obj-size 4KiB --concurrency 20 --objects 1000
  done
fi
echo "results in $out"

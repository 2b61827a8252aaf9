#!/usr/bin/env bash
# Reproduces the s3-bench runs in BENCHMARKS.md, side by side in one run:
#   1. s3-gateway (release build, embedded store, fresh data dir):
#      4 KiB get/put/stat/mixed at concurrency 20, 16 MiB get/put at
#      concurrency 4, and the gateway's RSS during the 16 MiB GET run;
#   2. with --with-ozone: Ozone's own Java S3 gateway on a single-node Ozone
#      cluster (conformance-tests/ozone/ozone-dev start --with-s3g), same
#      4 KiB modes;
#   3. with --ozone-backend (implies --with-ozone): also s3-gateway on the
#      ozone back end over that same cluster, both gateways warmed up alike,
#      each mode run on ours then on Ozone's S3G before the next mode; then
#      16 MiB put/get at concurrency 4 and multipart uploads (16 MiB in 5 MiB
#      parts) on both, and our gateway's RSS during its 16 MiB GET run.
# The Ozone cluster, or only its S3G, is stopped afterwards if this script
# started it.
#
# Usage: bench/run-compare.sh [--with-ozone] [--ozone-backend]
# Environment: DURATION (default 10s), OUT (default target/bench-results),
#              PORT (default 39878, our embedded gateway's port),
#              OZONE_BACKEND_PORT (default PORT+1, our gateway on Ozone),
#              OZONE_OM (default 127.0.0.1:8981, the OM's gRPC address),
#              WARMUP (default 5s, each warm-up pass before the Ozone runs).
set -euo pipefail

cd "$(dirname "$0")/.."
with_ozone=0
ozone_backend=0
for arg in "$@"; do
  case "$arg" in
    --with-ozone) with_ozone=1 ;;
    --ozone-backend) with_ozone=1 ozone_backend=1 ;;
    *) echo "usage: $0 [--with-ozone] [--ozone-backend]" >&2; exit 2 ;;
  esac
done

duration=${DURATION:-10s}
warmup=${WARMUP:-5s}
out=${OUT:-target/bench-results}
port=${PORT:-39878}
ozone_port=${OZONE_BACKEND_PORT:-$((port + 1))}
ozone_om=${OZONE_OM:-127.0.0.1:8981}
s3g_endpoint="http://127.0.0.1:${OZONE_DEV_S3G_PORT:-29878}"
mkdir -p "$out"

cargo build --release -p s3-gateway -p s3-bench
bench=target/release/s3-bench
gateway_bin=target/release/s3-gateway

data=$(mktemp -d)
gateway_pid=""
# What this script started of the Ozone cluster: nothing, only the S3G (on a
# cluster someone else runs, which stays up), or the whole cluster.
ozone_started=none
stop_gateway() {
  if [[ -n "$gateway_pid" ]]; then
    kill "$gateway_pid" 2>/dev/null || true
    wait "$gateway_pid" 2>/dev/null || true
    gateway_pid=""
  fi
}
stop_all() {
  stop_gateway
  rm -rf "$data"
  case $ozone_started in
    cluster) conformance-tests/ozone/ozone-dev stop || true ;;
    s3g) conformance-tests/ozone/ozone-dev kill s3g || true ;;
  esac
}
trap stop_all EXIT

ports=("$port")
((ozone_backend)) && ports+=("$ozone_port")
for p in "${ports[@]}"; do
  if (echo >"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
    echo "port $p is already in use; set PORT / OZONE_BACKEND_PORT" >&2
    exit 1
  fi
done
# Fixed benchmark-only keys, for a throwaway data dir (Ozone's S3G, security
# off, accepts any key).
export AWS_ACCESS_KEY_ID=S3BENCHKEY0000000001
export AWS_SECRET_ACCESS_KEY=s3bench-secret-s3bench-secret-s3bench-01

# start_gateway PORT LOG ARGS...: our gateway in the background, gateway_pid
# set once /health answers.
start_gateway() {
  local listen=$1 log=$2
  shift 2
  S3GW_ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID S3GW_ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY \
    S3GW_LOG_LEVEL=warn "$gateway_bin" --listen "127.0.0.1:$listen" "$@" >"$log" 2>&1 &
  gateway_pid=$!
  for _ in $(seq 100); do
    curl -fs "http://127.0.0.1:$listen/health" >/dev/null && return 0
    sleep 0.1
  done
  echo "gateway did not start; see $log" >&2
  exit 1
}

echo "machine: $(nproc) cores; load before the runs: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/machine.txt"

# Runs that had errors; the script carries on so that one failing mode does
# not hide the others, and exits non-zero at the end.
failed=()
run() { # name endpoint args...
  local name=$1 url=$2
  shift 2
  echo "== $name" | tee "$out/$name.txt"
  if ! "$bench" "$@" --endpoint "$url" --duration "$duration" 2>&1 | tee -a "$out/$name.txt"; then
    echo "   FAILED: errors above" | tee -a "$out/$name.txt"
    failed+=("$name")
  fi
  echo "   load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/$name.txt"
}

rss_kib() { awk '/^VmRSS/ {print $2}' "/proc/$1/status"; }
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; } # user + system
ticks_per_second=$(getconf CLK_TCK)

# run_with_cpu PID NAME ENDPOINT ARGS...: run(), then the CPU time PID (the
# gateway under test) used during it, preparation and cleanup included; on
# a machine shared with other work this is steadier than throughput.
run_with_cpu() {
  local pid=$1 before after
  shift
  before=$(cpu_ticks "$pid")
  run "$@"
  after=$(cpu_ticks "$pid")
  echo "   gateway CPU: $(awk -v t=$((after - before)) -v hz="$ticks_per_second" \
    'BEGIN {printf "%.2f", t / hz}') s" | tee -a "$out/$1.txt"
}

# run_with_rss PID RSS_FILE NAME ENDPOINT ARGS...: run(), sampling PID's RSS
# every 100 ms for as long as the run lasts (object preparation included).
run_with_rss() {
  local pid=$1 rss_file=$2
  shift 2
  echo "gateway RSS before the $1 run: $(rss_kib "$pid") KiB" | tee "$rss_file"
  run_with_cpu "$pid" "$@" &
  local bench_pid=$! peak=0 now
  while kill -0 "$bench_pid" 2>/dev/null; do
    now=$(rss_kib "$pid")
    ((now > peak)) && peak=$now
    sleep 0.1
  done
  wait "$bench_pid"
  echo "gateway peak RSS during the $1 run: $peak KiB" | tee -a "$rss_file"
}

# warm_up ENDPOINT: $WARMUP of every 4 KiB mode and, with --ozone-backend,
# of the 16 MiB and multipart modes; results kept apart from the measured
# runs, and errors there are reported but do not stop the script.
warm_up() {
  local url=$1 log args
  log="$out/warmup-${url##*:}.txt"
  : >"$log"
  local passes=(
    "put --obj-size 4KiB --concurrency 20"
    "get --obj-size 4KiB --concurrency 20 --objects 200"
    "stat --obj-size 4KiB --concurrency 20 --objects 200"
    "mixed --obj-size 4KiB --concurrency 20 --objects 200"
  )
  if ((ozone_backend)); then
    passes+=(
      "put --obj-size 16MiB --concurrency 4"
      "get --obj-size 16MiB --concurrency 4 --objects 8"
      "multipart --obj-size 16MiB --multipart-part-size 5MiB --concurrency 4"
    )
  fi
  for args in "${passes[@]}"; do
    # shellcheck disable=SC2086 # each pass is a list of words
    "$bench" $args --endpoint "$url" --duration "$warmup" >>"$log" 2>&1 ||
      echo "warm-up '$args' against $url had errors; see $log" >&2
  done
}

start_gateway "$port" "$out/gateway.log" --data-dir "$data/embedded"
endpoint="http://127.0.0.1:$port"
for mode in put get stat mixed; do
  run "s3gw-small-$mode" "$endpoint" "$mode" --obj-size 4KiB --concurrency 20 --objects 1000
done
run "s3gw-large-put" "$endpoint" put --obj-size 16MiB --concurrency 4
run_with_rss "$gateway_pid" "$out/s3gw-rss.txt" \
  "s3gw-large-get" "$endpoint" get --obj-size 16MiB --concurrency 4 --objects 16
stop_gateway

if ((with_ozone)); then
  if conformance-tests/ozone/ozone-dev status | grep -q '^s3g  running'; then
    echo "Ozone S3G already running; using it and leaving it up"
  elif conformance-tests/ozone/ozone-dev status | grep -q running; then
    ozone_started=s3g
  else
    ozone_started=cluster
  fi
  conformance-tests/ozone/ozone-dev start --with-s3g
  s3g_pid=$(conformance-tests/ozone/ozone-dev status | awk '$1 == "s3g" {print $4}')
  ours=""
  if ((ozone_backend)); then
    start_gateway "$ozone_port" "$out/gateway-ozone.log" \
      --backend ozone --om "$ozone_om" --data-dir "$data/ozone"
    ours="http://127.0.0.1:$ozone_port"
  fi
  # A fresh JVM runs interpreted until the JIT has compiled the hot paths
  # (HEAD was 7x slower on a just-started S3G), so warm it up first; ours
  # gets the same pass so that both see the same cluster state.
  warm_up "$s3g_endpoint"
  if [[ -n $ours ]]; then warm_up "$ours"; fi
  # Alternating per mode keeps a burst of load from other work on the
  # machine from landing on one side only.
  for mode in put get stat mixed; do
    if [[ -n $ours ]]; then
      run_with_cpu "$gateway_pid" "s3gw-ozone-small-$mode" "$ours" "$mode" \
        --obj-size 4KiB --concurrency 20 --objects 1000
    fi
    run_with_cpu "$s3g_pid" "ozone-small-$mode" "$s3g_endpoint" "$mode" \
      --obj-size 4KiB --concurrency 20 --objects 1000
  done
  if [[ -n $ours ]]; then
    run_with_cpu "$gateway_pid" "s3gw-ozone-large-put" "$ours" put --obj-size 16MiB --concurrency 4
    run_with_cpu "$s3g_pid" "ozone-large-put" "$s3g_endpoint" put --obj-size 16MiB --concurrency 4
    run_with_rss "$gateway_pid" "$out/s3gw-ozone-rss.txt" \
      "s3gw-ozone-large-get" "$ours" get --obj-size 16MiB --concurrency 4 --objects 16
    run_with_cpu "$s3g_pid" "ozone-large-get" "$s3g_endpoint" get \
      --obj-size 16MiB --concurrency 4 --objects 16
    run_with_cpu "$gateway_pid" "s3gw-ozone-multipart" "$ours" multipart \
      --obj-size 16MiB --multipart-part-size 5MiB --concurrency 4
    run_with_cpu "$s3g_pid" "ozone-multipart" "$s3g_endpoint" multipart \
      --obj-size 16MiB --multipart-part-size 5MiB --concurrency 4
    stop_gateway
    if grep -qiE 'error|panic' "$out/gateway-ozone.log"; then
      echo "our gateway on Ozone logged errors: see $out/gateway-ozone.log" >&2
    fi
  fi
fi
echo "results in $out"
if ((${#failed[@]})); then
  echo "runs with errors: ${failed[*]}" >&2
  exit 1
fi

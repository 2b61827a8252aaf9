#!/usr/bin/env bash
# CPU profile of the embedded default under a 1 KiB GET and a 1 KiB PUT
# load: `perf record` (Debian's linux-perf) on the release gateway while
# s3-bench runs, folded with inferno, written as flamegraphs to
# docs/profile/{get,put}-1kib.svg, and split into request stages by
# bench/stages.py (printed, and kept in OUT/stages-{get,put}.md).
#
# Usage: bench/profile.sh [--help]
# Environment: DURATION (15s, the sampled part of each run), CONC (32),
#   FREQ (sampling rate, 499 Hz), OUT (target/profile), PORT (39890),
#   BENCH_CACHE (where inferno is installed, ~/.cache/s3gw-bench).
set -euo pipefail

if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
cd "$(dirname "$0")/.."
duration=${DURATION:-15s}
seconds=${duration%s}
conc=${CONC:-32}
freq=${FREQ:-499}
out=${OUT:-target/profile}
port=${PORT:-39890}
cache=${BENCH_CACHE:-$HOME/.cache/s3gw-bench}
mkdir -p "$out" docs/profile

command -v perf >/dev/null ||
  DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends linux-perf
if [[ ! -x $cache/bin/inferno-flamegraph ]]; then
  (unset CARGO_TARGET_DIR; cargo install --locked --root "$cache" inferno@0.12.8)
fi
cargo build --release --locked -p s3-gateway -p s3-bench
target=${CARGO_TARGET_DIR:-target}
bench=$target/release/s3-bench

data=$(mktemp -d)
export AWS_ACCESS_KEY_ID=PROFILEKEY0123456789 AWS_SECRET_ACCESS_KEY=profilesecret0123456789abcdef0123456789
S3GW_ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID S3GW_ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY S3GW_LOG_LEVEL=warn \
  "$target/release/s3-gateway" --listen "127.0.0.1:$port" --data-dir "$data" >"$out/gateway.log" 2>&1 &
gateway=$!
trap 'kill $gateway 2>/dev/null; wait $gateway 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 100); do curl -fs "http://127.0.0.1:$port/health" >/dev/null && break; sleep 0.1; done
endpoint=http://127.0.0.1:$port
"$bench" fill --endpoint "$endpoint" --bucket profile --prefix small/ --objects 10000 \
  --obj-size 1KiB --concurrency 32 >/dev/null

cpu_ticks() { awk '{print $14 + $15}' "/proc/$gateway/stat"; }
for mode in get put; do
  args=(--bucket profile --obj-size 1KiB --concurrency "$conc" --duration $((seconds + 4))s --json)
  [[ $mode == get ]] && args+=(--existing --prefix small/ --objects 10000)
  "$bench" "$mode" --endpoint "$endpoint" "${args[@]}" >"$out/$mode.json" &
  load=$!
  sleep 2 # past connection set-up
  before=$(cpu_ticks)
  perf record -F "$freq" --call-graph dwarf,16384 -p "$gateway" -o "$out/$mode.perf.data" \
    -- sleep "$seconds" 2>"$out/$mode.perf.log"
  after=$(cpu_ticks)
  wait "$load"
  ops=$(jq '.results[0].ops_per_sec * '"$seconds" "$out/$mode.json")
  us=$(awk -v t=$((after - before)) -v hz="$(getconf CLK_TCK)" -v n="$ops" 'BEGIN {printf "%.1f", t / hz / n * 1e6}')
  perf script -i "$out/$mode.perf.data" 2>/dev/null | "$cache/bin/inferno-collapse-perf" --all >"$out/$mode.folded"
  "$cache/bin/inferno-flamegraph" --title "s3-gateway, 1 KiB ${mode^^}, concurrency $conc (perf, $freq Hz)" \
    --width 1600 <"$out/$mode.folded" >"docs/profile/$mode-1kib.svg"
  {
    echo "1 KiB ${mode^^} at concurrency $conc: $(jq '.results[0].ops_per_sec | floor' "$out/$mode.json") ops/s," \
      "gateway CPU $us µs per request, load $(cut -d' ' -f1-3 /proc/loadavg)"
    python3 bench/stages.py "$out/$mode.folded" --us-per-request "$us"
  } | tee "$out/stages-$mode.md"
done
echo "flamegraphs: docs/profile/get-1kib.svg docs/profile/put-1kib.svg; stages: $out/stages-*.md"

#!/usr/bin/env bash
# The side-by-side benchmark: s3-gateway (embedded default), its peers and
# the HTTP ceiling, same workloads, one invocation, on this machine.
#
# Servers (each started and stopped here, on loopback ports from BASE_PORT):
#   nginx         static files (Debian's package): the HTTP ceiling, GET/HEAD only
#   http-floor    the gateway's HTTP stack (tokio, hyper, axum) answering every
#                 GET/HEAD with a fixed 1 KiB and no S3 work: the floor under
#                 any handler; 1 KiB GET/HEAD only
#   s3gw          target/release/s3-gateway, embedded store, all defaults
#   garage        Garage, single node, replication 1, default configuration
#   garage-fsync  the same with metadata_fsync and data_fsync
#   minio         MinIO, one drive
#   seaweedfs     `weed server -s3`
#   s3s-fs        s3s-fs from crates.io
#   s3gw-before   with BASELINE_BIN: that s3-gateway binary (say, built from the
#                 commit before a change), embedded defaults, for before/after
#                 ratios measured in the same run
#   with --with-ozone also, on the dev cluster of conformance-tests/ozone:
#   ozone-s3g     Ozone's own S3 gateway
#   s3gw-ozone    s3-gateway --backend ozone
# Peers are installed through the package registries into BENCH_CACHE (not
# the repository); Garage and MinIO are AGPL benchmark peers only.
#
# Workloads: 1 KiB GET / PUT / HEAD / mixed at each concurrency in CONCS;
# 1 MiB GET and PUT; 256 MiB GET and PUT (MiB/s and peak RSS); 1 KiB GET
# and PUT with oha on presigned URLs (and a 16 MiB PUT on the Ozone pair);
# a durability probe (sync calls per PUT, strace); then for SCALE_SERVERS a bucket grown from 10k to
# SCALE_OBJECTS objects: 1 KiB GET latency before and after, ListObjectsV2
# pages of 1000 over all of them, and the server's RSS.
#
# Results: OUT/results.jsonl, OUT/report.md, docs/bench/ops-vs-concurrency.svg
# and the generated section of BENCHMARKS.md (unless --no-write).
#
# Usage: bench/run.sh [--quick] [--with-ozone] [--servers a,b,...]
#                     [--install-only] [--no-write] [--help]
# Environment: BENCH_CACHE (~/.cache/s3gw-bench), OUT (target/bench-results/
#   <time>), DURATION (10s; quick 3s), ROUNDS (2; quick 1), CONCS ("1 8 32
#   64"; quick "1 32"), SCALE_OBJECTS (1000000; quick 30000), SCALE_SERVERS
#   ("s3gw garage"), BASE_PORT (39800), WARMUP (Ozone JVM warm-up, 20s),
#   BASELINE_BIN (unset).
set -euo pipefail

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

original_args=("$@")
quick=0 with_ozone=0 install_only=0 write=1 only=""
while (($#)); do
  case $1 in
    --quick) quick=1 ;;
    --with-ozone) with_ozone=1 ;;
    --install-only) install_only=1 ;;
    --no-write) write=0 ;;
    --servers) only=${2:?--servers needs a list}; shift ;;
    --servers=*) only=${1#*=} ;;
    -h | --help) usage; exit 0 ;;
    *) usage >&2; exit 2 ;;
  esac
  shift
done
command_line="bench/run.sh${original_args[*]:+ ${original_args[*]}}"

cd "$(dirname "$0")/.."
repo=$PWD
cache=${BENCH_CACHE:-$HOME/.cache/s3gw-bench}
bin=$cache/bin
if ((quick)); then
  duration=${DURATION:-3s} rounds=${ROUNDS:-1} concs=${CONCS:-"1 32"}
  scale_objects=${SCALE_OBJECTS:-30000} large_ops=2 large_conc=1
else
  duration=${DURATION:-10s} rounds=${ROUNDS:-2} concs=${CONCS:-"1 8 32 64"}
  # c4: issue 20's 256 MiB GET target is stated at four in flight.
  scale_objects=${SCALE_OBJECTS:-1000000} large_ops=8 large_conc=4
fi
scale_servers=${SCALE_SERVERS:-"s3gw garage"}
base_port=${BASE_PORT:-39800}
warmup=${WARMUP:-20s}
small_objects=10000 # the bucket every 1 KiB GET/HEAD reads: the "10k" of the scale runs
probe_puts=200

# ---------------------------------------------------------------- install
# Versions: the newest that builds on this toolchain (Rust 1.95, Go 1.26).
garage_version=2.5.0
s3s_fs_version=0.14.1 # 0.15 and later need Rust 1.96
oha_version=1.16.0
minio_version=v0.0.0-20260212201848-7aac2a2c5b7c # what the Go proxy serves as latest
mkdir -p "$bin" "$cache/logs"
wanted() { [[ -z $only || ,$only, == *,$1,* ]]; }

timed_install() { # name command...: runs the install once, records its build time
  local name=$1 start rc=0
  shift
  echo "installing $name (log: $cache/logs/install-$name.log) ..."
  start=$(date +%s)
  nice -n 10 "$@" >"$cache/logs/install-$name.log" 2>&1 || rc=$?
  echo "$name $(($(date +%s) - start)) s rc=$rc $(date -u +%FT%TZ)" >>"$cache/build-times.txt"
  if ((rc)); then
    echo "installing $name failed; see $cache/logs/install-$name.log" >&2
    return 1
  fi
}

cargo_peer() { # crate version binary [cargo flags]
  local crate=$1 version=$2 binary=$3 stamp
  shift 3
  stamp="$cache/.$crate-$version"
  [[ -x $bin/$binary && -e $stamp ]] && return 0
  (unset CARGO_TARGET_DIR
    timed_install "$crate" cargo install --locked --root "$cache" "$crate@$version" "$@") && touch "$stamp"
}

install_peers() { # the peers --servers selects, and oha
  if wanted nginx && ! command -v nginx >/dev/null; then
    timed_install nginx env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends nginx
  fi
  if ! command -v strace >/dev/null; then
    timed_install strace env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends strace
  fi
  cargo_peer oha "$oha_version" oha
  if wanted s3s-fs; then cargo_peer s3s-fs "$s3s_fs_version" s3s-fs --features binary; fi
  if wanted garage || wanted garage-fsync; then cargo_peer garage "$garage_version" garage; fi
  if wanted minio && [[ ! -x $bin/minio || ! -e $cache/.minio-$minio_version ]]; then
    GOBIN=$bin timed_install minio go install "github.com/minio/minio@$minio_version" &&
      touch "$cache/.minio-$minio_version"
  fi
  # SeaweedFS's go.mod has a replace directive, which `go install pkg@v`
  # refuses: bench/peers/seaweedfs is a tools module that repeats it.
  local weed_stamp
  weed_stamp="$cache/.weed-$(sha256sum bench/peers/seaweedfs/go.sum | cut -c1-16)"
  if wanted seaweedfs && [[ ! -x $bin/weed || ! -e $weed_stamp ]]; then
    (cd bench/peers/seaweedfs && GOBIN=$bin timed_install weed go install tool) && touch "$weed_stamp"
  fi
}

install_peers
if ((install_only)); then
  echo "peers installed in $bin"
  exit 0
fi

cargo build --release --locked -p s3-gateway -p s3-bench
bench=$repo/target/release/s3-bench
[[ -n ${CARGO_TARGET_DIR:-} ]] && bench=$CARGO_TARGET_DIR/release/s3-bench
gateway_bin=${bench%/s3-bench}/s3-gateway

# ---------------------------------------------------------------- servers
started=$(date -u +%Y%m%dT%H%M%SZ)
out=${OUT:-$repo/target/bench-results/$started}
mkdir -p "$out/raw"
results=$out/results.jsonl
: >"$results"
: >"$out/raw/stderr.log"
work=$(mktemp -d "${TMPDIR:-/tmp}/s3gw-bench.XXXXXX")
# Garage's key format (GK + 24 hex digits, read in either case), upper-case
# so it is also the 16-128 of A-Z0-9 our gateway requires; every server takes it.
access_key="GK$(openssl rand -hex 12 | tr a-f A-F)"
secret_key=$(openssl rand -hex 32)
export AWS_ACCESS_KEY_ID=$access_key AWS_SECRET_ACCESS_KEY=$secret_key
bucket=bench

declare -A pid pids_of endpoint label durability version
servers=()
ozone_started=none
stop_all() {
  local name
  for name in "${servers[@]}"; do
    [[ -n ${pid[$name]:-} ]] || continue
    kill "${pid[$name]}" 2>/dev/null || true
  done
  for name in "${servers[@]}"; do
    [[ -n ${pid[$name]:-} ]] && wait "${pid[$name]}" 2>/dev/null || true
  done
  case $ozone_started in
    cluster) conformance-tests/ozone/ozone-dev stop || true ;;
    s3g) conformance-tests/ozone/ozone-dev kill s3g || true ;;
  esac
  rm -rf "$work"
}
trap stop_all EXIT

port() { echo $((base_port + $1)); }

wait_http() { # name url: until the server answers HTTP at all
  for _ in $(seq 600); do
    curl -s -o /dev/null "$2" && return 0
    kill -0 "${pid[$1]}" 2>/dev/null || break
    sleep 0.2
  done
  echo "$1 did not start; see $out/$1.log" >&2
  tail -n 20 "$out/$1.log" >&2
  return 1
}

start() { # name label version durability port command...: starts one server in the background
  local name=$1
  label[$name]=$2 version[$name]=$3 durability[$name]=$4 endpoint[$name]="http://127.0.0.1:$5"
  shift 5
  "$@" >"$out/$name.log" 2>&1 &
  pid[$name]=$!
  servers+=("$name")
}

start_nginx() {
  local dir=$work/nginx p
  p=$(port 0)
  mkdir -p "$dir/tmp" "$dir/www/$bucket"
  cat >"$dir/nginx.conf" <<EOF
worker_processes auto;
daemon off;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  keepalive_requests 10000000;
  client_body_temp_path $dir/tmp; proxy_temp_path $dir/tmp; fastcgi_temp_path $dir/tmp;
  uwsgi_temp_path $dir/tmp; scgi_temp_path $dir/tmp;
  server { listen 127.0.0.1:$p; root $dir/www; }
}
EOF
  # The files s3-bench --existing reads: the same paths as the S3 objects.
  python3 - "$dir/www/$bucket" "$small_objects" <<'EOF'
import os, sys
root, count = sys.argv[1], int(sys.argv[2])
for prefix, size, n in (("small", 1024, count), ("m1", 1 << 20, 16), ("m256", 256 << 20, 2)):
    os.makedirs(f"{root}/{prefix}", exist_ok=True)
    first = f"{root}/{prefix}/obj-0"
    with open(first, "wb") as f:
        for _ in range(max(1, size >> 20)):
            f.write(os.urandom(min(size, 1 << 20)))
    for i in range(1, n):
        os.link(first, f"{root}/{prefix}/obj-{i}")
EOF
  # nginx's workers run as another user; mktemp made the tree private.
  chmod a+rx "$work"
  chmod -R a+rX "$dir/www"
  start nginx "nginx (ceiling)" "$(nginx -v 2>&1 | sed 's/.*nginx\///')" "–" "$p" \
    nginx -c "$dir/nginx.conf" -p "$dir" -e "$dir/error.log"
}

start_http_floor() {
  local p
  p=$(port 9)
  start http-floor "HTTP floor (tokio + hyper + axum, no S3 work)" "$(git rev-parse --short HEAD)" "–" "$p" \
    "${bench%/s3-bench}/http-floor" --listen "127.0.0.1:$p" --size 1024
}

start_s3gw() {
  local p
  p=$(port 1)
  start s3gw "s3-gateway" "$(git rev-parse --short HEAD)" \
    "fsync of data and metadata before the 200 (group commit)" "$p" \
    env S3GW_ROOT_ACCESS_KEY="$access_key" S3GW_ROOT_SECRET_KEY="$secret_key" S3GW_LOG_LEVEL=warn \
    "$gateway_bin" --listen "127.0.0.1:$p" --data-dir "$work/s3gw"
}

start_s3gw_before() {
  local p
  p=$(port 8)
  start s3gw-before "s3-gateway (baseline)" "$BASELINE_BIN" \
    "fsync of data and metadata before the 200 (group commit)" "$p" \
    env S3GW_ROOT_ACCESS_KEY="$access_key" S3GW_ROOT_SECRET_KEY="$secret_key" S3GW_LOG_LEVEL=warn \
    "$BASELINE_BIN" --listen "127.0.0.1:$p" --data-dir "$work/s3gw-before"
}

start_garage() { # name label offset fsync(true|false)
  local name=$1 title=$2 p rpc dir=$work/$1 conf
  shift
  p=$(port "$2") rpc=$(port $(($2 + 10)))
  conf=$dir/garage.toml
  mkdir -p "$dir"
  cat >"$conf" <<EOF
metadata_dir = "$dir/meta"
data_dir = "$dir/data"
replication_factor = 1
metadata_fsync = $3
data_fsync = $3
rpc_bind_addr = "127.0.0.1:$rpc"
rpc_public_addr = "127.0.0.1:$rpc"
rpc_secret = "$(openssl rand -hex 32)"
[s3_api]
s3_region = "us-east-1"
api_bind_addr = "127.0.0.1:$p"
EOF
  local setting="default: metadata_fsync and data_fsync off"
  [[ $3 == true ]] && setting="metadata_fsync = data_fsync = true"
  start "$name" "$title" "$("$bin/garage" --version 2>/dev/null | awk '{print $2}')" \
    "$setting" "$p" "$bin/garage" -c "$conf" server
  sleep 1
  local node
  for _ in $(seq 100); do
    node=$("$bin/garage" -c "$conf" node id -q 2>/dev/null) && break
    sleep 0.2
  done
  node=${node%%@*}
  {
    "$bin/garage" -c "$conf" layout assign -z dc1 -c 10G "$node"
    "$bin/garage" -c "$conf" layout apply --version 1
    "$bin/garage" -c "$conf" key import --yes -n bench "$access_key" "$secret_key"
    "$bin/garage" -c "$conf" key allow --create-bucket bench
  } >>"$out/$name.setup.log" 2>&1
}

start_minio() {
  local p
  p=$(port 4)
  start minio "MinIO" "${minio_version}" "default configuration" "$p" \
    env MINIO_ROOT_USER="$access_key" MINIO_ROOT_PASSWORD="$secret_key" MINIO_BROWSER=off \
    MINIO_UPDATE=off "$bin/minio" server --quiet --address "127.0.0.1:$p" \
    --console-address "127.0.0.1:$(port 14)" "$work/minio"
}

start_seaweedfs() {
  local p dir=$work/seaweedfs
  p=$(port 5)
  mkdir -p "$dir"
  cat >"$dir/s3.json" <<EOF
{"identities": [{"name": "bench", "credentials": [{"accessKey": "$access_key", "secretKey": "$secret_key"}],
  "actions": ["Admin", "Read", "List", "Tagging", "Write"]}]}
EOF
  start seaweedfs "SeaweedFS" "$("$bin/weed" version 2>/dev/null | awk '/version/ {print $3; exit}')" \
    "default configuration" "$p" \
    "$bin/weed" server -dir="$dir" -ip=127.0.0.1 -ip.bind=127.0.0.1 \
    -master.port="$(port 15)" -volume.port="$(port 25)" -filer.port="$(port 35)" \
    -s3 -s3.port="$p" -s3.config="$dir/s3.json"
}

start_s3s_fs() {
  local p
  p=$(port 6)
  mkdir -p "$work/s3s-fs"
  start s3s-fs "s3s-fs" "$s3s_fs_version" "default configuration" "$p" \
    "$bin/s3s-fs" --host 127.0.0.1 --port "$p" --access-key "$access_key" \
    --secret-key "$secret_key" "$work/s3s-fs"
}

start_ozone() {
  local dev=conformance-tests/ozone/ozone-dev
  if $dev status | grep -q '^s3g  running'; then
    echo "Ozone S3G already running; using it and leaving it up"
  elif $dev status | grep -q running; then
    ozone_started=s3g
  else
    ozone_started=cluster
  fi
  $dev start --with-s3g >"$out/ozone-start.log" 2>&1
  label[ozone-s3g]="Ozone S3G" version[ozone-s3g]="2.2.0"
  durability[ozone-s3g]="Ratis: datanode commit before the 200"
  endpoint[ozone-s3g]="http://127.0.0.1:${OZONE_DEV_S3G_PORT:-29878}"
  pid[ozone-s3g]="" # the cluster's own launcher stops it
  pids_of[ozone-s3g]=$($dev status | awk '$1 == "s3g" {print $4}')
  servers+=(ozone-s3g)
  local p
  p=$(port 7)
  start s3gw-ozone "s3-gateway on Ozone" "$(git rev-parse --short HEAD)" \
    "Ratis: datanode commit before the 200" "$p" \
    env S3GW_ROOT_ACCESS_KEY="$access_key" S3GW_ROOT_SECRET_KEY="$secret_key" S3GW_LOG_LEVEL=warn \
    S3GW_OZONE_RECORDS_KEY_FILE="$($dev env | sed -n 's/^S3GW_OZONE_RECORDS_KEY_FILE=//p')" \
    "$gateway_bin" --listen "127.0.0.1:$p" --backend ozone --om "${OZONE_OM:-127.0.0.1:8981}" \
    --data-dir "$work/s3gw-ozone"
}

echo "machine: $(nproc) cores; load before the runs: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/machine.txt"
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
wanted nginx && start_nginx
wanted http-floor && start_http_floor
wanted s3gw && start_s3gw
[[ -n ${BASELINE_BIN:-} ]] && wanted s3gw-before && start_s3gw_before
wanted garage && start_garage garage "Garage" 2 false
wanted garage-fsync && start_garage garage-fsync "Garage (fsync)" 3 true
wanted minio && start_minio
wanted seaweedfs && start_seaweedfs
wanted s3s-fs && start_s3s_fs
((with_ozone)) && start_ozone
for name in "${servers[@]}"; do
  wait_http "$name" "${endpoint[$name]}/"
done
# SeaweedFS answers before its filer and volume server are ready.
for _ in $(seq 100); do
  wanted seaweedfs || break
  "$bench" put --endpoint "${endpoint[seaweedfs]}" --ops 1 --concurrency 1 >/dev/null 2>&1 && break
  sleep 0.5
done

# All processes of a server: its own and its children's.
for name in "${servers[@]}"; do
  if [[ -n ${pid[$name]} ]]; then
    pids_of[$name]="${pid[$name]} $(pgrep -P "${pid[$name]}" | tr "\n" " " || true)"
  fi
done

rss_kib() { # pids...: summed VmRSS, without forking per sample
  local total=0 key value _ p
  for p in "$@"; do
    [[ -r /proc/$p/status ]] || continue
    while read -r key value _; do
      [[ $key == VmRSS: ]] && total=$((total + value))
    done <"/proc/$p/status"
  done
  echo "$total"
}
cpu_ticks() { # pids...: summed user + system ticks
  local total=0 p stat
  for p in "$@"; do
    [[ -r /proc/$p/stat ]] || continue
    read -r stat <"/proc/$p/stat"
    stat=${stat##*) } # fields after the command name
    read -r -a fields <<<"$stat"
    total=$((total + fields[11] + fields[12]))
  done
  echo "$total"
}
hz=$(getconf CLK_TCK)
progress=()
[[ -t 2 ]] && progress=(--progress)
failed=()

# measure NAME WORKLOAD MODE SIZE CONC ROUND TOOL CMD...: one run, recorded
# with the server's peak RSS and CPU time over it.
measure() {
  local name=$1 workload=$2 mode=$3 size=$4 conc=$5 round=$6 tool=$7
  shift 7
  local raw="$out/raw/${name}_${workload// /_}_r$round.json" peak=0 now before after rc=0
  # shellcheck disable=SC2086 # a list of pids
  before=$(cpu_ticks ${pids_of[$name]})
  "$@" >"$raw" 2>>"$out/raw/stderr.log" &
  local runner=$!
  while kill -0 "$runner" 2>/dev/null; do
    # shellcheck disable=SC2086
    now=$(rss_kib ${pids_of[$name]})
    ((now > peak)) && peak=$now
    sleep 0.2
  done
  wait "$runner" || rc=$?
  # shellcheck disable=SC2086
  after=$(cpu_ticks ${pids_of[$name]})
  if ((rc)) || [[ ! -s $raw ]]; then
    echo "  $name $workload: FAILED (rc $rc; see $out/raw/stderr.log)" >&2
    failed+=("$name $workload")
    [[ -s $raw ]] || return 0
  fi
  local size_bytes
  size_bytes=$(case $size in 1KiB) echo 1024 ;; 1MiB) echo 1048576 ;; 16MiB) echo 16777216 ;; 256MiB) echo 268435456 ;; esac)
  python3 bench/report.py record "$results" --file "$raw" --tool "$tool" --server "$name" \
    --workload "$workload" --mode "$mode" --size "$size" --size-bytes "$size_bytes" \
    --concurrency "$conc" --round "$round" --rss-kib "$peak" \
    --cpu-s "$(awk -v t=$((after - before)) -v hz="$hz" 'BEGIN {print t / hz}')" \
    --load "$(cut -d' ' -f1 /proc/loadavg)"
  jq -r '"  \(.server) \(.workload): \(.ops_per_sec | floor) ops/s, \(.mib_per_sec * 10 | floor / 10) MiB/s, p50 \(.p50_ms) ms, errors \(.errors)"' \
    <(tail -n 1 "$results")
}

s3bench() { # name mode args...: s3-bench against a server, JSON out
  local name=$1 mode=$2
  shift 2
  nice -n 5 "$bench" "$mode" --endpoint "${endpoint[$name]}" --bucket "$bucket" --json "${progress[@]}" "$@"
}

is_s3() { [[ $1 != nginx && $1 != http-floor ]]; }

# ---------------------------------------------------------------- fill
# Each S3 server gets one bucket with the objects every GET/HEAD run reads
# (10k of 1 KiB: the "10k" of the scale runs), 16 of 1 MiB and 2 of 256 MiB.
for name in "${servers[@]}"; do
  is_s3 "$name" || continue
  echo "filling $name ..."
  for spec in "small 1KiB $small_objects 32" "m1 1MiB 16 8" "m256 256MiB 2 2"; do
    read -r prefix size count conc <<<"$spec"
    if ! s3bench "$name" fill --prefix "$prefix/" --obj-size "$size" --objects "$count" \
      --concurrency "$conc" >"$out/raw/${name}_fill_$prefix.json" 2>>"$out/raw/stderr.log"; then
      echo "  filling $name failed; see $out/raw/stderr.log" >&2
      failed+=("$name fill $prefix")
    fi
  done
done

# ---------------------------------------------------------------- durability probe
declare -A probe
for name in "${servers[@]}"; do
  is_s3 "$name" || continue
  [[ -n ${pids_of[$name]} ]] || continue
  trace=$out/raw/${name}_strace.txt
  main_pid=${pid[$name]:-${pids_of[$name]%% *}}
  strace -f -qq -o "$trace" -e trace=fsync,fdatasync,sync_file_range,syncfs,openat,open \
    -p "$main_pid" 2>/dev/null &
  tracer=$!
  sleep 1
  s3bench "$name" put --obj-size 1KiB --concurrency 1 --ops "$probe_puts" \
    >"$out/raw/${name}_probe.json" 2>>"$out/raw/stderr.log" || true
  kill "$tracer" 2>/dev/null || true
  wait "$tracer" 2>/dev/null || true
  syncs=$(grep -cE '(fsync|fdatasync|sync_file_range|syncfs)\(' "$trace" || true)
  sync_opens=$(grep -E 'open(at)?\(' "$trace" | grep -cE 'O_D?SYNC' || true)
  probe[$name]=$(awk -v s="$syncs" -v o="$sync_opens" -v n="$probe_puts" \
    'BEGIN {printf "%.1f sync calls, %.1f O_(D)SYNC opens", s / n, o / n}')
  echo "  $name: ${probe[$name]} per PUT"
done

# A fresh JVM runs interpreted until the JIT has compiled its hot paths
# (HEAD was 7x slower on a just-started S3G): warm both Ozone gateways
# alike before measuring either.
is_ozone() { [[ $1 == ozone-s3g || $1 == s3gw-ozone ]]; }
for name in "${servers[@]}"; do
  is_ozone "$name" || continue
  echo "warming up $name for $warmup per mode ..."
  for spec in "put 1KiB 32" "get 1KiB 32" "stat 1KiB 32" "put 16MiB 4"; do
    read -r mode size conc <<<"$spec"
    args=()
    [[ $mode != put ]] && args=(--existing --prefix small/ --objects "$small_objects")
    s3bench "$name" "$mode" --obj-size "$size" --concurrency "$conc" --duration "$warmup" "${args[@]}" \
      >/dev/null 2>>"$out/raw/stderr.log" || echo "  warm-up $spec of $name had errors" >&2
  done
done

# ---------------------------------------------------------------- rounds
s3_servers=()
for name in "${servers[@]}"; do is_s3 "$name" && s3_servers+=("$name"); done
for ((round = 1; round <= rounds; round++)); do
  # Rotate the order each round so no server always runs right after the
  # same neighbour or at the same point of the machine's noise.
  n=${#servers[@]}
  order=()
  for ((i = 0; i < n; i++)); do order+=("${servers[$(((i + round - 1) % n))]}"); done
  echo "== round $round of $rounds: ${order[*]} (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for conc in $concs; do
    for mode in get put stat mixed; do
      for name in "${order[@]}"; do
        case $mode in
          get | stat) ;;
          *) is_s3 "$name" || continue ;;
        esac
        upper=${mode^^}
        [[ $mode == stat ]] && upper=HEAD
        if [[ $mode == get || $mode == stat ]]; then
          args=(--existing --prefix small/ --objects "$small_objects")
        elif [[ $mode == mixed ]]; then
          args=(--objects 1000)
        else
          args=()
        fi
        measure "$name" "$upper 1KiB c$conc" "$upper" 1KiB "$conc" "$round" s3-bench \
          s3bench "$name" "$mode" --obj-size 1KiB --concurrency "$conc" --duration "$duration" "${args[@]}"
      done
    done
  done
  for name in "${order[@]}"; do
    [[ $name == http-floor ]] && continue # its body is 1 KiB whatever the key
    measure "$name" "GET 1MiB c8" GET 1MiB 8 "$round" s3-bench \
      s3bench "$name" get --existing --prefix m1/ --objects 16 --obj-size 1MiB --concurrency 8 --duration "$duration"
    is_s3 "$name" && measure "$name" "PUT 1MiB c8" PUT 1MiB 8 "$round" s3-bench \
      s3bench "$name" put --obj-size 1MiB --concurrency 8 --duration "$duration"
    measure "$name" "GET 256MiB c$large_conc" GET 256MiB "$large_conc" "$round" s3-bench \
      s3bench "$name" get --existing --prefix m256/ --objects 2 --obj-size 256MiB \
      --concurrency "$large_conc" --ops $((large_ops * 2))
    is_s3 "$name" && measure "$name" "PUT 256MiB c$large_conc" PUT 256MiB "$large_conc" "$round" s3-bench \
      s3bench "$name" put --obj-size 256MiB --concurrency "$large_conc" --ops "$large_ops"
  done
  # The Ozone target: 16 MiB PUT, ours on Ozone against Ozone's S3G.
  for name in "${order[@]}"; do
    is_ozone "$name" || continue
    measure "$name" "PUT 16MiB c4" PUT 16MiB 4 "$round" s3-bench \
      s3bench "$name" put --obj-size 16MiB --concurrency 4 --duration "$duration"
  done
  # oha, an independent load generator, on presigned URLs: GETs of the
  # 10k objects, PUTs of 10k other keys, picked at random per request.
  head -c 1024 /dev/urandom >"$work/body-1KiB"
  for name in "${order[@]}"; do
    urls=$work/urls-$name
    if is_s3 "$name"; then
      s3bench "$name" presign --existing --prefix small/ --objects "$small_objects" \
        >"$urls" 2>>"$out/raw/stderr.log" || continue
    else
      seq 0 $((small_objects - 1)) | sed "s|^|GET ${endpoint[$name]}/$bucket/small/obj-|" >"$urls"
    fi
    awk '$1 == "GET" {print $2}' "$urls" >"$urls.get"
    awk '$1 == "PUT" {print $2}' "$urls" >"$urls.put"
    # -w: requests in flight at the deadline finish, rather than count as errors.
    measure "$name" "oha GET 1KiB c32" GET 1KiB 32 "$round" oha \
      nice -n 5 "$bin/oha" --no-tui --output-format json -w -z "$duration" -c 32 \
      --urls-from-file "$urls.get"
    if [[ -s $urls.put ]]; then
      measure "$name" "oha PUT 1KiB c32" PUT 1KiB 32 "$round" oha \
        nice -n 5 "$bin/oha" --no-tui --output-format json -w -z "$duration" -c 32 -m PUT \
        -T application/octet-stream -D "$work/body-1KiB" --urls-from-file "$urls.put"
    fi
    # Ozone's 16 MiB target both ways: here unsigned, presigned PUTs.
    if is_ozone "$name" && [[ -s $urls.put ]]; then
      [[ -e $work/body-16MiB ]] || head -c $((16 << 20)) /dev/urandom >"$work/body-16MiB"
      measure "$name" "oha PUT 16MiB c4" PUT 16MiB 4 "$round" oha \
        nice -n 5 "$bin/oha" --no-tui --output-format json -w -z "$duration" -c 4 -m PUT \
        -T application/octet-stream -D "$work/body-16MiB" --urls-from-file "$urls.put"
    fi
  done
done

# ---------------------------------------------------------------- scale
for name in $scale_servers; do
  [[ -n ${endpoint[$name]:-} ]] || continue
  echo "== scale: $name, $small_objects -> $scale_objects objects"
  count_label=$(awk -v n="$scale_objects" 'BEGIN {if (n >= 1e6) printf "%gM", n / 1e6; else printf "%gk", n / 1e3}')
  measure "$name" "GET 1KiB c32, 10k in bucket" GET 1KiB 32 1 s3-bench \
    s3bench "$name" get --existing --prefix small/ --objects "$small_objects" --obj-size 1KiB \
    --concurrency 32 --duration "$duration"
  fill_start=$(date +%s)
  measure "$name" "PUT 1KiB c64, filling the bucket to $count_label" PUT 1KiB 64 1 s3-bench \
    s3bench "$name" fill --prefix small/ --obj-size 1KiB --first "$small_objects" \
    --objects "$scale_objects" --concurrency 64
  echo "  filled in $(($(date +%s) - fill_start)) s"
  measure "$name" "GET 1KiB c32, $count_label in bucket (same 10k keys)" GET 1KiB 32 1 s3-bench \
    s3bench "$name" get --existing --prefix small/ --objects "$small_objects" --obj-size 1KiB \
    --concurrency 32 --duration "$duration"
  measure "$name" "GET 1KiB c32, $count_label in bucket (any key)" GET 1KiB 32 1 s3-bench \
    s3bench "$name" get --existing --prefix small/ --objects "$scale_objects" --obj-size 1KiB \
    --concurrency 32 --duration "$duration"
  measure "$name" "LIST 1000 keys c1, $count_label in bucket" LIST 1KiB 1 1 s3-bench \
    s3bench "$name" list --existing --prefix small/ --objects "$scale_objects" --obj-size 1KiB \
    --concurrency 1 --duration "$duration"
done

# ---------------------------------------------------------------- report
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
echo "load after the runs: $load_after" | tee -a "$out/machine.txt"
svg=docs/bench/ops-vs-concurrency.svg
((write)) || svg=$out/ops-vs-concurrency.svg
mkdir -p "$(dirname "$svg")"
{
  echo "{"
  echo "\"quick\": $([[ $quick == 1 ]] && echo true || echo false),"
  echo "\"command\": $(jq -Rn --arg v "$command_line" '$v'),"
  echo "\"commit\": \"$(git rev-parse --short HEAD)\","
  echo "\"finished\": \"$(date -u +'%Y-%m-%d %H:%M UTC')\","
  echo "\"rounds\": $rounds, \"duration\": \"$duration\", \"cores\": $(nproc),"
  echo "\"load_before\": \"$load_before\", \"load_after\": \"$load_after\","
  echo "\"probe_puts\": $probe_puts, \"out\": $(jq -Rn --arg v "${out#"$repo"/}" '$v'),"
  echo "\"svg_link\": $(jq -Rn --arg v "$svg" '$v'),"
  echo "\"servers\": ["
  sep=""
  for name in "${servers[@]}"; do
    jq -cn --arg name "$name" --arg title "${label[$name]}" --arg version "${version[$name]}" \
      --arg durability "${durability[$name]}" --arg probe "${probe[$name]:-–}" \
      '{name: $name, label: $title, version: $version, durability: $durability, probe: $probe}' |
      sed "s/^/$sep/"
    sep=","
  done
  echo "]}"
} >"$out/meta.json"
render=(python3 bench/report.py render "$results" --meta "$out/meta.json" --markdown "$out/report.md" --svg "$svg")
((write)) && render+=(--benchmarks BENCHMARKS.md)
"${render[@]}"
echo "results in $out; report: $out/report.md; plot: $svg"
((write)) && echo "BENCHMARKS.md updated (the generated section)"
if ((${#failed[@]})); then
  printf 'runs with errors: %s\n' "${failed[@]}" >&2
  exit 1
fi

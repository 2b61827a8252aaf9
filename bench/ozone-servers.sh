# Sourced by bench/ozone-put.sh and bench/ozone-get.sh: the servers they
# compare on the running dev cluster of conformance-tests/ozone. Expects
# `old` and `new` (s3-gateway binaries) and the arguments after them
# ("$@": NAME=ENV, one more NEW_BIN server with that environment each).
# Sets `names` (s3g old new ...), `port` and `pid` by name, `work` (a
# scratch directory, removed on exit) and the functions below.
dev=conformance-tests/ozone/ozone-dev
eval "$($dev env | sed 's/^/export /')"
work=$(mktemp -d /tmp/ozone-bench.XXXX)
export AWS_ACCESS_KEY_ID=GK0123456789ABCDEF01234567
export AWS_SECRET_ACCESS_KEY=0123456789abcdef0123456789abcdef0123456789
names=(s3g old new)
declare -A bin=([old]=$old [new]=$new) extra=([old]= [new]=) port pid
port[s3g]=${OZONE_S3G_ADDRESS##*:}
pid[s3g]=$($dev status | awk '$1 == "s3g" {print $4}')
for spec in "$@"; do
  names+=("${spec%%=*}")
  bin[${spec%%=*}]=$new
  extra[${spec%%=*}]=${spec#*=}
done
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait; rm -rf "$work"' EXIT
next_port=39970
for name in "${names[@]}"; do
  [[ $name == s3g ]] && continue
  port[$name]=$((next_port++))
  # shellcheck disable=SC2086 # extra is NAME=VALUE words for env
  env S3GW_ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID S3GW_ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY \
    S3GW_LOG_LEVEL=warn S3GW_ACCESS_LOG=false ${extra[$name]} "${bin[$name]}" \
    --listen "127.0.0.1:${port[$name]}" --backend ozone --om "$OZONE_OM_ADDRESS" \
    --data-dir "$work/$name" >"$work/$name.log" 2>&1 &
  pid[$name]=$!
  pids+=($!)
done
sleep 3

endpoint() { echo "http://127.0.0.1:${port[$1]}"; }

ticks() { # user + system clock ticks of a process
  local stat
  read -r stat <"/proc/$1/stat"
  stat=${stat##*) }
  read -r -a f <<<"$stat"
  echo $((f[11] + f[12]))
}

rotated() { # round: the names, rotated by the round so none always runs first
  local n=${#names[@]} i
  for ((i = 0; i < n; i++)); do echo "${names[$(((i + $1 - 1) % n))]}"; done
}

report_servers() { # whether each gateway survived, and the warnings it logged
  local name
  for name in "${names[@]}"; do
    [[ $name == s3g ]] && continue
    kill -0 "${pid[$name]}" 2>/dev/null || echo "$name died: $(tail -3 "$work/$name.log")"
    # A failed backend call shows here first (the runs count only failed requests).
    echo "$name: $(grep -c WARN "$work/$name.log" || true) warnings in its log"
    grep WARN "$work/$name.log" | sed 's/^[^ ]* *//' | sort | uniq -c | sort -rn | head -3 || true
  done
}

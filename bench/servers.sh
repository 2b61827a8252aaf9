# Sourced by bench/ozone-servers.sh and bench/embedded-servers.sh: what a
# side-by-side benchmark does with the servers they start. Expects `port`
# and `pid` by name, `names`, `bin`, `extra`, `new` and `work`.

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

add_servers() { # NAME=ENV...: one more NEW_BIN server per argument, with
  # that environment; and the exit trap that stops them all
  local spec
  for spec in "$@"; do
    names+=("${spec%%=*}")
    bin[${spec%%=*}]=$new
    extra[${spec%%=*}]=${spec#*=}
  done
  pids=()
  trap 'kill "${pids[@]}" 2>/dev/null; wait; rm -rf "$work"' EXIT
}

start_gateway() { # name backend-args...: NEW_BIN or OLD_BIN as `name`, on the next port
  port[$1]=$((next_port++))
  # shellcheck disable=SC2086 # extra is NAME=VALUE words for env
  env S3GW_ROOT_ACCESS_KEY=$AWS_ACCESS_KEY_ID S3GW_ROOT_SECRET_KEY=$AWS_SECRET_ACCESS_KEY \
    S3GW_LOG_LEVEL=warn S3GW_ACCESS_LOG=false ${extra[$1]} "${bin[$1]}" \
    --listen "127.0.0.1:${port[$1]}" --data-dir "$work/$1" "${@:2}" >"$work/$1.log" 2>&1 &
  pid[$1]=$!
  pids+=($!)
}

report_servers() { # whether each gateway survived, and the warnings it logged
  local name
  for name in "${names[@]}"; do
    [[ -e $work/$name.log ]] || continue
    kill -0 "${pid[$name]}" 2>/dev/null || echo "$name died: $(tail -3 "$work/$name.log")"
    # A failed backend call shows here first (the runs count only failed requests).
    echo "$name: $(grep -c WARN "$work/$name.log" || true) warnings in its log"
    grep WARN "$work/$name.log" | sed 's/^[^ ]* *//' | sort | uniq -c | sort -rn | head -3 || true
  done
}

#!/usr/bin/env bash
# Whether a listing right after a DeleteObjects still shows its keys, on
# the running dev cluster of conformance-tests/ozone: Ozone's S3 gateway,
# OLD and NEW side by side, at the same time (bench/deleted-then-listed.py
# per server). See BENCHMARKS.md, "DeleteObjects in one storage call".
#
#   bench/deleted-then-listed.sh OLD_BIN NEW_BIN
#
# Variables: ROUNDS (100), KEYS (per DeleteObjects, 40), LOAD (1: two
# busy loops beside, as a loaded machine; 0: none), PYTHON (the venv's).
set -euo pipefail
old=$1 new=$2
shift 2
rounds=${ROUNDS:-100} keys=${KEYS:-40}
python=${PYTHON:-$HOME/.cache/s3-gateway-venv/bin/python}
# shellcheck source=bench/ozone-servers.sh
source "$(dirname "$0")/ozone-servers.sh"
if [[ ${LOAD:-1} == 1 ]]; then
  for _ in 1 2; do
    (while :; do :; done) &
    pids+=($!)
  done
fi
tag=$(date +%s)
runs=()
for name in "${names[@]}"; do
  "$python" "$(dirname "$0")/deleted-then-listed.py" "$(endpoint "$name")" "listed-$name-$tag" \
    "$rounds" "$keys" >"$work/$name.out" &
  runs+=($!)
done
wait "${runs[@]}"
for name in "${names[@]}"; do echo "$name: $(cat "$work/$name.out")"; done
report_servers

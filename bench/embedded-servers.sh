# Sourced by bench/small-put.sh and bench/delete-many.sh: gateways on the
# embedded back end, each on a fresh data dir. Expects `old` and `new`
# (s3-gateway binaries) and the arguments after them ("$@": NAME=ENV, one
# more NEW_BIN server with that environment each). Sets `names` (old new
# ...), `port` and `pid` by name, `work` (a scratch directory, removed on
# exit) and the functions of bench/servers.sh.
# shellcheck source=bench/servers.sh
source "$(dirname "${BASH_SOURCE[0]}")/servers.sh"
work=$(mktemp -d /tmp/embedded-bench.XXXX)
export AWS_ACCESS_KEY_ID=GK0123456789ABCDEF01234567
export AWS_SECRET_ACCESS_KEY=0123456789abcdef0123456789abcdef0123456789
names=(old new)
declare -A bin=([old]=$old [new]=$new) extra=([old]= [new]=) port pid
add_servers "$@"
next_port=39960
for name in "${names[@]}"; do start_gateway "$name"; done
sleep 3

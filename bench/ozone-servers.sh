# Sourced by bench/ozone-put.sh and bench/ozone-get.sh: the servers they
# compare on the running dev cluster of conformance-tests/ozone. Expects
# `old` and `new` (s3-gateway binaries) and the arguments after them
# ("$@": NAME=ENV, one more NEW_BIN server with that environment each).
# Sets `names` (s3g old new ...), `port` and `pid` by name, `work` (a
# scratch directory, removed on exit) and the functions of bench/servers.sh.
# shellcheck source=bench/servers.sh
source "$(dirname "${BASH_SOURCE[0]}")/servers.sh"
dev=conformance-tests/ozone/ozone-dev
eval "$($dev env | sed 's/^/export /')"
work=$(mktemp -d /tmp/ozone-bench.XXXX)
export AWS_ACCESS_KEY_ID=GK0123456789ABCDEF01234567
export AWS_SECRET_ACCESS_KEY=0123456789abcdef0123456789abcdef0123456789
names=(s3g old new)
declare -A bin=([old]=$old [new]=$new) extra=([old]= [new]=) port pid
port[s3g]=${OZONE_S3G_ADDRESS##*:}
pid[s3g]=$($dev status | awk '$1 == "s3g" {print $4}')
add_servers "$@"
next_port=39970
for name in "${names[@]}"; do
  [[ $name == s3g ]] && continue
  start_gateway "$name" --backend ozone --om "$OZONE_OM_ADDRESS"
done
sleep 3

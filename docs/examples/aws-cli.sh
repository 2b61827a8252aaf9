#!/usr/bin/env bash
# The AWS CLI against s3-gateway: upload, download, list, presign, multipart.
#   AWS_ENDPOINT_URL=http://127.0.0.1:9878 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... bash aws-cli.sh
set -euo pipefail
endpoint=${AWS_ENDPOINT_URL:-http://127.0.0.1:9878}
export AWS_DEFAULT_REGION=${AWS_REGION:-us-east-1}
s3() { aws --endpoint-url "$endpoint" "$@"; }
bucket=example-cli-$RANDOM$RANDOM
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

s3 s3 mb "s3://$bucket"
# Upload and download.
printf 'hello, s3-gateway' > "$work/hello.txt"
s3 s3 cp "$work/hello.txt" "s3://$bucket/hello.txt"
s3 s3 cp "s3://$bucket/hello.txt" "$work/back.txt"
cmp "$work/hello.txt" "$work/back.txt"
# List.
s3 s3 ls "s3://$bucket/" | grep -q hello.txt
# A presigned URL: anyone holding it may GET the object for an hour.
url=$(s3 s3 presign "s3://$bucket/hello.txt" --expires-in 3600)
[ "$(curl -sf "$url")" = "hello, s3-gateway" ]
# Multipart: `aws s3 cp` splits files over 8 MiB into parts by itself.
head -c $((9 * 1024 * 1024)) /dev/zero > "$work/big.bin"
s3 s3 cp "$work/big.bin" "s3://$bucket/big.bin"
[ "$(s3 s3api head-object --bucket "$bucket" --key big.bin --query ContentLength)" = $((9 * 1024 * 1024)) ]
# Clean up.
s3 s3 rb "s3://$bucket" --force
echo ok

#!/usr/bin/env bash
# Runs every test: the Rust unit and integration tests, then the black-box
# conformance suite (pytest + boto3 + AWS CLI + the SDK matrix) against the
# real binary on the embedded back end; then starts a real single-node Apache
# Ozone cluster (conformance-tests/ozone/ozone-dev, jars from Maven Central)
# and runs the storage suite and the conformance suite through the gateway on
# it, plus the Ozone-only tests (cross-gateway reads, datanode failure,
# three replicas behind HAProxy). Between the two, the deployment tests: the
# Helm chart rendered and validated, and the image built and booted.
# Python packages go into a venv (.venv, or $S3GW_VENV); nothing is installed
# globally. Extra arguments are passed to pytest, e.g. `-k list -x`.
# S3GW_SKIP_OZONE=1 skips the Ozone phase (for quick local runs).
# Every phase always runs; the exit code is non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "==> no import circles between modules (scripts/check-module-cycles)"
python3 scripts/check-module-cycles storage-client/src gateway/src bench/src

echo "==> cargo build"
cargo build --workspace --all-targets

venv="${S3GW_VENV:-.venv}"
requirements=conformance-tests/requirements.txt
if [[ ! -x "$venv/bin/python" ]]; then
    echo "==> creating the Python venv in $venv"
    python3 -m venv "$venv"
fi
# Reinstall only when the pinned requirements change.
stamp="$venv/.requirements.sha256"
wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
    echo "==> installing $requirements into $venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet -r "$requirements"
    echo "$wanted" > "$stamp"
fi

failed=()

echo "==> cargo test --workspace"
cargo test --workspace || failed+=("cargo test")

# Point the suite at the binary just built, wherever the target dir is.
target_dir="$(cargo metadata --format-version 1 --no-deps \
    | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
export S3GW_BIN="$target_dir/debug/s3-gateway"

# The SDK matrix clients (Rust, Java, Go, JS, Python) take minutes to build on
# a cold machine: install them here, outside any test's timeout.
echo "==> installing the SDK matrix clients"
"$venv/bin/python" conformance-tests/sdk/run-matrix --install-only

echo "==> pytest conformance-tests (embedded back end)"
"$venv/bin/python" -m pytest conformance-tests "$@" || failed+=("pytest embedded")

# The Helm chart and the image, with tools from scripts/install-deploy-tools
# (helm, helm-unittest, kubernetes-validate, umoci, promtool, haproxy): the
# image is built daemonlessly here, outside any test's timeout.
echo "==> deployment tests: the Helm chart and the image (helm/tests)"
export S3GW_TOOLS="${S3GW_TOOLS:-$HOME/.cache/s3-gateway-tools}"
if tools_env="$(scripts/install-deploy-tools --env)" && eval "$tools_env" \
    && image="$(scripts/build-image | tail -1)"; then
    S3GW_IMAGE="$image" "$S3GW_TOOLS/venv/bin/python" -m pytest helm/tests || failed+=("pytest deployment")
else
    failed+=("deployment tools or image build")
fi

if [[ "${S3GW_SKIP_OZONE:-}" != 1 ]]; then
    ozone_dev=conformance-tests/ozone/ozone-dev
    echo "==> starting the Apache Ozone dev cluster"
    if "$ozone_dev" start --with-s3g; then
        export OZONE_OM_ADDRESS=127.0.0.1:8981 OZONE_S3G_ADDRESS=127.0.0.1:29878
        echo "==> cargo test: the storage suite on Ozone"
        cargo test -p storage-client --test ozone --test ozone_live -- --ignored \
            || failed+=("cargo test ozone")
        echo "==> pytest conformance-tests (Ozone back end)"
        S3GW_OZONE_OM="$OZONE_OM_ADDRESS" OZONE_S3G_ENDPOINT="http://$OZONE_S3G_ADDRESS" \
            "$venv/bin/python" -m pytest conformance-tests "$@" || failed+=("pytest ozone")
        echo "==> token vectors still match the Ozone/Hadoop classes"
        conformance-tests/ozone/token-vectors/generate --check || failed+=("token vectors")
    else
        failed+=("ozone-dev start")
    fi
    "$ozone_dev" stop || true
fi

if ((${#failed[@]})); then
    echo "==> FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "==> all tests passed"

#!/usr/bin/env bash
# Runs every test: the Rust unit and integration tests, then the black-box
# conformance suite (pytest + boto3 + AWS CLI + the SDK matrix) against the
# real binary.
# Python packages go into a venv (.venv, or $S3GW_VENV); nothing is installed
# globally. Extra arguments are passed to pytest, e.g. `-k list -x`.
# Both suites always run; the exit code is non-zero if either failed.
set -euo pipefail
cd "$(dirname "$0")/.."

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

echo "==> pytest conformance-tests"
"$venv/bin/python" -m pytest conformance-tests "$@" || failed+=("pytest")

if ((${#failed[@]})); then
    echo "==> FAILED: ${failed[*]}" >&2
    exit 1
fi
echo "==> all tests passed"

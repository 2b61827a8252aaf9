#!/usr/bin/env bash
# Runs every test: the Rust unit and integration tests, then the black-box
# conformance suite (pytest + boto3 + AWS CLI + the SDK matrix) against the
# real binary on the embedded back end; then starts a real single-node Apache
# Ozone cluster (conformance-tests/ozone/ozone-dev, jars from Maven Central)
# and runs the storage suite and the conformance suite through the gateway on
# it, plus the Ozone-only tests (cross-gateway reads, datanode failure,
# three replicas behind HAProxy); then the same cluster with three OMs and
# three datanodes and security on (ha-secure: OM leader failover and
# replication THREE with every OM request signed and every block token
# checked) and with one OM, security on and gRPC TLS on every wire
# (secure-tls: the OM's and datanodes' checks, the storage suite and the
# core S3 operations with every OM request signed, over TLS). Between the embedded and the Ozone
# phases, the deployment tests: the Helm chart rendered and validated, and
# the image built and booted.
# Python packages go into a venv (.venv, or $S3GW_VENV); nothing is installed
# globally. Extra arguments are passed to pytest, e.g. `-k list -x`.
# S3GW_SKIP_OZONE=1 skips the Ozone phases (for quick local runs);
# S3GW_OZONE_PROFILES="default ha-secure secure-tls" picks some of them (ha,
# the ring without security, and secure, without TLS, are two more);
# S3GW_OZONE_HA=full / S3GW_OZONE_SECURE=full run the whole pytest suite on
# the ha (and ha-secure) / secure profile too.
# S3GW_TEST_JOBS (default 2) sets how many pytest workers run the
# conformance suite; 1 still runs it through pytest-xdist.
# S3GW_OZONE_TEST_THREADS (default 4) sets the storage suite's test threads
# on each Ozone profile.
# Every phase always runs; the exit code is non-zero if any failed.
set -euo pipefail
cd "$(dirname "$0")/.."

# A phase's header, with the minutes since the start: where CI's time goes.
say() {
    printf '==> %s (at %d:%02d)\n' "$*" $((SECONDS / 60)) $((SECONDS % 60))
}

say "no import circles between modules (scripts/check-module-cycles)"
python3 scripts/check-module-cycles storage-client/src gateway/src bench/src

say "a storage Owner is named only by the decision (scripts/check-owner-names)"
python3 scripts/check-owner-names gateway/src

say "cargo build"
cargo build --workspace --all-targets

venv="${S3GW_VENV:-.venv}"
requirements=conformance-tests/requirements.txt
if [[ ! -x "$venv/bin/python" ]]; then
    say "creating the Python venv in $venv"
    python3 -m venv "$venv"
fi
# Reinstall only when the pinned requirements change.
stamp="$venv/.requirements.sha256"
wanted="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [[ "$(cat "$stamp" 2>/dev/null)" != "$wanted" ]]; then
    say "installing $requirements into $venv"
    "$venv/bin/python" -m pip install --quiet --upgrade pip
    "$venv/bin/python" -m pip install --quiet -r "$requirements"
    echo "$wanted" > "$stamp"
fi

failed=()

say "cargo test --workspace"
cargo test --workspace || failed+=("cargo test")

# The benchmark harness is a documented command (BENCHMARKS.md), never run
# here: only its syntax, its --help and the unit tests of its report.
say "bench scripts: syntax, --help, report tests"
{ (for script in bench/*.sh; do bash -n "$script" || exit 1; done) &&
    "$venv/bin/python" -c 'import ast, sys; ast.parse(open(sys.argv[1]).read())' \
        bench/deleted-then-listed.py && bench/run.sh --help >/dev/null &&
    bench/profile.sh --help >/dev/null && bench/memory.sh --help >/dev/null &&
    "$venv/bin/python" -m pytest -q -p no:cacheprovider bench/test_report.py; } ||
    failed+=("bench scripts")

# Point the suite at the binary just built, wherever the target dir is: the
# debug one, unless the release one below builds.
target_dir="$(cargo metadata --format-version 1 --no-deps \
    | "$venv/bin/python" -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
export S3GW_BIN="$target_dir/debug/s3-gateway" S3GW_BENCH_BIN="$target_dir/debug/s3-bench"

# The suites run the binary the image ships (static, optimised): it is what
# users run, and the suites finish sooner on it than on the debug build (on
# Ozone a quarter sooner). The deployment tests below need it anyway.
say "the release binary and the image (scripts/build-image)"
export S3GW_TOOLS="${S3GW_TOOLS:-$HOME/.cache/s3-gateway-tools}"
image=""
if tools_env="$(scripts/install-deploy-tools --env)" && eval "$tools_env" \
    && image="$(scripts/build-image | tail -1)"; then
    export S3GW_BIN="$target_dir/x86_64-unknown-linux-musl/release/s3-gateway"
else
    image="" # a failed build may still have printed a last line
    failed+=("deployment tools or image build")
fi

# The SDK matrix clients (Rust, Java, Go, JS, Python) take minutes to build on
# a cold machine: install them here, outside any test's timeout.
say "installing the SDK matrix clients"
"$venv/bin/python" conformance-tests/sdk/run-matrix --install-only

# Headless Chromium for the browser CORS test.
scripts/install-browser || failed+=("browser install")

# A profile's cluster can start in the background while other tests run:
# most of a start is its JVMs waiting on each other's heartbeats and
# safe-mode checks, not CPU. The first one starts now, beside the embedded
# and deployment phases (it was up when they ended, 7.5 min in); each next
# one while the last one's disruptive tests run, which mostly wait on Ozone
# too. Two clusters run at once only where they share no port: a profile
# with an OM ring (ha, ha-secure) beside one with a single OM (ozone-dev's
# port table). The start's output and exit code go to files, as the next
# start is made from inside a phase's subshell.
ozone_dev=conformance-tests/ozone/ozone-dev
# The dev clusters' servers compile with C1 only: a test cluster lives
# minutes, and C2's compilations were a third of its JVMs' CPU (the OM's
# 60 of 149 s by the end of the default profile's parallel pytest phase).
# Measured idle on the default profile, C2 -> C1: its start 84 -> 65 s; its
# JVMs' CPU by the end of that phase 313 -> 233 s, the phase no slower
# (382 -> 391 s, with 12 more tests); the OM-killed test 60 -> 41 s, the
# datanode test 50 -> 41 s. The benchmarks keep ozone-dev's default (the
# JVM's own), as Ozone runs in production.
export OZONE_DEV_SERVER_JVM_ARGS="${OZONE_DEV_SERVER_JVM_ARGS--XX:TieredStopAtLevel=1}"
ozone_profiles=()
[[ "${S3GW_SKIP_OZONE:-}" == 1 ]] || read -r -a ozone_profiles <<<"${S3GW_OZONE_PROFILES:-default ha-secure secure-tls}"
prestart_dir="$(mktemp -d)"
trap 'rm -rf "$prestart_dir"' EXIT
prestart_cluster() {
    local profile="$1"
    # From an empty cluster: a previous run's buckets and keys (same names,
    # other root keys) would make this run's results depend on that one.
    { status=0
        "$ozone_dev" --profile "$profile" clean || true
        "$ozone_dev" --profile "$profile" start --with-s3g || status=$?
        echo "$status" >"$prestart_dir/$profile.status"; } >"$prestart_dir/$profile.log" 2>&1 &
    echo $! >"$prestart_dir/$profile.pid"
}
has_om_ring() { [[ "$1" == ha || "$1" == ha-secure ]]; }
# Called as a phase's disruptive tests begin: starts the profile after the
# running one, if the two share no port.
next_profile=""
prestart_next_profile() {
    local next_ring=0 this_ring=0
    has_om_ring "$next_profile" && next_ring=1
    has_om_ring "${OZONE_DEV_PROFILE:-}" && this_ring=1
    if [[ -n "$next_profile" && ! -e "$prestart_dir/$next_profile.log" ]] && ((next_ring != this_ring)); then
        say "the Apache Ozone dev cluster (profile $next_profile) starts in the background"
        prestart_cluster "$next_profile"
    fi
}
if ((${#ozone_profiles[@]})); then
    prestart_cluster "${ozone_profiles[0]}"
fi

# The conformance suite on S3GW_TEST_JOBS workers (pytest-xdist), each with
# its own gateway, a test file per worker so a module's fixtures are made
# once; then, one at a time, the tests that kill part of an Ozone cluster,
# which every other test would feel. Measured in CI on 2 cores, one worker
# against two: embedded 347 -> 229 s, Ozone default 695 -> 338 + 164 s; with
# the background cluster start and fuzz/run's two jobs, .ci/run 40 -> 31 min.
test_jobs="${S3GW_TEST_JOBS:-2}"
run_pytest() {
    local parallel=0 serial=0 arg
    # A marker expression of the caller's (scripts/test.sh -m ...) replaces
    # this split: one run with it (a disrupting test it selects then runs
    # beside the others).
    for arg in "$@"; do
        if [[ "$arg" == -m* ]]; then
            "$venv/bin/python" -m pytest -n "$test_jobs" --dist loadfile "$@" || parallel=$?
            ((parallel == 0 || parallel == 5))
            return
        fi
    done
    # --durations: the slowest tests, where CI's time goes.
    "$venv/bin/python" -m pytest -n "$test_jobs" --dist loadfile -m "not disrupts_cluster" --durations=10 "$@" ||
        parallel=$?
    prestart_next_profile
    "$venv/bin/python" -m pytest -m disrupts_cluster --durations=10 "$@" || serial=$?
    # 5: nothing was selected, which is no failure here.
    ((parallel == 0 || parallel == 5)) && ((serial == 0 || serial == 5))
}

say "pytest conformance-tests (embedded back end)"
run_pytest conformance-tests "$@" || failed+=("pytest embedded")

# The Helm chart and the image, with tools from scripts/install-deploy-tools
# (helm, helm-unittest, kubernetes-validate, umoci, promtool, haproxy): the
# image is built daemonlessly here, outside any test's timeout.
say "deployment tests: the Helm chart and the image (helm/tests)"
if [[ -n "$image" ]]; then
    S3GW_IMAGE="$image" "$S3GW_TOOLS/venv/bin/python" -m pytest helm/tests || failed+=("pytest deployment")
fi

# One Ozone dev cluster profile's phase at a time: start its cluster (with
# Ozone's own S3 gateway), or wait for the start made in the background
# above, run the phase's function with `ozone-dev env` exported, stop it.
start_cluster() {
    local profile="$1" status
    if [[ -e "$prestart_dir/$profile.log" ]]; then
        say "the Apache Ozone dev cluster (profile $profile), started in the background"
        # (the start's own timeout bounds this; a start that died unasked is a failure)
        until [[ -s "$prestart_dir/$profile.status" ]]; do
            kill -0 "$(cat "$prestart_dir/$profile.pid")" 2>/dev/null || break
            sleep 1
        done
        cat "$prestart_dir/$profile.log"
        status="$(cat "$prestart_dir/$profile.status" 2>/dev/null || echo 1)"
        rm -f "$prestart_dir/$profile".*
        return "$status"
    fi
    say "starting the Apache Ozone dev cluster (profile $profile)"
    "$ozone_dev" --profile "$profile" clean || true
    "$ozone_dev" --profile "$profile" start --with-s3g
}

ozone_phase() {
    local profile="$1"
    shift
    if ! start_cluster "$profile"; then
        failed+=("ozone-dev start ($profile)")
        "$ozone_dev" --profile "$profile" stop || true
        return
    fi
    local settings
    settings="$("$ozone_dev" --profile "$profile" env)"
    (
        while IFS='=' read -r name value; do
            export "$name=$value"
        done <<<"$settings"
        export OZONE_DEV_PROFILE="$profile" S3GW_OZONE_PROFILE="$profile"
        export S3GW_OZONE_OM="$OZONE_OM_ADDRESS" OZONE_S3G_ENDPOINT="http://$OZONE_S3G_ADDRESS"
        "$@"
    ) || failed+=("ozone $profile")
    "$ozone_dev" --profile "$profile" stop || true
}

# The storage suite's tests wait on Ozone more than they compute: measured
# on an idle ha-secure cluster, 2 threads (the harness's default here) 162 s,
# 4 104 s, 6 99 s; in CI, beside the next profile's cluster, 159 -> 151 s.
ozone_test_threads="${S3GW_OZONE_TEST_THREADS:-4}"
# The storage suite is picked with `--workspace --test ...`, not `-p
# storage-client`: alone, the package resolves its dependencies' features
# differently from the workspace build above, and cargo rebuilt 61 crates
# for it (1 min 14 s in CI) before running 12 s of tests.

# The default profile: the storage suite, the whole pytest suite, the token vectors.
ozone_default() {
    local status=0
    say "cargo test: the storage suite on Ozone"
    cargo test --workspace --test ozone --test ozone_live \
        -- --ignored --test-threads="$ozone_test_threads" || status=1
    say "pytest conformance-tests (Ozone back end)"
    run_pytest conformance-tests "${pytest_args[@]}" || status=1
    say "token vectors still match the Ozone/Hadoop classes"
    conformance-tests/ozone/token-vectors/generate --check || status=1
    return "$status"
}

# The ha profile (three OMs, three datanodes, RATIS/THREE): the storage
# suite and the tests only this profile can run (OM leader killed and
# transferred, a pipeline member killed mid-upload, lost OM answers on a
# ring); the other Ozone tests run on the default profile, and with
# S3GW_OZONE_HA=full the whole pytest suite runs here too. Measured: the
# phase cost 12 min with every Ozone test, secure 7 min, on top of ~25 min
# for the rest, too close to CI's 45.
ozone_ha() {
    local status=0 tests=(conformance-tests/test_ozone_om_ha.py conformance-tests/test_ozone_replication.py
        conformance-tests/test_ozone_lost_om_answer.py)
    [[ "${S3GW_OZONE_HA:-}" == full ]] && tests=(conformance-tests)
    say "cargo test: the storage suite on Ozone (ha)"
    OZONE_REPLICATION=3 cargo test --workspace --test ozone --test ozone_live \
        -- --ignored --test-threads="$ozone_test_threads" || status=1
    say "pytest ${tests[*]} (Ozone back end, ha)"
    run_pytest "${tests[@]}" "${pytest_args[@]}" || status=1
    return "$status"
}

# The ha-secure profile: the ha phase's tests with Kerberos, tokens and every
# OM request signed, the leader kills first, then the storage suite and the
# secure cluster's checks (tokens still refused when changed) on the ring
# that failed over. Also the secure tests that need Ozone's own S3 gateway,
# which the secure-tls profile cannot run: an Ozone user's attack on the
# gateway's records, and Ozone users' and tenants' keys read both ways.
ozone_ha_secure() {
    local status=0 tests=(conformance-tests/test_ozone_om_ha.py conformance-tests/test_ozone_replication.py
        conformance-tests/test_ozone_lost_om_answer.py conformance-tests/test_ozone_records.py
        conformance-tests/test_ozone_user_secrets.py)
    [[ "${S3GW_OZONE_HA:-}" == full ]] && tests=(conformance-tests)
    say "pytest ${tests[*]} (Ozone back end, ha-secure)"
    run_pytest "${tests[@]}" "${pytest_args[@]}" || status=1
    say "cargo test: the storage suite and the secure cluster's checks (Ozone, ha-secure)"
    OZONE_REPLICATION=3 cargo test --workspace --test ozone --test ozone_live --test ozone_secure \
        -- --ignored --test-threads="$ozone_test_threads" || status=1
    return "$status"
}

# The secure and secure-tls profiles (Kerberos, block tokens, every OM
# request signed; secure-tls also gRPC TLS to every OM and datanode): what
# a secure OM and its datanodes check of our requests, the storage suite, and
# the core S3 operations through the gateway and (secure only: Ozone's own
# gateway cannot run on the loopback TLS cluster) the reads across it and
# Ozone's own S3 gateway, the start's refusals, an Ozone user's attack on the
# gateway's records (issue 19: test_ozone_records.py) and Ozone users' own keys
# vouched by the OM (test_ozone_user_secrets.py) (441 tests, about 2 min here); with
# S3GW_OZONE_SECURE=full the whole pytest suite (6 min).
ozone_secure() {
    local status=0 tests=(conformance-tests/test_objects.py conformance-tests/test_multipart.py
        conformance-tests/test_identity.py conformance-tests/test_buckets.py conformance-tests/test_list.py
        conformance-tests/test_conditional.py conformance-tests/test_copy.py conformance-tests/test_tagging.py
        conformance-tests/test_ozone_cross_gateway.py conformance-tests/test_ozone_secure_start.py
        conformance-tests/test_ozone_records.py conformance-tests/test_ozone_user_secrets.py)
    [[ "${S3GW_OZONE_SECURE:-}" == full ]] && tests=(conformance-tests)
    say "cargo test: the storage suite and the secure cluster's checks (Ozone, secure)"
    cargo test --workspace --test ozone --test ozone_live --test ozone_secure \
        -- --ignored --test-threads="$ozone_test_threads" || status=1
    say "pytest ${tests[*]} (Ozone back end, secure)"
    run_pytest "${tests[@]}" "${pytest_args[@]}" || status=1
    return "$status"
}

pytest_args=("$@")
# S3GW_OZONE_PROFILES picks the profiles (default: these three, in this order).
for i in "${!ozone_profiles[@]}"; do
    profile="${ozone_profiles[$i]}" next_profile="${ozone_profiles[$((i + 1))]:-}"
    case "$profile" in
        default) ozone_phase default ozone_default ;;
        ha) ozone_phase ha ozone_ha ;;
        ha-secure) ozone_phase ha-secure ozone_ha_secure ;;
        secure) ozone_phase secure ozone_secure ;;
        secure-tls) ozone_phase secure-tls ozone_secure ;;
        *) failed+=("unknown Ozone profile $profile") ;;
    esac
done

if ((${#failed[@]})); then
    say "FAILED: ${failed[*]}" >&2
    exit 1
fi
say "all tests passed"

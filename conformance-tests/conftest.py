"""Fixtures: the server under test, boto3 clients, raw clients, buckets, the AWS CLI.

By default the suite starts the real `s3-gateway` binary on a free loopback
port with a temporary data dir and known root keys. With S3_ENDPOINT,
S3_ACCESS_KEY and S3_SECRET_KEY (and optionally S3_REGION) set it targets
that server instead; tests that restart the server or manage keys are then
skipped.

With S3GW_OZONE_OM=HOST:PORT (a running cluster, see ozone/README.md) every
gateway the suite starts uses the Ozone back end (`--backend ozone --om`),
with the cluster's records key (S3GW_OZONE_RECORDS_KEY_FILE, from `ozone-dev
env` unless set).
"""

import hashlib
import os
import re
import secrets
import string
import subprocess
import sys
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

import kms_dev
from gateway_process import GatewayProcess
from raw_client import RawClient
from sigv4 import Credentials

SUITE_DIR = Path(__file__).resolve().parent
REPO_ROOT = SUITE_DIR.parent
CHECKSUM_MODES = ["when_supported", "when_required"]
STARTED_SERVERS: list[GatewayProcess] = []
BINARY: list[Path] = []  # resolved once per session, at session start
SDK_MATRIX_TABLE: list[str] = []  # the SDK runner's table, printed at the end
OZONE_OM = os.environ.get("S3GW_OZONE_OM")  # OM gRPC address(es) when testing the Ozone back end
if OZONE_OM and not os.environ.get("S3GW_OZONE_RECORDS_KEY_FILE"):
    # Every gateway on the cluster shares one records key (ozone_records_key_file), as replicas
    # must; `ozone-dev env` names it, and scripts/test.sh exports it.
    import ozone_cluster
    os.environ["S3GW_OZONE_RECORDS_KEY_FILE"] = ozone_cluster.records_key_file()


@dataclass
class Target:
    endpoint: str
    creds: Credentials
    server: GatewayProcess | None  # None when an external S3_ENDPOINT is under test

    @property
    def managed(self) -> bool:
        return self.server is not None


def external_endpoint() -> dict | None:
    if not os.environ.get("S3_ENDPOINT"):
        return None
    missing = [v for v in ("S3_ACCESS_KEY", "S3_SECRET_KEY") if not os.environ.get(v)]
    if missing:
        raise pytest.UsageError(f"S3_ENDPOINT is set but {', '.join(missing)} is not")
    return {
        "endpoint": os.environ["S3_ENDPOINT"].rstrip("/"),
        "creds": Credentials(
            os.environ["S3_ACCESS_KEY"], os.environ["S3_SECRET_KEY"], os.environ.get("S3_REGION", "us-east-1")
        ),
    }


def binary_candidates() -> list[Path]:
    if os.environ.get("S3GW_BIN"):
        return [Path(os.environ["S3GW_BIN"])]
    candidates = []
    if os.environ.get("CARGO_TARGET_DIR"):
        target_dir = Path(os.environ["CARGO_TARGET_DIR"])
        if not target_dir.is_absolute():
            target_dir = REPO_ROOT / target_dir
        candidates.append(target_dir / "debug" / "s3-gateway")
    candidates.append(REPO_ROOT / "target" / "debug" / "s3-gateway")
    return candidates


def bench_binary(gateway: Path) -> Path:
    """s3-bench, for the tests that put load on a gateway: `S3GW_BENCH_BIN`, else the
    one `cargo build --workspace` put beside the gateway binary."""
    if os.environ.get("S3GW_BENCH_BIN"):
        return Path(os.environ["S3GW_BENCH_BIN"])
    return Path(gateway).with_name("s3-bench")


def gateway_binary() -> Path:
    """The binary to test; built once with cargo when none exists yet."""
    candidates = binary_candidates()
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    if os.environ.get("S3GW_BIN"):
        raise pytest.UsageError(f"S3GW_BIN={candidates[0]} does not exist")
    subprocess.run(["cargo", "build", "-p", "s3-gateway"], cwd=REPO_ROOT, check=True)
    for candidate in candidates:
        if candidate.is_file():
            return candidate
    raise pytest.UsageError(f"cargo build did not produce any of {candidates}")


def random_key_pair() -> tuple[str, str]:
    alphabet = string.ascii_uppercase + string.digits
    access = "CT" + "".join(secrets.choice(alphabet) for _ in range(18))
    # Not beginning with "-": Ozone's CLI (`ozone s3 setsecret -s`, the secure
    # profiles) reads such a value as its own options, e.g. "-V..." as --version.
    secret = secrets.choice(string.ascii_letters) + secrets.token_urlsafe(30)[:39]
    return access, secret


def payload(size: int, seed: str) -> bytes:
    """`size` bytes that only `seed` makes: a wrong or stale object never matches."""
    out = bytearray()
    counter = 0
    while len(out) < size:
        out += hashlib.sha256(f"{seed}/{counter}".encode()).digest()
        counter += 1
    return bytes(out[:size])


def multipart_etag(parts: list[bytes]) -> str:
    """The quoted ETag of a multipart object made of `parts`: S3's MD5 of the
    parts' binary MD5s, then -N; on Ozone the OM names the object itself,
    with the MD5 of the parts' hex MD5s as text (Ozone's own S3 gateway
    reports the same)."""
    if OZONE_OM:
        joined = "".join(hashlib.md5(p).hexdigest() for p in parts).encode()
    else:
        joined = b"".join(hashlib.md5(p).digest() for p in parts)
    return f'"{hashlib.md5(joined).hexdigest()}-{len(parts)}"'


def backend_args() -> list[str]:
    """The flags that put a started gateway on the back end under test."""
    return ["--backend", "ozone", "--om", OZONE_OM] if OZONE_OM else []


def pytest_configure(config):
    config.addinivalue_line("markers", "disrupts_cluster: kills part of the Ozone cluster; runs last")


def pytest_collection_modifyitems(config, items):
    # Tests that kill and restart cluster roles run after everything else,
    # so that no other test meets a cluster that is still recovering.
    items.sort(key=lambda item: item.get_closest_marker("disrupts_cluster") is not None)


def pytest_sessionstart(session):
    # Building here keeps a first-time cargo build out of any test's timeout.
    if external_endpoint() is None and not session.config.option.collectonly:
        BINARY.append(gateway_binary())


def server_logs() -> list[tuple[str, str]]:
    """Each started server's log path and the tail of its log."""
    return [(str(server.log_path), server.log_tail(300)) for server in STARTED_SERVERS]


WORKER_SERVER_LOGS: list[tuple[str, str]] = []  # what pytest-xdist's workers handed back


def pytest_sessionfinish(session, exitstatus):
    # Under pytest-xdist (scripts/test.sh runs the suite on two workers) each
    # worker is a session of its own: it hands what the summary prints to the
    # controller, whose summary is the only one shown.
    handed_back = getattr(session.config, "workeroutput", None)
    if handed_back is not None:
        handed_back["sdk_matrix_table"] = list(SDK_MATRIX_TABLE)
        handed_back["server_logs"] = server_logs() if exitstatus != 0 else []


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    handed_back = getattr(node, "workeroutput", {})
    SDK_MATRIX_TABLE.extend(handed_back.get("sdk_matrix_table", []))
    WORKER_SERVER_LOGS.extend(handed_back.get("server_logs", []))


def pytest_terminal_summary(terminalreporter, exitstatus):
    for table in SDK_MATRIX_TABLE:
        terminalreporter.section("SDK x scenario matrix")
        terminalreporter.write_line(table)
    if exitstatus == 0:
        return
    for log_path, tail in server_logs() + WORKER_SERVER_LOGS:
        terminalreporter.section(f"s3-gateway log {log_path}")
        terminalreporter.write_line(tail)


def start_server(tmp_path_factory, name: str, extra_args=()) -> GatewayProcess:
    """A fresh managed server with its own data dir; the caller stops it."""
    binary = BINARY[0] if BINARY else gateway_binary()
    base = tmp_path_factory.mktemp(name)
    access, secret = random_key_pair()
    args = backend_args() + list(extra_args)
    server = GatewayProcess(binary, base / "data", base / "gateway.log", access, secret, args)
    STARTED_SERVERS.append(server)
    server.start()
    return server


@pytest.fixture(scope="session")
def target(tmp_path_factory):
    external = external_endpoint()
    if external is not None:
        yield Target(external["endpoint"], external["creds"], None)
        return
    server = start_server(tmp_path_factory, "gateway")
    try:
        yield Target(server.endpoint, Credentials(server.access_key, server.secret_key), server)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def hadoop_kms(tmp_path_factory):
    """A real Apache Hadoop KMS (kms/kms-dev) on a free port in a tmp dir, with keys testkey-1 and
    testkey-2, for gateways started with `--sse-kms-url hadoop_kms.url`; skipped without java,
    mvn or curl. The gateway's KMS user is `s3gw` (kms_dev.GATEWAY_USER)."""
    kms = kms_dev.start_kms(tmp_path_factory, "kms")
    try:
        yield kms
    finally:
        kms.stop()


@pytest.fixture(scope="session")
def managed_target(target) -> Target:
    if not target.managed:
        pytest.skip("needs a server this suite started (S3_ENDPOINT is set)")
    return target


@pytest.fixture
def own_server(tmp_path_factory):
    """A private server for tests that restart or crash it."""
    if external_endpoint() is not None:
        pytest.skip("restarts the server (S3_ENDPOINT is set)")
    server = start_server(tmp_path_factory, "own-gateway")
    try:
        yield server
    finally:
        server.kill9()


# One boto3 session per thread, for every client it makes: a new session
# parses the S3 service model again (160 ms of CPU per client, measured, 19 ms
# from a kept session), and the suite makes one or two clients per test.
# Sessions are not thread-safe, hence one per thread; the clients are, and
# each has its own credentials, config and event hooks.
_boto3_sessions = threading.local()


def make_s3_client(endpoint: str, creds: Credentials, checksum_mode: str = "when_supported",
                   signature_version: str = "s3v4"):
    """A boto3 S3 client, path style, no retries (a 5xx must surface, not be retried away)."""
    config = Config(
        signature_version=signature_version,
        s3={"addressing_style": "path"},
        retries={"max_attempts": 1, "mode": "standard"},
        request_checksum_calculation=checksum_mode,
        response_checksum_validation=checksum_mode,
        connect_timeout=10,
        read_timeout=60,
    )
    if not hasattr(_boto3_sessions, "session"):
        _boto3_sessions.session = boto3.session.Session()
    return _boto3_sessions.session.client(
        "s3",
        endpoint_url=endpoint,
        aws_access_key_id=creds.access_key,
        aws_secret_access_key=creds.secret_key,
        region_name=creds.region,
        config=config,
    )


@pytest.fixture(scope="session")
def root_s3(target):
    return make_s3_client(target.endpoint, target.creds)


@pytest.fixture(params=CHECKSUM_MODES, ids=["checksums-default", "checksums-when-required"])
def s3(request, target):
    """The core client, once with boto3's default integrity settings and once with when_required."""
    return make_s3_client(target.endpoint, target.creds, request.param)


@pytest.fixture
def raw(target) -> RawClient:
    return RawClient(target.endpoint, target.creds)


def unique_bucket_name(hint: str = "") -> str:
    slug = re.sub(r"[^a-z0-9-]+", "-", hint.lower()).strip("-")[:30].strip("-")
    return f"ct-{uuid.uuid4().hex[:10]}" + (f"-{slug}" if slug else "")


def empty_and_delete_bucket(client, name: str) -> None:
    try:
        for upload in client.list_multipart_uploads(Bucket=name).get("Uploads", []):
            client.abort_multipart_upload(Bucket=name, Key=upload["Key"], UploadId=upload["UploadId"])
        paginator = client.get_paginator("list_objects_v2")
        for page in paginator.paginate(Bucket=name):
            objects = [{"Key": o["Key"]} for o in page.get("Contents", [])]
            if objects:
                client.delete_objects(Bucket=name, Delete={"Objects": objects, "Quiet": True})
        # Noncurrent versions and delete markers keep a versioned bucket alive.
        for page in client.get_paginator("list_object_versions").paginate(Bucket=name):
            versions = [{"Key": v["Key"], "VersionId": v["VersionId"]}
                        for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
            if versions:
                client.delete_objects(Bucket=name, Delete={"Objects": versions, "Quiet": True})
        client.delete_bucket(Bucket=name)
    except ClientError:
        pass


@pytest.fixture
def bucket_names(root_s3, request):
    """Hands out unique bucket names; whatever got created is emptied and deleted afterwards."""
    names = []

    def new(hint: str = "", exact: str | None = None) -> str:
        name = exact or unique_bucket_name(hint or request.node.name)
        names.append(name)
        return name

    yield new
    for name in names:
        empty_and_delete_bucket(root_s3, name)


@pytest.fixture
def bucket(root_s3, bucket_names) -> str:
    name = bucket_names()
    root_s3.create_bucket(Bucket=name)
    return name


@pytest.fixture(scope="session")
def second_key(managed_target) -> Credentials:
    """A non-root key made with the admin CLI, shared by tests that only use it."""
    key = managed_target.server.create_key(f"ct-second-{uuid.uuid4().hex[:6]}")
    return Credentials(key["access_key"], key["secret_key"], managed_target.creds.region)


@pytest.fixture
def aws(target, tmp_path):
    """Runs the AWS CLI (v1, from this venv) against the target; returns CompletedProcess."""
    config_file = tmp_path / "aws-config"
    config_file.write_text(
        "[default]\n"
        f"region = {target.creds.region}\n"
        "s3 =\n"
        "    multipart_threshold = 6GB\n"
        "    addressing_style = path\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(
        AWS_ACCESS_KEY_ID=target.creds.access_key,
        AWS_SECRET_ACCESS_KEY=target.creds.secret_key,
        AWS_DEFAULT_REGION=target.creds.region,
        AWS_CONFIG_FILE=str(config_file),
        AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "aws-credentials-unused"),
        AWS_MAX_ATTEMPTS="1",
        AWS_PAGER="",
        # CLI v1 vendors a botocore older than 1.43.77, whose pooled connection is
        # poisoned after a zero-length PUT answered without "100 Continue" (as AWS
        # S3 itself now answers; botocore issue #3755): skip Expect on empty bodies.
        BOTO_EXPERIMENTAL__NO_EMPTY_CONTINUE="true",
    )

    def run(*args: str, check: bool = True) -> subprocess.CompletedProcess:
        result = subprocess.run(
            [sys.executable, "-m", "awscli", "--endpoint-url", target.endpoint, *args],
            capture_output=True, text=True, env=env, timeout=110, stdin=subprocess.DEVNULL,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"aws {' '.join(args)} exited {result.returncode}\nstdout:\n{result.stdout}\nstderr:\n{result.stderr}"
            )
        return result

    return run

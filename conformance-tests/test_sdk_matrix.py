"""The SDK matrix: the same scenarios run by seven real clients.

`sdk/run-matrix` installs and runs boto3, the AWS CLI, Rust aws-sdk-s3, Java
SDK v2, Go SDK v2, minio-go (warp's client library) and JS SDK v3 against
the server under test; each (SDK, scenario) cell becomes one test here, and
the runner's table is printed at the end of the session. Installing the clients takes minutes on a cold
machine, so `scripts/test.sh` runs `run-matrix --install-only` before pytest.
"""

import base64
import json
import os
import subprocess
import sys

import pytest

from conftest import OZONE_OM, SDK_MATRIX_TABLE, SUITE_DIR, Credentials, start_server

RUNNER = SUITE_DIR / "sdk" / "run-matrix"
SDKS = ["boto3", "aws-cli", "rust", "java-v2", "go-v2", "minio-go", "js-v3"]
SCENARIOS = [
    "bucket",
    "object",
    "range",
    "list-v2-delimiter",
    "multipart",
    "copy",
    "tagging",
    "presigned",
    "checksum-default",
    "checksum-off",
]


@pytest.fixture(scope="module")
def matrix_endpoint(target, tmp_path_factory):
    """The matrix's own gateway: SSE-C over plain HTTP (`--sse-c-over-http`) and an SSE-S3
    keyring (the suite's Ozone gateways have none; embedded would generate one). An external
    S3_ENDPOINT is used as it is."""
    if not target.managed:
        yield target.endpoint, target.creds
        return
    keyring = tmp_path_factory.mktemp("sdk-matrix-keys") / "master.keys"
    keyring.write_text("k1 " + base64.b64encode(os.urandom(32)).decode() + "\n")
    keyring.chmod(0o600)
    server = start_server(tmp_path_factory, "sdk-matrix",
                          ["--sse-c-over-http", "true", "--sse-master-key-file", str(keyring)])
    try:
        yield server.endpoint, Credentials(server.access_key, server.secret_key)
    finally:
        server.stop()


@pytest.fixture(scope="module")
def matrix(matrix_endpoint):
    """Runs the whole matrix once; returns {(sdk, scenario): result line}."""
    endpoint, creds = matrix_endpoint
    env = dict(os.environ)
    env.update(
        S3_ENDPOINT=endpoint,
        S3_ACCESS_KEY=creds.access_key,
        S3_SECRET_KEY=creds.secret_key,
        S3_REGION=creds.region,
    )
    if OZONE_OM:
        # Ozone's OM names multipart objects itself (see conftest.multipart_etag).
        env["S3_MULTIPART_ETAG"] = "ozone"
        # It keeps no versions: enabling them, or object lock, must be refused (501).
        env["S3_VERSIONING"] = "none"
    done = subprocess.run(
        [sys.executable, str(RUNNER)], env=env, capture_output=True, text=True, timeout=1800, check=False
    )
    cells = {}
    table = []
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            cell = json.loads(line)
            cells[(cell["sdk"], cell["scenario"])] = cell
        else:
            table.append(line)
    SDK_MATRIX_TABLE.append("\n".join(table).strip() + "\n" + done.stderr[-4000:])
    return cells


# Concurrent PUT/GET/STAT/DELETE, listing and DeleteObjects the way warp runs them;
# a form upload signed by minio-go's PresignedPostPolicy.
# ACLs, bucket policies and public access blocks, with anonymous reads.
# Versions, delete markers and ListObjectVersions pages through a second SDK.
# SSE-S3 (and bucket default encryption), SSE-C, object lock (501 on Ozone) and the user guide's
# "deny uploads without AES256" policy with a conditioned anonymous listing, in two SDKs.
SECURITY_SCENARIOS = ["sse-s3", "sse-c", "object-lock", "policy-condition"]
EXTRA_CELLS = [
    ("minio-go", "warp"),
    ("minio-go", "presigned-post"),
    ("js-v3", "access"),
    ("js-v3", "versioning"),
] + [(sdk, scenario) for sdk in ("go-v2", "js-v3") for scenario in SECURITY_SCENARIOS]
CELLS = [(sdk, scenario) for sdk in SDKS for scenario in SCENARIOS] + EXTRA_CELLS


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("sdk, scenario", CELLS, ids=[f"{scenario}-{sdk}" for sdk, scenario in CELLS])
def test_sdk_scenario(matrix, sdk, scenario):
    cell = matrix.get((sdk, scenario))
    assert cell is not None, f"{sdk} reported no result for {scenario}"
    assert cell["ok"], cell.get("detail")

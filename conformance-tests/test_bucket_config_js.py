"""Bucket tagging and CORS configuration through a second SDK, the AWS SDK
for JavaScript v3 (sdk/js/bucket_config.mjs, installed by `run-matrix
--install-only`, as the SDK matrix is)."""

import json
import os
import subprocess

import pytest

from conftest import SUITE_DIR


def test_js_sdk_configures_bucket_tagging_and_cors(target):
    script = SUITE_DIR / "sdk" / "js" / "bucket_config.mjs"
    if not (script.parent / "node_modules").is_dir():
        pytest.fail("the JS SDK is not installed: run conformance-tests/sdk/run-matrix --install-only --sdk js")
    env = dict(os.environ, S3_ENDPOINT=target.endpoint, S3_ACCESS_KEY=target.creds.access_key,
               S3_SECRET_KEY=target.creds.secret_key, S3_REGION=target.creds.region)
    done = subprocess.run(["node", str(script)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"], result

"""The gateway's start on an Ozone cluster with security on (`ozone-dev --profile secure`),
where the OM checks the S3 signature of every request: without the secret of its own
identity `.s3gw` (`ozone_system_secret_file`), with one the OM does not hold, or with a
configured key whose secret the OM does not hold, it refuses to start in one message that
says what to run, and quotes no secret. With all of them right it serves (every other test
on this profile). Runs only on the secure profile."""

import os
import subprocess

import pytest

import ozone_cluster
from conftest import BINARY, OZONE_OM, gateway_binary, random_key_pair
from gateway_process import free_port

if not OZONE_OM or not ozone_cluster.SECURE:
    pytest.skip("needs the secure profile of the Ozone dev cluster (S3GW_OZONE_PROFILE=secure)",
                allow_module_level=True)

SECRET_FILE = os.environ.get("S3GW_OZONE_SYSTEM_SECRET_FILE", "")


def start_fails(tmp_path, env_changes: dict) -> subprocess.CompletedProcess:
    """Starts the gateway on the cluster with `env_changes` (None removes a variable); it must exit."""
    binary = BINARY[0] if BINARY else gateway_binary()
    env = {k: v for k, v in os.environ.items() if not k.startswith("S3GW_")}
    env.update(S3GW_OZONE_SYSTEM_SECRET_FILE=SECRET_FILE,
               S3GW_OZONE_RECORDS_KEY_FILE=os.environ["S3GW_OZONE_RECORDS_KEY_FILE"])
    # A TLS cluster (secure-tls) is reached only with its CA.
    for name in ("S3GW_OZONE_TLS_CA_FILE", "S3GW_OZONE_TLS_SERVER_NAME"):
        if name in os.environ:
            env[name] = os.environ[name]
    for name, value in env_changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    args = [str(binary), "--listen", f"127.0.0.1:{free_port()}", "--data-dir", str(tmp_path / "data"),
            "--backend", "ozone", "--om", OZONE_OM]
    result = subprocess.run(args, env=env, capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert result.returncode != 0, f"the gateway started:\n{result.stdout}\n{result.stderr}"
    return result


def secret_file(tmp_path, text: str, mode: int = 0o600) -> str:
    path = tmp_path / "system-secret"
    path.write_text(text)
    path.chmod(mode)
    return str(path)


def test_without_the_system_secret_it_says_what_to_run(tmp_path):
    result = start_fails(tmp_path, {"S3GW_OZONE_SYSTEM_SECRET_FILE": None})
    assert "security on" in result.stderr, result.stderr
    assert "ozone s3 getsecret -u .s3gw" in result.stderr, result.stderr
    assert "ozone_system_secret_file" in result.stderr, result.stderr


def test_a_system_secret_the_om_does_not_hold_is_refused(tmp_path):
    wrong = "0123456789abcdef" * 4
    result = start_fails(tmp_path, {"S3GW_OZONE_SYSTEM_SECRET_FILE": secret_file(tmp_path, wrong + "\n")})
    assert "does not hold the configured secret" in result.stderr, result.stderr
    assert "ozone s3 setsecret -u .s3gw" in result.stderr, result.stderr
    assert wrong not in result.stderr + result.stdout


def test_a_system_secret_file_others_may_read_is_refused(tmp_path):
    right = open(SECRET_FILE).read()
    result = start_fails(tmp_path, {"S3GW_OZONE_SYSTEM_SECRET_FILE": secret_file(tmp_path, right, 0o644)})
    assert "chmod 600" in result.stderr, result.stderr
    assert right.strip().splitlines()[-1].split("=")[-1] not in result.stderr + result.stdout


def test_a_root_key_the_om_does_not_hold_is_refused(tmp_path):
    access, secret = random_key_pair()
    result = start_fails(tmp_path, {"S3GW_ROOT_ACCESS_KEY": access, "S3GW_ROOT_SECRET_KEY": secret})
    assert f"ozone s3 getsecret -u {access}" in result.stderr, result.stderr
    assert f"ozone s3 setsecret -u {access}" in result.stderr, result.stderr
    assert secret not in result.stderr + result.stdout


@pytest.mark.skipif(not ozone_cluster.TLS, reason="needs the secure-tls profile (gRPC TLS on)")
def test_on_a_tls_cluster_plaintext_and_another_ca_are_refused(tmp_path):
    plaintext = start_fails(tmp_path, {"S3GW_OZONE_TLS_CA_FILE": None, "S3GW_OZONE_TLS_SERVER_NAME": None})
    # The TLS server drops the plaintext connection: a transport error, or,
    # when the drop lands after the connection counted as open (a loaded
    # machine, CI 2026-12-06), the request on it canceled.
    assert "transport error" in plaintext.stderr or "operation was canceled" in plaintext.stderr, \
        plaintext.stderr
    # The public CAs this machine trusts: none of them issued the cluster's certificates.
    other_cas = next(p for p in ("/etc/ssl/certs/ca-certificates.crt", "/etc/pki/tls/certs/ca-bundle.crt")
                     if os.path.exists(p))
    refused = start_fails(tmp_path, {"S3GW_OZONE_TLS_CA_FILE": other_cas})
    assert "invalid peer certificate" in refused.stderr, refused.stderr

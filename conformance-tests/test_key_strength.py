"""Keys loaded from files or the environment must be as strong as AWS's (issue 8, item 4)."""

import os
import subprocess

import pytest

from conftest import BINARY, gateway_binary
from gateway_process import free_port

GOOD_ACCESS = "CTSTRONGKEY000000001"
GOOD_SECRET = "ct-strong-secret-ct-strong-secret-000001"


def start_fails(tmp_path, env_keys: dict, extra_args=()) -> subprocess.CompletedProcess:
    binary = BINARY[0] if BINARY else gateway_binary()
    env = {k: v for k, v in os.environ.items() if not k.startswith("S3GW_")}
    env.update(env_keys)
    args = [str(binary), "--listen", f"127.0.0.1:{free_port()}", "--data-dir", str(tmp_path / "data"), *extra_args]
    return subprocess.run(args, env=env, capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)


@pytest.fixture(autouse=True)
def managed_only(target):
    if not target.managed:
        pytest.skip("starts the binary itself")


@pytest.mark.parametrize(
    "access,secret",
    [
        ("SHORTKEY", GOOD_SECRET),
        ("CT.DOTTED.KEY.000001", GOOD_SECRET),
        ("ctlowercasekey000001", GOOD_SECRET),
        (GOOD_ACCESS, "only-twenty-nine-characters!"),
    ],
    ids=["short-access-key", "dotted-access-key", "lower-case-access-key", "short-secret"],
)
def test_a_weak_root_key_stops_the_start_with_one_line(tmp_path, access, secret):
    result = start_fails(tmp_path, {"S3GW_ROOT_ACCESS_KEY": access, "S3GW_ROOT_SECRET_KEY": secret})
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "S3GW_ROOT_ACCESS_KEY" in lines[0], result.stderr
    assert secret not in result.stderr


def test_a_weak_key_in_a_credentials_file_names_the_file(tmp_path):
    path = tmp_path / "keys.toml"
    path.write_text(f'[[keys]]\nname = "weak"\naccess_key = "WEAK.KEY"\nsecret_key = "{GOOD_SECRET}"\n')
    path.chmod(0o600)
    result = start_fails(tmp_path, {}, ["--credentials", str(path)])
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "access_key" in lines[0], result.stderr


@pytest.mark.parametrize("mode", [0o644, 0o604, 0o660], ids=["world-readable", "others-only", "group-writable"])
def test_a_credentials_file_others_may_read_stops_the_start(tmp_path, mode):
    """Refused like `ozone_system_secret_file` (issue 19, item 9): one line naming the
    file and the chmod that fixes it, quoting no secret, exit 2."""
    path = tmp_path / "keys.toml"
    path.write_text(f'[[keys]]\nname = "open"\naccess_key = "{GOOD_ACCESS}"\nsecret_key = "{GOOD_SECRET}"\n')
    path.chmod(mode)
    result = start_fails(tmp_path, {}, ["--credentials", str(path)])
    assert result.returncode == 2, result
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0] and "chmod 600" in lines[0], result.stderr
    assert GOOD_SECRET not in result.stderr

"""A newcomer's first hour: the commands the gateway prints work as printed.

The first start prints an AWS CLI line; it is pasted into a shell whose
~/.aws/config names another region. A restart prints the root key id and an
admin command for this instance (port, region, data dir); that is run as
printed too. Always on the embedded store: the banner is the same on Ozone,
where a shared cluster usually has a root key already.
"""

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import external_endpoint, gateway_binary
from gateway_process import free_port

REGION = "eu-west-3"


def shell_env(tmp_path: Path) -> dict:
    """A shell as a newcomer has it: `aws` and `s3-gateway` on PATH, no AWS_*
    variables, and an AWS config that names a different region."""
    config = tmp_path / "aws-config"
    config.write_text("[default]\nregion = us-west-2\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3GW_"))}
    tools = [str(Path(sys.executable).parent), str(gateway_binary().parent)]
    env.update(PATH=os.pathsep.join([*tools, env.get("PATH", "")]), AWS_CONFIG_FILE=str(config),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials"), AWS_MAX_ATTEMPTS="1", AWS_PAGER="")
    return env


def start(data_dir: Path, env: dict) -> tuple[subprocess.Popen, list[str]]:
    """Starts the gateway; returns it and what it printed up to its endpoint line."""
    process = subprocess.Popen(
        [str(gateway_binary()), "--listen", f"127.0.0.1:{free_port()}", "--region", REGION,
         "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, env=env)
    printed = []
    while not printed or not printed[-1].startswith("s3-gateway listening on "):
        line = process.stdout.readline()
        if not line:
            process.wait(timeout=30)
            raise AssertionError(f"exited {process.returncode} after printing {printed}")
        printed.append(line.rstrip("\n"))
    return process, printed


def stop(process: subprocess.Popen) -> None:
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=30)


def run_in_shell(line: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run(["bash", "-c", line], capture_output=True, text=True, env=env, timeout=120,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def newcomer(tmp_path):
    if external_endpoint() is not None:
        pytest.skip("starts its own gateways (S3_ENDPOINT is set)")
    return tmp_path / "data", shell_env(tmp_path)


def test_the_first_start_paste_line_works_as_printed(newcomer):
    data_dir, env = newcomer
    process, printed = start(data_dir, env)
    try:
        paste = [line.strip() for line in printed if line.strip().startswith("AWS_ACCESS_KEY_ID=")]
        assert len(paste) == 1, printed
        assert f"--region {REGION}" in paste[0], paste[0]
        made = run_in_shell(paste[0].replace(" s3 ls", " s3 mb s3://first-hour"), env)
        assert made.returncode == 0, made.stderr
        listed = run_in_shell(paste[0], env)
        assert listed.returncode == 0, listed.stderr
        assert "first-hour" in listed.stdout, listed.stdout
    finally:
        stop(process)


def test_a_restart_prints_the_key_id_and_an_admin_command_for_this_instance(newcomer):
    data_dir, env = newcomer
    process, _ = start(data_dir, env)
    stop(process)
    # A new port: the hint must name this one, not the default.
    process, printed = start(data_dir, env)
    try:
        assert len(printed) == 4, printed
        assert printed[0] == f"Data: {data_dir.resolve()}", printed
        assert printed[1].startswith("Root access key id: S3GW"), printed
        prefix, suffix = "Manage keys with: ", " (also keys create --name NAME, keys delete ACCESS_KEY)"
        assert printed[2].startswith(prefix) and printed[2].endswith(suffix), printed
        command = printed[2][len(prefix):-len(suffix)]
        endpoint = printed[3].split()[-1]
        assert f"--endpoint {endpoint}" in command and f"--region {REGION}" in command, command
        listed = run_in_shell(command, env)
        assert listed.returncode == 0, listed.stderr
        rows = [line.split() for line in listed.stdout.splitlines()]
        assert rows[0] == ["NAME", "ACCESS_KEY", "ROOT"] and ["root", printed[1].split()[-1], "yes"] in rows, rows
    finally:
        stop(process)


def test_the_start_names_its_data_dir_and_says_when_it_made_a_new_one(newcomer, tmp_path):
    data_dir, env = newcomer
    process, printed = start(data_dir, env)
    stop(process)
    assert printed[0] == f"Data: {data_dir.resolve()} (new: created by this start)", printed
    # The same relative data dir from another working directory is another store.
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    process = subprocess.Popen(
        [str(gateway_binary()), "--listen", f"127.0.0.1:{free_port()}", "--region", REGION],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, stdin=subprocess.DEVNULL, text=True, env=env,
        cwd=elsewhere)
    try:
        first = process.stdout.readline().rstrip("\n")
        assert first == f"Data: {(elsewhere / 'data').resolve()} (new: created by this start)", first
    finally:
        stop(process)

"""Every shell example in README.md, docs/configuration.md and
docs/operations.md is run here, as written (with this test's ports, paths
and keys put in), or excused below with the place that covers it; a new
example that is neither fails the first test. The TOML examples are loaded
by gateway/tests/docs.rs.
"""

import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import REPO_ROOT, external_endpoint, gateway_binary, make_s3_client
from gateway_process import free_port
from sigv4 import Credentials

DOCS = ["README.md", "docs/configuration.md", "docs/operations.md"]

# Commands not run here, by how they start, and what runs them instead.
EXCUSED = {
    "./scripts/test.sh": "the test command itself",
    "docker build": "no container engine here: helm/tests/test_image.py builds this Dockerfile's image "
                    "with scripts/build-image and boots it",
    "helm install": "needs a Kubernetes cluster: helm/tests renders, validates and unit-tests the chart",
    "conformance-tests/ozone/ozone-dev start": "scripts/test.sh starts the dev cluster for its Ozone phase",
}
CARGO_RUN = re.compile(r"cargo run --release -p s3-gateway( --)?")
FIXTURES = REPO_ROOT / "gateway" / "tests" / "fixtures"


def shell_commands() -> list[tuple[str, str]]:
    """(where, command) for every command of every ```sh block, comments
    dropped and continuation lines joined."""
    found = []
    for doc in DOCS:
        text = (REPO_ROOT / doc).read_text()
        for block in re.finditer(r"^```sh\n(.*?)^```", text, re.M | re.S):
            first_line = text[: block.start()].count("\n") + 2
            joined = block.group(1).replace("\\\n", " ")
            for offset, line in enumerate(joined.splitlines()):
                command = re.sub(r"(^|\s)#.*$", "", line).strip()
                if command:
                    found.append((f"{doc}:{first_line + offset}", re.sub(r"\s+", " ", command)))
    return found


def kind_of(command: str) -> str:
    if any(command.startswith(prefix) for prefix in EXCUSED):
        return "excused"
    if command.startswith(("export AWS_", "aws ")):
        return "aws"
    words = CARGO_RUN.sub("s3-gateway", command).split()
    words = [w for w in words if not re.fullmatch(r"[A-Z0-9_]+=\S*", w)]
    if words[:1] == ["source"] and "s3-gateway completions" in command:
        return "admin"
    if words[:2] in (["s3-gateway", "admin"], ["s3-gateway", "version"], ["s3-gateway", "man"]):
        return "admin"
    if words[:1] == ["s3-gateway"]:
        return "server"
    return "unknown"


def commands_of(kind: str) -> list[tuple[str, str]]:
    return [(where, command) for where, command in shell_commands() if kind_of(command) == kind]


def test_every_shell_example_is_run_or_excused():
    commands = shell_commands()
    assert len(commands) >= 15, commands
    unknown = [f"{where}: {command}" for where, command in commands if kind_of(command) == "unknown"]
    assert not unknown, "examples neither run nor excused:\n" + "\n".join(unknown)
    used = {prefix for prefix in EXCUSED if any(c.startswith(prefix) for _, c in commands)}
    assert used == set(EXCUSED), f"excuses for examples that no longer exist: {set(EXCUSED) - used}"


def shell_env(tmp_path: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "S3GW_"))}
    tools = [str(Path(sys.executable).parent), str(gateway_binary().parent)]
    env.update(PATH=os.pathsep.join([*tools, env.get("PATH", "")]), AWS_CONFIG_FILE=str(tmp_path / "no-config"),
               AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "no-credentials"), AWS_MAX_ATTEMPTS="1", AWS_PAGER="")
    return env


def the_example_config(tmp_path: Path) -> Path:
    """docs/configuration.md's embedded example at /etc/s3-gateway/gateway.toml's
    place here, with the keys file, SSE-S3 keyring and TLS files it names."""
    text = (REPO_ROOT / "docs" / "configuration.md").read_text()
    example = [b for b in re.findall(r"^```toml\n(.*?)^```", text, re.M | re.S) if "read_buffer" in b][0]
    etc = tmp_path / "etc"
    (etc / "tls").mkdir(parents=True)
    shutil.copy(FIXTURES / "tls-cert.pem", etc / "tls" / "cert.pem")
    shutil.copy(FIXTURES / "tls-key.pem", etc / "tls" / "key.pem")
    (etc / "keys.toml").write_text('[[keys]]\nname = "alice"\naccess_key = "S3GWEXAMPLEKEY000001"\n'
                                   'secret_key = "exampleexampleexampleexampleexample00001"\n')
    (etc / "keys.toml").chmod(0o600)  # a keys file others may read is refused
    (etc / "sse-master.keys").write_text("k1 q8Wl3mJ0c2Z1n3VgYkQx0tJmH1m5o8YbQp0yqK3wRz8=\n")
    (etc / "sse-master.keys").chmod(0o600)  # so is an SSE-S3 keyring
    config = etc / "gateway.toml"
    config.write_text(example.replace("/var/lib/s3-gateway", str(tmp_path / "var-lib")))
    return config


@pytest.fixture
def local(tmp_path):
    if external_endpoint() is not None:
        pytest.skip("starts its own gateways (S3_ENDPOINT is set)")
    return tmp_path


@pytest.mark.parametrize("where,command", commands_of("server"), ids=[w for w, _ in commands_of("server")])
def test_server_examples_start(local, where, command):
    """Each start line serves (/health answers) and stops cleanly on SIGTERM;
    one naming an Ozone cluster that is not here exits 1 naming it (its
    configuration was valid)."""
    port = free_port()
    command = CARGO_RUN.sub("s3-gateway", command).replace(":9878", f":{port}")
    command = command.replace("/etc/s3-gateway/gateway.toml", str(the_example_config(local)))
    command = command.replace("/var/lib/s3-gateway", str(local / "var-lib"))
    env = shell_env(local)
    if "--backend ozone" in command:
        # The dev cluster's records key, which `ozone-dev start` makes (a new one where no
        # cluster is: the start then fails on the missing OM, as below).
        records_key = os.environ.get("S3GW_OZONE_RECORDS_KEY_FILE")
        if not records_key:
            records_key = str(local / "records.key")
            Path(records_key).write_text("an-example-records-key-of-32-characters-or-more\n")
            Path(records_key).chmod(0o600)
        for example in ("~/.cache/s3gw-ozone/s3gw-records-key", "/etc/s3-gateway/records.key"):
            command = command.replace(example, records_key)
    if "--backend ozone" in command and os.environ.get("S3GW_OZONE_SYSTEM_SECRET_FILE"):
        # A secure cluster (ozone-dev env): what a start there needs besides --om.
        env["S3GW_OZONE_SYSTEM_SECRET_FILE"] = os.environ["S3GW_OZONE_SYSTEM_SECRET_FILE"]
    # Where the example keeps the default address, this test's port instead.
    env["S3GW_LISTEN"] = f"127.0.0.1:{port}"
    process = subprocess.Popen(["bash", "-c", command], cwd=local, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, stdin=subprocess.DEVNULL, text=True, start_new_session=True)
    try:
        endpoint = None
        for line in process.stdout:
            if line.startswith("s3-gateway listening on "):
                endpoint = line.split()[-1]
                break
        if endpoint is None:
            process.wait(timeout=60)
            stderr = process.stderr.read()
            om = re.search(r"--om (\S+)", command)
            assert om and process.returncode == 1, f"{where}: exited {process.returncode}: {stderr}"
            assert om.group(1) in stderr and "Ozone Manager" in stderr, f"{where}: {stderr}"
            return
        verify = str(FIXTURES / "test-ca.pem") if endpoint.startswith("https") else True
        assert requests.get(f"{endpoint}/health", timeout=10, verify=verify).status_code == 200, where
        os.killpg(process.pid, signal.SIGTERM)
        assert process.wait(timeout=30) == 0, f"{where}: {process.stderr.read()}"
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


def test_the_aws_cli_examples_run(local, own_server):
    """The AWS CLI block, with this server's endpoint and key."""
    script = "\n".join(command for _, command in commands_of("aws"))
    script = (script.replace("AWS_ACCESS_KEY_ID=S3GW...", f"AWS_ACCESS_KEY_ID={own_server.access_key}")
              .replace("AWS_SECRET_ACCESS_KEY=...", f"AWS_SECRET_ACCESS_KEY={own_server.secret_key}")
              .replace("http://127.0.0.1:9878", own_server.endpoint))
    assert "S3GW..." not in script and "=..." not in script, script
    (local / "cat.jpg").write_bytes(os.urandom(4096))
    result = subprocess.run(["bash", "-ec", script], cwd=local, env=shell_env(local), capture_output=True,
                            text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert result.returncode == 0, f"{script}\n{result.stdout}\n{result.stderr}"
    assert "cat.jpg" in result.stdout and '"ContentLength": 4096' in result.stdout, result.stdout


def test_the_admin_examples_run(local, own_server):
    """The key management block against this server (its endpoint and root
    key from the environment, as the README allows); `keys delete S3GW...`
    deletes the key `keys create` just made, and the bucket commands act on
    the bucket `photos` (the AWS CLI example's, whoever made it: on a shared
    Ozone cluster another server's root key may own it)."""
    root = make_s3_client(own_server.endpoint, Credentials(own_server.access_key, own_server.secret_key, "us-east-1"))
    try:
        root.create_bucket(Bucket="photos")
        root.put_object(Bucket="photos", Key="cat.jpg", Body=b"meow")
    except ClientError as err:
        assert err.response["Error"]["Code"] in ("BucketAlreadyExists", "BucketAlreadyOwnedByYou"), err
    env = shell_env(local)
    env.update(S3GW_ENDPOINT=own_server.endpoint, S3GW_ROOT_ACCESS_KEY=own_server.access_key,
               S3GW_ROOT_SECRET_KEY=own_server.secret_key, HOME=str(local))
    created = None
    for where, command in commands_of("admin"):
        if created is not None:
            command = command.replace("S3GW...", created)
        result = subprocess.run(["bash", "-c", command], cwd=local, env=env, capture_output=True, text=True,
                                timeout=120, stdin=subprocess.DEVNULL)
        assert result.returncode == 0, f"{where}: {command}\n{result.stdout}\n{result.stderr}"
        made = re.search(r'access_key = "(\w+)"', result.stdout)
        if made:
            created = made.group(1)
    assert created is not None, "no example created a key"

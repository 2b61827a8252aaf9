"""docs/examples: each short program (boto3, the AWS CLI, JS v3, Go v2, Java
v2, Rust, minio-go) runs against the server under test as a user would run
it: upload, download, list, presign, multipart, clean up, print `ok`.

They use the clients the SDK matrix installs (`sdk/run-matrix
--install-only`, which scripts/test.sh runs first): the same pinned
versions, so an example cannot drift from what is tested.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import SUITE_DIR

EXAMPLES = SUITE_DIR.parent / "docs" / "examples"
SDK = SUITE_DIR / "sdk"
PYTHON = SDK / "python" / ".venv" / "bin" / "python"
JAVA_JAR = SDK / "java" / "target" / "sdk-matrix-java.jar"
RUST_TARGET = Path(os.environ.get("S3GW_SDK_CARGO_TARGET_DIR", Path.home() / ".cache" / "s3gw-sdk-target"))
BUILT = Path(os.environ.get("S3GW_SDK_CACHE", Path.home() / ".cache" / "s3gw-sdk")) / "examples"


def installed(path: Path, sdk: str) -> None:
    if not path.exists():
        pytest.fail(f"the {sdk} client is not installed: run conformance-tests/sdk/run-matrix --install-only")


def build(command: list, cwd: Path, env: dict | None = None) -> None:
    done = subprocess.run(command, cwd=cwd, env={**os.environ, **(env or {})}, capture_output=True, text=True,
                          timeout=900, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0, done.stdout + done.stderr


def python_command() -> list:
    installed(PYTHON, "boto3")
    return [PYTHON, EXAMPLES / "python" / "example.py"]


def aws_cli_command() -> list:
    installed(PYTHON, "AWS CLI")
    return ["bash", EXAMPLES / "aws-cli.sh"]


def js_command() -> list:
    modules = SDK / "js" / "node_modules"
    installed(modules, "JS")
    # Node resolves packages from the script's directory up: lend it the matrix's.
    link = EXAMPLES / "js" / "node_modules"
    if not link.exists():
        link.symlink_to(modules)
    return ["node", EXAMPLES / "js" / "example.mjs"]


def go_command(program: str) -> list:
    binary = BUILT / f"go-{program}"
    build(["go", "build", "-mod=readonly", "-o", str(binary), f"./{program}"], EXAMPLES / "go")
    return [binary]


def java_command() -> list:
    installed(JAVA_JAR, "Java")
    return ["java", "-cp", JAVA_JAR, EXAMPLES / "java" / "Example.java"]


def rust_command() -> list:
    build(["cargo", "build", "--locked", "--bin", "s3gw-example"], SDK / "rust",
          {"CARGO_TARGET_DIR": str(RUST_TARGET)})
    return [RUST_TARGET / "debug" / "s3gw-example"]


PROGRAMS = {
    "boto3": python_command,
    "aws-cli": aws_cli_command,
    "js-v3": js_command,
    "go-v2": lambda: go_command("aws"),
    "minio-go": lambda: go_command("minio"),
    "java-v2": java_command,
    "rust": rust_command,
}


@pytest.mark.parametrize("sdk", PROGRAMS)
def test_the_example_runs_as_printed(target, tmp_path, sdk):
    command = PROGRAMS[sdk]()
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
    env.update(AWS_ENDPOINT_URL=target.endpoint, AWS_ACCESS_KEY_ID=target.creds.access_key,
               AWS_SECRET_ACCESS_KEY=target.creds.secret_key, AWS_REGION=target.creds.region,
               AWS_CONFIG_FILE=str(tmp_path / "none"), AWS_SHARED_CREDENTIALS_FILE=str(tmp_path / "none"),
               PATH=os.pathsep.join([str(PYTHON.parent), env.get("PATH", "")]))
    assert shutil.which(str(command[0]), path=env["PATH"]), f"{command[0]} is not on PATH"
    done = subprocess.run([str(part) for part in command], cwd=tmp_path, env=env, capture_output=True,
                          text=True, timeout=600, check=False, stdin=subprocess.DEVNULL)
    assert done.returncode == 0 and done.stdout.strip().endswith("ok"), done.stdout + done.stderr

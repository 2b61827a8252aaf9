"""The Apache Hadoop KMS that s3-gateway's SSE-KMS talks to, run by `kms/kms-dev` (see
kms/README.md): one JVM per instance, each with its own work dir and port, so pytest-xdist
workers and tests that crash their KMS never share one.

conftest.py's `hadoop_kms` fixture starts one per test module; `start_kms` starts more.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import requests

from gateway_process import free_port

SUITE_DIR = Path(__file__).resolve().parent
KMS_DEV = SUITE_DIR / "kms" / "kms-dev"
GATEWAY_USER = "s3gw"  # what the gateway's sse_kms_user defaults to: may only generate and decrypt EEKs
ADMIN_USER = "dev"  # creates and rolls keys, may read key material, never generate or decrypt EEKs
DEFAULT_KEYS = ("testkey-1", "testkey-2")
# The first start on a machine resolves the jars with Maven (about 100 MB into an empty ~/.m2).
START_TIMEOUT_SECONDS = 900


def missing_tools() -> list[str]:
    return [tool for tool in ("java", "mvn", "curl") if shutil.which(tool) is None]


class HadoopKms:
    """One kms-dev instance: `url` is what the gateway's `--sse-kms-url` takes."""

    def __init__(self, work_dir: Path, port: int, keys=DEFAULT_KEYS):
        self.work_dir = Path(work_dir).resolve()
        self.port = port
        self.keys = tuple(keys)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/kms"

    def run(self, *args: str, timeout: float = 120) -> str:
        """Runs `kms-dev ARGS` for this instance; its stdout, or an AssertionError."""
        env = dict(os.environ, KMS_DEV_DIR=str(self.work_dir), KMS_DEV_PORT=str(self.port),
                   KMS_DEV_KEYS=" ".join(self.keys))
        result = subprocess.run([str(KMS_DEV), *args], capture_output=True, text=True, env=env,
                                timeout=timeout, stdin=subprocess.DEVNULL)
        if result.returncode != 0:
            raise AssertionError(f"kms-dev {' '.join(args)} exited {result.returncode}\n"
                                 f"stdout:\n{result.stdout[-3000:]}\nstderr:\n{result.stderr[-3000:]}")
        return result.stdout

    def start(self) -> None:
        """Starts (again, after stop or kill: same keystore, same port) and waits until the keys exist."""
        self.run("start", timeout=START_TIMEOUT_SECONDS)

    def stop(self) -> None:
        self.run("stop", timeout=60)

    def kill(self) -> None:
        """SIGKILL: the KMS gone without a goodbye, its port refusing connections."""
        self.run("kill", timeout=60)

    def create_key(self, name: str) -> None:
        self.run("create-key", name)

    def roll_key(self, name: str) -> None:
        """A new current version of `name`; data keys made under older versions still decrypt."""
        self.run("roll-key", name)

    def key_names(self) -> list[str]:
        return self.run("keys").split()

    def log_tail(self, lines: int = 60) -> str:
        parts = []
        for name in ("kms.log", "kms-audit.log"):
            path = self.work_dir / "logs" / name
            if path.exists():
                parts.append(f"--- {path}\n" + "\n".join(path.read_text(errors="replace").splitlines()[-lines:]))
        return "\n".join(parts)

    def call(self, user: str, method: str, path: str, query: dict | None = None,
             json_body=None) -> requests.Response:
        """A KMS REST call (`/kms/v1/PATH`) as `user` (simple authentication: `user.name`)."""
        params = dict(query or {}, **{"user.name": user})
        return requests.request(method, f"{self.url}/v1/{path}", params=params, json=json_body, timeout=30)

    def generate_eek(self, key: str, user: str = GATEWAY_USER) -> requests.Response:
        return self.call(user, "GET", f"key/{key}/_eek", {"eek_op": "generate", "num_keys": "1"})

    def decrypt_eek(self, eek: dict, user: str = GATEWAY_USER) -> requests.Response:
        """Decrypts one entry of a generate answer ({versionName, iv, encryptedKeyVersion})."""
        body = {"name": eek["encryptedKeyVersion"]["name"], "iv": eek["iv"],
                "material": eek["encryptedKeyVersion"]["material"]}
        return self.call(user, "POST", f"keyversion/{eek['versionName']}/_eek", {"eek_op": "decrypt"}, body)


def start_kms(tmp_path_factory, name: str = "kms", keys=DEFAULT_KEYS) -> HadoopKms:
    """A fresh KMS on a free port in its own tmp dir, with `keys`; the caller stops it.
    Skips the test when java, mvn or curl is missing."""
    missing = missing_tools()
    if missing:
        pytest.skip(f"needs {', '.join(missing)} to run a Hadoop KMS (conformance-tests/kms/kms-dev)")
    work_dir = tmp_path_factory.mktemp(name)
    last_error = None
    # free_port() gives the port up before the KMS binds it; another worker may take it meanwhile.
    for _ in range(3):
        kms = HadoopKms(work_dir, free_port(), keys)
        try:
            kms.start()
            return kms
        except AssertionError as err:
            last_error = err
            if "already in use" not in str(err):
                raise
    raise last_error

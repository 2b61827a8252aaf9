"""Starting, stopping and crashing a real `s3-gateway` process."""

import os
import signal
import socket
import subprocess
import time
import tomllib
from pathlib import Path

import requests

import ozone_cluster

HEALTH_TIMEOUT_SECONDS = 60


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class GatewayProcess:
    """One server on a loopback port over `data_dir`; its output goes to `log_path`."""

    def __init__(self, binary: Path, data_dir: Path, log_path: Path, access_key: str, secret_key: str,
                 extra_args=()):
        self.binary = Path(binary)
        self.data_dir = Path(data_dir)
        self.log_path = Path(log_path)
        self.access_key = access_key
        self.secret_key = secret_key
        self.extra_args = list(extra_args)
        self.process: subprocess.Popen | None = None
        self.port: int | None = None

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        """Starts on a fresh port (a restart never waits for the old socket) and waits for /health."""
        self.port = free_port()
        if "ozone" in self.extra_args:
            ozone_cluster.give_s3_secret(self.access_key, self.secret_key)
        env = dict(os.environ)
        env["S3GW_ROOT_ACCESS_KEY"] = self.access_key
        env["S3GW_ROOT_SECRET_KEY"] = self.secret_key
        env.setdefault("RUST_BACKTRACE", "1")
        args = [str(self.binary), "--listen", f"127.0.0.1:{self.port}", "--data-dir", str(self.data_dir)]
        with open(self.log_path, "ab") as log:
            log.write(f"\n==== start: {' '.join(args + self.extra_args)}\n".encode())
            self.process = subprocess.Popen(
                args + self.extra_args, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env
            )
        self.wait_healthy()

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + HEALTH_TIMEOUT_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"s3-gateway exited with {self.process.returncode} before /health answered:\n{self.log_tail()}"
                )
            try:
                if requests.get(self.endpoint + "/health", timeout=2).status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"s3-gateway /health did not answer 200 within {HEALTH_TIMEOUT_SECONDS}s:\n{self.log_tail()}")

    def stop(self) -> None:
        """Graceful stop (SIGTERM), falling back to SIGKILL after 15 s."""
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()

    def kill9(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def log_tail(self, lines: int = 200) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return "(no log)"
        return "\n".join(text.splitlines()[-lines:])

    def admin(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        """Runs `s3-gateway admin --endpoint ... ARGS` with root credentials from the environment."""
        env = dict(os.environ)
        env["S3GW_ROOT_ACCESS_KEY"] = self.access_key
        env["S3GW_ROOT_SECRET_KEY"] = self.secret_key
        result = subprocess.run(
            [str(self.binary), "admin", "--endpoint", self.endpoint, *args],
            capture_output=True, text=True, env=env, timeout=60, stdin=subprocess.DEVNULL,
        )
        if check and result.returncode != 0:
            raise AssertionError(
                f"admin {' '.join(args)} exited {result.returncode}\nstdout:{result.stdout}\nstderr:{result.stderr}"
            )
        return result

    def create_key(self, name: str) -> dict:
        """`admin keys create --name NAME`, parsed from the TOML [[keys]] block it prints."""
        result = self.admin("keys", "create", "--name", name)
        try:
            parsed = tomllib.loads(result.stdout)
        except tomllib.TOMLDecodeError as err:
            raise AssertionError(f"admin keys create did not print TOML ({err}):\n{result.stdout}") from err
        keys = parsed.get("keys")
        assert isinstance(keys, list) and len(keys) == 1, f"expected one [[keys]] table:\n{result.stdout}"
        key = keys[0]
        for field in ("name", "access_key", "secret_key"):
            assert field in key, f"[[keys]] block lacks {field}:\n{result.stdout}"
        assert key["name"] == name
        return key

"""Shared helpers of the deployment tests: the chart, the tools that
scripts/install-deploy-tools installs, and the gateway binary.

Run with the tools venv: `$S3GW_TOOLS/venv/bin/python -m pytest helm/tests`
(scripts/test.sh does). No cluster, no container engine: helm renders,
kubernetes-validate and crd-check validate, umoci builds and unpacks.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

TESTS_DIR = Path(__file__).resolve().parent
REPO_ROOT = TESTS_DIR.parent.parent
CHART = REPO_ROOT / "helm" / "s3-gateway"
# The oldest Kubernetes the chart supports (Chart.yaml kubeVersion) and the
# newest kubernetes-validate has schemas for.
KUBE_VERSIONS = ["1.29.0", "1.37.0"]
VALUES_FILES = sorted((CHART / "ci").glob("*.yaml")) + sorted((CHART / "examples").glob("*.yaml"))
TOOLS = Path(os.environ.get("S3GW_TOOLS", Path.home() / ".cache" / "s3-gateway-tools"))


def tool(name: str) -> str:
    for candidate in (TOOLS / "bin" / name, TOOLS / "venv" / "bin" / name):
        if candidate.is_file():
            return str(candidate)
    found = shutil.which(name)
    if found is None:
        raise pytest.UsageError(f"{name} is missing: run scripts/install-deploy-tools")
    return found


def run(args: list[str], check: bool = True, **kwargs) -> subprocess.CompletedProcess:
    result = subprocess.run(args, capture_output=True, text=True, stdin=subprocess.DEVNULL, **kwargs)
    if check and result.returncode != 0:
        raise AssertionError(f"{' '.join(args)} exited {result.returncode}\n{result.stdout}\n{result.stderr}")
    return result


def helm_template(*args: str, kube_version: str = KUBE_VERSIONS[-1], check: bool = True) -> subprocess.CompletedProcess:
    return run([tool("helm"), "template", "release", str(CHART), "--namespace", "s3",
                "--kube-version", kube_version, *args], check=check)


def render(*args: str, kube_version: str = KUBE_VERSIONS[-1]) -> list[dict]:
    """The rendered objects (tests and hooks included)."""
    return [doc for doc in yaml.safe_load_all(helm_template(*args, kube_version=kube_version).stdout) if doc]


def find(objects: list[dict], kind: str, name_suffix: str = "") -> dict:
    matches = [o for o in objects if o["kind"] == kind and o["metadata"]["name"].endswith(name_suffix)]
    assert len(matches) == 1, f"expected one {kind} named *{name_suffix}, got {[o['metadata']['name'] for o in matches]}"
    return matches[0]


def gateway_binary() -> Path:
    """The debug binary scripts/test.sh built (S3GW_BIN), else the workspace's."""
    if os.environ.get("S3GW_BIN"):
        return Path(os.environ["S3GW_BIN"])
    target = Path(os.environ.get("CARGO_TARGET_DIR", REPO_ROOT / "target"))
    binary = target / "debug" / "s3-gateway"
    if not binary.is_file():
        subprocess.run(["cargo", "build", "-p", "s3-gateway"], cwd=REPO_ROOT, check=True)
    return binary

"""The image, built without a container engine (scripts/build-image, umoci)
and booted from its own root filesystem: what the Dockerfile says it is
(user, entrypoint, arguments, port), nothing in it but the static binary
and /data, and the binary started from the unpacked rootfs (chroot, as UID
65532) answers /health and /ready and a signed PUT/GET/DELETE, both from
boto3 and from the image's own `admin check` (the `helm test` hook).

S3GW_IMAGE=LAYOUT:TAG names an image scripts/test.sh already built;
without it the image is built here.
"""

import hashlib
import json
import os
import re
import shlex
import subprocess
import tarfile
import time
from pathlib import Path

import boto3
import pytest
import requests
from botocore.config import Config

from conftest import REPO_ROOT, run, tool

# Building the image (release, musl) can take minutes on a cold cache.
pytestmark = pytest.mark.timeout(1800)

UID = 65532
ROOT_ACCESS_KEY = "S3GWIMAGETEST0000001"
ROOT_SECRET_KEY = "image-test-secret-image-test-secret-0001"


@pytest.fixture(scope="module")
def image(tmp_path_factory) -> str:
    if os.environ.get("S3GW_IMAGE"):
        return os.environ["S3GW_IMAGE"]
    out = tmp_path_factory.mktemp("image")
    built = run([str(REPO_ROOT / "scripts" / "build-image"), str(out)], timeout=3600)
    return built.stdout.strip().splitlines()[-1]


def blob(layout: Path, digest: str) -> bytes:
    algorithm, value = digest.split(":")
    data = (layout / "blobs" / algorithm / value).read_bytes()
    assert hashlib.sha256(data).hexdigest() == value, f"blob {digest} does not match its digest"
    return data


def manifest_and_config(image: str) -> tuple[Path, dict, dict]:
    layout, tag = image.rsplit(":", 1)
    layout = Path(layout)
    index = json.loads((layout / "index.json").read_text())
    [entry] = [m for m in index["manifests"] if m["annotations"]["org.opencontainers.image.ref.name"] == tag]
    manifest = json.loads(blob(layout, entry["digest"]))
    return layout, manifest, json.loads(blob(layout, manifest["config"]["digest"]))


def dockerfile_runtime() -> dict:
    """USER, EXPOSE, ENTRYPOINT and CMD of the Dockerfile's last stage."""
    text = (REPO_ROOT / "Dockerfile").read_text()
    runtime = text[text.rindex("\nFROM "):]
    found = {}
    for instruction in ("USER", "EXPOSE", "ENTRYPOINT", "CMD"):
        [value] = re.findall(rf"^{instruction} (.+)$", runtime, re.MULTILINE)
        found[instruction] = json.loads(value) if value.startswith("[") else value
    assert runtime.startswith("\nFROM scratch"), "the runtime stage is an empty base"
    return found


def test_image_is_what_the_dockerfile_says(image):
    _, manifest, config = manifest_and_config(image)
    dockerfile = dockerfile_runtime()
    assert config["os"] == "linux" and config["architecture"] == "amd64"
    assert config["config"]["User"] == dockerfile["USER"] == f"{UID}:{UID}"
    assert config["config"]["Entrypoint"] == dockerfile["ENTRYPOINT"] == ["/s3-gateway"]
    assert config["config"]["Cmd"] == dockerfile["CMD"] == ["--listen", "0.0.0.0:9878", "--data-dir", "/data"]
    assert list(config["config"]["ExposedPorts"]) == [f"{dockerfile['EXPOSE']}/tcp"]
    assert len(manifest["layers"]) == 1


def test_image_holds_the_static_binary_and_data_only(image, tmp_path):
    layout, manifest, _ = manifest_and_config(image)
    layer = tmp_path / "layer.tar.gz"
    layer.write_bytes(blob(layout, manifest["layers"][0]["digest"]))
    with tarfile.open(layer) as archive:
        members = {m.name.lstrip("./").rstrip("/"): m for m in archive.getmembers() if m.name.strip("./")}
        assert set(members) == {"s3-gateway", "data"}, sorted(members)
        binary, data = members["s3-gateway"], members["data"]
        assert binary.isfile() and binary.mode == 0o555 and binary.uid == 0
        assert data.isdir() and (data.uid, data.gid, data.mode) == (UID, UID, 0o750)
        head = archive.extractfile(binary).read(4096)
    assert head[:4] == b"\x7fELF"
    assert b"/lib64/ld-linux" not in head and b"/lib/ld-musl" not in head, "no program interpreter: static"


@pytest.fixture(scope="module")
def booted(image, tmp_path_factory):
    """The image's entrypoint started as the image's user inside its unpacked
    rootfs, on a loopback port instead of the default 0.0.0.0:9878."""
    bundle = tmp_path_factory.mktemp("bundle") / "bundle"
    run([tool("umoci"), "unpack", "--image", image, str(bundle)])
    spec = json.loads((bundle / "config.json").read_text())
    entrypoint = spec["process"]["args"][0]
    user = spec["process"]["user"]
    assert (user["uid"], user["gid"]) == (UID, UID)
    port = free_port()
    endpoint = f"http://127.0.0.1:{port}"
    rootfs = bundle / "rootfs"
    log = bundle.parent / "gateway.log"
    env = {"S3GW_ROOT_ACCESS_KEY": ROOT_ACCESS_KEY, "S3GW_ROOT_SECRET_KEY": ROOT_SECRET_KEY}
    chroot = [tool("chroot"), f"--userspec={UID}:{UID}", str(rootfs), entrypoint]
    with open(log, "w") as out:
        process = subprocess.Popen([*chroot, "--listen", f"127.0.0.1:{port}", "--data-dir", "/data"],
                                   stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env)
    try:
        wait_healthy(endpoint, process, log)
        yield {"endpoint": endpoint, "process": process, "chroot": chroot, "env": env, "rootfs": rootfs}
    finally:
        process.terminate()
        process.wait(timeout=30)


def free_port() -> int:
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def wait_healthy(endpoint: str, process: subprocess.Popen, log: Path) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the image's binary exited {process.returncode}:\n{log.read_text()}")
        try:
            if requests.get(f"{endpoint}/health", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.1)
    raise AssertionError(f"/health did not answer within 30 s:\n{log.read_text()}")


def test_booted_image_runs_as_its_user_and_answers_probes(booted):
    status = Path(f"/proc/{booted['process'].pid}/status").read_text()
    assert re.search(rf"^Uid:\s+{UID}\s+{UID}\s+{UID}\s+{UID}$", status, re.MULTILINE), status
    assert requests.get(f"{booted['endpoint']}/health", timeout=5).text == "ok\n"
    assert requests.get(f"{booted['endpoint']}/ready", timeout=5).status_code == 200
    assert (booted["rootfs"] / "data").stat().st_uid == UID


def test_booted_image_serves_signed_requests(booted):
    s3 = boto3.client("s3", endpoint_url=booted["endpoint"], region_name="us-east-1",
                      aws_access_key_id=ROOT_ACCESS_KEY, aws_secret_access_key=ROOT_SECRET_KEY,
                      config=Config(s3={"addressing_style": "path"}, retries={"max_attempts": 1}))
    body = os.urandom(300_000)
    s3.create_bucket(Bucket="image-test")
    s3.put_object(Bucket="image-test", Key="dir/object", Body=body)
    assert s3.get_object(Bucket="image-test", Key="dir/object")["Body"].read() == body
    s3.delete_object(Bucket="image-test", Key="dir/object")
    s3.delete_bucket(Bucket="image-test")


def test_booted_image_checks_itself_as_helm_test_does(booted):
    """The `helm test` pod's command, run from the image itself."""
    result = run([*booted["chroot"], "admin", "--endpoint", booted["endpoint"], "check"], env=booted["env"])
    assert "GET returned the same 262144 bytes" in result.stdout, result.stdout


def test_booted_image_metrics_pass_promtool(booted):
    metrics = requests.get(f"{booted['endpoint']}/metrics", timeout=5).text
    result = subprocess.run([tool("promtool"), "check", "metrics"], input=metrics, capture_output=True, text=True)
    assert result.returncode == 0, shlex.join(["promtool", "check", "metrics"]) + "\n" + result.stdout + result.stderr

"""Disk faults under the embedded back end, on real file systems: a full
disk (a small tmpfs) and a read error (an ext4 image on a loop device whose
end is cut off). Both need root and mount(8); without them the tests skip
and say why. A flipped bit on disk is covered by the storage suite
(storage-client/tests/embedded.rs, flipped_bit_on_disk_is_corrupt).
"""

import contextlib
import os
import shutil
import subprocess
from pathlib import Path

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import (BINARY, OZONE_OM, STARTED_SERVERS, external_endpoint, gateway_binary,
                      make_s3_client, random_key_pair)
from gateway_process import GatewayProcess
from sigv4 import Credentials

pytestmark = pytest.mark.skipif(
    bool(OZONE_OM) or external_endpoint() is not None,
    reason="injects faults into the embedded back end's data dir",
)

MIB = 1024 * 1024


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(list(args), capture_output=True, text=True, stdin=subprocess.DEVNULL)


@contextlib.contextmanager
def mounted(*mount_args: str, where: Path):
    """Mounts with `mount MOUNT_ARGS where`, or skips the test saying why."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a test file system needs root")
    result = run("mount", *mount_args, str(where))
    if result.returncode != 0:
        pytest.skip(f"cannot mount a test file system here: {result.stderr.strip()}")
    try:
        yield where
    finally:
        run("umount", "-l", str(where))


def start_gateway(data_dir: Path, log: Path, extra_args=()) -> GatewayProcess:
    binary = BINARY[0] if BINARY else gateway_binary()
    access, secret = random_key_pair()
    server = GatewayProcess(binary, data_dir, log, access, secret, list(extra_args))
    STARTED_SERVERS.append(server)
    server.start()
    return server


def client(server: GatewayProcess):
    return make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))


def error_of(call) -> ClientError:
    with pytest.raises(ClientError) as raised:
        call()
    return raised.value


def fill(path: Path) -> None:
    """Writes zeros to `path` until the file system has no byte left."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        for size in (MIB, 64 * 1024, 4096, 512, 1):
            with contextlib.suppress(OSError):
                while os.write(fd, bytes(size)) == size:
                    pass
    finally:
        os.close(fd)


def test_full_disk_refuses_puts_with_507_keeps_objects_and_recovers(tmp_path):
    with mounted("-t", "tmpfs", "-o", "size=48m", "tmpfs", where=tmp_path / "disk") as disk:
        server = start_gateway(disk / "data", tmp_path / "gateway.log")
        try:
            s3 = client(server)
            s3.create_bucket(Bucket="full")
            before = {f"before-{i}": os.urandom(size) for i, size in enumerate([0, 1, 5000, 3 * MIB])}
            for key, data in before.items():
                s3.put_object(Bucket="full", Key=key, Body=data)

            fill(disk / "filler")
            statuses = set()
            for key, size in [("small", 10), ("medium", 200_000), ("large", 8 * MIB)]:
                err = error_of(lambda: s3.put_object(Bucket="full", Key=key, Body=os.urandom(size)))
                statuses.add(err.response["ResponseMetadata"]["HTTPStatusCode"])
                assert err.response["Error"]["Code"] == "InsufficientStorage", err.response
                assert "RequestId" in err.response["ResponseMetadata"]
            assert statuses == {507}
            upload = s3.create_multipart_upload(Bucket="full", Key="parts")["UploadId"]
            err = error_of(lambda: s3.upload_part(Bucket="full", Key="parts", UploadId=upload, PartNumber=1,
                                                  Body=os.urandom(6 * MIB)))
            assert err.response["Error"]["Code"] == "InsufficientStorage", err.response

            # What was stored stays readable, and nothing refused became visible.
            for key, data in before.items():
                assert s3.get_object(Bucket="full", Key=key)["Body"].read() == data
            listed = {o["Key"] for o in s3.list_objects_v2(Bucket="full").get("Contents", [])}
            assert listed == set(before)
            assert requests.get(server.endpoint + "/health", timeout=5).status_code == 200

            # Space comes back: the same server stores again, no restart.
            (disk / "filler").unlink()
            after = os.urandom(3 * MIB)
            s3.put_object(Bucket="full", Key="after", Body=after)
            assert s3.get_object(Bucket="full", Key="after")["Body"].read() == after
            part = s3.upload_part(Bucket="full", Key="parts", UploadId=upload, PartNumber=1, Body=after)
            s3.complete_multipart_upload(Bucket="full", Key="parts", UploadId=upload, MultipartUpload={
                "Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
            assert s3.get_object(Bucket="full", Key="parts")["Body"].read() == after
            s3.delete_object(Bucket="full", Key="before-3")
            assert server.process.poll() is None
        finally:
            server.stop()


def physical_extents(path: Path) -> list[int]:
    """Byte offsets on the device of the extents of `path`, per filefrag."""
    result = run("filefrag", "-b4096", "-e", str(path))
    assert result.returncode == 0, result.stderr
    starts = []
    for line in result.stdout.splitlines():
        fields = line.replace(":", " ").replace("..", " ").split()
        if len(fields) > 4 and fields[0].isdigit():
            starts.append(int(fields[3]) * 4096)
    assert starts, f"no extent in filefrag output:\n{result.stdout}"
    return starts


def drop_cached_pages(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)


def test_read_error_on_disk_is_an_error_never_wrong_bytes(tmp_path):
    for tool in ("losetup", "mkfs.ext4", "filefrag"):
        if shutil.which(tool) is None:
            pytest.skip(f"{tool} is not installed")
    image = tmp_path / "disk.img"
    with open(image, "wb") as out:
        out.truncate(256 * MIB)
    made = run("mkfs.ext4", "-q", "-F", "-b", "4096", str(image))
    assert made.returncode == 0, made.stderr
    attached = run("losetup", "--find", "--show", str(image))
    if attached.returncode != 0:
        pytest.skip(f"cannot attach a loop device here: {attached.stderr.strip()}")
    device = attached.stdout.strip()
    try:
        with mounted(device, where=tmp_path / "disk") as disk:
            server = start_gateway(disk / "data", tmp_path / "gateway.log")
            try:
                s3 = client(server)
                s3.create_bucket(Bucket="eio")
                data = os.urandom(4 * MIB)
                s3.put_object(Bucket="eio", Key="victim", Body=data)
                blocks = [p for p in (disk / "data").rglob("*.block") if p.stat().st_size == len(data)]
                assert len(blocks) == 1, blocks
                extents = physical_extents(blocks[0])
                assert len(extents) == 1, f"the block is fragmented on a fresh file system: {extents}"
                # Cut the device off 1 MiB into the block: its head still
                # reads, every read past it fails with EIO.
                cut = extents[0] + MIB
                os.truncate(image, cut)
                refreshed = run("losetup", "--set-capacity", device)
                assert refreshed.returncode == 0, refreshed.stderr
                drop_cached_pages(blocks[0])

                try:
                    body = s3.get_object(Bucket="eio", Key="victim")["Body"].read()
                except ClientError as err:
                    assert err.response["ResponseMetadata"]["HTTPStatusCode"] == 500, err.response
                except Exception:  # the response had begun: the connection is cut short
                    pass
                else:
                    pytest.fail(f"a GET over unreadable blocks returned {len(body)} bytes"
                                f"{' (the right ones)' if body == data else ''}")
                ranged = f"bytes={2 * MIB}-{2 * MIB + 99}"
                err = error_of(lambda: s3.get_object(Bucket="eio", Key="victim", Range=ranged)["Body"].read())
                assert err.response["ResponseMetadata"]["HTTPStatusCode"] == 500, err.response
                assert err.response["Error"]["Code"] == "InternalError"
                # The readable head is still served, and right.
                head = s3.get_object(Bucket="eio", Key="victim", Range="bytes=0-999")["Body"].read()
                assert head == data[:1000]
                assert server.process.poll() is None, "the gateway died on a read error"
            finally:
                server.kill9()
    finally:
        run("losetup", "-d", device)

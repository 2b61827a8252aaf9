"""kill -9 at random moments under a mixed load (PUT, multipart complete,
copy, delete, tagging), several rounds: every acknowledged operation
survives, nothing is torn, and afterwards the reclaimer gives back every
block that no surviving object needs.

Each worker owns its keys and runs one operation at a time, so what a key
must hold is known exactly: the state the last acknowledged operation left,
or, for the one operation in flight when the server died, the state it
would leave (it may or may not have happened; either is correct).
"""

import hashlib
import os
import random
import threading
import time
from dataclasses import dataclass, field

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import OZONE_OM, make_s3_client, start_server, unique_bucket_name
from gateway_process import GatewayProcess
from sigv4 import Credentials

pytestmark = pytest.mark.skipif(bool(OZONE_OM), reason="counts the embedded back end's block files")

WORKERS = 4
KEYS_PER_WORKER = 6
ROUNDS = 4
MIB = 1024 * 1024
SIZES = [0, 1, 700, 64 * 1024 + 3, 300_000, 2 * MIB + 5]
# Reclaim every pass, with no grace, so that leaked blocks show at once.
RECLAIM_ARGS = ["--reclaim-interval", "1s", "--reclaim-grace", "0s"]
# After the last crash: abandoned uploads and PUTs expire too.
EXPIRE_ARGS = ["--open-key-expiry", "1s", "--multipart-upload-expiry", "1s"]


@dataclass(frozen=True)
class State:
    """What one key holds: None for no object, else digest and size of the bytes, and the tags."""

    digest: str
    size: int
    tags: tuple = ()


def state_of(data: bytes, tags=()) -> State:
    return State(hashlib.sha256(data).hexdigest(), len(data), tuple(sorted(tags)))


@dataclass
class Worker:
    index: int
    rng: random.Random
    acked: dict = field(default_factory=dict)  # key -> State | None
    pending: tuple | None = None  # (key, State | None) in flight
    error: BaseException | None = None
    ops: int = 0

    def key(self, i: int) -> str:
        return f"w{self.index}/k{i}"


def client(server: GatewayProcess):
    return make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))


def tag_set(tags) -> dict:
    return {"TagSet": [{"Key": k, "Value": v} for k, v in tags]}


def one_operation(s3, bucket: str, worker: Worker) -> None:
    """Runs one random operation; records what it will leave before, and acknowledges it after."""
    rng = worker.rng
    key = worker.key(rng.randrange(KEYS_PER_WORKER))
    current = worker.acked.get(key)
    choice = rng.choice(["put", "put", "put", "multipart", "copy", "copy", "delete", "tagging", "tagging"])
    if choice == "put":
        data = os.urandom(rng.choice(SIZES))
        tags = (("kind", "put"),) if rng.random() < 0.3 else ()
        worker.pending = (key, state_of(data, tags))
        extra = {"Tagging": "kind=put"} if tags else {}
        s3.put_object(Bucket=bucket, Key=key, Body=data, **extra)
    elif choice == "multipart":
        # Every part but the last has S3's 5 MiB minimum; one part may be any size.
        last = os.urandom(rng.choice([1, 100_000]))
        parts = [os.urandom(5 * MIB), last] if rng.random() < 0.25 else [last]
        worker.pending = (key, state_of(b"".join(parts)))
        upload = s3.create_multipart_upload(Bucket=bucket, Key=key)["UploadId"]
        etags = [s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=n + 1, Body=part)["ETag"]
                 for n, part in enumerate(parts)]
        s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload, MultipartUpload={
            "Parts": [{"PartNumber": n + 1, "ETag": etag} for n, etag in enumerate(etags)]})
    elif choice == "copy":
        source = worker.key(rng.randrange(KEYS_PER_WORKER))
        if worker.acked.get(source) is None or source == key:
            return
        worker.pending = (key, worker.acked[source])
        s3.copy_object(Bucket=bucket, Key=key, CopySource={"Bucket": bucket, "Key": source})
    elif choice == "delete":
        worker.pending = (key, None)
        s3.delete_object(Bucket=bucket, Key=key)
    else:
        if current is None:
            return
        tags = (("n", str(worker.ops)), ("kind", "tagging"))
        worker.pending = (key, State(current.digest, current.size, tuple(sorted(tags))))
        s3.put_object_tagging(Bucket=bucket, Key=key, Tagging=tag_set(tags))
    pending_key, after = worker.pending
    worker.acked[pending_key] = after
    worker.pending = None
    worker.ops += 1


def load(server: GatewayProcess, bucket: str, worker: Worker, killing: threading.Event) -> None:
    """Operations until one fails; a failure counts unless the kill had begun. (Not
    `process.poll()`: while the main thread waits for the killed process, poll()
    from another thread answers None, "still running".)"""
    s3 = client(server)
    while not killing.is_set():
        try:
            one_operation(s3, bucket, worker)
        except Exception as err:  # the server died under us, or a real failure
            if not killing.is_set():
                worker.error = err
            return


def observed(s3, bucket: str, key: str) -> State | None:
    try:
        body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
    except ClientError as err:
        if err.response["Error"]["Code"] == "NoSuchKey":
            return None
        raise
    tags = s3.get_object_tagging(Bucket=bucket, Key=key)["TagSet"]
    return state_of(body, [(t["Key"], t["Value"]) for t in tags])


def check_and_adopt(s3, bucket: str, workers: list[Worker]) -> int:
    """Every key holds its acknowledged state or its in-flight one; the observed state becomes the new truth."""
    wrong = []
    listed = {o["Key"]: o["Size"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
              for o in page.get("Contents", [])}
    for worker in workers:
        for i in range(KEYS_PER_WORKER):
            key = worker.key(i)
            allowed = [worker.acked.get(key)]
            if worker.pending and worker.pending[0] == key:
                allowed.append(worker.pending[1])
            seen = observed(s3, bucket, key)
            if seen not in allowed:
                wrong.append((key, seen, allowed))
            if (seen is None) != (key not in listed) or (seen and listed[key] != seen.size):
                wrong.append((key, "listing disagrees", listed.get(key), seen))
            worker.acked[key] = seen
        worker.pending = None
    assert not wrong, f"after kill -9, keys hold neither their acknowledged nor their in-flight state: {wrong[:5]}"
    return sum(w.ops for w in workers)


def block_files(data_dir) -> tuple[int, int, int]:
    """Bytes in *.block files, and how many .block and .crc files there are."""
    sizes = []
    for path in data_dir.rglob("*.block"):
        try:
            sizes.append(path.stat().st_size)
        except FileNotFoundError:  # reclaimed between the listing and the stat
            pass
    sums = list(data_dir.rglob("*.crc"))
    return sum(sizes), len(sizes), len(sums)


def small_blocks(server: GatewayProcess) -> tuple[int, int]:
    """Bytes and count of the blocks kept as database rows (om.redb with their key, dn.redb), as /metrics reports them."""
    text = requests.get(f"{server.endpoint}/metrics", timeout=10).text
    values = {}
    for line in text.splitlines():
        name, _, value = line.partition(" ")
        if name in ("s3gw_small_blocks", "s3gw_small_block_bytes"):
            values[name] = int(value)
    assert len(values) == 2, "the embedded gateway reports its small-block store"
    return values["s3gw_small_block_bytes"], values["s3gw_small_blocks"]


def test_kill9_under_mixed_load_keeps_acknowledged_state_and_leaks_no_blocks(tmp_path_factory):
    server = start_server(tmp_path_factory, "crash-gateway", RECLAIM_ARGS)
    try:
        bucket = unique_bucket_name("crash-mixed")
        client(server).create_bucket(Bucket=bucket)
        workers = [Worker(w, random.Random(w)) for w in range(WORKERS)]
        rng = random.Random(1)
        for round_number in range(ROUNDS):
            killing = threading.Event()
            threads = [threading.Thread(target=load, args=(server, bucket, w, killing), daemon=True) for w in workers]
            for thread in threads:
                thread.start()
            # A random moment: some operations in, then a little into the next ones.
            wanted = sum(w.ops for w in workers) + rng.randint(8, 20)
            deadline = time.monotonic() + 120
            while sum(w.ops for w in workers) < wanted and time.monotonic() < deadline:
                assert not any(w.error for w in workers), [w.error for w in workers if w.error]
                time.sleep(0.05)
            time.sleep(rng.uniform(0, 0.3))
            killing.set()
            server.kill9()
            for thread in threads:
                thread.join(timeout=60)
            assert not any(t.is_alive() for t in threads), "a client hung after the server was killed"
            errors = [w.error for w in workers if w.error]
            assert not errors, f"an operation failed while the server was up: {errors[0]!r}"
            server.start()
            done = check_and_adopt(client(server), bucket, workers)
            print(f"round {round_number + 1}: {done} operations acknowledged so far")
        assert sum(w.ops for w in workers) >= 40, "too few operations ran to mean anything"

        # Restart once more with short expiries: uploads and PUTs cut off by
        # the kills are abandoned, and every block no object needs goes.
        server.stop()
        server.extra_args = server.extra_args + EXPIRE_ARGS
        server.start()
        s3 = client(server)
        check_and_adopt(s3, bucket, workers)
        live = sum(o["Size"] for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket)
                   for o in page.get("Contents", []))
        print(f"before reclaiming: {block_files(server.data_dir)} (bytes, block files, checksum files), "
              f"{small_blocks(server)} (bytes, small blocks); live {live}")
        # Both are the reclaimer's work, in passes of their own: an upload cut
        # off before its first part holds no block, so the blocks can be
        # clean a pass before the upload expires.
        deadline = time.monotonic() + 60
        while True:
            on_disk, blocks, sums = block_files(server.data_dir)
            small_bytes, small_count = small_blocks(server)
            uploads = s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])
            if on_disk + small_bytes == live and blocks == sums and not uploads:
                break
            assert time.monotonic() < deadline, (
                f"blocks leaked: {on_disk} bytes in {blocks} block files ({sums} checksum files) "
                f"and {small_bytes} bytes in {small_count} small blocks "
                f"for {live} bytes of live objects; uploads left: {[u['Key'] for u in uploads]}")
            time.sleep(0.5)
    finally:
        server.kill9()

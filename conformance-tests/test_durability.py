"""Durability: a restart loses nothing; kill -9 during writes loses no acknowledged PUT and shows no torn object."""

import hashlib
import os
import random
import threading
import uuid

from botocore.exceptions import ClientError

from conftest import make_s3_client, unique_bucket_name
from gateway_process import GatewayProcess
from sigv4 import Credentials

WRITERS = 6
ACKS_BEFORE_KILL = 60
MAX_PUTS_PER_WRITER = 400


def client_for(server: GatewayProcess, creds: Credentials | None = None):
    return make_s3_client(server.endpoint, creds or Credentials(server.access_key, server.secret_key))


def snapshot(s3, bucket: str) -> dict:
    """Key -> (sha256 of content, ETag, content type, user metadata)."""
    state = {}
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for entry in page.get("Contents", []):
            got = s3.get_object(Bucket=bucket, Key=entry["Key"])
            body = got["Body"].read()
            assert len(body) == entry["Size"]
            state[entry["Key"]] = (hashlib.sha256(body).hexdigest(), got["ETag"], got["ContentType"],
                                   got["Metadata"])
    return state


def test_restart_keeps_buckets_objects_metadata_and_keys(own_server):
    s3 = client_for(own_server)
    # Unique names (key names too): on Ozone the cluster outlives every run.
    user = own_server.create_key(f"durable-user-{uuid.uuid4().hex[:8]}")
    user_creds = Credentials(user["access_key"], user["secret_key"])
    buckets = [unique_bucket_name("durable-one"), unique_bucket_name("durable-two")]
    user_bucket = unique_bucket_name("durable-user")
    for name in buckets:
        s3.create_bucket(Bucket=name)
    objects = {
        "empty": b"",
        "one": b"1",
        "dir/medium.bin": os.urandom(100_000),
        "dir/large.bin": os.urandom(3 * 1024 * 1024),
        "ünïcödé/ключ": b"unicode",
    }
    for key, data in objects.items():
        s3.put_object(Bucket=buckets[0], Key=key, Body=data, ContentType="application/x-durable",
                      Metadata={"origin": key.encode("ascii", "replace").decode()})
    s3.put_object(Bucket=buckets[1], Key="deleted-before-restart", Body=b"gone")
    s3.delete_object(Bucket=buckets[1], Key="deleted-before-restart")
    client_for(own_server, user_creds).create_bucket(Bucket=user_bucket)
    before = snapshot(s3, buckets[0])

    own_server.stop()
    own_server.start()

    s3 = client_for(own_server)
    names = {b["Name"] for b in s3.list_buckets()["Buckets"]}
    assert set(buckets) <= names
    assert snapshot(s3, buckets[0]) == before
    for key, data in objects.items():
        assert s3.get_object(Bucket=buckets[0], Key=key)["Body"].read() == data
    assert s3.list_objects_v2(Bucket=buckets[1])["KeyCount"] == 0
    user_client = client_for(own_server, user_creds)
    assert [b["Name"] for b in user_client.list_buckets()["Buckets"]] == [user_bucket]


def put_load(server: GatewayProcess, bucket: str, writer: int, attempted: dict, acked: dict,
             enough: threading.Event, lock: threading.Lock):
    """Writes distinct keys until the server dies; records each payload before and after its 200."""
    s3 = client_for(server)
    rng = random.Random(writer)
    for index in range(MAX_PUTS_PER_WRITER):
        key = f"w{writer}/{index:04d}"
        payload = os.urandom(rng.choice([0, 1, 700, 5000, 64 * 1024 + 3, 300_000]))
        with lock:
            attempted[key] = payload
        try:
            response = s3.put_object(Bucket=bucket, Key=key, Body=payload)
        except Exception:  # the server was killed under us: stop writing
            return
        if response["ResponseMetadata"]["HTTPStatusCode"] != 200:
            return
        with lock:
            acked[key] = payload
            if len(acked) >= ACKS_BEFORE_KILL:
                enough.set()
    enough.set()


def test_kill9_during_put_load_loses_no_acknowledged_object(own_server):
    bucket = unique_bucket_name("crash")
    client_for(own_server).create_bucket(Bucket=bucket)
    attempted, acked = {}, {}
    lock, enough = threading.Lock(), threading.Event()
    writers = [
        threading.Thread(target=put_load, args=(own_server, bucket, w, attempted, acked, enough, lock), daemon=True)
        for w in range(WRITERS)
    ]
    for writer in writers:
        writer.start()
    assert enough.wait(timeout=90), f"only {len(acked)} PUTs acknowledged before the deadline"
    own_server.kill9()
    for writer in writers:
        writer.join(timeout=60)
    assert not any(w.is_alive() for w in writers), "a writer hung after the server was killed"
    with lock:
        acked_now, attempted_now = dict(acked), dict(attempted)
    assert len(acked_now) >= ACKS_BEFORE_KILL

    own_server.start()
    s3 = client_for(own_server)

    missing, wrong = [], []
    for key, payload in acked_now.items():
        try:
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
        except ClientError as err:
            missing.append((key, err.response["Error"]["Code"]))
            continue
        if body != payload:
            wrong.append((key, len(body), len(payload)))
    assert not missing, f"acknowledged PUTs lost after kill -9: {missing[:10]} ({len(missing)} total)"
    assert not wrong, f"acknowledged objects read back different bytes: {wrong[:10]}"

    torn = []
    visible = 0
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
        for entry in page.get("Contents", []):
            visible += 1
            key = entry["Key"]
            if key not in attempted_now:
                torn.append((key, "never written"))
                continue
            body = s3.get_object(Bucket=bucket, Key=key)["Body"].read()
            if body != attempted_now[key] or entry["Size"] != len(attempted_now[key]):
                torn.append((key, len(body), entry["Size"], len(attempted_now[key])))
    assert not torn, f"visible objects that are not a complete sent payload: {torn[:10]}"
    assert visible >= len(acked_now)

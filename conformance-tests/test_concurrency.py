"""Concurrent clients: overwrites of one key never tear, batch deletes and listings never interfere."""

import hashlib
import os
from concurrent.futures import ThreadPoolExecutor

from conftest import make_s3_client

THREADS = 8


def test_concurrent_overwrites_leave_one_complete_version(target, bucket):
    payloads = [os.urandom(50_000 + i * 1000) for i in range(THREADS * 3)]

    def put(payload):
        client = make_s3_client(target.endpoint, target.creds)
        return client.put_object(Bucket=bucket, Key="contended", Body=payload)["ETag"]

    with ThreadPoolExecutor(THREADS) as pool:
        etags = list(pool.map(put, payloads))
    assert etags == ['"' + hashlib.md5(p).hexdigest() + '"' for p in payloads]

    client = make_s3_client(target.endpoint, target.creds)
    got = client.get_object(Bucket=bucket, Key="contended")
    body = got["Body"].read()
    assert body in payloads, "the surviving object is not one of the payloads written"
    assert got["ETag"] == '"' + hashlib.md5(body).hexdigest() + '"'
    listed = client.list_objects_v2(Bucket=bucket)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed] == [("contended", len(body))]


def test_concurrent_batch_deletes_and_listings(target, bucket):
    client = make_s3_client(target.endpoint, target.creds)
    groups = [[f"g{g}/k{i}" for i in range(10)] for g in range(THREADS)]
    for group in groups:
        for key in group:
            client.put_object(Bucket=bucket, Key=key, Body=key.encode())

    def delete_group(group):
        own = make_s3_client(target.endpoint, target.creds)
        listed = own.list_objects_v2(Bucket=bucket, Prefix=group[0].split("/")[0] + "/")
        assert sorted(o["Key"] for o in listed["Contents"]) == sorted(group)
        response = own.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": k} for k in group]})
        return sorted(d["Key"] for d in response.get("Deleted", [])), response.get("Errors", [])

    with ThreadPoolExecutor(THREADS) as pool:
        results = list(pool.map(delete_group, groups))
    for group, (deleted, errors) in zip(groups, results):
        assert errors == []
        assert deleted == sorted(group)
    assert client.list_objects_v2(Bucket=bucket)["KeyCount"] == 0

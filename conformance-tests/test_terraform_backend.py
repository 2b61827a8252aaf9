"""Terraform's S3 state backend, replayed call by call with boto3 (Terraform itself is not
installed here): `backend "s3"` with `encrypt = true` (SSE-S3), `use_lockfile = true` (S3-native
locking, Terraform 1.10+) and no DynamoDB table, as hashicorp/terraform's
internal/backend/remote-state/s3 (client.go, backend_state.go) makes them:

- Workspaces: ListObjectsV2 with prefix `env:/` and max-keys 1000 (the default workspace is
  always there; others are `env:/<name>/<key>`);
- Lock: PutObject of `<key>.tflock` (the LockInfo JSON, `Content-Type: application/json`,
  `x-amz-checksum-sha256`, `x-amz-server-side-encryption: AES256`) with `If-None-Match: *`; a
  second Terraform meets 412 and reads the lock file to say who holds it;
- Get: HeadObject of the state (404 = no state yet), then the download manager's ranged
  GetObject (`Range: bytes=0-5242879`, its 5 MiB part);
- Put: PutObject of the state JSON with `ChecksumAlgorithm: SHA256` and `AES256`; the request here
  also carries a Content-MD5 (Terraform sent one in 2023, commit f4e63ca, "Sets MD5 as required
  if S3 Object Locks are enabled", before moving to the SHA-256 checksum);
- Unlock: GetObject of the lock file (its ID must match), DeleteObject of it.

With `sse_customer_key` instead, every state and lock request carries the SSE-C headers, except
the GetObject that reads who holds a lock after a 412 (getLockInfoWithFile), which the gateway then
refuses with 400 as AWS does.

The HeadBucket and the GetObject of a missing state are what older Terraform versions and tools
around it (e.g. bucket checks before `terraform init`) send. A versioned bucket (the backend's
documentation recommends one) keeps every state written: ListObjectVersions. Runs on both back
ends; the gateway gets a keyring of its own (the suite's Ozone gateways have none, and SSE-S3 on
Ozone needs `sse_master_key_file`); Ozone keeps no versions, so the versioned-bucket test is
skipped there."""

import base64
import hashlib
import json
import os
import uuid
from datetime import datetime, timezone

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import (OZONE_OM, Credentials, empty_and_delete_bucket, external_endpoint, make_s3_client,
                      start_server, unique_bucket_name)

STATE_KEY = "network/terraform.tfstate"
LOCK_KEY = STATE_KEY + ".tflock"
DOWNLOAD_PART = 5 * 1024 * 1024  # manager.Downloader's default part size
keeps_versions = pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")


@pytest.fixture(scope="module")
def tf_s3(tmp_path_factory):
    """A client as Terraform's (path style, SDK checksum defaults) on a gateway that has SSE-S3."""
    external = external_endpoint()
    if external is not None:
        yield make_s3_client(external["endpoint"], external["creds"])
        return
    keyring = tmp_path_factory.mktemp("terraform-keys") / "master.keys"
    keyring.write_text("k1 " + base64.b64encode(os.urandom(32)).decode() + "\n")
    keyring.chmod(0o600)
    # SSE-C over plain HTTP for the `sse_customer_key` test (Terraform would speak HTTPS).
    server = start_server(tmp_path_factory, "terraform",
                          ["--sse-master-key-file", str(keyring), "--sse-c-over-http", "true"])
    try:
        yield make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
    finally:
        server.stop()


@pytest.fixture
def state_bucket(tf_s3):
    name = unique_bucket_name("tfstate")
    tf_s3.create_bucket(Bucket=name)
    yield name
    empty_and_delete_bucket(tf_s3, name)


def lock_info(operation: str, path: str, who: str) -> dict:
    """statemgr.LockInfo as Terraform marshals it into the lock file."""
    return {
        "ID": str(uuid.uuid4()),
        "Operation": operation,
        "Info": "",
        "Who": who,
        "Version": "1.13.4",
        "Created": datetime.now(timezone.utc).isoformat(),
        "Path": path,
    }


def state_json(serial: int, lineage: str, resources: list | None = None) -> bytes:
    state = {
        "version": 4,
        "terraform_version": "1.13.4",
        "serial": serial,
        "lineage": lineage,
        "outputs": {"vpc_id": {"value": f"vpc-{serial:08x}", "type": "string"}},
        "resources": resources or [],
        "check_results": None,
    }
    return (json.dumps(state, indent=2) + "\n").encode()


def workspaces(s3, bucket: str) -> list[str]:
    """Backend.Workspaces: the default one, and every `env:/<name>/<key>` listed."""
    names = ["default"]
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix="env:/",
                                                             PaginationConfig={"PageSize": 1000}):
        for obj in page.get("Contents", []):
            parts = obj["Key"][len("env:/"):].split("/", 1)
            if len(parts) == 2 and parts[1] == STATE_KEY:
                names.append(parts[0])
    return names[:1] + sorted(names[1:])


def lock(s3, bucket: str, key: str, info: dict) -> dict:
    """RemoteClient.lockWithFile."""
    return s3.put_object(Bucket=bucket, Key=key + ".tflock", Body=json.dumps(info).encode(),
                         ContentType="application/json", IfNoneMatch="*", ChecksumAlgorithm="SHA256",
                         ServerSideEncryption="AES256")


def unlock(s3, bucket: str, key: str, lock_id: str) -> None:
    """RemoteClient.unlockWithFile: the lock file must name this lock's ID, then it goes."""
    held = json.loads(s3.get_object(Bucket=bucket, Key=key + ".tflock")["Body"].read())
    assert held["ID"] == lock_id, held
    deleted = s3.delete_object(Bucket=bucket, Key=key + ".tflock")
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204


def get_state(s3, bucket: str, key: str) -> bytes | None:
    """RemoteClient.get: HeadObject (404 = no state), then the download manager's ranged GET."""
    try:
        head = s3.head_object(Bucket=bucket, Key=key)
    except ClientError as err:
        if status(err) == 404:
            return None
        raise
    assert head["ServerSideEncryption"] == "AES256", head
    got = s3.get_object(Bucket=bucket, Key=key, Range=f"bytes=0-{DOWNLOAD_PART - 1}")
    data = got["Body"].read()
    assert got["ServerSideEncryption"] == "AES256"
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["ContentRange"] == f"bytes 0-{len(data) - 1}/{len(data)}"
    assert len(data) == head["ContentLength"]
    return data


def put_state(s3, bucket: str, key: str, data: bytes) -> dict:
    """RemoteClient.put: one PutObject (the upload manager does not split a state this small)."""
    put = s3.put_object(Bucket=bucket, Key=key, Body=data, ContentType="application/json",
                        ContentMD5=base64.b64encode(hashlib.md5(data).digest()).decode(),
                        ChecksumAlgorithm="SHA256", ServerSideEncryption="AES256")
    assert put["ServerSideEncryption"] == "AES256", put
    # As on AWS, an SSE-S3 object's ETag is its plaintext's MD5.
    assert put["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'
    assert put["ChecksumSHA256"] == base64.b64encode(hashlib.sha256(data).digest()).decode()
    return put


def apply(s3, bucket: str, key: str, data: bytes, who: str = "ci@runner") -> dict:
    """One `terraform apply`: lock, read, write, unlock."""
    info = lock_info("OperationTypeApply", f"{bucket}/{key}", who)
    lock(s3, bucket, key, info)
    try:
        get_state(s3, bucket, key)
        return put_state(s3, bucket, key, data)
    finally:
        unlock(s3, bucket, key, info["ID"])


def test_init_apply_and_a_second_terraform_meeting_the_lock(tf_s3, state_bucket):
    s3, bucket = tf_s3, state_bucket
    # What is checked before anything is written: the bucket, its workspaces, no state yet.
    assert s3.head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert workspaces(s3, bucket) == ["default"]
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key=STATE_KEY)
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchKey")

    # terraform apply: the lock first.
    info = lock_info("OperationTypeApply", f"{bucket}/{STATE_KEY}", "alice@laptop")
    locked = lock(s3, bucket, STATE_KEY, info)
    assert locked["ServerSideEncryption"] == "AES256"
    # A second Terraform (bob's plan) is refused the lock, and reads who holds it.
    other = lock_info("OperationTypePlan", f"{bucket}/{STATE_KEY}", "bob@desktop")
    with pytest.raises(ClientError) as err:
        lock(s3, bucket, STATE_KEY, other)
    assert (status(err.value), error_code(err.value)) == (412, "PreconditionFailed")
    holder = s3.get_object(Bucket=bucket, Key=LOCK_KEY)
    assert holder["ServerSideEncryption"] == "AES256"
    assert json.loads(holder["Body"].read())["Who"] == "alice@laptop"

    assert get_state(s3, bucket, STATE_KEY) is None
    lineage = str(uuid.uuid4())
    first = state_json(1, lineage)
    put_state(s3, bucket, STATE_KEY, first)
    # Refresh within the same run reads back what was written.
    assert get_state(s3, bucket, STATE_KEY) == first
    unlock(s3, bucket, STATE_KEY, info["ID"])
    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=bucket, Key=LOCK_KEY)
    assert status(err.value) == 404

    # Now bob's run gets the lock, and the state alice wrote.
    second = state_json(2, lineage, [{"mode": "managed", "type": "aws_vpc", "name": "main", "instances": []}])
    apply(s3, bucket, STATE_KEY, second, who="bob@desktop")
    got = s3.get_object(Bucket=bucket, Key=STATE_KEY)
    assert got["Body"].read() == second
    assert (got["ServerSideEncryption"], got["ContentType"]) == ("AES256", "application/json")
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert [o["Key"] for o in listed] == [STATE_KEY]


def test_a_state_whose_content_md5_does_not_match_is_refused(tf_s3, state_bucket):
    s3, bucket = tf_s3, state_bucket
    apply(s3, bucket, STATE_KEY, state_json(1, "lineage-md5"))
    wrong = base64.b64encode(hashlib.md5(b"another state").digest()).decode()
    with pytest.raises(ClientError) as err:
        s3.put_object(Bucket=bucket, Key=STATE_KEY, Body=state_json(2, "lineage-md5"),
                      ContentType="application/json", ContentMD5=wrong, ServerSideEncryption="AES256")
    assert (status(err.value), error_code(err.value)) == (400, "BadDigest")
    assert get_state(s3, bucket, STATE_KEY) == state_json(1, "lineage-md5")


def test_a_new_workspace_is_created_under_the_lock(tf_s3, state_bucket):
    # `terraform workspace new staging`: not listed yet, so StateMgr locks, finds no state, writes
    # an empty one and unlocks.
    s3, bucket = tf_s3, state_bucket
    apply(s3, bucket, STATE_KEY, state_json(1, "default-lineage"))
    key = f"env:/staging/{STATE_KEY}"
    assert "staging" not in workspaces(s3, bucket)
    info = lock_info("init", f"{bucket}/{key}", "alice@laptop")
    lock(s3, bucket, key, info)
    assert get_state(s3, bucket, key) is None
    put_state(s3, bucket, key, state_json(1, "staging-lineage"))
    unlock(s3, bucket, key, info["ID"])
    assert workspaces(s3, bucket) == ["default", "staging"]
    assert get_state(s3, bucket, key) == state_json(1, "staging-lineage")
    assert get_state(s3, bucket, STATE_KEY) == state_json(1, "default-lineage")


@keeps_versions
def test_a_versioned_bucket_keeps_every_state(tf_s3, state_bucket):
    s3, bucket = tf_s3, state_bucket
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    states = [state_json(serial, "versioned") for serial in (1, 2, 3)]
    version_ids = [apply(s3, bucket, STATE_KEY, state)["VersionId"] for state in states]
    assert len(set(version_ids)) == 3 and "null" not in version_ids

    listed = s3.list_object_versions(Bucket=bucket, Prefix=STATE_KEY)
    versions = [v for v in listed.get("Versions", []) if v["Key"] == STATE_KEY]
    # Newest first; only the last is current.
    assert [v["VersionId"] for v in versions] == version_ids[::-1]
    assert [v["IsLatest"] for v in versions] == [True, False, False]
    # Each unlock left a delete marker on the lock file, over the lock versions.
    markers = [m for m in listed.get("DeleteMarkers", []) if m["Key"] == LOCK_KEY]
    assert len(markers) == 3 and sum(m["IsLatest"] for m in markers) == 1
    # Rolling back by hand: read an old state by its version id, encrypted as it was written.
    for version_id, state in zip(version_ids, states):
        old = s3.get_object(Bucket=bucket, Key=STATE_KEY, VersionId=version_id)
        assert (old["Body"].read(), old["ServerSideEncryption"]) == (state, "AES256")
    assert get_state(s3, bucket, STATE_KEY) == states[-1]


def test_a_state_under_a_customer_key(tf_s3, state_bucket):
    # `sse_customer_key = base64(32 bytes)`: Terraform sends the key and its MD5 on HeadObject,
    # the ranged GetObject, PutObject of the state and of the lock file, and the unlock's GET.
    s3, bucket = tf_s3, state_bucket
    key = os.urandom(32)
    ssec = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": base64.b64encode(key).decode(),
            "SSECustomerKeyMD5": base64.b64encode(hashlib.md5(key).digest()).decode()}
    info = lock_info("OperationTypeApply", f"{bucket}/{STATE_KEY}", "alice@laptop")
    s3.put_object(Bucket=bucket, Key=LOCK_KEY, Body=json.dumps(info).encode(), ContentType="application/json",
                  IfNoneMatch="*", ChecksumAlgorithm="SHA256", **ssec)
    with pytest.raises(ClientError) as err:
        s3.put_object(Bucket=bucket, Key=LOCK_KEY, Body=b"{}", IfNoneMatch="*", **ssec)
    assert (status(err.value), error_code(err.value)) == (412, "PreconditionFailed")
    # getLockInfoWithFile reads the lock without the key: refused, so Terraform reports the 412
    # joined with this error rather than who holds the lock (as on AWS).
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key=LOCK_KEY)
    assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")

    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=bucket, Key=STATE_KEY, **ssec)
    assert status(err.value) == 404
    state = state_json(1, "customer-key")
    put = s3.put_object(Bucket=bucket, Key=STATE_KEY, Body=state, ContentType="application/json",
                        ChecksumAlgorithm="SHA256", **ssec)
    assert (put["SSECustomerAlgorithm"], put["SSECustomerKeyMD5"]) == ("AES256", ssec["SSECustomerKeyMD5"])
    head = s3.head_object(Bucket=bucket, Key=STATE_KEY, **ssec)
    assert head["ContentLength"] == len(state)
    got = s3.get_object(Bucket=bucket, Key=STATE_KEY, Range=f"bytes=0-{DOWNLOAD_PART - 1}", **ssec)
    assert got["Body"].read() == state
    assert got["ContentRange"] == f"bytes 0-{len(state) - 1}/{len(state)}"
    # Without the key (a Terraform configured without it) the state cannot be read.
    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=bucket, Key=STATE_KEY)
    assert status(err.value) == 400

    held = json.loads(s3.get_object(Bucket=bucket, Key=LOCK_KEY, **ssec)["Body"].read())
    assert held["ID"] == info["ID"]
    s3.delete_object(Bucket=bucket, Key=LOCK_KEY)
    assert workspaces(s3, bucket) == ["default"]

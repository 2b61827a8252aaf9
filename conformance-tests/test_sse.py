"""Server-side encryption with customer keys (SSE-C) on PutObject, GetObject and HeadObject
(issue 22, item 1): objects are stored as AES-256-GCM segments under a per-object key sealed by
the customer's key, read back whole or by range with the key, and refused as AWS refuses them
without it or with another; CopyObject opens an SSE-C source with the key in its
`x-amz-copy-source-` headers and seals the copy with the request's own; PostObject takes the
key as form fields. Multipart uploads:
test_sse_multipart.py. What is not built (SSE-KMS) stays refused: test_sse_refused.py."""

import base64
import hashlib
import json
import os
import time
from pathlib import Path

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import (OZONE_OM, Credentials, external_endpoint, make_s3_client, payload, start_server,
                      unique_bucket_name)
from raw_client import RawClient, assert_s3_error
from test_post_object import post, presigned_post

KEY = b"0123456789abcdef0123456789abcdef"
OTHER_KEY = b"fedcba9876543210fedcba9876543210"
SSE_C = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": KEY}
WRONG = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": OTHER_KEY}
KEY_MD5 = base64.b64encode(hashlib.md5(KEY).digest()).decode()
SEGMENT = 64 * 1024
MIB = 1024 * 1024


def headers(key: bytes = KEY, md5_of: bytes | None = None) -> dict:
    return {
        "x-amz-server-side-encryption-customer-algorithm": "AES256",
        "x-amz-server-side-encryption-customer-key": base64.b64encode(key).decode(),
        "x-amz-server-side-encryption-customer-key-md5":
            base64.b64encode(hashlib.md5(md5_of or key).digest()).decode(),
    }


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if external_endpoint() is not None:
        pytest.skip("starts its own server with sse_c_over_http (S3_ENDPOINT is set)")
    # A keyring of its own, so that copies into SSE-S3 work on both back ends (the suite's
    # Ozone gateways have none).
    keyring = tmp_path_factory.mktemp("sse-keys") / "master.keys"
    keyring.write_text("k1 " + base64.b64encode(os.urandom(32)).decode() + "\n")
    keyring.chmod(0o600)
    server = start_server(tmp_path_factory, "sse", ["--sse-c-over-http", "true",
                                                    "--sse-master-key-file", str(keyring)])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def creds(server) -> Credentials:
    return Credentials(server.access_key, server.secret_key)


@pytest.fixture(scope="module")
def sse_s3(server, creds):
    return make_s3_client(server.endpoint, creds)


@pytest.fixture(scope="module")
def sse_raw(server, creds) -> RawClient:
    return RawClient(server.endpoint, creds)


@pytest.fixture
def sse_bucket(sse_s3):
    name = unique_bucket_name("sse")
    sse_s3.create_bucket(Bucket=name)
    yield name
    for version in sse_s3.list_objects_v2(Bucket=name).get("Contents", []):
        sse_s3.delete_object(Bucket=name, Key=version["Key"])
    sse_s3.delete_bucket(Bucket=name)


def refused(call, code_status, **kwargs) -> ClientError:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    assert (status(err.value), error_code(err.value)) == code_status, err.value.response
    return err.value


@pytest.mark.parametrize("size", [0, 1024, 5 * MIB + 123])
def test_round_trip_with_ranges(sse_s3, sse_bucket, size):
    body = payload(size, f"sse-{size}")
    put = sse_s3.put_object(Bucket=sse_bucket, Key="k", Body=body, **SSE_C)
    assert put["SSECustomerAlgorithm"] == "AES256" and put["SSECustomerKeyMD5"] == KEY_MD5
    # AWS's SSE-C ETag is not the plaintext's MD5.
    assert put["ETag"].strip('"') != hashlib.md5(body).hexdigest()

    head = sse_s3.head_object(Bucket=sse_bucket, Key="k", **SSE_C)
    assert head["ContentLength"] == size
    assert head["ETag"] == put["ETag"]
    assert (head["SSECustomerAlgorithm"], head["SSECustomerKeyMD5"]) == ("AES256", KEY_MD5)

    got = sse_s3.get_object(Bucket=sse_bucket, Key="k", **SSE_C)
    assert got["ContentLength"] == size
    assert got["Body"].read() == body
    if size == 0:
        return
    for first, last in [(0, 0), (size - 1, size - 1), (0, min(size, SEGMENT + 1) - 1),
                        (SEGMENT - 1, SEGMENT), (SEGMENT, 3 * SEGMENT - 1), (size // 2, size - 1)]:
        if last >= size or first > last:
            continue
        part = sse_s3.get_object(Bucket=sse_bucket, Key="k", Range=f"bytes={first}-{last}", **SSE_C)
        assert part["ContentRange"] == f"bytes {first}-{last}/{size}"
        assert part["Body"].read() == body[first:last + 1], (first, last)
    suffix = sse_s3.get_object(Bucket=sse_bucket, Key="k", Range="bytes=-100", **SSE_C)
    assert suffix["Body"].read() == body[-100:]
    whole_part = sse_s3.get_object(Bucket=sse_bucket, Key="k", PartNumber=1, **SSE_C)
    assert whole_part["ContentLength"] == size


def test_reads_without_the_key_or_with_another_are_refused(sse_s3, sse_raw, sse_bucket):
    sse_s3.put_object(Bucket=sse_bucket, Key="k", Body=b"secret", **SSE_C)
    sse_s3.put_object(Bucket=sse_bucket, Key="plain", Body=b"plain")
    err = refused(sse_s3.get_object, (400, "InvalidRequest"), Bucket=sse_bucket, Key="k")
    assert "Server Side Encryption" in err.response["Error"]["Message"]
    refused(sse_s3.get_object, (403, "AccessDenied"), Bucket=sse_bucket, Key="k", **WRONG)
    refused(sse_s3.get_object, (400, "InvalidRequest"), Bucket=sse_bucket, Key="plain", **SSE_C)
    # HEAD answers carry no body: the status tells.
    assert sse_raw.request("HEAD", sse_bucket, "k").status_code == 400
    assert sse_raw.request("HEAD", sse_bucket, "k", headers=headers(OTHER_KEY)).status_code == 403
    assert sse_raw.request("HEAD", sse_bucket, "k", headers=headers()).status_code == 200
    # The object stays readable with its key.
    assert sse_s3.get_object(Bucket=sse_bucket, Key="k", **SSE_C)["Body"].read() == b"secret"


def test_malformed_keys_are_invalid_arguments(sse_raw, sse_bucket):
    cases = [
        headers(md5_of=OTHER_KEY),  # MD5 of another key
        headers(key=KEY[:16]),  # 128-bit key
        {**headers(), "x-amz-server-side-encryption-customer-algorithm": "AES128"},
        {k: v for k, v in headers().items() if not k.endswith("-md5")},
        {k: v for k, v in headers().items() if not k.endswith("-key")},
    ]
    for sent in cases:
        for method in ("PUT", "GET"):
            response = sse_raw.request(method, sse_bucket, "k", headers=sent,
                                       body=b"x" if method == "PUT" else b"")
            error = assert_s3_error(response, 400, "InvalidArgument")
            assert base64.b64encode(KEY).decode() not in error.message
    assert sse_raw.request("HEAD", sse_bucket, "k", headers=cases[0]).status_code == 400


def stored_files(server) -> list[Path]:
    """Where the back end keeps object bytes: the embedded data dir, or the dev cluster's datanode dirs."""
    if not OZONE_OM:
        return [path for path in Path(server.data_dir).rglob("*") if path.is_file()]
    work = os.environ.get("OZONE_DEV_WORK")
    if not work:
        pytest.skip("the Ozone cluster's datanode directories are not known (OZONE_DEV_WORK unset)")
    return [path for root in Path(work, "data").glob("dn*") for path in root.rglob("*") if path.is_file()]


def test_the_stored_bytes_are_not_the_plaintext(server, sse_s3, sse_bucket):
    started = time.time() - 2
    secret_marker = b"SSE-C-MARKER-never-on-disk-7f3a9c"
    plain_marker = b"PLAIN-MARKER-stored-as-sent-4b1e2d"
    for size in (100, 300 * 1024):
        body = (secret_marker * (size // len(secret_marker) + 1))[:size]
        sse_s3.put_object(Bucket=sse_bucket, Key=f"secret-{size}", Body=body, **SSE_C)
    sse_s3.put_object(Bucket=sse_bucket, Key="plain", Body=plain_marker * 10)
    # Only what was written since the test began: a datanode's directories hold the whole suite's data.
    stored = b"".join(path.read_bytes() for path in stored_files(server) if path.stat().st_mtime >= started)
    # The check can see plaintext: an unencrypted object's marker is found.
    assert plain_marker in stored
    assert secret_marker not in stored


def test_a_form_upload_with_a_customer_key_is_stored_under_it(server, sse_s3, sse_bucket):
    marker = b"SSE-C-FORM-MARKER-never-on-disk-5d2e"
    fields = headers()
    form = presigned_post(sse_s3, sse_bucket, "posted", fields, [{k: v} for k, v in fields.items()])
    started = time.time() - 2
    response = post(form, marker * 100)
    assert response.status_code == 204, response.text
    assert response.headers["x-amz-server-side-encryption-customer-key-md5"] == KEY_MD5
    # Read back only with the key, as any SSE-C object.
    refused(sse_s3.get_object, (400, "InvalidRequest"), Bucket=sse_bucket, Key="posted")
    assert sse_s3.get_object(Bucket=sse_bucket, Key="posted", **SSE_C)["Body"].read() == marker * 100
    stored = b"".join(path.read_bytes() for path in stored_files(server) if path.stat().st_mtime >= started)
    assert marker not in stored
    # A key whose MD5 is another key's: refused, nothing stored.
    bad = headers(md5_of=OTHER_KEY)
    form = presigned_post(sse_s3, sse_bucket, "bad", bad, [{k: v} for k, v in bad.items()])
    assert_s3_error(post(form, b"x"), 400, "InvalidArgument")
    refused(sse_s3.head_object, (404, "404"), Bucket=sse_bucket, Key="bad")


def test_sizes_metadata_and_conditions(sse_s3, sse_bucket):
    body = payload(3 * SEGMENT + 7, "meta")
    put = sse_s3.put_object(Bucket=sse_bucket, Key="k", Body=body, Metadata={"colour": "blue"},
                            ContentType="text/plain", **SSE_C)
    head = sse_s3.head_object(Bucket=sse_bucket, Key="k", IfMatch=put["ETag"], **SSE_C)
    assert head["ContentLength"] == len(body)
    # The reserved record of the encryption is never shown as metadata.
    assert head["Metadata"] == {"colour": "blue"}
    assert head["ContentType"] == "text/plain"
    with pytest.raises(ClientError) as err:
        sse_s3.get_object(Bucket=sse_bucket, Key="k", IfMatch='"00000000"', **SSE_C)
    assert status(err.value) == 412


def test_operations_that_cannot_open_an_encrypted_object_refuse_it(sse_s3, sse_raw, sse_bucket):
    sse_s3.put_object(Bucket=sse_bucket, Key="k", Body=b"secret", **SSE_C)
    source = {"Bucket": sse_bucket, "Key": "k"}
    refused(sse_s3.copy_object, (400, "InvalidRequest"), Bucket=sse_bucket, Key="copy", CopySource=source)
    upload = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="mpu")["UploadId"]
    try:
        refused(sse_s3.upload_part_copy, (400, "InvalidRequest"), Bucket=sse_bucket, Key="mpu",
                UploadId=upload, PartNumber=1, CopySource=source)
    finally:
        sse_s3.abort_multipart_upload(Bucket=sse_bucket, Key="mpu", UploadId=upload)
    attributes = sse_raw.request("GET", sse_bucket, "k", query=[("attributes", "")],
                                 headers={"x-amz-object-attributes": "ObjectSize"})
    assert_s3_error(attributes, 400, "InvalidRequest")
    with pytest.raises(ClientError):
        sse_s3.head_object(Bucket=sse_bucket, Key="copy")


def test_copies_open_the_source_with_its_key_and_seal_with_theirs(server, sse_s3, sse_bucket):
    body = os.urandom(300_000)
    sse_s3.put_object(Bucket=sse_bucket, Key="src", Body=body, **SSE_C)
    source = {"Bucket": sse_bucket, "Key": "src"}
    with_source_key = {"CopySourceSSECustomerAlgorithm": "AES256", "CopySourceSSECustomerKey": KEY}
    # Another key for the source is AWS's 403; a source key for a plain source is refused.
    refused(sse_s3.copy_object, (403, "AccessDenied"), Bucket=sse_bucket, Key="c", CopySource=source,
            CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=WRONG["SSECustomerKey"])
    # SSE-C to SSE-C under a new key, echoed as AWS echoes it.
    copied = sse_s3.copy_object(Bucket=sse_bucket, Key="c", CopySource=source, **with_source_key, **WRONG)
    assert copied["SSECustomerAlgorithm"] == "AES256"
    assert copied["SSECustomerKeyMD5"] == base64.b64encode(hashlib.md5(WRONG["SSECustomerKey"]).digest()).decode()
    assert sse_s3.get_object(Bucket=sse_bucket, Key="c", **WRONG)["Body"].read() == body
    refused(sse_s3.get_object, (403, "AccessDenied"), Bucket=sse_bucket, Key="c", **SSE_C)
    # To SSE-S3, and to plaintext (what the copy request asks is what the copy gets).
    sse_s3.copy_object(Bucket=sse_bucket, Key="s3", CopySource=source, ServerSideEncryption="AES256",
                       **with_source_key)
    answer = sse_s3.get_object(Bucket=sse_bucket, Key="s3")
    assert (answer["Body"].read(), answer["ServerSideEncryption"]) == (body, "AES256")
    sse_s3.copy_object(Bucket=sse_bucket, Key="plain", CopySource=source, **with_source_key)
    assert sse_s3.get_object(Bucket=sse_bucket, Key="plain")["Body"].read() == body
    refused(sse_s3.copy_object, (400, "InvalidRequest"), Bucket=sse_bucket, Key="x",
            CopySource={"Bucket": sse_bucket, "Key": "plain"}, **with_source_key)
    # An SSE-S3 source into SSE-C.
    sse_s3.copy_object(Bucket=sse_bucket, Key="back", CopySource={"Bucket": sse_bucket, "Key": "s3"}, **SSE_C)
    assert sse_s3.get_object(Bucket=sse_bucket, Key="back", **SSE_C)["Body"].read() == body


def test_overwriting_with_and_without_encryption(sse_s3, sse_bucket):
    sse_s3.put_object(Bucket=sse_bucket, Key="k", Body=b"first", **SSE_C)
    sse_s3.put_object(Bucket=sse_bucket, Key="k", Body=b"second")
    assert sse_s3.get_object(Bucket=sse_bucket, Key="k")["Body"].read() == b"second"
    sse_s3.put_object(Bucket=sse_bucket, Key="k", Body=b"third", **WRONG)
    assert sse_s3.get_object(Bucket=sse_bucket, Key="k", **WRONG)["Body"].read() == b"third"
    refused(sse_s3.get_object, (403, "AccessDenied"), Bucket=sse_bucket, Key="k", **SSE_C)


def test_a_bucket_policy_can_require_customer_keys_and_their_algorithm(sse_s3, sse_bucket):
    """The condition key `s3:x-amz-server-side-encryption-customer-algorithm`, as the AWS
    user guide's "require SSE-C" policies use it (Deny binds the owner too)."""
    resource = f"arn:aws:s3:::{sse_bucket}/*"
    deny = lambda condition: {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject",
                              "Resource": resource, "Condition": condition}
    policy = {"Version": "2012-10-17", "Statement": [
        deny({"Null": {"s3:x-amz-server-side-encryption-customer-algorithm": "true"}}),
        deny({"StringNotEquals": {"s3:x-amz-server-side-encryption-customer-algorithm": "AES256"}}),
    ]}
    sse_s3.put_bucket_policy(Bucket=sse_bucket, Policy=json.dumps(policy))
    try:
        refused(sse_s3.put_object, (403, "AccessDenied"), Bucket=sse_bucket, Key="plain", Body=b"x")
        sse_s3.put_object(Bucket=sse_bucket, Key="sealed", Body=b"x", **SSE_C)
        assert sse_s3.get_object(Bucket=sse_bucket, Key="sealed", **SSE_C)["Body"].read() == b"x"
    finally:
        sse_s3.delete_bucket_policy(Bucket=sse_bucket)


def test_customer_keys_over_plain_http_are_refused_by_default(root_s3, bucket):
    err = refused(root_s3.put_object, (400, "InvalidRequest"), Bucket=bucket, Key="k", Body=b"x", **SSE_C)
    assert "secure connection" in err.response["Error"]["Message"]
    with pytest.raises(ClientError) as missing:
        root_s3.head_object(Bucket=bucket, Key="k")
    assert status(missing.value) == 404

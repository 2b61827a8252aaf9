"""Server-side encryption with the gateway's own keys (SSE-S3, `x-amz-server-side-encryption:
AES256`) on PutObject, read back by GetObject and HeadObject with no key from the client (issue
22, item 1): stored as SSE-C objects are (AES-256-GCM segments under a per-object key), the object
key sealed by the active master key of the keyring file `sse_master_key_file`; rotation appends a
line, and objects sealed under older keys still read. The embedded back end generates a keyring in
its data dir when none is configured. SSE-KMS is refused naming the missing KMS; SSE-S3 on
operations not built yet stays refused (test_sse_refused.py). PostObject takes SSE-S3 by its
`x-amz-server-side-encryption` field or the bucket's default; multipart uploads are in
test_sse_multipart.py."""

import base64
import hashlib
import os
import subprocess
import time

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import (OZONE_OM, Credentials, external_endpoint, gateway_binary, make_s3_client, start_server,
                      unique_bucket_name)
from raw_client import RawClient, assert_s3_error
from test_post_object import post, presigned_post
from test_sse import SSE_C, stored_files

SSE_S3 = {"ServerSideEncryption": "AES256"}
SEGMENT = 64 * 1024


def key_line(key_id: str) -> str:
    return f"{key_id} {base64.b64encode(os.urandom(32)).decode()}\n"


@pytest.fixture(scope="module")
def keyring(tmp_path_factory):
    path = tmp_path_factory.mktemp("sse-s3-keys") / "master.keys"
    path.write_text("# SSE-S3 master keys\n" + key_line("k1"))
    path.chmod(0o600)
    return path


@pytest.fixture(scope="module")
def server(tmp_path_factory, keyring):
    if external_endpoint() is not None:
        pytest.skip("starts its own server with a keyring (S3_ENDPOINT is set)")
    server = start_server(tmp_path_factory, "sse-s3",
                          ["--sse-master-key-file", str(keyring), "--sse-c-over-http", "true"])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def s3(server):
    return make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))


@pytest.fixture(scope="module")
def raw(server) -> RawClient:
    return RawClient(server.endpoint, Credentials(server.access_key, server.secret_key))


@pytest.fixture
def sse_bucket(s3):
    name = unique_bucket_name("sse3")
    s3.create_bucket(Bucket=name)
    yield name
    for version in s3.list_objects_v2(Bucket=name).get("Contents", []):
        s3.delete_object(Bucket=name, Key=version["Key"])
    s3.delete_bucket(Bucket=name)


@pytest.mark.parametrize("size", [0, 1, SEGMENT, SEGMENT + 1, 3 * SEGMENT + 17])
def test_round_trip_with_ranges(s3, sse_bucket, size):
    body = os.urandom(size)
    put = s3.put_object(Bucket=sse_bucket, Key="k", Body=body, **SSE_S3)
    assert put["ServerSideEncryption"] == "AES256"
    # As on AWS, an SSE-S3 object's ETag is its plaintext's MD5 (an SSE-C one's is opaque).
    assert put["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    got = s3.get_object(Bucket=sse_bucket, Key="k")
    assert got["Body"].read() == body
    assert got["ServerSideEncryption"] == "AES256"
    assert got["ContentLength"] == size
    head = s3.head_object(Bucket=sse_bucket, Key="k")
    assert (head["ServerSideEncryption"], head["ContentLength"]) == ("AES256", size)
    if size > 2:
        start, end = size // 3, size - 2
        ranged = s3.get_object(Bucket=sse_bucket, Key="k", Range=f"bytes={start}-{end}")
        assert ranged["Body"].read() == body[start:end + 1]
        assert ranged["ContentRange"] == f"bytes {start}-{end}/{size}"
    # Listings show the plaintext size, as HEAD does (not the 16 bytes of tag per 64 KiB segment).
    listed = s3.list_objects_v2(Bucket=sse_bucket)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed] == [("k", size)]


def test_the_stored_bytes_are_not_the_plaintext(server, s3, sse_bucket):
    started = time.time() - 2
    secret_marker = b"SSE-S3-MARKER-never-on-disk-91c2e0"
    plain_marker = b"PLAIN-MARKER-stored-as-sent-5d7a01"
    for size in (100, 300 * 1024):
        body = (secret_marker * (size // len(secret_marker) + 1))[:size]
        s3.put_object(Bucket=sse_bucket, Key=f"secret-{size}", Body=body, **SSE_S3)
    s3.put_object(Bucket=sse_bucket, Key="plain", Body=plain_marker * 10)
    stored = b"".join(path.read_bytes() for path in stored_files(server) if path.stat().st_mtime >= started)
    assert plain_marker in stored
    assert secret_marker not in stored


def test_a_customer_key_is_not_applicable_and_both_schemes_at_once_are_refused(s3, raw, sse_bucket):
    s3.put_object(Bucket=sse_bucket, Key="k", Body=b"data", **SSE_S3)
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=sse_bucket, Key="k", **SSE_C)
    assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")
    with pytest.raises(ClientError) as err:
        s3.put_object(Bucket=sse_bucket, Key="both", Body=b"data", **SSE_S3, **SSE_C)
    assert (status(err.value), error_code(err.value)) == (400, "InvalidArgument")
    response = raw.request("PUT", sse_bucket, "bad", body=b"data",
                           headers={"x-amz-server-side-encryption": "AES128"})
    assert_s3_error(response, 400, "InvalidArgument")
    for kms in ("aws:kms", "aws:kms:dsse"):
        response = raw.request("PUT", sse_bucket, "kms", body=b"data",
                               headers={"x-amz-server-side-encryption": kms})
        error = assert_s3_error(response, 501, "NotImplemented")
        assert "KMS" in error.message
    for key in ("both", "bad", "kms"):
        with pytest.raises(ClientError) as err:
            s3.head_object(Bucket=sse_bucket, Key=key)
        assert status(err.value) == 404


def test_copy_opens_an_sse_s3_source_and_encrypts_the_copy_when_asked(s3, sse_bucket):
    marker = b"COPIED-SSE-MARKER-never-on-disk-77aa"
    body = marker * 5000  # several segments
    s3.put_object(Bucket=sse_bucket, Key="k", Body=body, **SSE_S3)
    source = {"Bucket": sse_bucket, "Key": "k"}
    # Without encryption parameters the copy is stored as its plaintext, as on AWS.
    plain = s3.copy_object(Bucket=sse_bucket, Key="plain", CopySource=source)
    assert "ServerSideEncryption" not in plain
    assert plain["CopyObjectResult"]["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    got = s3.get_object(Bucket=sse_bucket, Key="plain")
    assert got["Body"].read() == body and "ServerSideEncryption" not in got
    sealed = s3.copy_object(Bucket=sse_bucket, Key="sealed", CopySource=source, **SSE_S3)
    assert sealed["ServerSideEncryption"] == "AES256"
    got = s3.get_object(Bucket=sse_bucket, Key="sealed", Range="bytes=70000-70099")
    assert (got["Body"].read(), got["ServerSideEncryption"]) == (body[70000:70100], "AES256")
    # In place, changing only the encryption, as AWS allows.
    s3.put_object(Bucket=sse_bucket, Key="inplace", Body=marker)
    s3.copy_object(Bucket=sse_bucket, Key="inplace", CopySource={"Bucket": sse_bucket, "Key": "inplace"}, **SSE_S3)
    assert s3.head_object(Bucket=sse_bucket, Key="inplace")["ServerSideEncryption"] == "AES256"
    assert s3.get_object(Bucket=sse_bucket, Key="inplace")["Body"].read() == marker


def test_attributes_of_an_sse_s3_object_are_its_plaintexts_and_a_part_copy_reads_it(s3, sse_bucket):
    s3.put_object(Bucket=sse_bucket, Key="k", Body=b"data", **SSE_S3)
    # UploadPartCopy opens the source (test_sse_multipart.py): a plain upload gets the plaintext.
    upload = s3.create_multipart_upload(Bucket=sse_bucket, Key="mpu")["UploadId"]
    part = s3.upload_part_copy(Bucket=sse_bucket, Key="mpu", UploadId=upload, PartNumber=1,
                               CopySource={"Bucket": sse_bucket, "Key": "k"})
    s3.complete_multipart_upload(Bucket=sse_bucket, Key="mpu", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": part["CopyPartResult"]["ETag"]}]})
    assert s3.get_object(Bucket=sse_bucket, Key="mpu")["Body"].read() == b"data"
    # GetObjectAttributes describes the object as HEAD does, with no key from the client.
    attributes = s3.get_object_attributes(Bucket=sse_bucket, Key="k", ObjectAttributes=["ObjectSize", "ETag"])
    assert (attributes["ObjectSize"], attributes["ETag"]) == (4, hashlib.md5(b"data").hexdigest())
    with pytest.raises(ClientError) as err:
        s3.get_object_attributes(Bucket=sse_bucket, Key="k", ObjectAttributes=["ObjectSize"],
                                 SSECustomerAlgorithm="AES256", SSECustomerKey=base64.b64encode(SSE_C["SSECustomerKey"]).decode(),
                                 SSECustomerKeyMD5=base64.b64encode(hashlib.md5(SSE_C["SSECustomerKey"]).digest()).decode())
    assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")


def test_rotation_keeps_old_objects_readable(tmp_path_factory):
    if external_endpoint() is not None:
        pytest.skip("restarts its own server (S3_ENDPOINT is set)")
    keys = tmp_path_factory.mktemp("rotation") / "master.keys"
    keys.write_text(key_line("old"))
    keys.chmod(0o600)
    server = start_server(tmp_path_factory, "sse-s3-rotation", ["--sse-master-key-file", str(keys)])
    try:
        s3 = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
        bucket = unique_bucket_name("rotate")
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="before", Body=b"sealed under old", **SSE_S3)
        server.stop()
        with keys.open("a") as file:
            file.write(key_line("new"))
        server.start()
        s3 = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
        s3.put_object(Bucket=bucket, Key="after", Body=b"sealed under new", **SSE_S3)
        assert s3.get_object(Bucket=bucket, Key="before")["Body"].read() == b"sealed under old"
        assert s3.get_object(Bucket=bucket, Key="after")["Body"].read() == b"sealed under new"
        # Without the key that sealed an object, it is not served (and the fault is logged).
        server.stop()
        keys.write_text(key_line("new"))
        keys.chmod(0o600)
        server.start()
        s3 = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
        with pytest.raises(ClientError) as err:
            s3.get_object(Bucket=bucket, Key="before")
        assert status(err.value) == 500
        assert "not in the keyring" in server.log_tail()
        for key in ("before", "after"):
            s3.delete_object(Bucket=bucket, Key=key)
        s3.delete_bucket(Bucket=bucket)
    finally:
        server.stop()


def run_gateway(*args: str) -> subprocess.CompletedProcess:
    """An embedded gateway with `args` and none of the suite's S3GW_* settings (on Ozone the
    suite sets some only that back end reads)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("S3GW_")}
    return subprocess.run([str(gateway_binary()), *args], capture_output=True, text=True, timeout=30,
                          stdin=subprocess.DEVNULL, env=env)


def test_a_keyring_others_may_read_or_a_malformed_one_is_refused_at_start(tmp_path):
    secret = base64.b64encode(os.urandom(32)).decode()
    keys = tmp_path / "master.keys"
    keys.write_text(f"k1 {secret}\n")
    keys.chmod(0o644)
    result = run_gateway("--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"),
                         "--sse-master-key-file", str(keys))
    assert result.returncode != 0
    assert "chmod 600" in result.stderr and str(keys) in result.stderr, result.stderr
    assert secret not in result.stderr + result.stdout
    keys.chmod(0o600)
    keys.write_text(f"k1 {secret[:-8]}\n")
    result = run_gateway("--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "data"),
                         "--sse-master-key-file", str(keys))
    assert result.returncode != 0
    assert "not base64 of 32 bytes" in result.stderr, result.stderr
    assert secret[:-8] not in result.stderr + result.stdout


def test_the_embedded_back_end_generates_a_private_keyring(managed_target, root_s3, bucket):
    if OZONE_OM:
        pytest.skip("Ozone replicas share a configured keyring; none is generated")
    generated = managed_target.server.data_dir / "sse-master-keys"
    assert generated.stat().st_mode & 0o077 == 0
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"default keyring", **SSE_S3)
    got = root_s3.get_object(Bucket=bucket, Key="k")
    assert (got["Body"].read(), got["ServerSideEncryption"]) == (b"default keyring", "AES256")


# 9 MiB is above the CLI's 8 MiB multipart threshold: a multipart upload, read back in ranges.
@pytest.mark.parametrize("size", [3 * SEGMENT + 5, 9 * 1024 * 1024])
def test_aws_cli_cp_with_sse_aes256(managed_target, aws, bucket, root_s3, tmp_path, size):
    if OZONE_OM:
        pytest.skip("the suite's Ozone gateways have no keyring")
    source = tmp_path / "up.bin"
    source.write_bytes(os.urandom(size))
    aws("s3", "cp", "--sse", "AES256", str(source), f"s3://{bucket}/up.bin")
    head = root_s3.head_object(Bucket=bucket, Key="up.bin")
    assert (head["ServerSideEncryption"], head["ContentLength"]) == ("AES256", size)
    target = tmp_path / "down.bin"
    aws("s3", "cp", f"s3://{bucket}/up.bin", str(target))
    assert target.read_bytes() == source.read_bytes()


# ---- bucket default encryption (PutBucketEncryption) ----

AES256_DEFAULT = {"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}


def test_bucket_encryption_round_trip(s3, sse_bucket):
    with pytest.raises(ClientError) as err:
        s3.get_bucket_encryption(Bucket=sse_bucket)
    assert (status(err.value), error_code(err.value)) == (404, "ServerSideEncryptionConfigurationNotFoundError")
    s3.put_bucket_encryption(Bucket=sse_bucket, ServerSideEncryptionConfiguration={
        "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}, "BucketKeyEnabled": True}]})
    rules = s3.get_bucket_encryption(Bucket=sse_bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert rules == [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}, "BucketKeyEnabled": True}]
    s3.delete_bucket_encryption(Bucket=sse_bucket)
    with pytest.raises(ClientError) as err:
        s3.get_bucket_encryption(Bucket=sse_bucket)
    assert status(err.value) == 404


def test_kms_and_malformed_defaults_are_refused(s3, raw, sse_bucket):
    for algorithm in ("aws:kms", "aws:kms:dsse"):
        with pytest.raises(ClientError) as err:
            s3.put_bucket_encryption(Bucket=sse_bucket, ServerSideEncryptionConfiguration={
                "Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": algorithm}}]})
        assert (status(err.value), error_code(err.value)) == (501, "NotImplemented")
        assert "KMS" in err.value.response["Error"]["Message"]
    response = raw.request("PUT", sse_bucket, query=[("encryption", "")],
                           body=b"<ServerSideEncryptionConfiguration></ServerSideEncryptionConfiguration>")
    assert_s3_error(response, 400, "MalformedXML")
    with pytest.raises(ClientError) as err:
        s3.get_bucket_encryption(Bucket=sse_bucket)
    assert status(err.value) == 404


def test_a_default_encrypts_puts_without_headers(server, s3, sse_bucket):
    s3.put_bucket_encryption(Bucket=sse_bucket, ServerSideEncryptionConfiguration=AES256_DEFAULT)
    started = time.time() - 2
    marker = b"DEFAULT-SSE-MARKER-never-on-disk-0b9d"
    put = s3.put_object(Bucket=sse_bucket, Key="k", Body=marker * 100)
    assert put["ServerSideEncryption"] == "AES256"
    got = s3.get_object(Bucket=sse_bucket, Key="k")
    assert (got["Body"].read(), got["ServerSideEncryption"]) == (marker * 100, "AES256")
    stored = b"".join(path.read_bytes() for path in stored_files(server) if path.stat().st_mtime >= started)
    assert marker not in stored
    # SSE-C still wins over the default, as on AWS.
    s3.put_object(Bucket=sse_bucket, Key="c", Body=b"customer", **SSE_C)
    assert s3.head_object(Bucket=sse_bucket, Key="c", **SSE_C)["SSECustomerAlgorithm"] == "AES256"
    s3.delete_bucket_encryption(Bucket=sse_bucket)


def test_copies_and_multipart_uploads_are_encrypted_in_a_default_encrypted_bucket(s3, sse_bucket):
    s3.put_object(Bucket=sse_bucket, Key="plain-src", Body=b"source")
    s3.put_bucket_encryption(Bucket=sse_bucket, ServerSideEncryptionConfiguration=AES256_DEFAULT)
    try:
        copied = s3.copy_object(Bucket=sse_bucket, Key="copy", CopySource={"Bucket": sse_bucket, "Key": "plain-src"})
        assert copied["ServerSideEncryption"] == "AES256"
        got = s3.get_object(Bucket=sse_bucket, Key="copy")
        assert (got["Body"].read(), got["ServerSideEncryption"]) == (b"source", "AES256")
        # Multipart uploads too (test_sse_multipart.py has the details).
        created = s3.create_multipart_upload(Bucket=sse_bucket, Key="mpu")
        assert created["ServerSideEncryption"] == "AES256"
        part = s3.upload_part(Bucket=sse_bucket, Key="mpu", UploadId=created["UploadId"], PartNumber=1,
                              Body=b"multipart")
        assert part["ServerSideEncryption"] == "AES256"
        s3.complete_multipart_upload(Bucket=sse_bucket, Key="mpu", UploadId=created["UploadId"], MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
        got = s3.get_object(Bucket=sse_bucket, Key="mpu")
        assert (got["Body"].read(), got["ServerSideEncryption"]) == (b"multipart", "AES256")
    finally:
        s3.delete_bucket_encryption(Bucket=sse_bucket)


def test_post_object_with_the_sse_field_or_a_default_is_encrypted(server, s3, sse_bucket):
    started = time.time() - 2
    marker = b"POSTED-SSE-MARKER-never-on-disk-3c1f"
    field = {"x-amz-server-side-encryption": "AES256"}
    form = presigned_post(s3, sse_bucket, "posted", field, [field])
    response = post(form, marker * 50)
    assert response.status_code == 204, response.text
    assert response.headers["x-amz-server-side-encryption"] == "AES256"
    assert response.headers["ETag"] == f'"{hashlib.md5(marker * 50).hexdigest()}"'
    got = s3.get_object(Bucket=sse_bucket, Key="posted")
    assert (got["Body"].read(), got["ServerSideEncryption"]) == (marker * 50, "AES256")
    s3.put_bucket_encryption(Bucket=sse_bucket, ServerSideEncryptionConfiguration=AES256_DEFAULT)
    try:
        form = presigned_post(s3, sse_bucket, "by-default")
        response = post(form, marker * 3)
        assert response.status_code == 204, response.text
        assert response.headers["x-amz-server-side-encryption"] == "AES256"
        head = s3.head_object(Bucket=sse_bucket, Key="by-default")
        assert (head["ServerSideEncryption"], head["ContentLength"]) == ("AES256", len(marker) * 3)
    finally:
        s3.delete_bucket_encryption(Bucket=sse_bucket)
    stored = b"".join(path.read_bytes() for path in stored_files(server) if path.stat().st_mtime >= started)
    assert marker not in stored
    bad = {"x-amz-server-side-encryption": "AES128"}
    form = presigned_post(s3, sse_bucket, "bad", bad, [bad])
    assert_s3_error(post(form, b"data"), 400, "InvalidArgument")
    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=sse_bucket, Key="bad")
    assert status(err.value) == 404

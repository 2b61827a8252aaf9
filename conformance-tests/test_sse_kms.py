"""Server-side encryption with KMS keys (SSE-KMS, `x-amz-server-side-encryption: aws:kms` and
`x-amz-server-side-encryption-aws-kms-key-id: NAME`) against a real Apache Hadoop KMS, the KMS
Ozone's own encryption uses (kms/kms-dev, the `hadoop_kms` fixture): each object's key is sealed
under a data key the KMS makes under key NAME (an encrypted data key, EEK) and only the KMS opens
again; the gateway's KMS user `s3gw` may generate and decrypt EEKs, never read a key. PutObject,
GetObject, HeadObject, multipart uploads, CopyObject, PostObject and bucket default encryption
behave as on AWS, with the KMS's key names for AWS's key ids; a key the KMS does not have is
`400 KMS.NotFoundException`, the KMS down is `503` (retryable), and a gateway without
`sse_kms_url` refuses `aws:kms` with `501 NotImplemented` naming the setting."""

import base64
import os
import time

import pytest
import requests
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import (Credentials, empty_and_delete_bucket, external_endpoint, make_s3_client, payload,
                      start_server, unique_bucket_name)
from kms_dev import ADMIN_USER, GATEWAY_USER, start_kms
from raw_client import RawClient, assert_client_error, assert_s3_error
from test_post_object import post, presigned_post
from test_sse import SSE_C, stored_files

# The module's KMS and gateways start in the first test's setup; an empty ~/.m2 makes Maven
# download the KMS's jars then.
pytestmark = pytest.mark.timeout(600)

KEY_1, KEY_2 = "testkey-1", "testkey-2"
SEGMENT = 64 * 1024
MIB = 1024 * 1024
SSE_HEADER = "x-amz-server-side-encryption"
KEY_ID_HEADER = "x-amz-server-side-encryption-aws-kms-key-id"


def kms(key: str) -> dict:
    return {"ServerSideEncryption": "aws:kms", "SSEKMSKeyId": key}


def assert_kms(answer: dict, key: str) -> None:
    """An answer (PUT, GET, HEAD, copy, completion) naming SSE-KMS under `key`."""
    found = (answer.get("ServerSideEncryption"), answer.get("SSEKMSKeyId"))
    assert found == ("aws:kms", key), {k: v for k, v in answer.items() if k != "Body"}


def refused(call, code_status, **kwargs) -> ClientError:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    assert (status(err.value), error_code(err.value)) == code_status, err.value.response
    return err.value


def absent(client, bucket: str, key: str) -> None:
    with pytest.raises(ClientError) as err:
        client.head_object(Bucket=bucket, Key=key)
    assert status(err.value) == 404


def stored_since(server, started: float) -> bytes:
    """Every byte the back end wrote since `started` (test_sse.stored_files: the embedded data dir,
    or the Ozone dev cluster's datanode dirs; skips where those are unknown)."""
    return b"".join(path.read_bytes() for path in stored_files(server) if path.stat().st_mtime >= started)


def keyring(tmp_path_factory):
    """An SSE-S3 keyring, so that KMS objects copy into SSE-S3 on both back ends."""
    path = tmp_path_factory.mktemp("sse-kms-keyring") / "master.keys"
    path.write_text("k1 " + base64.b64encode(os.urandom(32)).decode() + "\n")
    path.chmod(0o600)
    return path


def kms_gateway(tmp_path_factory, name: str, kms_url: str, *extra: str):
    if external_endpoint() is not None:
        pytest.skip("starts its own server with a KMS (S3_ENDPOINT is set)")
    # sse_c_over_http: so that an SSE-C key on a KMS object is refused for what it is, not for HTTP.
    return start_server(tmp_path_factory, name, ["--sse-kms-url", kms_url, "--sse-c-over-http", "true",
                                                 "--sse-master-key-file", str(keyring(tmp_path_factory)),
                                                 *extra])


@pytest.fixture(scope="module")
def server(tmp_path_factory, hadoop_kms):
    """A gateway on the module's KMS with no default KMS key and sse_kms_user left at its default."""
    server = kms_gateway(tmp_path_factory, "sse-kms", hadoop_kms.url)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def default_key_server(tmp_path_factory, hadoop_kms):
    server = kms_gateway(tmp_path_factory, "sse-kms-default", hadoop_kms.url,
                         "--sse-kms-user", GATEWAY_USER, "--sse-kms-default-key", KEY_2)
    try:
        yield server
    finally:
        server.stop()


def client_of(server):
    return make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))


def raw_of(server) -> RawClient:
    return RawClient(server.endpoint, Credentials(server.access_key, server.secret_key))


@pytest.fixture(scope="module")
def s3(server):
    return client_of(server)


@pytest.fixture(scope="module")
def raw(server) -> RawClient:
    return raw_of(server)


def one_part_upload(client, bucket: str, key: str, body: bytes, **create) -> tuple[dict, dict]:
    """A one-part multipart upload of `body`: CreateMultipartUpload's answer and the GET after."""
    created = client.create_multipart_upload(Bucket=bucket, Key=key, **create)
    part = client.upload_part(Bucket=bucket, Key=key, UploadId=created["UploadId"], PartNumber=1, Body=body)
    client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=created["UploadId"],
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    got = client.get_object(Bucket=bucket, Key=key)
    assert got["Body"].read() == body
    return created, got


@pytest.fixture
def kms_bucket(s3):
    name = unique_bucket_name("kms")
    s3.create_bucket(Bucket=name)
    yield name
    empty_and_delete_bucket(s3, name)


# ---- the dev KMS itself ----

def test_the_gateway_user_may_only_generate_and_decrypt_data_keys(hadoop_kms):
    """kms-dev's ACLs, as an operator would set them: `s3gw` generates and decrypts EEKs and
    reads key metadata, never key material; the admin `dev` manages keys and cannot open EEKs."""
    assert set(hadoop_kms.key_names()) >= {KEY_1, KEY_2}
    generated = hadoop_kms.generate_eek(KEY_1)
    assert generated.status_code == 200, generated.text
    eek = generated.json()[0]
    assert eek["versionName"].startswith(f"{KEY_1}@")
    opened = hadoop_kms.decrypt_eek(eek)
    assert opened.status_code == 200, opened.text
    data_key = base64.urlsafe_b64decode(opened.json()["material"] + "==")
    assert len(data_key) == 32
    # The same EEK opens to the same data key; another EEK to another.
    assert hadoop_kms.decrypt_eek(eek).json()["material"] == opened.json()["material"]
    other = hadoop_kms.decrypt_eek(hadoop_kms.generate_eek(KEY_1).json()[0])
    assert other.json()["material"] != opened.json()["material"]
    metadata = hadoop_kms.call(GATEWAY_USER, "GET", f"key/{KEY_1}/_metadata")
    assert (metadata.status_code, metadata.json()["cipher"]) == (200, "AES/CTR/NoPadding")
    # Key material and key management are not the gateway's.
    for path in (f"key/{KEY_1}/_currentversion", f"keyversion/{eek['versionName']}", "keys/names"):
        assert hadoop_kms.call(GATEWAY_USER, "GET", path).status_code == 403, path
    create = hadoop_kms.call(GATEWAY_USER, "POST", "keys", json_body={"name": "mine", "length": 256,
                                                                      "cipher": "AES/CTR/NoPadding"})
    assert create.status_code == 403
    # The admin cannot open what the gateway stores.
    assert hadoop_kms.generate_eek(KEY_1, user=ADMIN_USER).status_code == 403
    assert hadoop_kms.decrypt_eek(eek, user=ADMIN_USER).status_code == 403
    # Nobody unnamed.
    assert requests.get(f"{hadoop_kms.url}/v1/keys/names", timeout=30).status_code == 401


# ---- PutObject, GetObject, HeadObject ----

@pytest.mark.parametrize("size", [0, 1, 13, 1024, MIB + 17])
def test_round_trip_with_ranges(s3, kms_bucket, size):
    body = payload(size, f"kms-{size}")
    put = s3.put_object(Bucket=kms_bucket, Key="k", Body=body, **kms(KEY_1))
    assert_kms(put, KEY_1)
    got = s3.get_object(Bucket=kms_bucket, Key="k")
    assert_kms(got, KEY_1)
    assert got["ContentLength"] == size
    assert got["Body"].read() == body
    head = s3.head_object(Bucket=kms_bucket, Key="k")
    assert_kms(head, KEY_1)
    assert head["ContentLength"] == size
    assert head["ETag"] == put["ETag"]
    listed = s3.list_objects_v2(Bucket=kms_bucket)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed] == [("k", size)]
    if size == 0:
        return
    for first, last in [(0, 0), (size - 1, size - 1), (size // 3, size - 2), (0, min(size, SEGMENT + 1) - 1),
                        (SEGMENT - 1, SEGMENT), (SEGMENT, 3 * SEGMENT - 1), (size // 2, size - 1)]:
        if last >= size or first > last:
            continue
        part = s3.get_object(Bucket=kms_bucket, Key="k", Range=f"bytes={first}-{last}")
        assert part["ContentRange"] == f"bytes {first}-{last}/{size}"
        assert part["Body"].read() == body[first:last + 1], (first, last)
        assert_kms(part, KEY_1)
    suffix = s3.get_object(Bucket=kms_bucket, Key="k", Range="bytes=-10")
    assert suffix["Body"].read() == body[-10:]


def test_metadata_is_the_users_and_overwrites_change_the_encryption(s3, kms_bucket):
    s3.put_object(Bucket=kms_bucket, Key="k", Body=b"sealed", Metadata={"colour": "blue"},
                  ContentType="text/plain", **kms(KEY_1))
    head = s3.head_object(Bucket=kms_bucket, Key="k")
    # The sealed data key and its KMS key version are never shown as metadata.
    assert head["Metadata"] == {"colour": "blue"}
    assert head["ContentType"] == "text/plain"
    s3.put_object(Bucket=kms_bucket, Key="k", Body=b"second", **kms(KEY_2))
    got = s3.get_object(Bucket=kms_bucket, Key="k")
    assert got["Body"].read() == b"second"
    assert_kms(got, KEY_2)
    s3.put_object(Bucket=kms_bucket, Key="k", Body=b"third")
    got = s3.get_object(Bucket=kms_bucket, Key="k")
    assert got["Body"].read() == b"third"
    assert "ServerSideEncryption" not in got and "SSEKMSKeyId" not in got


def test_the_stored_bytes_are_not_the_plaintext(server, s3, kms_bucket):
    started = time.time() - 2
    secret_marker = b"SSE-KMS-MARKER-never-on-disk-5e8b14"
    plain_marker = b"PLAIN-MARKER-stored-as-sent-a90c3e"
    for size in (100, 300 * 1024):
        body = (secret_marker * (size // len(secret_marker) + 1))[:size]
        s3.put_object(Bucket=kms_bucket, Key=f"secret-{size}", Body=body, **kms(KEY_1))
    s3.put_object(Bucket=kms_bucket, Key="plain", Body=plain_marker * 10)
    stored = stored_since(server, started)
    # The check can see plaintext: the unencrypted object's marker is found.
    assert plain_marker in stored
    assert secret_marker not in stored


def test_a_key_made_after_the_gateway_started_and_a_rolled_key_work(hadoop_kms, s3, kms_bucket):
    name = f"made-later-{os.urandom(3).hex()}"
    hadoop_kms.create_key(name)
    s3.put_object(Bucket=kms_bucket, Key="v0", Body=b"under version 0", **kms(name))
    # A new key version: new objects are sealed under it, older ones still open.
    hadoop_kms.roll_key(name)
    s3.put_object(Bucket=kms_bucket, Key="v1", Body=b"under version 1", **kms(name))
    for key, body in (("v0", b"under version 0"), ("v1", b"under version 1")):
        got = s3.get_object(Bucket=kms_bucket, Key=key)
        assert got["Body"].read() == body
        assert_kms(got, name)


# ---- refusals ----

def test_aws_kms_without_a_key_id_and_no_default_key_is_refused(s3, kms_bucket):
    refused(s3.put_object, (400, "InvalidArgument"), Bucket=kms_bucket, Key="k", Body=b"x",
            ServerSideEncryption="aws:kms")
    absent(s3, kms_bucket, "k")
    refused(s3.create_multipart_upload, (400, "InvalidArgument"), Bucket=kms_bucket, Key="mpu",
            ServerSideEncryption="aws:kms")
    assert s3.list_multipart_uploads(Bucket=kms_bucket).get("Uploads", []) == []


def test_the_default_key_seals_aws_kms_without_a_key_id(default_key_server):
    s3 = client_of(default_key_server)
    bucket = unique_bucket_name("kms-default-key")
    s3.create_bucket(Bucket=bucket)
    try:
        put = s3.put_object(Bucket=bucket, Key="k", Body=b"under the default", ServerSideEncryption="aws:kms")
        assert_kms(put, KEY_2)
        got = s3.get_object(Bucket=bucket, Key="k")
        assert got["Body"].read() == b"under the default"
        assert_kms(got, KEY_2)
        assert_kms(s3.head_object(Bucket=bucket, Key="k"), KEY_2)
        # A key id named still wins.
        assert_kms(s3.put_object(Bucket=bucket, Key="named", Body=b"named", **kms(KEY_1)), KEY_1)
        assert_kms(s3.head_object(Bucket=bucket, Key="named"), KEY_1)
        # A multipart upload too.
        created, got = one_part_upload(s3, bucket, "mpu", b"part", ServerSideEncryption="aws:kms")
        assert_kms(created, KEY_2)
        assert_kms(got, KEY_2)
    finally:
        empty_and_delete_bucket(s3, bucket)


def test_a_key_the_kms_does_not_have_is_refused_and_nothing_stored(s3, kms_bucket):
    unknown = kms("no-such-key-7c1d")
    refused(s3.put_object, (400, "KMS.NotFoundException"), Bucket=kms_bucket, Key="k", Body=b"x", **unknown)
    absent(s3, kms_bucket, "k")
    refused(s3.create_multipart_upload, (400, "KMS.NotFoundException"), Bucket=kms_bucket, Key="mpu", **unknown)
    assert s3.list_multipart_uploads(Bucket=kms_bucket).get("Uploads", []) == []
    s3.put_object(Bucket=kms_bucket, Key="src", Body=b"source")
    refused(s3.copy_object, (400, "KMS.NotFoundException"), Bucket=kms_bucket, Key="copy",
            CopySource={"Bucket": kms_bucket, "Key": "src"}, **unknown)
    absent(s3, kms_bucket, "copy")


def test_a_kms_key_id_without_aws_kms_is_refused(raw, s3, kms_bucket):
    for headers in ({KEY_ID_HEADER: KEY_1}, {SSE_HEADER: "AES256", KEY_ID_HEADER: KEY_1}):
        response = raw.request("PUT", kms_bucket, "k", body=b"data", headers=headers)
        assert_s3_error(response, 400, "InvalidArgument")
    absent(s3, kms_bucket, "k")


def test_sse_kms_headers_on_a_read_are_refused(s3, raw, kms_bucket):
    s3.put_object(Bucket=kms_bucket, Key="sealed", Body=b"sealed", **kms(KEY_1))
    s3.put_object(Bucket=kms_bucket, Key="plain", Body=b"plain")
    for key in ("sealed", "plain"):
        # As AWS: the encryption is the object's, a read names none.
        response = raw.request("GET", kms_bucket, key, headers={SSE_HEADER: "aws:kms"})
        assert_s3_error(response, 400, "InvalidArgument")
        response = raw.request("GET", kms_bucket, key, headers={SSE_HEADER: "aws:kms", KEY_ID_HEADER: KEY_1})
        assert_s3_error(response, 400, "InvalidArgument")
        response = raw.request("GET", kms_bucket, key, headers={KEY_ID_HEADER: KEY_1})
        assert response.status_code == 400, response.text
        assert_client_error(response)
        assert raw.request("HEAD", kms_bucket, key, headers={SSE_HEADER: "aws:kms"}).status_code == 400
    # Without them, both read.
    assert s3.get_object(Bucket=kms_bucket, Key="sealed")["Body"].read() == b"sealed"


def test_a_customer_key_on_a_kms_object_is_refused(s3, raw, kms_bucket):
    s3.put_object(Bucket=kms_bucket, Key="k", Body=b"sealed", **kms(KEY_1))
    refused(s3.get_object, (400, "InvalidRequest"), Bucket=kms_bucket, Key="k", **SSE_C)
    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=kms_bucket, Key="k", **SSE_C)
    assert status(err.value) == 400
    # Both schemes on one write are refused, and SSE-C with a KMS key id.
    refused(s3.put_object, (400, "InvalidArgument"), Bucket=kms_bucket, Key="both", Body=b"x",
            **kms(KEY_1), **SSE_C)
    refused(s3.put_object, (400, "InvalidArgument"), Bucket=kms_bucket, Key="both", Body=b"x",
            SSEKMSKeyId=KEY_1, **SSE_C)
    absent(s3, kms_bucket, "both")
    assert s3.get_object(Bucket=kms_bucket, Key="k")["Body"].read() == b"sealed"


# ---- multipart uploads ----

def test_multipart_upload_under_a_kms_key(s3, raw, kms_bucket):
    parts = [payload(5 * MIB, "kms-part-1"), payload(5 * MIB + 3, "kms-part-2"), payload(1234, "kms-part-3")]
    created = s3.create_multipart_upload(Bucket=kms_bucket, Key="mpu", **kms(KEY_1))
    assert_kms(created, KEY_1)
    upload = created["UploadId"]
    etags = []
    first = s3.upload_part(Bucket=kms_bucket, Key="mpu", UploadId=upload, PartNumber=1, Body=parts[0])
    assert_kms(first, KEY_1)
    etags.append(first["ETag"])
    # A part may repeat its upload's aws:kms and key id (SDKs and tools built for RGW send them).
    repeated = raw.request("PUT", kms_bucket, "mpu", query=[("partNumber", "2"), ("uploadId", upload)],
                           body=parts[1], headers={SSE_HEADER: "aws:kms", KEY_ID_HEADER: KEY_1})
    assert repeated.status_code == 200, repeated.text
    etags.append(repeated.headers["ETag"])
    third = s3.upload_part(Bucket=kms_bucket, Key="mpu", UploadId=upload, PartNumber=3, Body=parts[2])
    etags.append(third["ETag"])
    done = s3.complete_multipart_upload(Bucket=kms_bucket, Key="mpu", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": n + 1, "ETag": etag} for n, etag in enumerate(etags)]})
    assert_kms(done, KEY_1)
    body = b"".join(parts)
    got = s3.get_object(Bucket=kms_bucket, Key="mpu")
    assert_kms(got, KEY_1)
    assert got["ContentLength"] == len(body)
    assert got["Body"].read() == body
    head = s3.head_object(Bucket=kms_bucket, Key="mpu")
    assert_kms(head, KEY_1)
    assert head["ContentLength"] == len(body)
    boundary = len(parts[0])
    for first_byte, last_byte in [(0, 99), (boundary - 50, boundary + 49), (boundary + len(parts[1]) - 1,
                                                                           len(body) - 1), (123_456, 4_567_890)]:
        ranged = s3.get_object(Bucket=kms_bucket, Key="mpu", Range=f"bytes={first_byte}-{last_byte}")
        assert ranged["Body"].read() == body[first_byte:last_byte + 1], (first_byte, last_byte)
    second = s3.get_object(Bucket=kms_bucket, Key="mpu", PartNumber=2)
    assert second["Body"].read() == parts[1]
    listed = s3.list_objects_v2(Bucket=kms_bucket)["Contents"]
    assert [(o["Key"], o["Size"]) for o in listed] == [("mpu", len(body))]


def test_a_kms_part_of_a_plain_upload_is_refused(s3, raw, kms_bucket):
    # The part would be stored as its upload is, in plaintext: a 200 would tell the client otherwise.
    # (Whether a part naming another KMS key than its upload's is refused is left open: ceph/s3-tests'
    # test_sse_kms_multipart_invalid_chunks_1 and _2 expect RGW's success.)
    plain = s3.create_multipart_upload(Bucket=kms_bucket, Key="plain")["UploadId"]
    try:
        response = raw.request("PUT", kms_bucket, "plain", query=[("partNumber", "1"), ("uploadId", plain)],
                               body=b"part", headers={SSE_HEADER: "aws:kms", KEY_ID_HEADER: KEY_1})
        assert_s3_error(response, 400, "InvalidArgument")
        assert s3.list_parts(Bucket=kms_bucket, Key="plain", UploadId=plain).get("Parts", []) == []
    finally:
        s3.abort_multipart_upload(Bucket=kms_bucket, Key="plain", UploadId=plain)


def test_upload_part_copy_opens_a_kms_source(s3, kms_bucket):
    source = payload(3 * SEGMENT + 5, "kms-part-copy")
    s3.put_object(Bucket=kms_bucket, Key="src", Body=source, **kms(KEY_1))
    for key, encryption in (("plain", {}), ("sealed", kms(KEY_2))):
        upload = s3.create_multipart_upload(Bucket=kms_bucket, Key=key, **encryption)["UploadId"]
        part = s3.upload_part_copy(Bucket=kms_bucket, Key=key, UploadId=upload, PartNumber=1,
                                   CopySource={"Bucket": kms_bucket, "Key": "src"},
                                   CopySourceRange=f"bytes=100-{SEGMENT + 99}")
        s3.complete_multipart_upload(Bucket=kms_bucket, Key=key, UploadId=upload, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": part["CopyPartResult"]["ETag"]}]})
        got = s3.get_object(Bucket=kms_bucket, Key=key)
        assert got["Body"].read() == source[100:SEGMENT + 100]
        if encryption:
            assert_kms(got, KEY_2)
        else:
            assert "ServerSideEncryption" not in got


# ---- CopyObject ----

def test_copies_between_plain_and_kms_keys(s3, kms_bucket):
    marker = b"KMS-COPY-MARKER-never-on-disk-2f60d9"
    body = marker * 9000  # several segments
    s3.put_object(Bucket=kms_bucket, Key="k1", Body=body, **kms(KEY_1))
    source = {"Bucket": kms_bucket, "Key": "k1"}
    # KMS to plain: without encryption parameters the copy is its plaintext, as on AWS.
    plain = s3.copy_object(Bucket=kms_bucket, Key="plain", CopySource=source)
    assert "ServerSideEncryption" not in plain and "SSEKMSKeyId" not in plain
    got = s3.get_object(Bucket=kms_bucket, Key="plain")
    assert got["Body"].read() == body and "ServerSideEncryption" not in got
    # Plain to KMS.
    sealed = s3.copy_object(Bucket=kms_bucket, Key="sealed", CopySource={"Bucket": kms_bucket, "Key": "plain"},
                            **kms(KEY_1))
    assert_kms(sealed, KEY_1)
    got = s3.get_object(Bucket=kms_bucket, Key="sealed")
    assert got["Body"].read() == body
    assert_kms(got, KEY_1)
    # KMS key 1 to KMS key 2.
    rekeyed = s3.copy_object(Bucket=kms_bucket, Key="k2", CopySource=source, **kms(KEY_2))
    assert_kms(rekeyed, KEY_2)
    got = s3.get_object(Bucket=kms_bucket, Key="k2", Range="bytes=70000-70099")
    assert got["Body"].read() == body[70000:70100]
    assert_kms(got, KEY_2)
    # KMS to SSE-S3, and in place from key 1 to key 2, as AWS allows a copy changing only the encryption.
    s3_copy = s3.copy_object(Bucket=kms_bucket, Key="aes", CopySource=source, ServerSideEncryption="AES256")
    assert (s3_copy["ServerSideEncryption"], s3_copy.get("SSEKMSKeyId")) == ("AES256", None)
    assert s3.get_object(Bucket=kms_bucket, Key="aes")["Body"].read() == body
    s3.put_object(Bucket=kms_bucket, Key="inplace", Body=marker, **kms(KEY_1))
    s3.copy_object(Bucket=kms_bucket, Key="inplace", CopySource={"Bucket": kms_bucket, "Key": "inplace"},
                   **kms(KEY_2))
    got = s3.get_object(Bucket=kms_bucket, Key="inplace")
    assert got["Body"].read() == marker
    assert_kms(got, KEY_2)


# ---- bucket default encryption ----

KMS_DEFAULT = {"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms",
                                                                  "KMSMasterKeyID": KEY_1}}]}


def test_a_kms_bucket_default_encrypts_writes_without_headers(server, s3, kms_bucket):
    s3.put_bucket_encryption(Bucket=kms_bucket, ServerSideEncryptionConfiguration=KMS_DEFAULT)
    rules = s3.get_bucket_encryption(Bucket=kms_bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert [rule["ApplyServerSideEncryptionByDefault"] for rule in rules] == \
        [KMS_DEFAULT["Rules"][0]["ApplyServerSideEncryptionByDefault"]]
    started = time.time() - 2
    marker = b"KMS-DEFAULT-MARKER-never-on-disk-81ab7c"
    put = s3.put_object(Bucket=kms_bucket, Key="k", Body=marker * 100)
    assert_kms(put, KEY_1)
    got = s3.get_object(Bucket=kms_bucket, Key="k")
    assert got["Body"].read() == marker * 100
    assert_kms(got, KEY_1)
    assert_kms(s3.head_object(Bucket=kms_bucket, Key="k"), KEY_1)
    assert marker not in stored_since(server, started)
    # What a request asks wins over the default, as on AWS.
    assert_kms(s3.put_object(Bucket=kms_bucket, Key="k2", Body=b"x", **kms(KEY_2)), KEY_2)
    aes = s3.put_object(Bucket=kms_bucket, Key="aes", Body=b"x", ServerSideEncryption="AES256")
    assert (aes["ServerSideEncryption"], aes.get("SSEKMSKeyId")) == ("AES256", None)
    # Copies and multipart uploads asking nothing take the default too.
    s3.delete_bucket_encryption(Bucket=kms_bucket)
    s3.put_object(Bucket=kms_bucket, Key="plain-src", Body=b"source")
    s3.put_bucket_encryption(Bucket=kms_bucket, ServerSideEncryptionConfiguration=KMS_DEFAULT)
    assert_kms(s3.copy_object(Bucket=kms_bucket, Key="copy", CopySource={"Bucket": kms_bucket, "Key": "plain-src"}),
               KEY_1)
    created, got = one_part_upload(s3, kms_bucket, "mpu", b"mp")
    assert_kms(created, KEY_1)
    assert_kms(got, KEY_1)
    s3.delete_bucket_encryption(Bucket=kms_bucket)


# ---- PostObject ----

def test_post_object_with_the_kms_fields_is_encrypted(server, s3, kms_bucket):
    started = time.time() - 2
    marker = b"KMS-POSTED-MARKER-never-on-disk-d41e07"
    fields = {SSE_HEADER: "aws:kms", KEY_ID_HEADER: KEY_1}
    form = presigned_post(s3, kms_bucket, "posted", fields, [{SSE_HEADER: "aws:kms"}, {KEY_ID_HEADER: KEY_1}])
    response = post(form, marker * 50)
    assert response.status_code == 204, response.text
    assert response.headers.get(SSE_HEADER) == "aws:kms"
    assert response.headers.get(KEY_ID_HEADER) == KEY_1
    got = s3.get_object(Bucket=kms_bucket, Key="posted")
    assert got["Body"].read() == marker * 50
    assert_kms(got, KEY_1)
    assert marker not in stored_since(server, started)
    # A key the KMS does not have stores nothing.
    unknown = {SSE_HEADER: "aws:kms", KEY_ID_HEADER: "no-such-key-7c1d"}
    form = presigned_post(s3, kms_bucket, "unknown", unknown, [{SSE_HEADER: "aws:kms"},
                                                               {KEY_ID_HEADER: "no-such-key-7c1d"}])
    assert_s3_error(post(form, b"data"), 400, "KMS.NotFoundException")
    absent(s3, kms_bucket, "unknown")


# ---- the KMS down ----

def kms_failure(call, **kwargs) -> ClientError:
    # A hang would be caught by the module's timeout; no wall-clock bound here (the machine's
    # load is not the gateway's).
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    return err.value


def test_the_kms_down_is_a_retryable_503_and_service_resumes(tmp_path_factory):
    kms_server = start_kms(tmp_path_factory, "kms-outage")
    server = None
    try:
        server = kms_gateway(tmp_path_factory, "sse-kms-outage", kms_server.url)
        s3 = client_of(server)
        bucket = unique_bucket_name("kms-outage")
        s3.create_bucket(Bucket=bucket)
        body = payload(200_000, "kms-outage")
        s3.put_object(Bucket=bucket, Key="sealed", Body=body, **kms(KEY_1))
        s3.put_object(Bucket=bucket, Key="plain", Body=b"plain")
        # A fresh process: whatever data keys the gateway may hold opened in memory are gone, so
        # reading "sealed" needs the KMS. (Reads served from such a cache while the KMS is down
        # are not judged here.)
        server.stop()
        server.start()
        s3 = client_of(server)

        kms_server.kill()
        err = kms_failure(s3.put_object, Bucket=bucket, Key="during", Body=b"x", **kms(KEY_1))
        assert status(err) == 503, err.response
        absent(s3, bucket, "during")
        err = kms_failure(s3.get_object, Bucket=bucket, Key="sealed")
        assert status(err) == 503, err.response
        err = kms_failure(s3.create_multipart_upload, Bucket=bucket, Key="mpu", **kms(KEY_1))
        assert status(err) == 503, err.response
        # What needs no KMS goes on: plain objects, and a KMS object's description (AWS's HeadObject
        # needs no kms:Decrypt), checked at the end.
        assert s3.get_object(Bucket=bucket, Key="plain")["Body"].read() == b"plain"
        s3.put_object(Bucket=bucket, Key="plain-during", Body=b"plain")
        try:
            head_during_outage = s3.head_object(Bucket=bucket, Key="sealed")
        except ClientError as head_err:
            head_during_outage = head_err.response

        kms_server.start()
        # The gateway reconnects by itself (`start` returned once the KMS answers); a bounded
        # retry only in case the first connection races the listener.
        deadline = time.monotonic() + 120
        while True:
            try:
                put = s3.put_object(Bucket=bucket, Key="after", Body=b"after", **kms(KEY_1))
                break
            except ClientError as retry:
                if status(retry) != 503 or time.monotonic() > deadline:
                    raise
                time.sleep(1)
        assert_kms(put, KEY_1)
        assert s3.get_object(Bucket=bucket, Key="sealed")["Body"].read() == body
        assert s3.get_object(Bucket=bucket, Key="after")["Body"].read() == b"after"
        empty_and_delete_bucket(s3, bucket)
        assert head_during_outage["ResponseMetadata"]["HTTPStatusCode"] == 200, head_during_outage
        assert_kms(head_during_outage, KEY_1)
    finally:
        if server is not None:
            server.stop()
        kms_server.stop()


# ---- no KMS configured ----

def test_a_gateway_without_a_kms_refuses_aws_kms_naming_the_setting(root_s3, bucket):
    for call, kwargs in [
        (root_s3.put_object, {"Key": "k", "Body": b"x", **kms(KEY_1)}),
        (root_s3.put_object, {"Key": "k", "Body": b"x", "ServerSideEncryption": "aws:kms"}),
        (root_s3.create_multipart_upload, {"Key": "mpu", **kms(KEY_1)}),
    ]:
        err = refused(call, (501, "NotImplemented"), Bucket=bucket, **kwargs)
        assert "sse_kms_url" in err.response["Error"]["Message"], err.response
    absent(root_s3, bucket, "k")
    assert root_s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    err = refused(root_s3.put_bucket_encryption, (501, "NotImplemented"), Bucket=bucket,
                  ServerSideEncryptionConfiguration=KMS_DEFAULT)
    assert "sse_kms_url" in err.response["Error"]["Message"], err.response

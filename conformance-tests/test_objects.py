"""Object operations: put/get/head/delete, metadata, ranges, batch delete, key edge cases."""

import base64
import datetime
import hashlib
import os

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from raw_client import RawClient, assert_s3_error, object_path, xml_fields
from aws_chunked import crc32_base64
from sigv4 import UNSIGNED_PAYLOAD

MIB = 1024 * 1024


def md5_etag(data: bytes) -> str:
    return '"' + hashlib.md5(data).hexdigest() + '"'


@pytest.mark.parametrize("size", [0, 1, MIB, 20 * MIB], ids=["empty", "1B", "1MiB", "20MiB"])
def test_put_get_head_delete_round_trip(s3, bucket, size):
    data = os.urandom(size)
    put = s3.put_object(Bucket=bucket, Key="obj", Body=data)
    assert put["ETag"] == md5_etag(data)

    got = s3.get_object(Bucket=bucket, Key="obj")
    body = got["Body"].read()
    assert hashlib.sha256(body).digest() == hashlib.sha256(data).digest()
    assert got["ContentLength"] == size
    assert got["ETag"] == md5_etag(data)

    head = s3.head_object(Bucket=bucket, Key="obj")
    assert head["ContentLength"] == size
    assert head["ETag"] == md5_etag(data)
    for response in (put, got, head):
        assert response["ResponseMetadata"]["HTTPHeaders"].get("x-amz-request-id")

    deleted = s3.delete_object(Bucket=bucket, Key="obj")
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=bucket, Key="obj")
    assert status(err.value) == 404


def test_overwrite_replaces_content_and_etag(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"first version, longer")
    s3.put_object(Bucket=bucket, Key="k", Body=b"second")
    got = s3.get_object(Bucket=bucket, Key="k")
    assert got["Body"].read() == b"second"
    assert got["ETag"] == md5_etag(b"second")
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert [(o["Key"], o["Size"], o["ETag"]) for o in listed] == [("k", 6, md5_etag(b"second"))]


def test_last_modified_is_current(s3, bucket):
    before = datetime.datetime.now(datetime.timezone.utc).replace(microsecond=0)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    after = datetime.datetime.now(datetime.timezone.utc)
    head = s3.head_object(Bucket=bucket, Key="k")
    slack = datetime.timedelta(seconds=5)
    assert before - slack <= head["LastModified"] <= after + slack
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"][0]["LastModified"]
    assert abs(listed - head["LastModified"]) <= datetime.timedelta(seconds=1)


def test_user_metadata_round_trips_through_boto3(s3, bucket):
    metadata = {"color": "blue", "MixedCase": "Value With Spaces", "num-ber": "42"}
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Metadata=metadata)
    expected = {k.lower(): v for k, v in metadata.items()}
    assert s3.get_object(Bucket=bucket, Key="k")["Metadata"] == expected
    assert s3.head_object(Bucket=bucket, Key="k")["Metadata"] == expected


def test_mixed_case_metadata_header_names_sent_raw(raw: RawClient, bucket):
    headers = {"X-Amz-Meta-CamelCase": "Hello", "x-amz-meta-UPPER": "World"}
    put = raw.request("PUT", bucket, "meta", headers=headers, body=b"payload")
    assert put.status_code == 200, put.text
    for method in ("GET", "HEAD"):
        response = raw.request(method, bucket, "meta")
        assert response.status_code == 200
        assert response.headers.get("x-amz-meta-camelcase") == "Hello"
        assert response.headers.get("x-amz-meta-upper") == "World"


def test_system_metadata_round_trips(s3, bucket):
    expires = datetime.datetime(2030, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc)
    s3.put_object(
        Bucket=bucket,
        Key="k",
        Body=b"some text",
        ContentType="text/plain; charset=utf-8",
        ContentEncoding="gzip",
        ContentDisposition='attachment; filename="report.txt"',
        ContentLanguage="de-CH",
        CacheControl="max-age=3600, public",
        Expires=expires,
    )
    for response in (s3.get_object(Bucket=bucket, Key="k"), s3.head_object(Bucket=bucket, Key="k")):
        headers = response["ResponseMetadata"]["HTTPHeaders"]
        assert headers["content-type"] == "text/plain; charset=utf-8"
        assert headers["content-encoding"] == "gzip"
        assert headers["content-disposition"] == 'attachment; filename="report.txt"'
        assert headers["content-language"] == "de-CH"
        assert headers["cache-control"] == "max-age=3600, public"
        assert headers["expires"] == "Wed, 02 Jan 2030 03:04:05 GMT"


def test_default_content_type(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    content_type = s3.head_object(Bucket=bucket, Key="k")["ContentType"]
    assert content_type == "binary/octet-stream"


RANGE_DATA = bytes(range(256)) * 40  # 10240 bytes, every offset distinguishable mod 256


@pytest.mark.parametrize(
    "range_header,start,end",
    [
        ("bytes=0-0", 0, 0),
        ("bytes=100-1099", 100, 1099),
        ("bytes=-500", 10240 - 500, 10239),
        ("bytes=10000-", 10000, 10239),
        ("bytes=10000-99999", 10000, 10239),
        ("bytes=10239-10239", 10239, 10239),
    ],
    ids=["first-byte", "middle", "suffix", "open-ended", "end-past-size", "last-byte"],
)
def test_range_get(s3, bucket, range_header, start, end):
    s3.put_object(Bucket=bucket, Key="r", Body=RANGE_DATA)
    got = s3.get_object(Bucket=bucket, Key="r", Range=range_header)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["Body"].read() == RANGE_DATA[start : end + 1]
    assert got["ContentRange"] == f"bytes {start}-{end}/{len(RANGE_DATA)}"
    assert got["ContentLength"] == end - start + 1
    assert got["ResponseMetadata"]["HTTPHeaders"].get("accept-ranges") == "bytes"


def test_range_starting_past_end_is_invalid_range(s3, raw: RawClient, bucket):
    s3.put_object(Bucket=bucket, Key="r", Body=RANGE_DATA)
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key="r", Range="bytes=10240-10300")
    assert status(err.value) == 416
    assert error_code(err.value) == "InvalidRange"
    response = raw.request("GET", bucket, "r", headers={"Range": "bytes=20000-"})
    assert_s3_error(response, 416, "InvalidRange")


def test_delete_object_is_idempotent(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    for _ in range(2):
        response = s3.delete_object(Bucket=bucket, Key="k")
        assert response["ResponseMetadata"]["HTTPStatusCode"] == 204
    never = s3.delete_object(Bucket=bucket, Key="never-existed")
    assert never["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_missing_key_is_no_such_key_with_xml_body(raw: RawClient, s3, bucket):
    response = raw.request("GET", bucket, "dir/missing key")
    error = assert_s3_error(response, 404, "NoSuchKey")
    assert error.fields.get("Key") == "dir/missing key"
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key="missing")
    assert error_code(err.value) == "NoSuchKey"


def test_head_missing_key_is_404_without_body(raw: RawClient, bucket):
    response = raw.request("HEAD", bucket, "missing")
    assert response.status_code == 404
    assert response.content == b""
    assert response.headers.get("x-amz-request-id")
    # No delete marker hides it (test_versioning.py has the `true` case), as S3 says.
    assert response.headers.get("x-amz-delete-marker") == "false"
    assert raw.request("GET", bucket, "missing").headers.get("x-amz-delete-marker") == "false"


def test_object_calls_on_missing_bucket_are_no_such_bucket(raw: RawClient, bucket_names):
    name = bucket_names()
    assert_s3_error(raw.request("GET", name, "k"), 404, "NoSuchBucket")
    assert_s3_error(raw.request("PUT", name, "k", body=b"x"), 404, "NoSuchBucket")
    assert_s3_error(raw.request("DELETE", name, "k"), 404, "NoSuchBucket")


@pytest.mark.parametrize("quiet", [False, True], ids=["verbose", "quiet"])
def test_delete_objects(s3, bucket, quiet):
    keys = [f"batch/{i}" for i in range(5)]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    s3.put_object(Bucket=bucket, Key="survivor", Body=b"s")
    request = [{"Key": k} for k in keys] + [{"Key": "batch/never-existed"}]
    response = s3.delete_objects(Bucket=bucket, Delete={"Objects": request, "Quiet": quiet})
    assert response["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert response.get("Errors", []) == []
    deleted = sorted(d["Key"] for d in response.get("Deleted", []))
    if quiet:
        assert deleted == []
    else:
        assert deleted == sorted(keys + ["batch/never-existed"])
    remaining = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert remaining == ["survivor"]


def test_delete_objects_with_content_md5_raw(raw: RawClient, s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"1")
    s3.put_object(Bucket=bucket, Key="b", Body=b"2")
    body = b"<Delete><Object><Key>a</Key></Object><Object><Key>b</Key></Object></Delete>"
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    response = raw.request("POST", bucket, query=[("delete", "")], headers={"Content-MD5": md5}, body=body)
    assert response.status_code == 200, response.text
    root, _ = xml_fields(response.content)
    assert root == "DeleteResult"
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_delete_objects_without_integrity_header_is_rejected(raw: RawClient, s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"1")
    body = b"<Delete><Object><Key>a</Key></Object></Delete>"
    response = raw.request("POST", bucket, query=[("delete", "")], body=body)
    assert_s3_error(response, 400, "InvalidRequest")
    assert s3.head_object(Bucket=bucket, Key="a")["ContentLength"] == 1


ODD_KEYS = [
    "unicode-ключ-日本語-🚀",
    "with space",
    "plus+sign",
    "percent%20literal%",
    "a/../b",
    "../escape",
    "a//b",
    "/leading-slash",
    "./dot",
    "trailing/",
    "xml&<special>'\"",
    "question?mark#hash",
    "tilde~and=equals;semi,comma",
]


@pytest.mark.parametrize("key", ODD_KEYS)
def test_odd_keys_round_trip(s3, bucket, key):
    data = key.encode() * 3
    s3.put_object(Bucket=bucket, Key=key, Body=data)
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == data
    assert s3.head_object(Bucket=bucket, Key=key)["ContentLength"] == len(data)
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == [key]
    s3.delete_object(Bucket=bucket, Key=key)
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


@pytest.mark.parametrize("key", ["a/../b", "../escape", "a//b", "./x/./y"])
def test_dot_segments_are_not_normalised_raw(raw: RawClient, s3, bucket, key):
    put = raw.request("PUT", bucket, key, body=b"raw")
    assert put.status_code == 200, put.text
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == [key]
    got = raw.request("GET", bucket, key)
    assert got.status_code == 200 and got.content == b"raw"


def test_key_of_1024_bytes_works(s3, bucket):
    ascii_key = "k" * 1024
    utf8_key = "ж" * 511 + "ab"  # 1022 + 2 bytes
    assert len(utf8_key.encode()) == 1024
    for key in (ascii_key, utf8_key):
        s3.put_object(Bucket=bucket, Key=key, Body=b"long")
        assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == b"long"


@pytest.mark.parametrize("key", ["k" * 1025, "ж" * 512 + "a"], ids=["ascii", "utf8"])
def test_key_of_1025_bytes_is_key_too_long(raw: RawClient, s3, bucket, key):
    assert len(key.encode()) == 1025
    response = raw.request("PUT", bucket, key, body=b"x")
    assert_s3_error(response, 400, "KeyTooLongError")
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_declared_size_over_5_gib_is_entity_too_large(raw: RawClient, bucket):
    """Only the request head is sent: the server must refuse before reading 5 GiB."""
    path = object_path(bucket, "huge")
    size = 5 * 1024**3 + 1
    signed = raw.sign("PUT", path, headers={"Content-Length": str(size)}, payload_hash=UNSIGNED_PAYLOAD)
    answer = raw.send_headers_only("PUT", path, signed.headers)
    assert answer, "server closed the connection without answering"
    status_line = answer.split(b"\r\n", 1)[0].decode()
    assert status_line.split()[1] == "400", f"expected 400 EntityTooLarge, got {status_line!r}"
    assert b"<Code>EntityTooLarge</Code>" in answer, answer.decode(errors="replace")


def test_content_md5_is_checked(raw: RawClient, bucket):
    body = b"digest me"
    good = base64.b64encode(hashlib.md5(body).digest()).decode()
    assert raw.request("PUT", bucket, "good", body=body, headers={"Content-MD5": good}).status_code == 200
    wrong = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    assert_s3_error(raw.request("PUT", bucket, "wrong", body=body, headers={"Content-MD5": wrong}), 400, "BadDigest")
    assert_s3_error(raw.request("PUT", bucket, "bad", body=body, headers={"Content-MD5": "!!notbase64"}), 400,
                    "InvalidDigest")
    for key in ("wrong", "bad"):
        assert raw.request("HEAD", bucket, key).status_code == 404


def test_checksum_header_is_checked(raw: RawClient, bucket):
    body = b"checksummed"
    assert raw.request("PUT", bucket, "good", body=body,
                       headers={"x-amz-checksum-crc32": crc32_base64(body)}).status_code == 200
    response = raw.request("PUT", bucket, "wrong", body=body,
                           headers={"x-amz-checksum-crc32": crc32_base64(b"other")})
    assert_s3_error(response, 400, "BadDigest")
    assert raw.request("HEAD", bucket, "wrong").status_code == 404


def test_checksum_mode_never_returns_a_wrong_checksum(s3, raw: RawClient, bucket):
    """A stored full-object checksum may be returned for a full GET, never for a range."""
    s3.put_object(Bucket=bucket, Key="c", Body=RANGE_DATA, ChecksumAlgorithm="CRC32")
    full = raw.request("GET", bucket, "c", headers={"x-amz-checksum-mode": "ENABLED"})
    assert full.status_code == 200
    if "x-amz-checksum-crc32" in full.headers:
        assert full.headers["x-amz-checksum-crc32"] == crc32_base64(RANGE_DATA)
    ranged = raw.request("GET", bucket, "c", headers={"x-amz-checksum-mode": "ENABLED", "Range": "bytes=0-99"})
    assert ranged.status_code == 206
    returned = ranged.headers.get("x-amz-checksum-crc32")
    assert returned in (None, crc32_base64(ranged.content))
    assert s3.get_object(Bucket=bucket, Key="c", ChecksumMode="ENABLED", Range="bytes=5-9")["Body"].read() == (
        RANGE_DATA[5:10]
    )


def test_delete_objects_over_1000_keys_is_malformed(raw: RawClient, bucket):
    body = ("<Delete>" + "".join(f"<Object><Key>k{i}</Key></Object>" for i in range(1001)) + "</Delete>").encode()
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    response = raw.request("POST", bucket, query=[("delete", "")], headers={"Content-MD5": md5}, body=body)
    assert_s3_error(response, 400, "MalformedXML")

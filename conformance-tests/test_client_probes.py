"""Calls common clients make besides the core ones: response overrides, storage
classes, versioning and object-lock probes, version listings, Expect: 100-continue."""

import socket
import urllib.parse

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from raw_client import assert_s3_error, object_path
from sigv4 import UNSIGNED_PAYLOAD


def test_response_header_overrides_on_get(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", ContentType="text/plain", CacheControl="no-cache")
    got = s3.get_object(
        Bucket=bucket, Key="k",
        ResponseContentType="text/html; charset=utf-8",
        ResponseContentDisposition='attachment; filename="report.txt"',
        ResponseCacheControl="max-age=60",
        ResponseContentLanguage="de",
        ResponseContentEncoding="identity",
        ResponseExpires="Fri, 01 Jan 2100 00:00:00 GMT",
    )
    headers = got["ResponseMetadata"]["HTTPHeaders"]
    assert headers["content-type"] == "text/html; charset=utf-8"
    assert headers["content-disposition"] == 'attachment; filename="report.txt"'
    assert headers["cache-control"] == "max-age=60"
    assert headers["content-language"] == "de"
    assert headers["content-encoding"] == "identity"
    assert headers["expires"] == "Fri, 01 Jan 2100 00:00:00 GMT"
    assert got["Body"].read() == b"x"
    # The stored headers are unchanged.
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["ContentType"] == "text/plain"
    assert head["CacheControl"] == "no-cache"


OVERRIDES = ["response-content-type", "response-content-language", "response-expires",
             "response-cache-control", "response-content-disposition", "response-content-encoding"]


@pytest.mark.parametrize("param", OVERRIDES)
def test_anonymous_requests_may_not_override_response_headers(root_s3, raw, bucket, param):
    """S3 refuses response-* overrides on anonymous GETs (400 InvalidRequest): nobody
    can make a public object answer as text/html through a link of their own."""
    root_s3.put_object(Bucket=bucket, Key="avatar.png", Body=b"\x89PNG", ContentType="image/png",
                       ACL="public-read")
    for method in ("GET", "HEAD"):
        got = raw.unsigned(method, bucket, "avatar.png", query=[(param, "text/html")])
        assert got.status_code == 400, (method, got.status_code, got.headers)
        assert got.headers.get("content-type") != "text/html"
    error = assert_s3_error(raw.unsigned("GET", bucket, "avatar.png", query=[(param, "text/html")]),
                            400, "InvalidRequest")
    assert "anonymous" in error.message
    # Without overrides the public object is served as stored; signed, the override applies.
    plain = raw.unsigned("GET", bucket, "avatar.png")
    assert (plain.status_code, plain.headers["content-type"]) == (200, "image/png")
    signed = raw.request("GET", bucket, "avatar.png", query=[("response-content-type", "text/plain")])
    assert (signed.status_code, signed.headers["content-type"]) == (200, "text/plain")


def test_standard_storage_class_is_accepted(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", StorageClass="STANDARD")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert [o["StorageClass"] for o in listed] == ["STANDARD"]


@pytest.mark.parametrize("storage_class", ["GLACIER", "DEEP_ARCHIVE", "garbage"])
def test_other_storage_classes_are_refused(s3, bucket, storage_class):
    with pytest.raises(ClientError) as err:
        s3.put_object(Bucket=bucket, Key="k", Body=b"x", StorageClass=storage_class)
    assert (status(err.value), error_code(err.value)) == (400, "InvalidStorageClass")
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="k")


def test_bucket_versioning_was_never_enabled(s3, bucket):
    got = s3.get_bucket_versioning(Bucket=bucket)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert "Status" not in got
    assert "MFADelete" not in got


def test_object_lock_configuration_is_not_found(s3, bucket):
    with pytest.raises(ClientError) as err:
        s3.get_object_lock_configuration(Bucket=bucket)
    assert (status(err.value), error_code(err.value)) == (404, "ObjectLockConfigurationNotFoundError")


def test_versioning_probes_on_a_missing_bucket(s3, bucket_names):
    missing = bucket_names()
    for call in (s3.get_bucket_versioning, s3.get_object_lock_configuration):
        with pytest.raises(ClientError) as err:
            call(Bucket=missing)
        assert (status(err.value), error_code(err.value)) == (404, "NoSuchBucket")


def test_list_object_versions_on_an_unversioned_bucket(s3, bucket):
    keys = ["a", "b/c", "d", "e"]
    for key in keys:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    everything = s3.list_object_versions(Bucket=bucket)
    assert [(v["Key"], v["VersionId"], v["IsLatest"]) for v in everything["Versions"]] == [
        (k, "null", True) for k in keys
    ]
    assert "DeleteMarkers" not in everything

    seen, marker, pages = [], None, 0
    while True:
        extra = {"KeyMarker": marker} if marker else {}
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=3, **extra)
        seen += [v["Key"] for v in page["Versions"]]
        pages += 1
        if not page["IsTruncated"]:
            break
        marker = page["NextKeyMarker"]
    assert seen == keys
    assert pages == 2


def test_version_id_null_on_get_head_delete(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"x"
    assert s3.head_object(Bucket=bucket, Key="k", VersionId="null")["ContentLength"] == 1
    assert s3.delete_object(Bucket=bucket, Key="k", VersionId="null")["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=bucket, Key="k")
    assert status(err.value) == 404


def test_other_version_ids_are_invalid(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    for call in (s3.get_object, s3.delete_object):
        with pytest.raises(ClientError) as err:
            call(Bucket=bucket, Key="k", VersionId="3HL4kqtJlcpXroDTDmJ")
        assert (status(err.value), error_code(err.value)) == (400, "InvalidArgument")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"


def read_response_head(sock) -> bytes:
    received = b""
    while b"\r\n\r\n" not in received:
        data = sock.recv(65536)
        if not data:
            break
        received += data
    return received


def test_expect_100_continue_is_honoured(raw, bucket):
    body = b"sent only after 100 Continue"
    path = object_path(bucket, "expect")
    headers = {
        "Host": raw.host,
        "Content-Length": str(len(body)),
        "Expect": "100-continue",
    }
    signed = raw.sign("PUT", path, (), headers, UNSIGNED_PAYLOAD).headers
    host, port = raw.address.rsplit(":", 1)
    head = "\r\n".join([f"PUT {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in signed.items()]) + "\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head.encode())
        interim = read_response_head(sock)
        assert interim.startswith(b"HTTP/1.1 100"), interim
        sock.sendall(body)
        final = interim.partition(b"\r\n\r\n")[2] + read_response_head(sock)
        assert final.startswith(b"HTTP/1.1 200"), final
    got = raw.request("GET", bucket, "expect")
    assert got.content == body


def test_expect_100_continue_refused_early_gets_the_error_not_100(raw, bucket_names):
    """A request that will fail anyway is answered before the body is sent."""
    missing = bucket_names()
    path = object_path(missing, "k")
    # Over the 1 MiB the gateway drains after an error, so nothing asks for the body.
    headers = {"Host": raw.host, "Content-Length": "5000000", "Expect": "100-continue"}
    signed = raw.sign("PUT", path, (), headers, UNSIGNED_PAYLOAD).headers
    answer = raw.send_headers_only("PUT", path, signed)
    status_line = answer.split(b"\r\n", 1)[0]
    assert status_line.startswith(b"HTTP/1.1 404"), answer[:300]
    assert b"<Code>NoSuchBucket</Code>" in answer
    assert urllib.parse.quote(missing) in answer.decode(errors="replace")

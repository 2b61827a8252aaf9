"""Behaviours the ceph/s3-tests run found missing, each checked the way AWS documents it.

See docs/s3-tests.md for how that suite is run against the gateway.
"""

import base64
import email.header
import hashlib
import socket

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import OZONE_OM, make_s3_client
from raw_client import assert_s3_error, object_path
from sigv4 import UNSIGNED_PAYLOAD

MIB = 1024 * 1024


def test_sigv2_client_can_create_list_and_delete_a_bucket(target, bucket_names):
    # botocore's V2 signer signs a path-style bucket as "/bucket/" while the
    # request line says "/bucket".
    v2 = make_s3_client(target.endpoint, target.creds, signature_version="s3")
    name = bucket_names()
    v2.create_bucket(Bucket=name)
    v2.put_object(Bucket=name, Key="k", Body=b"v2")
    assert [o["Key"] for o in v2.list_objects(Bucket=name)["Contents"]] == ["k"]
    v2.delete_object(Bucket=name, Key="k")
    v2.delete_bucket(Bucket=name)


def test_retried_complete_multipart_upload_returns_the_same_object(s3, bucket):
    upload_id = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    etags = [
        s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload_id, PartNumber=n, Body=body)["ETag"]
        for n, body in [(1, b"a" * 5 * MIB), (2, b"tail")]
    ]
    parts = {"Parts": [{"ETag": e, "PartNumber": n} for n, e in enumerate(etags, start=1)]}
    first = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload=parts)
    again = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload=parts)
    assert again["ETag"] == first["ETag"]
    assert s3.head_object(Bucket=bucket, Key="mp")["ContentLength"] == 5 * MIB + 4

    # A different part list is not a retry of that completion.
    other = {"Parts": [{"ETag": etags[0], "PartNumber": 1}]}
    with pytest.raises(ClientError) as err:
        s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload=other)
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchUpload")


def test_get_part_in_checksum_mode_returns_the_part_checksum(root_s3, bucket):
    bodies = [b"x" * 5 * MIB, b"y" * 1000]
    upload_id = root_s3.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm="SHA256")["UploadId"]
    parts = []
    for number, body in enumerate(bodies, start=1):
        digest = base64.b64encode(hashlib.sha256(body).digest()).decode()
        root_s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload_id, PartNumber=number, Body=body,
                            ChecksumSHA256=digest)
        parts.append((number, digest))
    listed = root_s3.list_parts(Bucket=bucket, Key="mp", UploadId=upload_id)["Parts"]
    root_s3.complete_multipart_upload(
        Bucket=bucket, Key="mp", UploadId=upload_id,
        MultipartUpload={"Parts": [{"ETag": p["ETag"], "PartNumber": p["PartNumber"],
                                    "ChecksumSHA256": p["ChecksumSHA256"]} for p in listed]})
    for number, digest in parts:
        got = root_s3.get_object(Bucket=bucket, Key="mp", PartNumber=number, ChecksumMode="ENABLED")
        assert got["ChecksumSHA256"] == digest
        assert got["ChecksumType"] == "COMPOSITE"
        assert got["PartsCount"] == 2


@pytest.mark.parametrize("name", ["bad-.name", "bad.-name"])
def test_bucket_name_with_a_hyphen_beside_a_dot_is_invalid(root_s3, bucket_names, name):
    with pytest.raises(ClientError) as err:
        root_s3.create_bucket(Bucket=bucket_names(exact=name))
    assert (status(err.value), error_code(err.value)) == (400, "InvalidBucketName")


def test_list_v1_prefix_is_echoed_unencoded(root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="a\nb", Body=b"")
    # boto3 asks for encoding-type=url and decodes the v1 Key, Marker and
    # Delimiter, but not Prefix, which S3 returns as sent.
    listed = root_s3.list_objects(Bucket=bucket, Prefix="a\n")
    assert listed["Prefix"] == "a\n"
    assert [o["Key"] for o in listed["Contents"]] == ["a\nb"]


def test_list_v2_echoes_an_empty_continuation_token(root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"")
    listed = root_s3.list_objects_v2(Bucket=bucket, ContinuationToken="")
    assert listed["ContinuationToken"] == ""
    assert [o["Key"] for o in listed["Contents"]] == ["k"]


def test_put_if_match_star_needs_an_existing_object(root_s3, bucket):
    with pytest.raises(ClientError) as err:
        root_s3.put_object(Bucket=bucket, Key="k", Body=b"1", IfMatch="*")
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchKey")
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"2")
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"3", IfMatch="*")
    assert root_s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"3"


def test_list_buckets_pages_with_max_buckets_and_prefix(root_s3, bucket_names):
    names = sorted(bucket_names(f"page-{i}") for i in range(3))
    prefix = names[0].split("-page-")[0]
    # Each name has its own random stem; list one of them by prefix, then all three by paging.
    for name in names:
        root_s3.create_bucket(Bucket=name)
    only = root_s3.list_buckets(Prefix=prefix)
    assert [b["Name"] for b in only["Buckets"]] == [names[0]]
    assert only["Prefix"] == prefix
    assert "ContinuationToken" not in only

    seen, token = [], None
    while True:
        kwargs = {"MaxBuckets": 2, **({"ContinuationToken": token} if token else {})}
        page = root_s3.list_buckets(**kwargs)
        assert len(page["Buckets"]) <= 2
        seen += [b["Name"] for b in page["Buckets"]]
        token = page.get("ContinuationToken")
        if not token:
            break
    assert seen == sorted(seen)
    assert set(names) <= set(seen)


@pytest.mark.parametrize("prefix", ["\n", "/"], ids=["newline", "slash"])
def test_a_prefix_no_key_starts_with_lists_nothing(root_s3, bucket, prefix):
    # Ozone's OM ignores a blank prefix and widens "/" to the whole bucket
    # (found with s3-tests' test_bucket_list_prefix_unreadable).
    for key in ("b/a/c", "foo/bar", "g", "quux"):
        root_s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    assert root_s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", []) == []
    listed = root_s3.list_objects(Bucket=bucket, Prefix=prefix, Delimiter="d")
    assert listed.get("Contents", []) == [] and listed.get("CommonPrefixes", []) == []


def test_whitespace_only_key_names(root_s3, bucket):
    if not OZONE_OM:
        for key in (" ", "  ", "\t"):
            root_s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
        for key in (" ", "  ", "\t"):
            assert root_s3.get_object(Bucket=bucket, Key=key)["Body"].read() == key.encode()
        listed = [o["Key"] for o in root_s3.list_objects_v2(Bucket=bucket)["Contents"]]
        assert sorted(listed) == sorted([" ", "  ", "\t"])
        return
    # Ozone drops a blank key name and would address the bucket itself:
    # the name is refused, never stored under another name.
    for key in (" ", "  ", "\t"):
        with pytest.raises(ClientError) as refused:
            root_s3.put_object(Bucket=bucket, Key=key, Body=b"x")
        assert status(refused.value) == 400 and error_code(refused.value) == "InvalidArgument"
        with pytest.raises(ClientError) as missing:
            root_s3.head_object(Bucket=bucket, Key=key)
        assert status(missing.value) == 404
    assert root_s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_non_ascii_metadata_comes_back_rfc2047_encoded(root_s3, bucket):
    # S3 documents that a non-ASCII metadata value is returned as an RFC 2047
    # encoded word; boto3 refuses non-ASCII Metadata itself, so the header is
    # set after its validation, as s3-tests does.
    def set_unicode_metadata(params, **_):
        params["headers"]["x-amz-meta-meta1"] = "Hello World\xe9"

    root_s3.meta.events.register("before-call.s3.PutObject", set_unicode_metadata)
    try:
        root_s3.put_object(Bucket=bucket, Key="k", Body=b"bar")
    finally:
        root_s3.meta.events.unregister("before-call.s3.PutObject", set_unicode_metadata)
    for answer in (root_s3.get_object(Bucket=bucket, Key="k"), root_s3.head_object(Bucket=bucket, Key="k")):
        encoded = answer["Metadata"]["meta1"]
        assert encoded == "=?UTF-8?B?SGVsbG8gV29ybGTDqQ==?="
        [(raw_value, charset)] = email.header.decode_header(encoded)
        assert raw_value.decode(charset) == "Hello World\xe9"
    root_s3.put_object(Bucket=bucket, Key="ascii", Body=b"", Metadata={"meta1": "plain =?ascii?= text"})
    assert root_s3.head_object(Bucket=bucket, Key="ascii")["Metadata"] == {"meta1": "plain =?ascii?= text"}


@pytest.mark.parametrize("method, key", [("PUT", "k"), ("PUT", None)], ids=["put-object", "create-bucket"])
def test_an_empty_authorization_header_is_anonymous(raw, bucket_names, method, key):
    # An Authorization header with nothing in it carries no credentials:
    # AccessDenied, as for no header at all, not "Unsupported Authorization Type".
    name = bucket_names()
    if key:
        # Into an existing private bucket: a missing one is NoSuchBucket to anyone.
        raw.request("PUT", name).raise_for_status()
    path = object_path(name, key)
    response = raw.send(method, raw.url(path), {"Host": raw.host, "Authorization": "", "Content-Length": "0"})
    assert_s3_error(response, 403, "AccessDenied")
    response = raw.send(method, raw.url(path), {"Host": raw.host, "Content-Length": "0"})
    assert_s3_error(response, 403, "AccessDenied")


def test_tags_come_back_in_key_order(root_s3, bucket):
    # x-amz-tagging "foo=bar&bar": `bar` alone is a tag with an empty value.
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"", Tagging="foo=bar&bar")
    assert root_s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [
        {"Key": "bar", "Value": ""},
        {"Key": "foo", "Value": "bar"},
    ]
    tags = [{"Key": k, "Value": v} for k, v in [("zeta", "1"), ("alpha", "2"), ("key2", "3"), ("key", "4")]]
    root_s3.put_object_tagging(Bucket=bucket, Key="k", Tagging={"TagSet": tags})
    got = root_s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"]
    assert [t["Key"] for t in got] == ["alpha", "key", "key2", "zeta"]


def test_a_malformed_checksum_value_is_invalid_request_and_a_wrong_one_bad_digest(root_s3, bucket):
    # AWS answers a value that is not base64 of the algorithm's length with
    # InvalidRequest "Value for x-amz-checksum-sha256 header is invalid."
    # (the message SDK test suites match, e.g. aws-sdk-kotlin#1164), and a
    # well-formed value that does not match the body with BadDigest.
    with pytest.raises(ClientError) as err:
        root_s3.put_object(Bucket=bucket, Key="k", Body=b"A" * 1024, ChecksumSHA256="bad")
    assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")
    assert "x-amz-checksum-sha256" in err.value.response["Error"]["Message"]
    wrong = base64.b64encode(hashlib.sha256(b"other").digest()).decode()
    with pytest.raises(ClientError) as err:
        root_s3.put_object(Bucket=bucket, Key="k", Body=b"A" * 1024, ChecksumSHA256=wrong)
    assert (status(err.value), error_code(err.value)) == (400, "BadDigest")


def test_a_part_resent_while_its_first_upload_runs_keeps_the_last_to_finish(raw, root_s3, bucket):
    """s3-tests' resend_first_finishes_last: part 1 is sent again while its
    first upload is still running, and the first finishes last."""
    upload_id = root_s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    first, second = b"A" * 1024, b"B" * 1024
    query = [("partNumber", "1"), ("uploadId", upload_id)]
    path = object_path(bucket, "mp")
    signed = raw.sign("PUT", path, query, {"Content-Length": str(len(first))}, UNSIGNED_PAYLOAD).headers
    host, port = raw.address.rsplit(":", 1)
    head = "\r\n".join([f"PUT {raw.url(path, query)[len(raw.endpoint):]} HTTP/1.1"]
                       + [f"{k}: {v}" for k, v in signed.items()]) + "\r\n\r\n"
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(head.encode() + first[:100])
        resent = root_s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload_id, PartNumber=1, Body=second)
        sock.sendall(first[100:])
        answer = b""
        while b"\r\n\r\n" not in answer:
            answer += sock.recv(65536)
    assert answer.startswith(b"HTTP/1.1 200"), answer[:300]
    first_etag = f'"{hashlib.md5(first).hexdigest()}"'
    assert resent["ETag"] == f'"{hashlib.md5(second).hexdigest()}"'
    [listed] = root_s3.list_parts(Bucket=bucket, Key="mp", UploadId=upload_id)["Parts"]
    assert listed["ETag"] == first_etag

    # s3-tests then lists part 1 twice (both ETags); S3 documents the list
    # as ascending by part number, so a repeated number is InvalidPartOrder.
    twice = {"Parts": [{"ETag": resent["ETag"], "PartNumber": 1}, {"ETag": first_etag, "PartNumber": 1}]}
    with pytest.raises(ClientError) as err:
        root_s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id, MultipartUpload=twice)
    assert (status(err.value), error_code(err.value)) == (400, "InvalidPartOrder")
    root_s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload_id,
                                      MultipartUpload={"Parts": [{"ETag": first_etag, "PartNumber": 1}]})
    assert root_s3.get_object(Bucket=bucket, Key="mp")["Body"].read() == first

"""Object tagging: Put/Get/DeleteObjectTagging, x-amz-tagging on PUT, x-amz-tagging-count."""

import base64
import hashlib

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import make_s3_client
from raw_client import assert_s3_error

TAGGING = [("tagging", "")]


def tag_set(pairs):
    return {"TagSet": [{"Key": k, "Value": v} for k, v in pairs]}


def tagging_xml(pairs) -> bytes:
    tags = "".join(f"<Tag><Key>{k}</Key><Value>{v}</Value></Tag>" for k, v in pairs)
    return f'<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>{tags}</TagSet></Tagging>'.encode()


def test_put_get_delete_tagging_round_trip(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"data")
    before = s3.head_object(Bucket=bucket, Key="k")
    assert "x-amz-tagging-count" not in before["ResponseMetadata"]["HTTPHeaders"]
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == []

    pairs = [("zeta", "last"), ("alpha", "first"), ("empty", "")]
    put = s3.put_object_tagging(Bucket=bucket, Key="k", Tagging=tag_set(pairs))
    assert put["ResponseMetadata"]["HTTPStatusCode"] == 200
    # In key order, not the order sent, on every back end.
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == tag_set(sorted(pairs))["TagSet"]

    after = s3.head_object(Bucket=bucket, Key="k")
    assert after["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "3"
    assert s3.get_object(Bucket=bucket, Key="k")["TagCount"] == 3
    # Tagging changes neither the data nor its validators.
    assert after["ETag"] == before["ETag"]
    assert after["LastModified"] == before["LastModified"]
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"

    deleted = s3.delete_object_tagging(Bucket=bucket, Key="k")
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == []
    assert "x-amz-tagging-count" not in s3.head_object(Bucket=bucket, Key="k")["ResponseMetadata"]["HTTPHeaders"]


def test_put_tagging_replaces_the_whole_set(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="a=1&b=2")
    s3.put_object_tagging(Bucket=bucket, Key="k", Tagging=tag_set([("c", "3")]))
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [{"Key": "c", "Value": "3"}]


def test_tagging_header_on_put_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="project=blue%20sky&owner=")
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [
        {"Key": "owner", "Value": ""},
        {"Key": "project", "Value": "blue sky"},
    ]
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "2"


def test_overwrite_drops_old_tags(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="a=1")
    s3.put_object(Bucket=bucket, Key="k", Body=b"y")
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == []


def test_limits_count_unicode_characters_not_bytes(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    key, value = "ключ" * 32, "値" * 256  # 128 and 256 characters, far more bytes
    ten = [(f"k{i}", "v") for i in range(9)] + [(key, value)]
    s3.put_object_tagging(Bucket=bucket, Key="k", Tagging=tag_set(ten))
    stored = s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"]
    assert stored == tag_set(sorted(ten))["TagSet"]


@pytest.mark.parametrize(
    "pairs",
    [
        [(f"k{i}", "v") for i in range(11)],
        [("dup", "1"), ("dup", "2")],
        [("k" * 129, "v")],
        [("k", "v" * 257)],
        [("aws:reserved", "v")],
    ],
    ids=["eleven-tags", "duplicate-keys", "key-129-chars", "value-257-chars", "aws-prefix"],
)
def test_invalid_tag_sets_are_refused(s3, bucket, pairs):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="keep=me")
    with pytest.raises(ClientError) as err:
        s3.put_object_tagging(Bucket=bucket, Key="k", Tagging=tag_set(pairs))
    assert (status(err.value), error_code(err.value)) == (400, "InvalidTag")
    assert s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [{"Key": "keep", "Value": "me"}]


def test_empty_tag_key_is_refused(raw, root_s3, bucket):
    # boto3 refuses to send this itself, so the request is built by hand.
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    response = raw.request("PUT", bucket, "k", query=TAGGING, body=tagging_xml([("", "v")]))
    assert_s3_error(response, 400, "InvalidTag")


@pytest.mark.parametrize(
    "header",
    ["a=1&a=2", "=v", "k=" + "v" * 257, "&".join(f"k{i}=v" for i in range(11))],
    ids=["duplicate", "empty-key", "long-value", "eleven"],
)
def test_invalid_tagging_header_on_put_object(raw, bucket, header):
    response = raw.request("PUT", bucket, "k", headers={"x-amz-tagging": header}, body=b"x")
    assert_s3_error(response, 400, "InvalidTag")
    assert raw.request("HEAD", bucket, "k").status_code == 404


@pytest.mark.parametrize(
    "body",
    [b"<Tagging><TagSet><Tag><Key>k</Key>", b"not xml", b"<Tagging></Tagging>", b"<Tagging><TagSet><Tag><Value>v</Value></Tag></TagSet></Tagging>"],
    ids=["truncated", "not-xml", "no-tagset", "tag-without-key"],
)
def test_malformed_tagging_xml(raw, root_s3, bucket, body):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    response = raw.request("PUT", bucket, "k", query=TAGGING, body=body)
    assert_s3_error(response, 400, "MalformedXML")


def test_tagging_body_content_md5_is_verified(raw, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    body = tagging_xml([("a", "1")])
    good = base64.b64encode(hashlib.md5(body).digest()).decode()
    assert raw.request("PUT", bucket, "k", query=TAGGING, body=body, headers={"Content-MD5": good}).status_code == 200
    wrong = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    response = raw.request("PUT", bucket, "k", query=TAGGING, body=tagging_xml([("b", "2")]), headers={"Content-MD5": wrong})
    assert_s3_error(response, 400, "BadDigest")
    assert root_s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [{"Key": "a", "Value": "1"}]


def test_tagging_a_missing_key_is_no_such_key(s3, bucket):
    for call in (
        lambda: s3.put_object_tagging(Bucket=bucket, Key="missing", Tagging=tag_set([("a", "1")])),
        lambda: s3.get_object_tagging(Bucket=bucket, Key="missing"),
        lambda: s3.delete_object_tagging(Bucket=bucket, Key="missing"),
    ):
        with pytest.raises(ClientError) as err:
            call()
        assert (status(err.value), error_code(err.value)) == (404, "NoSuchKey")


def test_tagging_in_a_missing_bucket_is_no_such_bucket(s3, bucket_names):
    missing = bucket_names()
    with pytest.raises(ClientError) as err:
        s3.get_object_tagging(Bucket=missing, Key="k")
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchBucket")


def test_other_owners_object_tags_are_denied(root_s3, target, second_key, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x", Tagging="a=1")
    other = make_s3_client(target.endpoint, second_key)
    for call in (
        lambda: other.get_object_tagging(Bucket=bucket, Key="k"),
        lambda: other.put_object_tagging(Bucket=bucket, Key="k", Tagging=tag_set([("b", "2")])),
        lambda: other.delete_object_tagging(Bucket=bucket, Key="k"),
    ):
        with pytest.raises(ClientError) as err:
            call()
        assert (status(err.value), error_code(err.value)) == (403, "AccessDenied")
    assert root_s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [{"Key": "a", "Value": "1"}]

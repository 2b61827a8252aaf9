"""Presigned URLs (SigV4 query auth) made by boto3 (s3v4 signer) and by hand, used with plain HTTP."""

import datetime
import urllib.parse

import requests

from aws_chunked import flip_hex
from raw_client import RawClient, assert_s3_error


def test_presigned_get(root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="dir/file name.txt", Body=b"presigned content")
    url = root_s3.generate_presigned_url(
        "get_object", Params={"Bucket": bucket, "Key": "dir/file name.txt"}, ExpiresIn=300
    )
    assert "X-Amz-Signature=" in url
    response = requests.get(url, timeout=30)
    assert response.status_code == 200, response.text
    assert response.content == b"presigned content"
    assert response.headers.get("x-amz-request-id")


def test_presigned_put(root_s3, bucket):
    url = root_s3.generate_presigned_url(
        "put_object", Params={"Bucket": bucket, "Key": "uploaded"}, ExpiresIn=300
    )
    response = requests.put(url, data=b"uploaded through a presigned url", timeout=30)
    assert response.status_code == 200, response.text
    got = root_s3.get_object(Bucket=bucket, Key="uploaded")["Body"].read()
    assert got == b"uploaded through a presigned url"


def test_presigned_head_and_ranged_get(root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"0123456789")
    get_url = root_s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"})
    ranged = requests.get(get_url, headers={"Range": "bytes=2-4"}, timeout=30)
    assert ranged.status_code == 206 and ranged.content == b"234"
    head_url = root_s3.generate_presigned_url("head_object", Params={"Bucket": bucket, "Key": "k"})
    head = requests.head(head_url, timeout=30)
    assert head.status_code == 200 and head.headers["Content-Length"] == "10"


def test_expired_url_is_access_denied(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    an_hour_ago = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(hours=1)
    url = raw.presigned_url("GET", bucket, "k", expires=60, now=an_hour_ago)
    response = requests.get(url, timeout=30)
    assert_s3_error(response, 403, "AccessDenied")


def test_tampered_signature_is_signature_does_not_match(root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = root_s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"})
    parts = urllib.parse.urlsplit(url)
    query = urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
    query = [(k, flip_hex(v) if k == "X-Amz-Signature" else v) for k, v in query]
    tampered = urllib.parse.urlunsplit(parts._replace(query=urllib.parse.urlencode(query)))
    assert_s3_error(requests.get(tampered, timeout=30), 403, "SignatureDoesNotMatch")


def test_url_for_another_key_is_signature_does_not_match(root_s3, bucket):
    """A signature is bound to its path: moving it to another key must fail."""
    root_s3.put_object(Bucket=bucket, Key="public", Body=b"x")
    root_s3.put_object(Bucket=bucket, Key="secret", Body=b"y")
    url = root_s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "public"})
    moved = url.replace("/public?", "/secret?")
    assert_s3_error(requests.get(moved, timeout=30), 403, "SignatureDoesNotMatch")


def test_expiry_over_seven_days_is_rejected(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = raw.presigned_url("GET", bucket, "k", expires=7 * 24 * 3600 + 1)
    # A lifetime S3 will not honour is forbidden, like an expired URL.
    assert_s3_error(requests.get(url, timeout=30), 403, "AuthorizationQueryParametersError")


def test_negative_expiry_is_rejected(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = raw.presigned_url("GET", bucket, "k", expires=-10)
    assert_s3_error(requests.get(url, timeout=30), 403, "AuthorizationQueryParametersError")


def test_expiry_of_exactly_seven_days_is_accepted(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = raw.presigned_url("GET", bucket, "k", expires=7 * 24 * 3600)
    response = requests.get(url, timeout=30)
    assert response.status_code == 200 and response.content == b"x"


def test_presigned_put_with_added_unsigned_amz_header_is_refused(raw: RawClient, root_s3, bucket):
    """An x-amz-* header outside the signature must not change what the request does."""
    root_s3.put_object(Bucket=bucket, Key="source", Body=b"secret source")
    url = raw.presigned_url("PUT", bucket, "target", expires=300)
    response = requests.put(
        url, data=b"", headers={"x-amz-copy-source": f"/{bucket}/source"}, timeout=30
    )
    assert response.status_code == 403, response.text
    assert response.headers.get("x-amz-request-id")
    listed = [o["Key"] for o in root_s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert listed == ["source"]

"""Malformed, forged and unauthenticated requests get AWS's error, never a 500."""

import base64
import datetime
import hashlib
import http.client

import pytest

from raw_client import RawClient, assert_client_error, assert_s3_error, object_path
from sigv4 import Credentials, UNSIGNED_PAYLOAD, sha256_hex


def test_anonymous_request_is_access_denied(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    assert_s3_error(raw.unsigned("PUT", bucket, "k2", body=b"y"), 403, "AccessDenied")
    assert_s3_error(raw.unsigned("GET"), 403, "AccessDenied")
    assert [o["Key"] for o in root_s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]


def test_unknown_access_key_is_invalid_access_key_id(raw: RawClient, bucket):
    stranger = Credentials("AKIANOSUCHKEY0000000", "whatever-secret", raw.creds.region)
    assert_s3_error(raw.request("GET", bucket, query=[("list-type", "2")], creds=stranger), 403,
                    "InvalidAccessKeyId")


def test_wrong_secret_is_signature_does_not_match(raw: RawClient, bucket):
    forged = Credentials(raw.creds.access_key, raw.creds.secret_key + "x", raw.creds.region)
    assert_s3_error(raw.request("PUT", bucket, "k", body=b"x", creds=forged), 403,
                    "SignatureDoesNotMatch")
    assert raw.request("HEAD", bucket, "k").status_code == 404


@pytest.mark.parametrize("minutes", [20, -20])
def test_skewed_clock_is_request_time_too_skewed(raw: RawClient, bucket, minutes):
    skewed = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=minutes)
    response = raw.request("GET", bucket, query=[("list-type", "2")], now=skewed)
    assert_s3_error(response, 403, "RequestTimeTooSkewed")


@pytest.mark.parametrize(
    "authorization",
    [
        "AWS4-HMAC-SHA256 garbage",
        "AWS4-HMAC-SHA256 Credential=onlyakey, SignedHeaders=host, Signature=abc",
        "AWS4-HMAC-SHA256 Credential=AKID/20200101/us-east-1/s3/aws4_request",
        "AWS4-HMAC-SHA256 Credential=AKID/notadate/us-east-1/s3/aws4_request, SignedHeaders=host;x-amz-date, "
        "Signature=" + "0" * 64,
    ],
    ids=["no-fields", "short-credential", "missing-signature", "bad-scope-date"],
)
def test_malformed_authorization_header(raw: RawClient, bucket, authorization):
    signed = raw.sign("GET", object_path(bucket), payload_hash=sha256_hex(b""))
    headers = dict(signed.headers, Authorization=authorization)
    response = raw.send("GET", raw.url(object_path(bucket)), headers)
    assert_s3_error(response, 400, "AuthorizationHeaderMalformed")


def test_credential_scope_for_another_region_is_malformed(raw: RawClient, bucket):
    response = raw.request("GET", bucket, query=[("list-type", "2")], scope_region="eu-north-9")
    assert_s3_error(response, 400, "AuthorizationHeaderMalformed")


def test_credential_scope_date_other_than_request_date_is_malformed(raw: RawClient, bucket):
    response = raw.request("GET", bucket, query=[("list-type", "2")], scope_date="20200101")
    assert_s3_error(response, 400, "AuthorizationHeaderMalformed")


def test_payload_hash_mismatch_is_rejected_and_not_stored(raw: RawClient, bucket):
    response = raw.request("PUT", bucket, "k", body=b"actual body", payload_hash=sha256_hex(b"other body"))
    assert_s3_error(response, 400, "XAmzContentSHA256Mismatch")
    assert raw.request("HEAD", bucket, "k").status_code == 404


def test_invalid_payload_hash_value(raw: RawClient, bucket):
    response = raw.request("PUT", bucket, "k", body=b"x", payload_hash="not-a-hash")
    assert_s3_error(response, 400, "InvalidArgument")
    assert raw.request("HEAD", bucket, "k").status_code == 404


def test_unsigned_amz_header_is_refused(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"original")
    response = raw.request(
        "PUT", bucket, "k", body=b"replaced",
        headers={"x-amz-meta-sneaky": "yes"}, unsigned_headers=["x-amz-meta-sneaky"],
    )
    assert_s3_error(response, 403, "AccessDenied")
    assert root_s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"original"


def test_modified_signed_header_is_signature_does_not_match(raw: RawClient, bucket):
    path = object_path(bucket, "k")
    signed = raw.sign("PUT", path, headers={"x-amz-meta-a": "1"}, payload_hash=UNSIGNED_PAYLOAD)
    headers = dict(signed.headers, **{"x-amz-meta-a": "2"})
    assert_s3_error(raw.send("PUT", raw.url(path), headers, b"x"), 403, "SignatureDoesNotMatch")


def test_malformed_xml_to_delete_objects(raw: RawClient, bucket):
    body = b"<Delete><Object><Key>unterminated"
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    response = raw.request("POST", bucket, query=[("delete", "")], headers={"Content-MD5": md5}, body=body)
    assert_s3_error(response, 400, "MalformedXML")


def test_wrong_content_md5_to_delete_objects_is_bad_digest(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="a", Body=b"1")
    body = b"<Delete><Object><Key>a</Key></Object></Delete>"
    md5 = base64.b64encode(hashlib.md5(b"something else").digest()).decode()
    response = raw.request("POST", bucket, query=[("delete", "")], headers={"Content-MD5": md5}, body=body)
    assert_s3_error(response, 400, "BadDigest")
    assert root_s3.head_object(Bucket=bucket, Key="a")["ContentLength"] == 1


def test_malformed_xml_to_create_bucket(raw: RawClient, bucket_names):
    name = bucket_names()
    response = raw.request("PUT", name, body=b"<CreateBucketConfiguration><LocationConstraint>")
    assert_s3_error(response, 400, "MalformedXML")
    assert raw.request("HEAD", name).status_code == 404


def test_sigv2_gets_a_clear_client_error(raw: RawClient, bucket):
    response = raw.unsigned("GET", bucket, headers={"Authorization": f"AWS {raw.creds.access_key}:c2lnbmF0dXJl",
                                                    "Date": "Mon, 01 Jan 2024 00:00:00 GMT"})
    assert_client_error(response)


def test_unsupported_operation_is_not_implemented(raw: RawClient, bucket):
    response = raw.request("GET", bucket, query=[("website", "")])
    # AWS answers NoSuchWebsiteConfiguration; a gateway without the feature says NotImplemented.
    expected = {404: "NoSuchWebsiteConfiguration", 501: "NotImplemented"}
    assert response.status_code in expected, response.text
    assert_s3_error(response, response.status_code, expected[response.status_code])


@pytest.mark.parametrize(
    "query,headers,code",
    [
        ([("list-type", "2"), ("max-keys", "abc")], {}, "InvalidArgument"),
        ([("list-type", "2"), ("max-keys", "-1")], {}, "InvalidArgument"),
        ([("list-type", "2"), ("continuation-token", "%%%not-a-token")], {}, "InvalidArgument"),
        ([("encoding-type", "base64")], {}, "InvalidArgument"),
    ],
    ids=["max-keys-text", "max-keys-negative", "bad-continuation-token", "bad-encoding-type"],
)
def test_bad_list_parameters_are_invalid_argument(raw: RawClient, bucket, query, headers, code):
    assert_s3_error(raw.request("GET", bucket, query=query, headers=headers), 400, code)


@pytest.mark.parametrize(
    "method,key,query,headers,body",
    [
        ("GET", "k", [], {"Range": "bytes=abc"}, b""),
        ("GET", "k", [], {"Range": "bytes=5-2"}, b""),
        ("GET", "k", [], {"Range": "items=0-1"}, b""),
        ("PUT", "k", [], {"Content-MD5": "not-base64!"}, b"x"),
        ("PUT", "k", [], {"Content-MD5": base64.b64encode(b"wrong-md5-value!").decode()}, b"x"),
        ("PUT", "k", [], {"x-amz-checksum-crc32": "AAAAAA=="}, b"x"),
        ("PUT", "k", [], {"x-amz-checksum-crc32": "!!"}, b"x"),
        ("POST", None, [("delete", "")], {"Content-MD5": base64.b64encode(hashlib.md5(b"").digest()).decode()}, b""),
        ("PUT", "k", [("uploadId", "nope"), ("partNumber", "1")], {}, b"x"),
        ("GET", "k", [("partNumber", "abc")], {}, b""),
        ("DELETE", None, [("tagging", "")], {}, b""),
        ("PATCH", "k", [], {}, b"x"),
    ],
    ids=["range-garbage", "range-reversed", "range-unit", "md5-garbage", "md5-wrong", "crc32-wrong",
         "crc32-garbage", "delete-empty-body", "unknown-upload", "part-number-text", "bucket-tagging",
         "patch-method"],
)
def test_odd_requests_never_get_a_server_error(raw: RawClient, root_s3, bucket, method, key, query, headers,
                                               body):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"0123456789")
    response = raw.request(method, bucket, key, query=query, headers=headers, body=body)
    assert response.status_code < 500 or response.status_code == 501, (
        f"{method} {query} {headers} -> {response.status_code}: {response.text[:300]}"
    )
    assert response.headers.get("x-amz-request-id")
    if response.status_code >= 300 and method != "HEAD":
        assert_client_error(response)


def test_connection_survives_or_is_closed_explicitly_after_rejected_put(target, bucket):
    """After refusing a PUT without reading its body, the server must either keep the
    connection usable or say `Connection: close` (RFC 9112 §9.6); closing silently
    breaks keep-alive clients on their next request."""
    host, port = target.endpoint.split("//", 1)[1].rsplit(":", 1)
    stranger = Credentials(target.creds.access_key, "wrong-secret", target.creds.region)
    raw = RawClient(target.endpoint, stranger)
    for attempt in range(20):
        connection = http.client.HTTPConnection(host, int(port), timeout=30)
        for size in (8, 100_000):
            body = b"b" * size
            path = object_path(bucket, f"k{attempt}")
            signed = raw.sign("PUT", path, payload_hash=sha256_hex(body))
            connection.request("PUT", path, body=body, headers=signed.headers)
            response = connection.getresponse()
            response.read()
            assert response.status == 403
            if (response.getheader("Connection") or "").lower() == "close":
                connection.close()
                continue
            follow_up = raw.sign("GET", "/", payload_hash=sha256_hex(b""), creds=target.creds)
            connection.request("GET", "/", headers=follow_up.headers)
            listing = connection.getresponse()
            listing.read()
            assert listing.status == 200
        connection.close()

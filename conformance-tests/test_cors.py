"""CORS: Put/Get/DeleteBucketCors, preflight OPTIONS answered from the rules without a
signature, and Access-Control-* headers on answers to requests that carry Origin."""

import pytest
import requests
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import make_s3_client
from raw_client import assert_s3_error

RULES = {
    "CORSRules": [
        {
            "ID": "app",
            "AllowedOrigins": ["https://app.example.com"],
            "AllowedMethods": ["GET", "PUT"],
            "AllowedHeaders": ["content-type", "x-amz-*"],
            "ExposeHeaders": ["ETag", "x-amz-request-id"],
            "MaxAgeSeconds": 600,
        },
        {"AllowedOrigins": ["*"], "AllowedMethods": ["GET", "HEAD"]},
    ]
}


def preflight(target, bucket, origin, method, headers=None, key="k"):
    sent = {"Origin": origin, "Access-Control-Request-Method": method}
    if headers:
        sent["Access-Control-Request-Headers"] = headers
    return requests.options(f"{target.endpoint}/{bucket}/{key}", headers=sent, timeout=30)


def test_put_get_delete_bucket_cors(s3, bucket):
    with pytest.raises(ClientError) as err:
        s3.get_bucket_cors(Bucket=bucket)
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchCORSConfiguration")
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    assert s3.get_bucket_cors(Bucket=bucket)["CORSRules"] == RULES["CORSRules"]
    deleted = s3.delete_bucket_cors(Bucket=bucket)
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as err:
        s3.get_bucket_cors(Bucket=bucket)
    assert error_code(err.value) == "NoSuchCORSConfiguration"


@pytest.mark.parametrize(
    "rule, code",
    [
        ({"AllowedOrigins": ["*"], "AllowedMethods": ["PATCH"]}, "InvalidRequest"),
        ({"AllowedOrigins": ["https://*.*.example.com"], "AllowedMethods": ["GET"]}, "InvalidRequest"),
        ({"AllowedOrigins": ["*"], "AllowedMethods": ["GET"], "AllowedHeaders": ["x-*-*"]}, "InvalidRequest"),
    ],
    ids=["method", "origin-wildcards", "header-wildcards"],
)
def test_bad_cors_rules_are_refused(s3, bucket, rule, code):
    with pytest.raises(ClientError) as err:
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [rule]})
    assert (status(err.value), error_code(err.value)) == (400, code)


def test_more_than_100_rules_or_none_are_malformed(raw, bucket):
    rule = "<CORSRule><AllowedOrigin>*</AllowedOrigin><AllowedMethod>GET</AllowedMethod></CORSRule>"
    for body in (f"<CORSConfiguration>{rule * 101}</CORSConfiguration>", "<CORSConfiguration/>"):
        response = raw.request("PUT", bucket, query=[("cors", "")], body=body.encode())
        assert_s3_error(response, 400, "MalformedXML")
    hundred = f"<CORSConfiguration>{rule * 100}</CORSConfiguration>"
    assert raw.request("PUT", bucket, query=[("cors", "")], body=hundred.encode()).status_code == 200


def test_preflight_is_answered_from_the_rules_without_a_signature(target, root_s3, bucket):
    root_s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    allowed = preflight(target, bucket, "https://app.example.com", "PUT", "Content-Type, X-Amz-Meta-Colour")
    assert allowed.status_code == 200, allowed.text
    assert allowed.headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert allowed.headers["Access-Control-Allow-Methods"] == "GET, PUT"
    assert allowed.headers["Access-Control-Allow-Headers"] == "content-type, x-amz-meta-colour"
    assert allowed.headers["Access-Control-Expose-Headers"] == "ETag, x-amz-request-id"
    assert allowed.headers["Access-Control-Max-Age"] == "600"
    assert allowed.headers["Access-Control-Allow-Credentials"] == "true"
    assert "Origin" in allowed.headers["Vary"]

    anyone = preflight(target, bucket, "https://elsewhere.test", "GET", key="")
    assert anyone.status_code == 200
    assert anyone.headers["Access-Control-Allow-Origin"] == "*"
    assert "Access-Control-Allow-Credentials" not in anyone.headers

    for origin, method, headers in [
        ("https://elsewhere.test", "PUT", None),  # PUT only for the app
        ("https://app.example.com", "DELETE", None),  # no rule allows DELETE
        ("https://app.example.com", "PUT", "authorization-extra"),  # header not allowed
        ("https://app.example.com.evil.test", "PUT", None),  # not the app's origin
    ]:
        refused = preflight(target, bucket, origin, method, headers)
        error = assert_s3_error(refused, 403, "AccessForbidden")
        assert "This CORS request is not allowed" in error.message
        assert "Access-Control-Allow-Origin" not in refused.headers


def test_preflight_without_rules_or_origin(target, bucket):
    no_rules = preflight(target, bucket, "https://app.example.com", "GET")
    error = assert_s3_error(no_rules, 403, "AccessForbidden")
    assert "CORS is not enabled for this bucket" in error.message
    no_origin = requests.options(f"{target.endpoint}/{bucket}/k",
                                 headers={"Access-Control-Request-Method": "GET"}, timeout=30)
    assert_s3_error(no_origin, 400, "BadRequest")
    no_method = requests.options(f"{target.endpoint}/{bucket}/k", headers={"Origin": "https://a.test"}, timeout=30)
    assert_s3_error(no_method, 400, "BadRequest")


def test_preflight_on_a_missing_bucket_is_no_such_bucket(target, bucket_names):
    response = preflight(target, bucket_names(), "https://app.example.com", "GET")
    assert_s3_error(response, 404, "NoSuchBucket")


def test_answers_to_requests_with_origin_carry_the_cors_headers(target, raw, root_s3, bucket):
    root_s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"hello")
    app = {"Origin": "https://app.example.com"}
    got = raw.request("GET", bucket, "k", headers=app)
    assert got.status_code == 200 and got.content == b"hello"
    assert got.headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    assert got.headers["Access-Control-Expose-Headers"] == "ETag, x-amz-request-id"
    assert got.headers["Vary"] == "Origin"
    # Errors too, so a page can read why it was refused.
    missing = raw.request("GET", bucket, "absent", headers=app)
    assert_s3_error(missing, 404, "NoSuchKey")
    assert missing.headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    unsigned = requests.get(f"{target.endpoint}/{bucket}/k", headers=app, timeout=30)
    assert_s3_error(unsigned, 403, "AccessDenied")
    assert unsigned.headers["Access-Control-Allow-Origin"] == "https://app.example.com"
    # An origin or method no rule allows gets no CORS headers, and the answer is unchanged.
    other = raw.request("DELETE", bucket, "k", headers={"Origin": "https://elsewhere.test"})
    assert other.status_code == 204
    assert "Access-Control-Allow-Origin" not in other.headers
    plain = raw.request("GET", bucket, "absent")
    assert "Access-Control-Allow-Origin" not in plain.headers


def test_another_key_cannot_read_or_change_the_rules(target, root_s3, bucket, second_key):
    root_s3.put_bucket_cors(Bucket=bucket, CORSConfiguration=RULES)
    other = make_s3_client(target.endpoint, second_key)
    for call in (
        lambda: other.get_bucket_cors(Bucket=bucket),
        lambda: other.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": RULES["CORSRules"][1:]}),
        lambda: other.delete_bucket_cors(Bucket=bucket),
    ):
        with pytest.raises(ClientError) as err:
            call()
        assert (status(err.value), error_code(err.value)) == (403, "AccessDenied")
    assert root_s3.get_bucket_cors(Bucket=bucket)["CORSRules"] == RULES["CORSRules"]

"""Conditional requests: GET/HEAD preconditions (RFC 9110 order), conditional PUTs, conditional deletes refused."""

import base64
import hashlib
import threading

import pytest
from botocore.exceptions import ClientError

from conftest import OZONE_OM, make_s3_client
from raw_client import RawClient, assert_s3_error

PAST = "Sat, 01 Jan 2000 00:00:00 GMT"
FUTURE = "Fri, 01 Jan 2100 00:00:00 GMT"
OTHER_ETAG = '"0123456789abcdef0123456789abcdef"'


@pytest.fixture
def obj(raw, bucket):
    response = raw.request("PUT", bucket, "k", body=b"conditional body")
    assert response.status_code == 200
    return response.headers["ETag"]


def conditions(etag, pairs):
    return {name: (etag if value == "ETAG" else value) for name, value in pairs}


@pytest.mark.parametrize(
    "pairs, expected",
    [
        ([("If-Match", "ETAG")], 200),
        ([("If-Match", "*")], 200),
        ([("If-Match", OTHER_ETAG)], 412),
        ([("If-None-Match", "ETAG")], 304),
        ([("If-None-Match", "*")], 304),
        ([("If-None-Match", OTHER_ETAG)], 200),
        ([("If-Modified-Since", FUTURE)], 304),
        ([("If-Modified-Since", PAST)], 200),
        ([("If-Unmodified-Since", PAST)], 412),
        ([("If-Unmodified-Since", FUTURE)], 200),
        # RFC 9110 13.2.2: a true If-Match means If-Unmodified-Since is not evaluated.
        ([("If-Match", "ETAG"), ("If-Unmodified-Since", PAST)], 200),
        # ...and If-None-Match decides alone over If-Modified-Since.
        ([("If-None-Match", "ETAG"), ("If-Modified-Since", PAST)], 304),
        ([("If-None-Match", OTHER_ETAG), ("If-Modified-Since", FUTURE)], 200),
        # A failing If-Match wins over everything else.
        ([("If-Match", OTHER_ETAG), ("If-None-Match", "ETAG")], 412),
        # Dates that do not parse are ignored.
        ([("If-Unmodified-Since", "not a date")], 200),
    ],
    ids=[
        "if-match", "if-match-star", "if-match-fails", "if-none-match-hit", "if-none-match-star",
        "if-none-match-miss", "modified-since-future", "modified-since-past", "unmodified-since-past",
        "unmodified-since-future", "if-match-beats-unmodified", "none-match-beats-modified",
        "none-match-miss-beats-modified", "failing-if-match-first", "bad-date-ignored",
    ],
)
@pytest.mark.parametrize("method", ["GET", "HEAD"])
def test_get_and_head_preconditions(raw, bucket, obj, method, pairs, expected):
    response = raw.request(method, bucket, "k", headers=conditions(obj, pairs))
    assert response.status_code == expected, response.text
    if expected == 412 and method == "GET":
        assert_s3_error(response, 412, "PreconditionFailed")
    if expected == 304:
        assert response.headers["ETag"] == obj
        assert response.content == b""
    if expected == 200 and method == "GET":
        assert response.content == b"conditional body"


def test_if_none_match_star_put(raw, bucket):
    first = raw.request("PUT", bucket, "once", headers={"If-None-Match": "*"}, body=b"first")
    assert first.status_code == 200
    second = raw.request("PUT", bucket, "once", headers={"If-None-Match": "*"}, body=b"second")
    assert_s3_error(second, 412, "PreconditionFailed")
    assert raw.request("GET", bucket, "once").content == b"first"


def test_if_match_put(raw, bucket):
    etag = raw.request("PUT", bucket, "k", body=b"v1").headers["ETag"]
    stale = raw.request("PUT", bucket, "k", headers={"If-Match": OTHER_ETAG}, body=b"lost")
    assert_s3_error(stale, 412, "PreconditionFailed")
    current = raw.request("PUT", bucket, "k", headers={"If-Match": etag}, body=b"v2")
    assert current.status_code == 200
    # The ETag just replaced is stale now.
    again = raw.request("PUT", bucket, "k", headers={"If-Match": etag}, body=b"v3")
    assert_s3_error(again, 412, "PreconditionFailed")
    assert raw.request("GET", bucket, "k").content == b"v2"


def test_if_match_put_on_a_missing_key_is_no_such_key(raw, bucket):
    response = raw.request("PUT", bucket, "absent", headers={"If-Match": OTHER_ETAG}, body=b"x")
    assert_s3_error(response, 404, "NoSuchKey")
    assert raw.request("HEAD", bucket, "absent").status_code == 404


def test_if_none_match_other_than_star_is_not_implemented(raw, bucket):
    response = raw.request("PUT", bucket, "k", headers={"If-None-Match": OTHER_ETAG}, body=b"x")
    assert_s3_error(response, 501, "NotImplemented")


def test_conditional_put_through_boto3(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", IfNoneMatch="*")
    with pytest.raises(ClientError) as err:
        s3.put_object(Bucket=bucket, Key="k", Body=b"y", IfNoneMatch="*")
    assert err.value.response["Error"]["Code"] == "PreconditionFailed"


@pytest.mark.parametrize("round_", range(5))
def test_racing_if_none_match_puts_have_exactly_one_winner(target, bucket, round_):
    key = f"race-{round_}"
    bodies = [b"A" * 300_000, b"B" * 300_000]
    results = [None, None]
    barrier = threading.Barrier(2)

    def upload(i):
        client = RawClient(target.endpoint, target.creds)  # own connection per thread
        barrier.wait()
        results[i] = client.request("PUT", bucket, key, headers={"If-None-Match": "*"}, body=bodies[i])

    threads = [threading.Thread(target=upload, args=(i,)) for i in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    codes = sorted(r.status_code for r in results)
    assert codes == [200, 412], [r.text for r in results]
    loser = next(r for r in results if r.status_code == 412)
    assert_s3_error(loser, 412, "PreconditionFailed")
    winner = bodies[[r.status_code for r in results].index(200)]
    s3 = make_s3_client(target.endpoint, target.creds)
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == winner


on_ozone = pytest.mark.skipif(not OZONE_OM, reason="what the Ozone back end answers")
not_on_ozone = pytest.mark.skipif(bool(OZONE_OM), reason="Ozone's OM deletes unconditionally: refused there")


@not_on_ozone
@pytest.mark.parametrize("header, value", [
    ("If-Match", OTHER_ETAG),
    ("x-amz-if-match-size", "15"),
    ("x-amz-if-match-last-modified-time", PAST),
])
def test_a_conditional_delete_that_does_not_hold_deletes_nothing(raw, bucket, obj, header, value):
    assert_s3_error(raw.request("DELETE", bucket, "k", headers={header: value}), 412, "PreconditionFailed")
    assert raw.request("HEAD", bucket, "k").status_code == 200


@not_on_ozone
def test_a_conditional_delete_that_holds_deletes(raw, bucket, obj):
    modified = raw.request("HEAD", bucket, "k").headers["Last-Modified"]
    conditions = {"If-Match": obj, "x-amz-if-match-size": "16", "x-amz-if-match-last-modified-time": modified}
    assert raw.request("DELETE", bucket, "k", headers=conditions).status_code == 204
    assert raw.request("HEAD", bucket, "k").status_code == 404
    # On what is no longer there, a condition cannot hold: 404, not 204.
    assert_s3_error(raw.request("DELETE", bucket, "k", headers={"If-Match": "*"}), 404, "NoSuchKey")


def test_a_garbled_delete_condition_is_a_client_error(raw, bucket, obj):
    answer = raw.request("DELETE", bucket, "k", headers={"x-amz-if-match-size": "sixteen"})
    assert_s3_error(answer, 400, "InvalidArgument")
    assert raw.request("HEAD", bucket, "k").status_code == 200


@on_ozone
def test_a_conditional_delete_is_refused_where_it_cannot_be_checked(raw, bucket, obj):
    assert_s3_error(raw.request("DELETE", bucket, "k", headers={"If-Match": obj}), 501, "NotImplemented")
    assert raw.request("HEAD", bucket, "k").status_code == 200


def delete_objects(raw, bucket, entries: str):
    body = f"<Delete>{entries}</Delete>".encode()
    md5 = base64.b64encode(hashlib.md5(body).digest()).decode()
    answer = raw.request("POST", bucket, query=[("delete", "")], headers={"Content-MD5": md5}, body=body)
    assert answer.status_code == 200, answer.text
    return answer.text


def test_delete_objects_decides_each_conditional_entry_alone(raw, bucket):
    for key in ("plain", "kept", "matched"):
        assert raw.request("PUT", bucket, key, body=b"x").status_code == 200
    etag = raw.request("HEAD", bucket, "matched").headers["ETag"]
    text = delete_objects(raw, bucket, "<Object><Key>plain</Key></Object>"
                          f"<Object><Key>kept</Key><ETag>{OTHER_ETAG}</ETag></Object>"
                          f"<Object><Key>matched</Key><ETag>{etag}</ETag><Size>1</Size></Object>")
    assert "<Deleted><Key>plain</Key>" in text, text
    assert raw.request("HEAD", bucket, "plain").status_code == 404
    if OZONE_OM:
        for key in ("kept", "matched"):
            assert f"<Key>{key}</Key><Code>NotImplemented</Code>" in text, text
            assert raw.request("HEAD", bucket, key).status_code == 200
        return
    assert "<Key>kept</Key><Code>PreconditionFailed</Code>" in text, text
    assert raw.request("HEAD", bucket, "kept").status_code == 200
    assert "<Deleted><Key>matched</Key>" in text, text
    assert raw.request("HEAD", bucket, "matched").status_code == 404

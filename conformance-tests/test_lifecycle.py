"""Bucket lifecycle: Get/Put/DeleteBucketLifecycleConfiguration as S3 checks
them, and the worker applying the rules, on a gateway of its own whose
lifecycle day and pass interval are one second (`lifecycle_day` is a
test-only setting), so `Days: 1` expires an object one to two seconds after
it was written. boto3 throughout; the JS SDK v3 runs its own round trip
(sdk/js/lifecycle.mjs)."""

import datetime
import json
import os
import re
import subprocess
import time
import uuid

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import OZONE_OM, SUITE_DIR, external_endpoint, make_s3_client, start_server
from sigv4 import Credentials

pytestmark = pytest.mark.skipif(external_endpoint() is not None, reason="starts its own servers")

FAST = ["--lifecycle-interval", "1s", "--lifecycle-day", "1s"]
# A hang guard, not a timing claim: a due object waits for one or two passes
# of a second each, which a loaded machine may stretch; the waits end as soon
# as what they wait for holds, and the claims that nothing happens count
# passes (two_more_passes), not seconds.
PATIENCE_SECONDS = 120


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    server = start_server(tmp_path_factory, "lifecycle", FAST)
    try:
        yield server
    finally:
        server.stop()


def client_of(server):
    return make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))


@pytest.fixture(scope="module")
def s3(server):
    return client_of(server)


@pytest.fixture
def bucket(s3):
    name = f"lc-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    yield name
    for page in s3.get_paginator("list_multipart_uploads").paginate(Bucket=name):
        for upload in page.get("Uploads", []):
            s3.abort_multipart_upload(Bucket=name, Key=upload["Key"], UploadId=upload["UploadId"])
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket=name):
        for item in page.get("Contents", []):
            s3.delete_object(Bucket=name, Key=item["Key"])
    s3.delete_bucket(Bucket=name)


def error_of(call) -> tuple[int, str]:
    with pytest.raises(ClientError) as caught:
        call()
    response = caught.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"]


def keys(s3, bucket) -> set[str]:
    return {item["Key"] for item in s3.list_objects_v2(Bucket=bucket).get("Contents", [])}


def metric(server, name) -> int:
    text = requests.get(f"{server.endpoint}/metrics", timeout=10).text
    found = re.search(rf"^{name} (\d+)$", text, re.MULTILINE)
    assert found, f"{name} not on /metrics"
    return int(found.group(1))


def wait_until(condition, what: str):
    deadline = time.monotonic() + PATIENCE_SECONDS
    while not condition():
        assert time.monotonic() < deadline, f"not within {PATIENCE_SECONDS} s: {what}"
        time.sleep(0.2)


def two_more_passes(server):
    """Returns once two whole passes began and ended after the call."""
    start = metric(server, "s3gw_lifecycle_passes_total")
    wait_until(lambda: metric(server, "s3gw_lifecycle_passes_total") >= start + 2, "two passes")


RULES = [
    {
        "ID": "tmp",
        "Filter": {"Prefix": "tmp/"},
        "Status": "Enabled",
        "Expiration": {"Days": 30},
        "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
    },
    {
        "ID": "tagged-and-large",
        "Filter": {
            "And": {
                "Prefix": "logs/",
                "Tags": [{"Key": "class", "Value": "scratch"}],
                "ObjectSizeGreaterThan": 100,
            }
        },
        "Status": "Disabled",
        "Expiration": {"Date": datetime.datetime(2031, 1, 1, tzinfo=datetime.timezone.utc)},
        "NoncurrentVersionExpiration": {"NoncurrentDays": 10, "NewerNoncurrentVersions": 3},
    },
]


def test_rules_round_trip_and_delete(s3, bucket):
    assert error_of(lambda: s3.get_bucket_lifecycle_configuration(Bucket=bucket)) == (
        404,
        "NoSuchLifecycleConfiguration",
    )
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": RULES})
    rules = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert rules == RULES
    s3.delete_bucket_lifecycle(Bucket=bucket)
    assert error_of(lambda: s3.get_bucket_lifecycle_configuration(Bucket=bucket)) == (
        404,
        "NoSuchLifecycleConfiguration",
    )


def test_a_rule_without_an_id_gets_one_and_the_legacy_prefix_stays(s3, bucket):
    s3.put_bucket_lifecycle_configuration(
        Bucket=bucket,
        LifecycleConfiguration={"Rules": [{"Prefix": "", "Status": "Enabled", "Expiration": {"Days": 1}}]},
    )
    (rule,) = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert rule["ID"]
    assert rule["Prefix"] == ""
    assert "Filter" not in rule


def rule(**fields):
    return {"ID": "r", "Filter": {"Prefix": ""}, "Status": "Enabled", **fields}


REFUSED = [
    ("status", [rule(Status="On", Expiration={"Days": 1})], 400, "MalformedXML"),
    ("zero-days", [rule(Expiration={"Days": 0})], 400, "InvalidArgument"),
    ("not-midnight", [rule(Expiration={"Date": datetime.datetime(2030, 1, 1, 12, tzinfo=datetime.timezone.utc)})],
     400, "InvalidArgument"),
    ("no-action", [rule()], 400, "InvalidRequest"),
    ("same-id", [rule(Expiration={"Days": 1}), rule(Expiration={"Days": 2})], 400, "InvalidArgument"),
    ("abort-with-tags", [rule(Filter={"Tag": {"Key": "k", "Value": "v"}},
                              AbortIncompleteMultipartUpload={"DaysAfterInitiation": 1})], 400, "InvalidRequest"),
    ("transition", [rule(Transitions=[{"Days": 30, "StorageClass": "GLACIER"}])], 501, "NotImplemented"),
    ("too-many", [{"ID": f"r{i}", "Filter": {"Prefix": f"p{i}/"}, "Status": "Enabled", "Expiration": {"Days": 1}}
                  for i in range(1001)], 400, "InvalidRequest"),
]


@pytest.mark.parametrize("rules, status, code", [case[1:] for case in REFUSED], ids=[case[0] for case in REFUSED])
def test_bad_rules_are_refused_and_nothing_is_stored(s3, bucket, rules, status, code):
    put = lambda: s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})  # noqa: E731
    assert error_of(put) == (status, code)
    assert error_of(lambda: s3.get_bucket_lifecycle_configuration(Bucket=bucket))[1] == "NoSuchLifecycleConfiguration"


def test_only_the_owner_reads_and_sets_rules(server, s3, bucket):
    key = server.create_key(f"lc-other-{uuid.uuid4().hex[:6]}")
    other = make_s3_client(server.endpoint, Credentials(key["access_key"], key["secret_key"]))
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": RULES})
    assert error_of(lambda: other.get_bucket_lifecycle_configuration(Bucket=bucket)) == (403, "AccessDenied")
    assert error_of(lambda: other.delete_bucket_lifecycle(Bucket=bucket)) == (403, "AccessDenied")
    assert error_of(lambda: other.put_bucket_lifecycle_configuration(
        Bucket=bucket, LifecycleConfiguration={"Rules": RULES[:1]})) == (403, "AccessDenied")
    assert s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"] == RULES
    missing = f"lc-missing-{uuid.uuid4().hex[:8]}"
    assert error_of(lambda: s3.get_bucket_lifecycle_configuration(Bucket=missing)) == (404, "NoSuchBucket")


def test_the_worker_expires_what_the_filters_select(server, s3, bucket):
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "prefix", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled", "Expiration": {"Days": 1}},
        {"ID": "tag", "Filter": {"Tag": {"Key": "expire", "Value": "yes"}}, "Status": "Enabled",
         "Expiration": {"Days": 1}},
        {"ID": "size", "Filter": {"And": {"Prefix": "big/", "ObjectSizeGreaterThan": 100}}, "Status": "Enabled",
         "Expiration": {"Days": 1}},
        {"ID": "off", "Filter": {"Prefix": "off/"}, "Status": "Disabled", "Expiration": {"Days": 1}},
    ]})
    expired_before = metric(server, "s3gw_lifecycle_expired_objects_total")
    doomed = {"tmp/a", "tmp/deep/b", "tagged-yes", "big/large"}
    kept = {"keep/a", "tmpfile", "tagged-no", "big/small", "off/a"}
    for key in doomed | kept:
        body = b"x" * (200 if key == "big/large" else 10)
        tagging = {"tagged-yes": "expire=yes", "tagged-no": "expire=no"}.get(key, "")
        s3.put_object(Bucket=bucket, Key=key, Body=body, Tagging=tagging)
    wait_until(lambda: keys(s3, bucket) == kept, f"only {sorted(kept)} left")
    two_more_passes(server)
    assert keys(s3, bucket) == kept
    assert metric(server, "s3gw_lifecycle_expired_objects_total") - expired_before == len(doomed)
    assert metric(server, "s3gw_lifecycle_failed_buckets_total") == 0


def test_a_date_in_the_past_expires_at_the_next_pass(s3, bucket):
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "date", "Filter": {"Prefix": "old/"}, "Status": "Enabled",
         "Expiration": {"Date": datetime.datetime(2020, 1, 1, tzinfo=datetime.timezone.utc)}},
    ]})
    s3.put_object(Bucket=bucket, Key="old/a", Body=b"a")
    s3.put_object(Bucket=bucket, Key="new/a", Body=b"a")
    wait_until(lambda: keys(s3, bucket) == {"new/a"}, "old/a expired")


def test_a_far_date_expires_nothing(server, s3, bucket):
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "later", "Filter": {}, "Status": "Enabled",
         "Expiration": {"Date": datetime.datetime(2999, 1, 1, tzinfo=datetime.timezone.utc)}},
    ]})
    s3.put_object(Bucket=bucket, Key="a", Body=b"a")
    two_more_passes(server)
    assert keys(s3, bucket) == {"a"}


def test_put_head_and_get_name_the_rule_that_will_expire_the_object(s3, bucket):
    """`x-amz-expiration` (boto3's `Expiration`): the earliest enabled rule
    that selects the object, with its expiry date; none when no rule does."""
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "logs", "Filter": {"Prefix": "logs/"}, "Status": "Enabled",
         "Expiration": {"Date": datetime.datetime(2999, 1, 1, tzinfo=datetime.timezone.utc)}},
        {"ID": "tagged", "Filter": {"Tag": {"Key": "short", "Value": "yes"}}, "Status": "Enabled",
         "Expiration": {"Date": datetime.datetime(2998, 6, 1, tzinfo=datetime.timezone.utc)}},
        {"ID": "off", "Filter": {"Prefix": ""}, "Status": "Disabled",
         "Expiration": {"Date": datetime.datetime(2997, 1, 1, tzinfo=datetime.timezone.utc)}},
    ]})
    logs = 'expiry-date="Tue, 01 Jan 2999 00:00:00 GMT", rule-id="logs"'
    tagged = 'expiry-date="Fri, 01 Jun 2998 00:00:00 GMT", rule-id="tagged"'
    assert s3.put_object(Bucket=bucket, Key="logs/a", Body=b"a")["Expiration"] == logs
    assert s3.head_object(Bucket=bucket, Key="logs/a")["Expiration"] == logs
    assert s3.get_object(Bucket=bucket, Key="logs/a")["Expiration"] == logs
    assert s3.put_object(Bucket=bucket, Key="logs/b", Body=b"b", Tagging="short=yes")["Expiration"] == tagged
    assert s3.head_object(Bucket=bucket, Key="logs/b")["Expiration"] == tagged
    assert "Expiration" not in s3.put_object(Bucket=bucket, Key="data/a", Body=b"a")
    assert "Expiration" not in s3.head_object(Bucket=bucket, Key="data/a")
    s3.delete_bucket_lifecycle(Bucket=bucket)
    assert "Expiration" not in s3.head_object(Bucket=bucket, Key="logs/a")


def test_incomplete_uploads_are_aborted_after_days(server, s3, bucket):
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "uploads", "Filter": {"Prefix": "up/"}, "Status": "Enabled",
         "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}},
    ]})
    aborted_before = metric(server, "s3gw_lifecycle_aborted_uploads_total")
    doomed = s3.create_multipart_upload(Bucket=bucket, Key="up/big")["UploadId"]
    s3.upload_part(Bucket=bucket, Key="up/big", UploadId=doomed, PartNumber=1, Body=b"p" * 1024)
    kept = s3.create_multipart_upload(Bucket=bucket, Key="down/big")["UploadId"]

    def uploads():
        return {u["UploadId"] for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", [])}

    wait_until(lambda: uploads() == {kept}, "up/big aborted")
    assert error_of(lambda: s3.list_parts(Bucket=bucket, Key="up/big", UploadId=doomed)) == (404, "NoSuchUpload")
    assert metric(server, "s3gw_lifecycle_aborted_uploads_total") - aborted_before == 1
    # The rule expires no object: one written under up/ stays.
    s3.put_object(Bucket=bucket, Key="up/file", Body=b"f")
    two_more_passes(server)
    assert keys(s3, bucket) == {"up/file"}
    assert uploads() == {kept}


def test_rules_deleted_expire_nothing_more(server, s3, bucket):
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {"ID": "all", "Filter": {}, "Status": "Enabled", "Expiration": {"Days": 1}},
    ]})
    s3.delete_bucket_lifecycle(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="a", Body=b"a")
    two_more_passes(server)
    two_more_passes(server)
    assert keys(s3, bucket) == {"a"}


def test_js_sdk_sets_rules_and_sees_them_applied(server):
    """sdk/js/lifecycle.mjs: the JS SDK v3 puts, reads and deletes rules and
    waits for the worker to expire its object (installed by `run-matrix
    --install-only`, as the SDK matrix is)."""
    script = SUITE_DIR / "sdk" / "js" / "lifecycle.mjs"
    if not (script.parent / "node_modules").is_dir():
        pytest.fail("the JS SDK is not installed: run conformance-tests/sdk/run-matrix --install-only --sdk js")
    env = dict(os.environ, S3_ENDPOINT=server.endpoint, S3_ACCESS_KEY=server.access_key,
               S3_SECRET_KEY=server.secret_key, S3_REGION="us-east-1")
    done = subprocess.run(["node", str(script)], env=env, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    assert result["ok"], result


@pytest.mark.skipif(not OZONE_OM, reason="two gateways on one store need Ozone (an embedded data dir has one owner)")
def test_two_gateways_run_the_worker_against_one_store(tmp_path_factory, server, s3, bucket):
    """Every replica runs the worker: deleting twice, or aborting an upload
    another replica aborted, is harmless."""
    second = start_server(tmp_path_factory, "lifecycle-second", FAST)
    try:
        s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [
            {"ID": "all", "Filter": {"Prefix": "tmp/"}, "Status": "Enabled", "Expiration": {"Days": 1},
             "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 1}},
        ]})
        for i in range(20):
            s3.put_object(Bucket=bucket, Key=f"tmp/{i}", Body=b"x")
        s3.create_multipart_upload(Bucket=bucket, Key="tmp/upload")
        s3.put_object(Bucket=bucket, Key="keep", Body=b"x")
        wait_until(lambda: keys(s3, bucket) == {"keep"}, "tmp/ expired")
        wait_until(lambda: not s3.list_multipart_uploads(Bucket=bucket).get("Uploads"), "the upload aborted")
        two_more_passes(second)
        for gateway in (server, second):
            assert metric(gateway, "s3gw_lifecycle_failed_buckets_total") == 0
        assert keys(s3, bucket) == {"keep"}
    finally:
        second.stop()


def test_rules_go_with_their_bucket(s3):
    name = f"lc-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    s3.put_bucket_lifecycle_configuration(Bucket=name, LifecycleConfiguration={"Rules": RULES})
    s3.delete_bucket(Bucket=name)
    s3.create_bucket(Bucket=name)
    try:
        assert error_of(lambda: s3.get_bucket_lifecycle_configuration(Bucket=name))[1] == "NoSuchLifecycleConfiguration"
    finally:
        s3.delete_bucket(Bucket=name)


def versions_of(s3, bucket) -> list[tuple[str, str, bool]]:
    """(key, version id, is a delete marker) of every version, newest first per key."""
    listed = s3.list_object_versions(Bucket=bucket)
    found = [(v["Key"], v["VersionId"], False, v["LastModified"]) for v in listed.get("Versions", [])]
    found += [(m["Key"], m["VersionId"], True, m["LastModified"]) for m in listed.get("DeleteMarkers", [])]
    found.sort(key=lambda v: (v[0], -v[3].timestamp()))
    return [(key, version, marker) for key, version, marker, _ in found]


@pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")
def test_noncurrent_versions_and_lone_delete_markers_expire(server, s3):
    name = f"lc-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name)
    try:
        s3.put_bucket_versioning(Bucket=name, VersioningConfiguration={"Status": "Enabled"})
        first = s3.put_object(Bucket=name, Key="doc", Body=b"one")["VersionId"]
        current = s3.put_object(Bucket=name, Key="doc", Body=b"two")["VersionId"]
        gone = s3.put_object(Bucket=name, Key="gone", Body=b"x")["VersionId"]
        s3.delete_object(Bucket=name, Key="gone", VersionId=gone)
        s3.put_object(Bucket=name, Key="gone", Body=b"x")
        marker = s3.delete_object(Bucket=name, Key="gone")["VersionId"]
        expired_before = metric(server, "s3gw_lifecycle_expired_versions_total")
        s3.put_bucket_lifecycle_configuration(Bucket=name, LifecycleConfiguration={"Rules": [
            {"ID": "noncurrent", "Filter": {}, "Status": "Enabled",
             "NoncurrentVersionExpiration": {"NoncurrentDays": 1},
             "Expiration": {"ExpiredObjectDeleteMarker": True}},
        ]})
        # "doc": its first version is noncurrent and expires, the current
        # one stays; "gone": its one version is noncurrent and expires,
        # then its marker stands alone and expires too.
        wait_until(lambda: versions_of(s3, name) == [("doc", current, False)], "only doc's current version left")
        assert s3.get_object(Bucket=name, Key="doc")["Body"].read() == b"two"
        assert first != current and marker
        assert metric(server, "s3gw_lifecycle_expired_versions_total") - expired_before >= 3
    finally:
        for key, version, _ in versions_of(s3, name):
            s3.delete_object(Bucket=name, Key=key, VersionId=version)
        s3.delete_bucket(Bucket=name)

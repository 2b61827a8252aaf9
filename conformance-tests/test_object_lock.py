"""S3 Object Lock (boto3 + raw HTTP): a bucket made with lock (or given it while versioned) keeps
versioning Enabled; PutObjectLockConfiguration's default retention, and a write's own lock headers,
give each new version a retention and legal hold that GET/HEAD show and Put/GetObjectRetention and
Put/GetObjectLegalHold change; a locked version is refused to every delete by its id (DeleteObject,
DeleteObjects, lifecycle, an admin's forced bucket delete), also after a kill -9, while a delete
without a version id only adds a delete marker. GOVERNANCE gives way to a caller that asks to
bypass it and may; COMPLIANCE and legal hold to no one. A write naming a lock to a bucket without
lock is refused as S3 refuses it, never stored unlocked. On the Ozone back end, which keeps no
versions, object lock is 501 NotImplemented."""

import base64
import hashlib
import json
import time
import uuid
from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

from conftest import OZONE_OM, make_s3_client, start_server
from raw_client import assert_s3_error
from sigv4 import Credentials

keeps_versions = pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")


def error_of(call, *args, **kwargs) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as err:
        call(*args, **kwargs)
    response = err.value.response
    return (response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"],
            response["Error"].get("Message", ""))


def later(**delta) -> datetime:
    return (datetime.now(timezone.utc) + timedelta(**delta)).replace(microsecond=0)


LOCKS = [
    {"ObjectLockMode": "GOVERNANCE", "ObjectLockRetainUntilDate": later(days=1)},
    {"ObjectLockMode": "COMPLIANCE", "ObjectLockRetainUntilDate": later(days=1)},
    {"ObjectLockLegalHoldStatus": "ON"},
]
LOCKED = (403, "AccessDenied", "Access Denied because object protected by object lock.")


def allow_on_objects(owner_s3, bucket: str, key, actions) -> None:
    """Makes the bucket's policy allow `actions` on its objects to `key` alone."""
    owner_s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": [key.access_key]}, "Action": list(actions),
         "Resource": f"arn:aws:s3:::{bucket}/*"}]}))


def locked_bucket(s3, bucket_names, **config) -> str:
    name = bucket_names()
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    if config:
        s3.put_object_lock_configuration(Bucket=name, ObjectLockConfiguration=config)
    return name


def release(s3, bucket: str) -> None:
    """Lifts every legal hold and deletes every version GOVERNANCE allows, so the bucket can go."""
    for page in s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
        for v in page.get("Versions", []) + page.get("DeleteMarkers", []):
            try:
                s3.put_object_legal_hold(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"],
                                         LegalHold={"Status": "OFF"})
            except ClientError:
                pass
            try:
                s3.delete_object(Bucket=bucket, Key=v["Key"], VersionId=v["VersionId"],
                                 BypassGovernanceRetention=True)
            except ClientError:
                pass


@pytest.mark.parametrize("lock", LOCKS, ids=["governance", "compliance", "legal-hold"])
def test_a_write_asking_for_a_lock_in_a_bucket_without_lock_is_refused(root_s3, bucket, lock):
    # On Ozone no bucket can have a lock: a lock is not implemented there at all.
    refused = ((501, "NotImplemented") if OZONE_OM else
               (400, "InvalidRequest", "Bucket is missing Object Lock Configuration"))
    width = len(refused)
    assert error_of(root_s3.put_object, Bucket=bucket, Key="k", Body=b"x", **lock)[:width] == refused
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    assert error_of(root_s3.copy_object, Bucket=bucket, Key="k", CopySource=f"{bucket}/src",
                    **lock)[:width] == refused
    assert error_of(root_s3.create_multipart_upload, Bucket=bucket, Key="k", **lock)[:width] == refused
    keys = [o["Key"] for o in root_s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert keys == ["src"]
    assert root_s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_a_presigned_put_naming_a_lock_is_refused(raw, bucket):
    url = raw.presigned_url("PUT", bucket, "k", 300, extra_query=[("x-amz-object-lock-legal-hold", "ON")])
    assert_s3_error(raw.send("PUT", url, {}, b"x"), 501, "NotImplemented")
    assert raw.request("HEAD", bucket, "k").status_code == 404


@pytest.mark.skipif(not OZONE_OM, reason="what the Ozone back end answers")
def test_object_lock_is_not_implemented_on_ozone(root_s3, raw, bucket, bucket_names):
    name = bucket_names()
    assert error_of(root_s3.create_bucket, Bucket=name, ObjectLockEnabledForBucket=True)[:2] == (
        501, "NotImplemented")
    assert name not in [b["Name"] for b in root_s3.list_buckets()["Buckets"]]
    assert error_of(root_s3.get_object_lock_configuration, Bucket=bucket)[:2] == (
        404, "ObjectLockConfigurationNotFoundError")
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert error_of(root_s3.put_object, Bucket=bucket, Key="k", Body=b"x", **LOCKS[0])[:2] == (
        501, "NotImplemented")
    for method, query in [("PUT", "object-lock"), ("GET", "retention"), ("PUT", "retention"),
                          ("GET", "legal-hold"), ("PUT", "legal-hold")]:
        key = None if query == "object-lock" else "k"
        headers = {"Content-MD5": "1B2M2Y8AsgTpgAmY7PhCfg=="} if method == "PUT" else {}
        assert_s3_error(raw.request(method, bucket, key, query=[(query, "")], headers=headers),
                        501, "NotImplemented")


@keeps_versions
def test_a_locked_bucket_is_versioned_for_good(root_s3, bucket_names):
    name = locked_bucket(root_s3, bucket_names)
    assert root_s3.get_bucket_versioning(Bucket=name)["Status"] == "Enabled"
    assert root_s3.get_object_lock_configuration(Bucket=name)["ObjectLockConfiguration"] == {
        "ObjectLockEnabled": "Enabled"}
    assert error_of(root_s3.put_bucket_versioning, Bucket=name,
                    VersioningConfiguration={"Status": "Suspended"})[:2] == (409, "InvalidBucketState")
    assert root_s3.get_bucket_versioning(Bucket=name)["Status"] == "Enabled"


@keeps_versions
def test_the_configuration_round_trips_and_bad_ones_are_refused(root_s3, bucket, bucket_names):
    assert error_of(root_s3.get_object_lock_configuration, Bucket=bucket)[:2] == (
        404, "ObjectLockConfigurationNotFoundError")
    enabled = {"ObjectLockEnabled": "Enabled"}
    # An unversioned bucket cannot take lock; a versioned one can.
    assert error_of(root_s3.put_object_lock_configuration, Bucket=bucket,
                    ObjectLockConfiguration=enabled)[:2] == (409, "InvalidBucketState")
    root_s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    root_s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration=enabled)
    assert root_s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"] == enabled

    name = locked_bucket(root_s3, bucket_names)
    for rule in [{"Mode": "GOVERNANCE", "Days": 1}, {"Mode": "COMPLIANCE", "Years": 2}]:
        config = {**enabled, "Rule": {"DefaultRetention": rule}}
        root_s3.put_object_lock_configuration(Bucket=name, ObjectLockConfiguration=config)
        assert root_s3.get_object_lock_configuration(Bucket=name)["ObjectLockConfiguration"] == config
    bad = [
        ({"ObjectLockEnabled": "Disabled"}, "MalformedXML"),
        ({**enabled, "Rule": {"DefaultRetention": {"Mode": "abc", "Days": 1}}}, "MalformedXML"),
        ({**enabled, "Rule": {"DefaultRetention": {"Mode": "governance", "Days": 1}}}, "MalformedXML"),
        ({**enabled, "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1, "Years": 1}}},
         "MalformedXML"),
        ({**enabled, "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 0}}}, "InvalidArgument"),
        ({**enabled, "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Years": -1}}}, "InvalidArgument"),
    ]
    for config, code in bad:
        assert error_of(root_s3.put_object_lock_configuration, Bucket=name,
                        ObjectLockConfiguration=config)[:2] == (400, code), config
    # The last good one stays.
    assert root_s3.get_object_lock_configuration(Bucket=name)["ObjectLockConfiguration"]["Rule"] == {
        "DefaultRetention": {"Mode": "COMPLIANCE", "Years": 2}}


@keeps_versions
def test_writes_take_their_own_lock_or_the_default(root_s3, bucket_names):
    name = locked_bucket(root_s3, bucket_names, ObjectLockEnabled="Enabled",
                         Rule={"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}})
    try:
        until = later(days=2)
        own = root_s3.put_object(Bucket=name, Key="own", Body=b"x", ObjectLockMode="COMPLIANCE",
                                 ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="ON")
        head = root_s3.head_object(Bucket=name, Key="own")
        assert (head["ObjectLockMode"], head["ObjectLockRetainUntilDate"],
                head["ObjectLockLegalHoldStatus"]) == ("COMPLIANCE", until, "ON")
        assert not any(" " in k for k in head["Metadata"])
        retention = root_s3.get_object_retention(Bucket=name, Key="own", VersionId=own["VersionId"])
        assert retention["Retention"] == {"Mode": "COMPLIANCE", "RetainUntilDate": until}
        assert root_s3.get_object_legal_hold(Bucket=name, Key="own")["LegalHold"] == {"Status": "ON"}
        root_s3.put_object_legal_hold(Bucket=name, Key="own", LegalHold={"Status": "OFF"})

        # Nothing named: the bucket's default, about a day from now.
        root_s3.put_object(Bucket=name, Key="default", Body=b"x")
        got = root_s3.get_object(Bucket=name, Key="default")
        assert got["ObjectLockMode"] == "GOVERNANCE"
        assert abs(got["ObjectLockRetainUntilDate"] - later(days=1)) < timedelta(minutes=5)
        assert "ObjectLockLegalHoldStatus" not in got
        assert error_of(root_s3.get_object_legal_hold, Bucket=name, Key="default")[:2] == (
            404, "NoSuchObjectLockConfiguration")

        # A copy's lock is its own, not its source's.
        root_s3.copy_object(Bucket=name, Key="copy", CopySource=f"{name}/own",
                            ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=later(days=3))
        copy = root_s3.head_object(Bucket=name, Key="copy")
        assert (copy["ObjectLockMode"], "ObjectLockLegalHoldStatus" in copy) == ("GOVERNANCE", False)

        # A multipart upload's lock is the version's at Complete.
        upload = root_s3.create_multipart_upload(Bucket=name, Key="mp", ObjectLockLegalHoldStatus="ON")
        part = root_s3.upload_part(Bucket=name, Key="mp", UploadId=upload["UploadId"], PartNumber=1,
                                   Body=b"p")
        root_s3.complete_multipart_upload(Bucket=name, Key="mp", UploadId=upload["UploadId"],
                                          MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
        assert root_s3.get_object_legal_hold(Bucket=name, Key="mp")["LegalHold"] == {"Status": "ON"}
        root_s3.put_object_legal_hold(Bucket=name, Key="mp", LegalHold={"Status": "OFF"})

        for lock in [{"ObjectLockMode": "GOVERNANCE"}, {"ObjectLockRetainUntilDate": later(days=1)},
                     {"ObjectLockMode": "GOVERNANCE", "ObjectLockRetainUntilDate": later(days=-1)},
                     {"ObjectLockLegalHoldStatus": "on"}]:
            assert error_of(root_s3.put_object, Bucket=name, Key="bad", Body=b"x", **lock)[:2] == (
                400, "InvalidArgument"), lock
    finally:
        release(root_s3, name)


@keeps_versions
def test_a_put_with_a_lock_must_prove_its_body(raw, root_s3, bucket_names):
    name = locked_bucket(root_s3, bucket_names)
    headers = {"x-amz-object-lock-legal-hold": "ON"}
    response = raw.request("PUT", name, "k", headers=headers, body=b"x")
    assert_s3_error(response, 400, "InvalidRequest")
    assert "Content-MD5 OR x-amz-checksum-" in response.text
    response = raw.request("PUT", name, "k", body=b"x",
                           headers={**headers, "Content-MD5": base64.b64encode(hashlib.md5(b"x").digest()).decode()})
    assert response.status_code == 200, response.text
    release(root_s3, name)


@keeps_versions
def test_a_locked_version_is_refused_to_every_delete_by_its_id(root_s3, bucket_names):
    name = locked_bucket(root_s3, bucket_names)
    governed = root_s3.put_object(Bucket=name, Key="g", Body=b"g", ObjectLockMode="GOVERNANCE",
                                  ObjectLockRetainUntilDate=later(days=1))["VersionId"]
    complied = root_s3.put_object(Bucket=name, Key="c", Body=b"c", ObjectLockMode="COMPLIANCE",
                                  ObjectLockRetainUntilDate=later(seconds=8))["VersionId"]
    held = root_s3.put_object(Bucket=name, Key="h", Body=b"h",
                              ObjectLockLegalHoldStatus="ON")["VersionId"]
    for key, version in [("g", governed), ("c", complied), ("h", held)]:
        assert error_of(root_s3.delete_object, Bucket=name, Key=key, VersionId=version) == LOCKED
        result = root_s3.delete_objects(Bucket=name, Delete={"Objects": [{"Key": key, "VersionId": version}]})
        assert [(e["Key"], e["Code"]) for e in result["Errors"]] == [(key, "AccessDenied")]
        # Without a version id: a delete marker, allowed; the version stays.
        assert root_s3.delete_object(Bucket=name, Key=key)["DeleteMarker"] is True
        assert root_s3.get_object(Bucket=name, Key=key, VersionId=version)["Body"].read() == key.encode()
    # Bypassing lets GOVERNANCE go, never COMPLIANCE or a legal hold.
    for key, version in [("c", complied), ("h", held)]:
        assert error_of(root_s3.delete_object, Bucket=name, Key=key, VersionId=version,
                        BypassGovernanceRetention=True) == LOCKED
    result = root_s3.delete_objects(Bucket=name, BypassGovernanceRetention=True, Delete={"Objects": [
        {"Key": "g", "VersionId": governed}, {"Key": "h", "VersionId": held}]})
    assert [d["Key"] for d in result["Deleted"]] == ["g"]
    assert [(e["Key"], e["Code"]) for e in result["Errors"]] == [("h", "AccessDenied")]
    # A legal hold lifted, and a retention passed, protect nothing.
    root_s3.put_object_legal_hold(Bucket=name, Key="h", VersionId=held, LegalHold={"Status": "OFF"})
    root_s3.delete_object(Bucket=name, Key="h", VersionId=held)
    deadline = time.monotonic() + 30
    while True:
        try:
            root_s3.delete_object(Bucket=name, Key="c", VersionId=complied)
            break
        except ClientError:
            assert time.monotonic() < deadline
            time.sleep(1)


@keeps_versions
def test_retention_only_grows_unless_governance_is_bypassed(root_s3, bucket_names):
    name = locked_bucket(root_s3, bucket_names)
    try:
        version = root_s3.put_object(Bucket=name, Key="k", Body=b"x")["VersionId"]
        assert error_of(root_s3.get_object_retention, Bucket=name, Key="k")[:2] == (
            404, "NoSuchObjectLockConfiguration")

        def put(mode, until, **extra):
            return root_s3.put_object_retention(Bucket=name, Key="k", VersionId=version,
                                                Retention={"Mode": mode, "RetainUntilDate": until}, **extra)

        def current():
            return root_s3.get_object_retention(Bucket=name, Key="k", VersionId=version)["Retention"]

        put("GOVERNANCE", later(days=2))
        put("GOVERNANCE", later(days=3))
        assert error_of(put, "GOVERNANCE", later(days=1))[:2] == (403, "AccessDenied")
        assert error_of(put, "COMPLIANCE", later(days=4))[:2] == (403, "AccessDenied")
        assert error_of(root_s3.put_object_retention, Bucket=name, Key="k", Retention={})[:2] == (
            403, "AccessDenied")
        assert current()["Mode"] == "GOVERNANCE"
        put("GOVERNANCE", later(days=1), BypassGovernanceRetention=True)
        assert current()["RetainUntilDate"] < later(days=2)
        put("COMPLIANCE", later(days=2), BypassGovernanceRetention=True)
        assert current()["Mode"] == "COMPLIANCE"
        put("COMPLIANCE", later(days=3))
        for mode, until in [("COMPLIANCE", later(days=1)), ("GOVERNANCE", later(days=5))]:
            assert error_of(put, mode, until, BypassGovernanceRetention=True)[:2] == (403, "AccessDenied")
        assert error_of(put, "COMPLIANCE", later(days=-1))[:2] == (400, "InvalidArgument")
        assert error_of(root_s3.put_object_retention, Bucket=name, Key="k",
                        Retention={"Mode": "GOVERNANCE"})[:2] == (400, "MalformedXML")
    finally:
        release(root_s3, name)


@keeps_versions
def test_bypassing_governance_needs_its_permission(root_s3, managed_target, second_key, bucket_names):
    name = locked_bucket(root_s3, bucket_names)
    version = root_s3.put_object(Bucket=name, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE",
                                 ObjectLockRetainUntilDate=later(days=1))["VersionId"]
    alt = make_s3_client(managed_target.endpoint, second_key)

    def allow(*actions):
        allow_on_objects(root_s3, name, second_key, actions)

    allow("s3:DeleteObjectVersion", "s3:PutObjectRetention")
    assert error_of(alt.delete_object, Bucket=name, Key="k", VersionId=version,
                    BypassGovernanceRetention=True) == LOCKED
    assert error_of(alt.put_object_retention, Bucket=name, Key="k", VersionId=version,
                    BypassGovernanceRetention=True, Retention={})[:2] == (403, "AccessDenied")
    allow("s3:DeleteObjectVersion", "s3:PutObjectRetention", "s3:BypassGovernanceRetention")
    alt.delete_object(Bucket=name, Key="k", VersionId=version, BypassGovernanceRetention=True)
    root_s3.delete_bucket_policy(Bucket=name)


@keeps_versions
def test_get_and_head_show_a_lock_only_to_callers_allowed_to_read_it(root_s3, managed_target, second_key,
                                                                     bucket_names):
    name = locked_bucket(root_s3, bucket_names)
    until = later(days=1)
    root_s3.put_object(Bucket=name, Key="k", Body=b"x", ObjectLockMode="GOVERNANCE",
                       ObjectLockRetainUntilDate=until, ObjectLockLegalHoldStatus="ON")
    lock_fields = ("ObjectLockMode", "ObjectLockRetainUntilDate", "ObjectLockLegalHoldStatus")
    owner_view = root_s3.head_object(Bucket=name, Key="k")
    assert [owner_view.get(f) is not None for f in lock_fields] == [True, True, True]
    alt = make_s3_client(managed_target.endpoint, second_key)

    def allow(*actions):
        allow_on_objects(root_s3, name, second_key, actions)

    def shown(call) -> list[str]:
        answer = call(Bucket=name, Key="k")
        if "Body" in answer:
            answer["Body"].close()
        return [f for f in lock_fields if answer.get(f) is not None]

    allow("s3:GetObject")
    assert shown(alt.head_object) == shown(alt.get_object) == []
    allow("s3:GetObject", "s3:GetObjectRetention")
    assert shown(alt.head_object) == shown(alt.get_object) == ["ObjectLockMode", "ObjectLockRetainUntilDate"]
    allow("s3:GetObject", "s3:GetObjectLegalHold")
    assert shown(alt.head_object) == ["ObjectLockLegalHoldStatus"]
    root_s3.delete_bucket_policy(Bucket=name)
    root_s3.put_object_legal_hold(Bucket=name, Key="k", LegalHold={"Status": "OFF"})


@pytest.fixture(scope="module")
def fast_lifecycle(tmp_path_factory):
    if OZONE_OM:
        pytest.skip("the Ozone back end keeps no versions")
    server = start_server(tmp_path_factory, "lock-lifecycle",
                          ["--lifecycle-interval", "1s", "--lifecycle-day", "1s"])
    try:
        yield server
    finally:
        server.stop()


def client_of(server):
    return make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))


def version_ids(s3, bucket: str) -> set[str]:
    listed = s3.list_object_versions(Bucket=bucket)
    return {v["VersionId"] for v in listed.get("Versions", [])}


def test_lifecycle_never_expires_a_locked_version(fast_lifecycle):
    s3 = client_of(fast_lifecycle)
    name = f"lock-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    locked = s3.put_object(Bucket=name, Key="k", Body=b"1", ObjectLockMode="COMPLIANCE",
                           ObjectLockRetainUntilDate=later(days=1))["VersionId"]
    held = s3.put_object(Bucket=name, Key="k", Body=b"2", ObjectLockLegalHoldStatus="ON")["VersionId"]
    free = s3.put_object(Bucket=name, Key="k", Body=b"3")["VersionId"]
    current = s3.put_object(Bucket=name, Key="k", Body=b"4")["VersionId"]
    s3.put_bucket_lifecycle_configuration(Bucket=name, LifecycleConfiguration={"Rules": [
        {"ID": "noncurrent", "Filter": {}, "Status": "Enabled",
         "NoncurrentVersionExpiration": {"NoncurrentDays": 1}}]})
    deadline = time.monotonic() + 120
    while free in version_ids(s3, name):
        assert time.monotonic() < deadline, "the unlocked noncurrent version never expired"
        time.sleep(0.5)
    # More passes: the locked ones stay, and the worker keeps working.
    time.sleep(3)
    assert version_ids(s3, name) == {locked, held, current}


def test_a_locked_version_survives_kill_9_and_every_delete_after(own_server):
    if OZONE_OM:
        pytest.skip("the Ozone back end keeps no versions")
    s3 = client_of(own_server)
    name = f"lock-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=name, ObjectLockEnabledForBucket=True)
    s3.put_object_lock_configuration(Bucket=name, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 1}}})
    by_default = s3.put_object(Bucket=name, Key="d", Body=b"d")["VersionId"]
    held = s3.put_object(Bucket=name, Key="h", Body=b"h", ObjectLockLegalHoldStatus="ON",
                         ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=later(seconds=1))["VersionId"]
    s3.put_object_retention(Bucket=name, Key="h", VersionId=held, BypassGovernanceRetention=True,
                            Retention={"Mode": "GOVERNANCE", "RetainUntilDate": later(days=1)})
    own_server.kill9()
    own_server.start()
    s3 = client_of(own_server)
    for key, version in [("d", by_default), ("h", held)]:
        assert error_of(s3.delete_object, Bucket=name, Key=key, VersionId=version,
                        BypassGovernanceRetention=key == "d") == LOCKED
        result = s3.delete_objects(Bucket=name, BypassGovernanceRetention=True,
                                   Delete={"Objects": [{"Key": key, "VersionId": version}]})
        assert [e["Code"] for e in result["Errors"]] == ["AccessDenied"]
    assert s3.head_object(Bucket=name, Key="h", VersionId=held)["ObjectLockLegalHoldStatus"] == "ON"
    forced = own_server.admin("buckets", "delete", "--force", name, check=False)
    assert forced.returncode != 0
    assert {v["VersionId"] for v in s3.list_object_versions(Bucket=name)["Versions"]} == {by_default, held}
    assert s3.get_object(Bucket=name, Key="d", VersionId=by_default)["Body"].read() == b"d"
    assert s3.get_bucket_versioning(Bucket=name)["Status"] == "Enabled"

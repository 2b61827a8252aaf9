"""Object lock, not built yet: no bucket has it, so nothing may ask for a lock and be stored unlocked
(boto3 + raw HTTP). A write naming a lock is refused as S3 refuses one to a bucket without object
lock; making a locked bucket and the lock operations answer 501."""

from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

from raw_client import assert_s3_error


def error_of(call, **kwargs) -> tuple[int, str, str]:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    response = err.value.response
    return (response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"],
            response["Error"].get("Message", ""))


LOCKS = [
    {"ObjectLockMode": "GOVERNANCE",
     "ObjectLockRetainUntilDate": datetime.now(timezone.utc) + timedelta(days=1)},
    {"ObjectLockMode": "COMPLIANCE",
     "ObjectLockRetainUntilDate": datetime.now(timezone.utc) + timedelta(days=1)},
    {"ObjectLockLegalHoldStatus": "ON"},
]


@pytest.mark.parametrize("lock", LOCKS, ids=["governance", "compliance", "legal-hold"])
def test_a_write_asking_for_a_lock_is_refused_and_nothing_stored(root_s3, bucket, lock):
    refused = (400, "InvalidRequest", "Bucket is missing Object Lock Configuration")
    assert error_of(root_s3.put_object, Bucket=bucket, Key="k", Body=b"x", **lock) == refused
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    assert error_of(root_s3.copy_object, Bucket=bucket, Key="k", CopySource=f"{bucket}/src",
                    **lock) == refused
    assert error_of(root_s3.create_multipart_upload, Bucket=bucket, Key="k", **lock) == refused
    keys = [o["Key"] for o in root_s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
    assert keys == ["src"]
    assert root_s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_a_presigned_put_naming_a_lock_is_refused(raw, bucket):
    url = raw.presigned_url("PUT", bucket, "k", 300, extra_query=[("x-amz-object-lock-legal-hold", "ON")])
    assert_s3_error(raw.send("PUT", url, {}, b"x"), 400, "InvalidRequest")
    assert raw.request("HEAD", bucket, "k").status_code == 404


def test_a_locked_bucket_and_the_lock_operations_are_not_implemented(root_s3, raw, bucket, bucket_names):
    name = bucket_names()
    assert error_of(root_s3.create_bucket, Bucket=name, ObjectLockEnabledForBucket=True)[:2] == (
        501, "NotImplemented")
    assert error_of(root_s3.get_object_lock_configuration, Bucket=bucket)[:2] == (
        404, "ObjectLockConfigurationNotFoundError")
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    for method, query in [("PUT", "object-lock"), ("GET", "retention"), ("PUT", "retention"),
                          ("GET", "legal-hold"), ("PUT", "legal-hold")]:
        key = None if query == "object-lock" else "k"
        assert_s3_error(raw.request(method, bucket, key, query=[(query, "")], body=b"<x/>"
                                    if method == "PUT" else b""), 501, "NotImplemented")

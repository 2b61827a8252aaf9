"""Bucket operations: create, head, list, delete, location, naming rules, ownership."""

import pytest
from botocore.exceptions import ClientError

from conftest import make_s3_client
from client_errors import error_code, status
from raw_client import RawClient, assert_s3_error


def test_create_head_list_delete(s3, bucket_names):
    name = bucket_names()
    created = s3.create_bucket(Bucket=name)
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert created["ResponseMetadata"]["HTTPHeaders"].get("x-amz-request-id")

    head = s3.head_bucket(Bucket=name)
    assert head["ResponseMetadata"]["HTTPStatusCode"] == 200

    listed = s3.list_buckets()
    entries = {b["Name"]: b for b in listed["Buckets"]}
    assert name in entries
    assert entries[name]["CreationDate"] is not None
    assert listed["Owner"]["ID"]

    deleted = s3.delete_bucket(Bucket=name)
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as err:
        s3.head_bucket(Bucket=name)
    assert status(err.value) == 404
    assert name not in {b["Name"] for b in s3.list_buckets()["Buckets"]}


def test_create_twice_is_already_owned_by_you(s3, bucket):
    with pytest.raises(ClientError) as err:
        s3.create_bucket(Bucket=bucket)
    assert status(err.value) == 409
    assert error_code(err.value) == "BucketAlreadyOwnedByYou"


def test_create_bucket_owned_by_another_key_is_already_exists(target, second_key, bucket):
    other = make_s3_client(target.endpoint, second_key)
    with pytest.raises(ClientError) as err:
        other.create_bucket(Bucket=bucket)
    assert status(err.value) == 409
    assert error_code(err.value) == "BucketAlreadyExists"


def test_delete_non_empty_bucket_is_bucket_not_empty(s3, bucket):
    s3.put_object(Bucket=bucket, Key="keep", Body=b"x")
    with pytest.raises(ClientError) as err:
        s3.delete_bucket(Bucket=bucket)
    assert status(err.value) == 409
    assert error_code(err.value) == "BucketNotEmpty"
    assert s3.head_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_delete_missing_bucket_is_no_such_bucket(s3, bucket_names):
    with pytest.raises(ClientError) as err:
        s3.delete_bucket(Bucket=bucket_names())
    assert status(err.value) == 404
    assert error_code(err.value) == "NoSuchBucket"


@pytest.mark.parametrize(
    "name",
    [
        "UpperCase-bucket",
        "ab",
        "a" * 64,
        "192.168.5.4",
        "double..dot",
        "trailing-dash-",
        "-leading-dash",
        "under_score",
        "xn--punycode-prefix",
        "access-point-alias-s3alias",
        "bad/slash",
    ],
    ids=["uppercase", "too-short", "too-long", "ip-address", "double-dot", "trailing-dash",
         "leading-dash", "underscore", "xn-prefix", "s3alias-suffix", "slash"],
)
def test_invalid_bucket_name_is_rejected(raw: RawClient, name):
    response = raw.request("PUT", name)
    assert_s3_error(response, 400, "InvalidBucketName")


@pytest.mark.parametrize("name_length", [3, 63])
def test_bucket_name_length_limits_are_inclusive(s3, bucket_names, name_length):
    unique = bucket_names().replace("-", "")
    name = bucket_names(exact=(unique + "x" * 63)[:name_length])
    assert s3.create_bucket(Bucket=name)["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert s3.head_bucket(Bucket=name)["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_get_bucket_location_default_region(s3, bucket, target):
    location = s3.get_bucket_location(Bucket=bucket)["LocationConstraint"]
    if target.creds.region == "us-east-1":
        # S3 reports us-east-1 as an empty LocationConstraint.
        assert location in (None, "")
    else:
        assert location == target.creds.region


def test_create_bucket_with_location_constraint_is_accepted(raw: RawClient, s3, bucket_names, target):
    name = bucket_names()
    body = (
        '<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">'
        f"<LocationConstraint>{target.creds.region}</LocationConstraint>"
        "</CreateBucketConfiguration>"
    ).encode()
    response = raw.request("PUT", name, body=body)
    assert response.status_code == 200, response.text
    assert s3.head_bucket(Bucket=name)["ResponseMetadata"]["HTTPStatusCode"] == 200
    location = s3.get_bucket_location(Bucket=name)["LocationConstraint"]
    assert location in (None, "", target.creds.region)


def test_missing_bucket_answers_no_such_bucket_with_xml(raw: RawClient, bucket_names):
    name = bucket_names()
    response = raw.request("GET", name, query=[("list-type", "2")])
    error = assert_s3_error(response, 404, "NoSuchBucket")
    assert error.fields.get("BucketName") in (None, name)
    assert response.headers["x-amz-request-id"] == error.request_id


def test_head_missing_bucket_is_404_without_body(raw: RawClient, bucket_names):
    response = raw.request("HEAD", bucket_names())
    assert response.status_code == 404
    assert response.content == b""
    assert response.headers.get("x-amz-request-id")


def test_other_key_gets_access_denied_on_bucket(target, second_key, bucket):
    other = make_s3_client(target.endpoint, second_key)
    with pytest.raises(ClientError) as err:
        other.head_bucket(Bucket=bucket)
    assert status(err.value) == 403
    with pytest.raises(ClientError) as err:
        other.delete_bucket(Bucket=bucket)
    assert error_code(err.value) == "AccessDenied"

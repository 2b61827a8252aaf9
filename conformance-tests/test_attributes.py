"""GetObjectAttributes: the requested attributes from metadata alone."""

import hashlib
import os

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from raw_client import assert_s3_error

ALL = ["ETag", "Checksum", "ObjectParts", "StorageClass", "ObjectSize"]
MIB = 1024 * 1024


def test_all_attributes_of_a_single_part_object(s3, bucket):
    data = b"attributes body"
    s3.put_object(Bucket=bucket, Key="k", Body=data, ChecksumAlgorithm="SHA256")
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    got = s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=ALL)
    # Unquoted, unlike the ETag header.
    assert got["ETag"] == hashlib.md5(data).hexdigest()
    assert got["ObjectSize"] == len(data)
    assert got["StorageClass"] == "STANDARD"
    assert got["Checksum"]["ChecksumSHA256"] == head["ChecksumSHA256"]
    assert got["Checksum"]["ChecksumType"] == "FULL_OBJECT"
    assert "ObjectParts" not in got
    assert got["LastModified"] == head["LastModified"]


def test_only_requested_attributes_are_returned(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"12345")
    got = s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=["ObjectSize"])
    assert got["ObjectSize"] == 5
    for absent in ("ETag", "StorageClass", "Checksum", "ObjectParts"):
        assert absent not in got


def test_object_without_checksum_has_no_checksum_attribute(raw, bucket):
    assert raw.request("PUT", bucket, "k", body=b"x").status_code == 200
    response = raw.request("GET", bucket, "k", query=[("attributes", "")],
                           headers={"x-amz-object-attributes": "Checksum,ETag"})
    assert response.status_code == 200, response.text
    assert b"<Checksum>" not in response.content
    assert b"<ETag>9dd4e461268c8034f5c8564e155c67a6</ETag>" in response.content


def test_object_parts_of_a_multipart_object(s3, bucket):
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm="CRC32")
    sizes = [5 * MIB, 5 * MIB, 1]
    parts = []
    for number, size in enumerate(sizes, start=1):
        part = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload["UploadId"], PartNumber=number,
                              Body=os.urandom(size), ChecksumAlgorithm="CRC32")
        parts.append({"PartNumber": number, "ETag": part["ETag"], "ChecksumCRC32": part["ChecksumCRC32"]})
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload["UploadId"],
                                 MultipartUpload={"Parts": parts})

    first = s3.get_object_attributes(Bucket=bucket, Key="mp", ObjectAttributes=ALL, MaxParts=2)
    assert first["ObjectSize"] == sum(sizes)
    assert first["ETag"].endswith("-3")
    page = first["ObjectParts"]
    assert page["TotalPartsCount"] == 3
    assert page["IsTruncated"] is True
    assert page["NextPartNumberMarker"] == 2
    assert [(p["PartNumber"], p["Size"]) for p in page["Parts"]] == [(1, 5 * MIB), (2, 5 * MIB)]
    assert [p["ChecksumCRC32"] for p in page["Parts"]] == [p["ChecksumCRC32"] for p in parts[:2]]

    rest = s3.get_object_attributes(Bucket=bucket, Key="mp", ObjectAttributes=["ObjectParts"],
                                    MaxParts=2, PartNumberMarker=2)["ObjectParts"]
    assert rest["IsTruncated"] is False
    assert [(p["PartNumber"], p["Size"]) for p in rest["Parts"]] == [(3, 1)]


@pytest.mark.parametrize(
    "headers",
    [{}, {"x-amz-object-attributes": ""}, {"x-amz-object-attributes": "ETag,Owner"}],
    ids=["missing", "empty", "unknown"],
)
def test_bad_attribute_lists_are_invalid_arguments(raw, bucket, headers):
    assert raw.request("PUT", bucket, "k", body=b"x").status_code == 200
    response = raw.request("GET", bucket, "k", query=[("attributes", "")], headers=headers)
    assert_s3_error(response, 400, "InvalidArgument")


def test_bad_max_parts_is_an_invalid_argument(raw, bucket):
    assert raw.request("PUT", bucket, "k", body=b"x").status_code == 200
    response = raw.request("GET", bucket, "k", query=[("attributes", "")],
                           headers={"x-amz-object-attributes": "ObjectParts", "x-amz-max-parts": "many"})
    assert_s3_error(response, 400, "InvalidArgument")


def test_missing_key_and_bucket(s3, bucket, bucket_names):
    with pytest.raises(ClientError) as err:
        s3.get_object_attributes(Bucket=bucket, Key="missing", ObjectAttributes=["ETag"])
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchKey")
    with pytest.raises(ClientError) as err:
        s3.get_object_attributes(Bucket=bucket_names(), Key="k", ObjectAttributes=["ETag"])
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchBucket")

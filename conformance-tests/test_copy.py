"""CopyObject: within and across buckets, directives, source preconditions, errors."""

import datetime
import hashlib
import os
import urllib.parse

import pytest
from botocore.exceptions import ClientError

from aws_chunked import crc32_base64
from client_errors import error_code, status
from conftest import make_s3_client
from raw_client import assert_s3_error, xml_fields

MIB = 1024 * 1024
PAST = datetime.datetime(2000, 1, 1, tzinfo=datetime.timezone.utc)
FUTURE = datetime.datetime(2100, 1, 1, tzinfo=datetime.timezone.utc)
HTTP_PAST = "Sat, 01 Jan 2000 00:00:00 GMT"
HTTP_FUTURE = "Fri, 01 Jan 2100 00:00:00 GMT"


def md5_etag(data: bytes) -> str:
    return '"' + hashlib.md5(data).hexdigest() + '"'


def source_header(bucket: str, key: str) -> str:
    return "/" + bucket + "/" + urllib.parse.quote(key, safe="/")


@pytest.mark.parametrize("size", [0, 100, 12 * MIB + 7], ids=["empty", "small", "12MiB"])
def test_copy_within_a_bucket(s3, bucket, size):
    data = os.urandom(size)
    s3.put_object(Bucket=bucket, Key="src", Body=data)
    result = s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    assert result["CopyObjectResult"]["ETag"] == md5_etag(data)
    head = s3.head_object(Bucket=bucket, Key="dst")
    assert abs(result["CopyObjectResult"]["LastModified"] - head["LastModified"]) <= datetime.timedelta(seconds=1)
    # The stored time itself, as a listing shows it (HEAD's has whole seconds).
    listed = s3.list_objects_v2(Bucket=bucket, Prefix="dst")["Contents"][0]["LastModified"]
    assert result["CopyObjectResult"]["LastModified"] == listed
    body = s3.get_object(Bucket=bucket, Key="dst")["Body"].read()
    assert hashlib.sha256(body).digest() == hashlib.sha256(data).digest()
    # The source is untouched and independent of the copy.
    s3.delete_object(Bucket=bucket, Key="src")
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == data


def test_copy_across_buckets(s3, bucket, bucket_names):
    other = bucket_names()
    s3.create_bucket(Bucket=other)
    s3.put_object(Bucket=bucket, Key="a/b.txt", Body=b"across")
    s3.copy_object(Bucket=other, Key="copied.txt", CopySource={"Bucket": bucket, "Key": "a/b.txt"})
    assert s3.get_object(Bucket=other, Key="copied.txt")["Body"].read() == b"across"


def test_copy_replaces_an_existing_destination(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"new bytes")
    s3.put_object(Bucket=bucket, Key="dst", Body=b"old bytes, longer")
    s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == b"new bytes"


@pytest.mark.parametrize(
    "key", ["café/ünïcødé 文字.txt", "plus+and space", "question?mark&amp=1", "percent%41literal"],
)
def test_url_encoded_unicode_sources(s3, raw, bucket, key):
    s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    s3.copy_object(Bucket=bucket, Key="via-boto3", CopySource={"Bucket": bucket, "Key": key})
    assert s3.get_object(Bucket=bucket, Key="via-boto3")["Body"].read() == key.encode()
    # Without the leading slash too.
    header = source_header(bucket, key)[1:]
    response = raw.request("PUT", bucket, "via-raw", headers={"x-amz-copy-source": header})
    assert response.status_code == 200, response.text
    root, fields = xml_fields(response.content)
    assert root == "CopyObjectResult"
    assert fields["ETag"] == md5_etag(key.encode())
    assert s3.get_object(Bucket=bucket, Key="via-raw")["Body"].read() == key.encode()


def test_metadata_directive_copy_is_the_default(s3, bucket):
    s3.put_object(
        Bucket=bucket, Key="src", Body=b"x", ContentType="text/csv", CacheControl="max-age=9",
        ContentDisposition="attachment", ContentLanguage="fr", Metadata={"color": "red"},
    )
    # Metadata on the request is ignored without REPLACE.
    s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"},
                   Metadata={"color": "ignored"}, ContentType="text/ignored")
    head = s3.head_object(Bucket=bucket, Key="dst")
    assert head["ContentType"] == "text/csv"
    assert head["CacheControl"] == "max-age=9"
    assert head["ContentDisposition"] == "attachment"
    assert head["ContentLanguage"] == "fr"
    assert head["Metadata"] == {"color": "red"}


def test_metadata_directive_replace(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x", ContentType="text/csv", Metadata={"color": "red", "old": "1"})
    s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"},
                   MetadataDirective="REPLACE", ContentType="application/json", Metadata={"color": "blue"})
    head = s3.head_object(Bucket=bucket, Key="dst")
    assert head["ContentType"] == "application/json"
    assert head["Metadata"] == {"color": "blue"}


def test_tagging_directive(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x", Tagging="a=1&b=2")
    s3.copy_object(Bucket=bucket, Key="copied-tags", CopySource={"Bucket": bucket, "Key": "src"})
    assert s3.get_object_tagging(Bucket=bucket, Key="copied-tags")["TagSet"] == [
        {"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"},
    ]
    s3.copy_object(Bucket=bucket, Key="new-tags", CopySource={"Bucket": bucket, "Key": "src"},
                   TaggingDirective="REPLACE", Tagging="c=3")
    assert s3.get_object_tagging(Bucket=bucket, Key="new-tags")["TagSet"] == [{"Key": "c", "Value": "3"}]
    s3.copy_object(Bucket=bucket, Key="no-tags", CopySource={"Bucket": bucket, "Key": "src"},
                   TaggingDirective="REPLACE")
    assert s3.get_object_tagging(Bucket=bucket, Key="no-tags")["TagSet"] == []


def test_replace_tagging_is_validated(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    with pytest.raises(ClientError) as err:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"},
                       TaggingDirective="REPLACE", Tagging="a=1&a=2")
    assert (status(err.value), error_code(err.value)) == (400, "InvalidTag")


def test_copy_onto_itself_needs_a_change(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x", Metadata={"v": "1"})
    with pytest.raises(ClientError) as err:
        s3.copy_object(Bucket=bucket, Key="k", CopySource={"Bucket": bucket, "Key": "k"})
    assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")
    # A tagging change alone does not count, as on AWS.
    with pytest.raises(ClientError) as err:
        s3.copy_object(Bucket=bucket, Key="k", CopySource={"Bucket": bucket, "Key": "k"},
                       TaggingDirective="REPLACE", Tagging="t=1")
    assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")

    s3.copy_object(Bucket=bucket, Key="k", CopySource={"Bucket": bucket, "Key": "k"},
                   MetadataDirective="REPLACE", Metadata={"v": "2"})
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["Metadata"] == {"v": "2"}
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"


def test_copy_onto_itself_with_a_storage_class(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    s3.copy_object(Bucket=bucket, Key="k", CopySource={"Bucket": bucket, "Key": "k"}, StorageClass="STANDARD")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"


def test_source_checksum_is_carried_over(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"123456789", ChecksumAlgorithm="SHA256")
    expected = s3.head_object(Bucket=bucket, Key="src", ChecksumMode="ENABLED")["ChecksumSHA256"]
    result = s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    assert result["CopyObjectResult"]["ChecksumSHA256"] == expected
    assert s3.head_object(Bucket=bucket, Key="dst", ChecksumMode="ENABLED")["ChecksumSHA256"] == expected


def test_checksum_algorithm_on_copy_computes_a_new_checksum(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"123456789")
    result = s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"},
                            ChecksumAlgorithm="CRC32")
    # CRC32 of "123456789" is 0xCBF43926.
    assert result["CopyObjectResult"]["ChecksumCRC32"] == "y/Q5Jg=="
    assert s3.head_object(Bucket=bucket, Key="dst", ChecksumMode="ENABLED")["ChecksumCRC32"] == "y/Q5Jg=="


# ---- x-amz-copy-source-if-* ----

def test_source_preconditions_that_hold(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="src", Body=b"x")["ETag"]
    source = {"Bucket": bucket, "Key": "src"}
    for extra in (
        {"CopySourceIfMatch": etag},
        {"CopySourceIfNoneMatch": '"other"'},
        {"CopySourceIfModifiedSince": PAST},
        {"CopySourceIfUnmodifiedSince": FUTURE},
        # AWS documents this pair as a successful copy.
        {"CopySourceIfMatch": etag, "CopySourceIfUnmodifiedSince": PAST},
    ):
        s3.delete_object(Bucket=bucket, Key="dst")
        result = s3.copy_object(Bucket=bucket, Key="dst", CopySource=source, **extra)
        assert result["CopyObjectResult"]["ETag"] == etag, extra
        assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == b"x", extra


@pytest.mark.parametrize(
    "extra",
    [
        {"CopySourceIfMatch": '"0123456789abcdef0123456789abcdef"'},
        {"CopySourceIfNoneMatch": "ETAG"},
        {"CopySourceIfModifiedSince": FUTURE},
        {"CopySourceIfUnmodifiedSince": PAST},
        # AWS documents this pair as 412.
        {"CopySourceIfNoneMatch": "ETAG", "CopySourceIfModifiedSince": PAST},
    ],
    ids=["if-match", "if-none-match", "if-modified-since", "if-unmodified-since", "none-match-and-modified"],
)
def test_source_preconditions_that_fail(s3, bucket, extra):
    etag = s3.put_object(Bucket=bucket, Key="src", Body=b"x")["ETag"]
    extra = {k: (etag if v == "ETAG" else v) for k, v in extra.items()}
    with pytest.raises(ClientError) as err:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src"}, **extra)
    assert (status(err.value), error_code(err.value)) == (412, "PreconditionFailed")
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="dst")


# ---- destination conditions ----

def test_destination_if_none_match_star(raw, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    root_s3.put_object(Bucket=bucket, Key="taken", Body=b"keep")
    headers = {"x-amz-copy-source": f"/{bucket}/src", "If-None-Match": "*"}
    assert_s3_error(raw.request("PUT", bucket, "taken", headers=headers), 412, "PreconditionFailed")
    assert root_s3.get_object(Bucket=bucket, Key="taken")["Body"].read() == b"keep"
    assert raw.request("PUT", bucket, "free", headers=headers).status_code == 200


def test_destination_if_match(raw, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    etag = root_s3.put_object(Bucket=bucket, Key="dst", Body=b"old")["ETag"]
    stale = {"x-amz-copy-source": f"/{bucket}/src", "If-Match": '"0123456789abcdef0123456789abcdef"'}
    assert_s3_error(raw.request("PUT", bucket, "dst", headers=stale), 412, "PreconditionFailed")
    missing = {"x-amz-copy-source": f"/{bucket}/src", "If-Match": etag}
    assert_s3_error(raw.request("PUT", bucket, "absent", headers=missing), 404, "NoSuchKey")
    current = {"x-amz-copy-source": f"/{bucket}/src", "If-Match": etag}
    assert raw.request("PUT", bucket, "dst", headers=current).status_code == 200
    assert root_s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == b"x"


# ---- errors ----

def test_missing_source_key(s3, bucket):
    with pytest.raises(ClientError) as err:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "missing"})
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchKey")


def test_missing_source_bucket(s3, bucket, bucket_names):
    with pytest.raises(ClientError) as err:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket_names(), "Key": "k"})
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchBucket")


def test_missing_destination_bucket(s3, bucket, bucket_names):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    with pytest.raises(ClientError) as err:
        s3.copy_object(Bucket=bucket_names(), Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchBucket")


def test_source_version_ids(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src", "VersionId": "null"})
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == b"x"
    with pytest.raises(ClientError) as err:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src", "VersionId": "3HL4kqtJlcpXroDTDmJ"})
    assert (status(err.value), error_code(err.value)) == (400, "InvalidArgument")


@pytest.mark.parametrize("header", ["", "/", "just-a-bucket", "/bucket/"], ids=["empty", "slash", "no-key", "empty-key"])
def test_malformed_copy_source(raw, bucket, header):
    response = raw.request("PUT", bucket, "dst", headers={"x-amz-copy-source": header})
    assert_s3_error(response, 400, "InvalidArgument")


@pytest.mark.parametrize(
    "headers, code",
    [
        ({"x-amz-metadata-directive": "MOVE"}, "InvalidArgument"),
        ({"x-amz-tagging-directive": "KEEP"}, "InvalidArgument"),
        ({"x-amz-storage-class": "GLACIER"}, "InvalidStorageClass"),
        ({"x-amz-checksum-algorithm": "MD5"}, "InvalidRequest"),
    ],
    ids=["metadata-directive", "tagging-directive", "storage-class", "checksum-algorithm"],
)
def test_bad_copy_headers(raw, root_s3, bucket, headers, code):
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    response = raw.request("PUT", bucket, "dst", headers={"x-amz-copy-source": f"/{bucket}/src", **headers})
    assert_s3_error(response, 400, code)
    assert raw.request("HEAD", bucket, "dst").status_code == 404


def test_other_owners_source_is_denied(root_s3, target, second_key, bucket, bucket_names):
    root_s3.put_object(Bucket=bucket, Key="secret", Body=b"root's")
    other = make_s3_client(target.endpoint, second_key)
    theirs = bucket_names()
    other.create_bucket(Bucket=theirs)
    try:
        with pytest.raises(ClientError) as err:
            other.copy_object(Bucket=theirs, Key="stolen", CopySource={"Bucket": bucket, "Key": "secret"})
        assert (status(err.value), error_code(err.value)) == (403, "AccessDenied")
    finally:
        other.delete_bucket(Bucket=theirs)


def test_copy_of_a_multipart_object_is_a_single_part_object(s3, bucket):
    parts_data = [os.urandom(5 * MIB), b"tail"]
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm="CRC32")
    parts = []
    for number, data in enumerate(parts_data, start=1):
        part = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload["UploadId"], PartNumber=number,
                              Body=data, ChecksumAlgorithm="CRC32")
        parts.append({"PartNumber": number, "ETag": part["ETag"], "ChecksumCRC32": part["ChecksumCRC32"]})
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload["UploadId"],
                                 MultipartUpload={"Parts": parts})
    whole = b"".join(parts_data)

    result = s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "mp"})
    # The copy has no parts: its ETag is the MD5 of its bytes, and its CRC32
    # describes the whole object instead of the source's parts.
    assert result["CopyObjectResult"]["ETag"] == md5_etag(whole)
    expected_crc = crc32_base64(whole)
    assert result["CopyObjectResult"]["ChecksumCRC32"] == expected_crc
    head = s3.head_object(Bucket=bucket, Key="copy", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == expected_crc
    assert head["ChecksumType"] == "FULL_OBJECT"
    attributes = s3.get_object_attributes(Bucket=bucket, Key="copy", ObjectAttributes=["ObjectParts", "ObjectSize"])
    assert "ObjectParts" not in attributes
    assert attributes["ObjectSize"] == len(whole)
    assert s3.get_object(Bucket=bucket, Key="copy")["Body"].read() == whole

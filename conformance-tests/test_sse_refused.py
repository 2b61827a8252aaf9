"""Server-side encryption that is not built (or not configured) is refused: SSE-KMS on a
gateway without a KMS (test_sse_kms.py has one), SSE-S3
everywhere but PutObject, PostObject, CopyObject (test_sse_s3.py) and CreateMultipartUpload
(test_sse_multipart.py), SSE-C everywhere but PutObject, GetObject, HeadObject, CopyObject
(test_sse.py), GetObjectAttributes and multipart uploads (test_sse_multipart.py), and PostObject's (but SSE-S3's,
test_sse_s3.py) encryption form fields are answered 501 NotImplemented naming the header, and
nothing is stored (issue 19, item 2; issue 22, item 1)."""

import base64
import hashlib

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from raw_client import assert_s3_error
from test_post_object import post, presigned_post

CUSTOMER_KEY = b"0123456789abcdef0123456789abcdef"  # 32 bytes: an SSE-C AES-256 key
SSE_C = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": CUSTOMER_KEY}
COPY_SOURCE_SSE_C = {"CopySourceSSECustomerAlgorithm": "AES256", "CopySourceSSECustomerKey": CUSTOMER_KEY}
MIB = 1024 * 1024

# boto3 parameters -> the header S3 names in its answer.
WRITE_CASES = {
    "sse-s3": ({"ServerSideEncryption": "AES256"}, "x-amz-server-side-encryption"),
    "sse-kms": ({"ServerSideEncryption": "aws:kms"}, "x-amz-server-side-encryption"),
    "sse-kms-context": (
        {"SSEKMSEncryptionContext": base64.b64encode(b'{"a":"b"}').decode()},
        "x-amz-server-side-encryption-context",
    ),
    "bucket-key": ({"BucketKeyEnabled": True}, "x-amz-server-side-encryption-bucket-key-enabled"),
    "sse-c": (SSE_C, "x-amz-server-side-encryption-customer-"),
}
# PutObject takes SSE-C (test_sse.py) and SSE-S3 (test_sse_s3.py); SSE-KMS is refused by
# for_write, naming the header and the missing KMS.
PUT_CASES = {name: case for name, case in WRITE_CASES.items() if name not in ("sse-c", "sse-s3")}


def refused(call, header: str, **kwargs) -> ClientError:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    assert (status(err.value), error_code(err.value)) == (501, "NotImplemented"), err.value.response
    assert header in err.value.response["Error"]["Message"], err.value.response
    return err.value


def absent(client, bucket: str, key: str) -> None:
    with pytest.raises(ClientError) as err:
        client.head_object(Bucket=bucket, Key=key)
    assert status(err.value) == 404


def test_a_kms_key_without_aws_kms_is_invalid(root_s3, bucket):
    # As AWS: a key id names no encryption by itself (400, not 501).
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"source")
    for call, extra in [
        (root_s3.put_object, {"Key": "secret", "Body": b"plaintext"}),
        (root_s3.copy_object, {"Key": "secret", "CopySource": {"Bucket": bucket, "Key": "src"}}),
        (root_s3.create_multipart_upload, {"Key": "secret"}),
    ]:
        with pytest.raises(ClientError) as err:
            call(Bucket=bucket, SSEKMSKeyId="alias/mine", **extra)
        assert (status(err.value), error_code(err.value)) == (400, "InvalidArgument")
        assert "aws:kms" in err.value.response["Error"]["Message"]
    absent(root_s3, bucket, "secret")
    assert root_s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


@pytest.mark.parametrize("params, header", PUT_CASES.values(), ids=PUT_CASES.keys())
def test_put_object_with_encryption_is_refused_and_stores_nothing(root_s3, bucket, params, header):
    refused(root_s3.put_object, header, Bucket=bucket, Key="secret", Body=b"plaintext", **params)
    absent(root_s3, bucket, "secret")


@pytest.mark.parametrize("params, header", WRITE_CASES.values(), ids=WRITE_CASES.keys())
def test_copy_and_multipart_with_encryption_are_refused(root_s3, bucket, params, header):
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"source")
    source = {"Bucket": bucket, "Key": "src"}
    # CopyObject takes SSE-S3 (test_sse_s3.py) and SSE-C (test_sse.py).
    if params not in (WRITE_CASES["sse-s3"][0], WRITE_CASES["sse-c"][0]):
        refused(root_s3.copy_object, header, Bucket=bucket, Key="copy", CopySource=source, **params)
        absent(root_s3, bucket, "copy")
    # CreateMultipartUpload takes both too (test_sse_multipart.py); SSE-C over plain HTTP is
    # refused below.
    if params not in (WRITE_CASES["sse-s3"][0], WRITE_CASES["sse-c"][0]):
        refused(root_s3.create_multipart_upload, header, Bucket=bucket, Key="mpu", **params)
        assert root_s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_multipart_customer_keys_over_plain_http_are_refused(root_s3, bucket):
    # Multipart uploads take them (test_sse_multipart.py), over TLS only unless
    # sse_c_over_http: as AWS.
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"s" * MIB)
    with pytest.raises(ClientError) as err:
        root_s3.create_multipart_upload(Bucket=bucket, Key="mpu", **SSE_C)
    assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")
    assert root_s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    upload = root_s3.create_multipart_upload(Bucket=bucket, Key="mpu")["UploadId"]
    try:
        for call, extra in [
            (root_s3.upload_part, {"PartNumber": 1, "Body": b"p" * MIB, **SSE_C}),
            (root_s3.upload_part_copy, {"PartNumber": 2, "CopySource": {"Bucket": bucket, "Key": "src"},
                                        **COPY_SOURCE_SSE_C}),
        ]:
            with pytest.raises(ClientError) as err:
                call(Bucket=bucket, Key="mpu", UploadId=upload, **extra)
            assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")
            assert "secure connection" in err.value.response["Error"]["Message"]
        assert root_s3.list_parts(Bucket=bucket, Key="mpu", UploadId=upload).get("Parts", []) == []
    finally:
        root_s3.abort_multipart_upload(Bucket=bucket, Key="mpu", UploadId=upload)


def test_copy_source_customer_keys_over_plain_http_are_refused(root_s3, bucket):
    # CopyObject takes them (test_sse.py), over TLS only unless sse_c_over_http: as AWS.
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"source")
    with pytest.raises(ClientError) as err:
        root_s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "src"},
                            **COPY_SOURCE_SSE_C)
    assert (status(err.value), error_code(err.value)) == (400, "InvalidRequest")
    absent(root_s3, bucket, "copy")


def test_attributes_with_an_encryption_header_it_does_not_take_are_refused(root_s3, raw, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"stored as sent")
    # SSE-S3's and SSE-KMS's header are not GetObjectAttributes': AWS's 400 naming it.
    for header in ({"x-amz-server-side-encryption": "AES256"},
                   {"x-amz-server-side-encryption-aws-kms-key-id": "alias/mine"}):
        attributes = raw.request("GET", bucket, "k", query=[("attributes", "")],
                                 headers={**header, "x-amz-object-attributes": "ETag"})
        error = assert_s3_error(attributes, 400, "InvalidArgument")
        assert next(iter(header)) in error.message
    # An SSE-C key it takes (test_sse_multipart.py), but, as on GET, not over plain HTTP by default.
    sse_c = {
        "x-amz-server-side-encryption-customer-algorithm": "AES256",
        "x-amz-server-side-encryption-customer-key": base64.b64encode(CUSTOMER_KEY).decode(),
        "x-amz-server-side-encryption-customer-key-md5":
            base64.b64encode(hashlib.md5(CUSTOMER_KEY).digest()).decode(),
    }
    attributes = raw.request("GET", bucket, "k", query=[("attributes", "")],
                             headers={**sse_c, "x-amz-object-attributes": "ETag"})
    error = assert_s3_error(attributes, 400, "InvalidRequest")
    assert "secure connection" in error.message
    # Without the headers the object reads as it always did.
    assert root_s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"stored as sent"


@pytest.mark.parametrize(
    "field, value, answer, named",
    [
        # No KMS configured here.
        ("x-amz-server-side-encryption", "aws:kms", (501, "NotImplemented"),
         "x-amz-server-side-encryption"),
        # A key id alone names no encryption, as for PutObject.
        ("x-amz-server-side-encryption-aws-kms-key-id", "alias/mine", (400, "InvalidArgument"),
         "aws:kms"),
        # SSE-C (test_sse.py), but not over plain HTTP by default.
        ("x-amz-server-side-encryption-customer-algorithm", "AES256", (400, "InvalidArgument"),
         "key"),
        ("x-amz-server-side-encryption-context", "e30=", (501, "NotImplemented"),
         "x-amz-server-side-encryption-context"),
    ],
)
def test_post_object_with_an_encryption_field_is_refused(root_s3, bucket, field, value, answer,
                                                         named):
    # The policy names the field, so only the encryption refusal can stop it.
    form = presigned_post(root_s3, bucket, "posted", {field: value}, [{field: value}])
    error = assert_s3_error(post(form, b"plaintext"), *answer)
    assert named in error.message
    absent(root_s3, bucket, "posted")

"""Server-side encryption on multipart uploads (issue 22): CreateMultipartUpload with SSE-S3,
with SSE-C, or into a bucket whose default encryption applies records the upload's encryption;
every UploadPart (SSE-C: with the upload's key, as AWS requires) and UploadPartCopy (its source
opened with the x-amz-copy-source- SSE-C key) seals its part as its own stream, under a key
bound to the upload and the part number; the completed object reads back whole, by Range across
part boundaries and by partNumber, with the plaintext sizes. Runs on both back ends: the gateway
encrypts above storage, and the upload's record reaches every part on Ozone too."""

import base64
import hashlib
import os
import time
import zlib

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import OZONE_OM, multipart_etag, unique_bucket_name
from raw_client import assert_s3_error
from test_sse import (KEY, KEY_MD5, SSE_C, WRONG, creds, headers, server, sse_bucket, sse_raw,  # noqa: F401
                      sse_s3, stored_files)

SSE_S3 = {"ServerSideEncryption": "AES256"}
COPY_SOURCE_SSE_C = {"CopySourceSSECustomerAlgorithm": "AES256", "CopySourceSSECustomerKey": KEY}
# GetObjectAttributes' SSE-C parameters as the wire carries them: boto3 encodes the key (and adds
# its MD5) on the operations that read and write objects, not on this one.
ATTRIBUTES_SSE_C = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": base64.b64encode(KEY).decode(),
                    "SSECustomerKeyMD5": KEY_MD5}
ATTRIBUTES_WRONG = {"SSECustomerAlgorithm": "AES256",
                    "SSECustomerKey": base64.b64encode(WRONG["SSECustomerKey"]).decode(),
                    "SSECustomerKeyMD5": base64.b64encode(hashlib.md5(WRONG["SSECustomerKey"]).digest()).decode()}
AES256_DEFAULT = {"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "AES256"}}]}
MIB = 1024 * 1024
PART = 5 * MIB
SEGMENT = 64 * 1024


def refused(call, code_status, **kwargs) -> ClientError:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    assert (status(err.value), error_code(err.value)) == code_status, err.value.response
    return err.value


def bodies(seed: str, sizes=(PART, PART + 3, 1000)) -> list[bytes]:
    return [hashlib.sha256(f"{seed}-{i}".encode()).digest() * (size // 32) +
            hashlib.sha256(f"{seed}-{i}".encode()).digest()[:size % 32] for i, size in enumerate(sizes)]


def upload_all(s3, bucket, key, parts: list[bytes], enc: dict, **create):
    """Creates an upload, uploads `parts` with `enc` on each UploadPart, completes; returns the
    create, part and complete answers."""
    created = s3.create_multipart_upload(Bucket=bucket, Key=key, **create)
    upload = created["UploadId"]
    answers = []
    for number, body in enumerate(parts, start=1):
        answers.append(s3.upload_part(Bucket=bucket, Key=key, UploadId=upload, PartNumber=number,
                                      Body=body, **enc))
    listed = [{"PartNumber": n, "ETag": a["ETag"]} for n, a in enumerate(answers, start=1)]
    done = s3.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload,
                                        MultipartUpload={"Parts": listed})
    return created, answers, done


def check_reads(s3, bucket, key, parts: list[bytes], enc: dict):
    """GET whole, ranges across part and segment boundaries, every partNumber; HEAD."""
    whole = b"".join(parts)
    size = len(whole)
    head = s3.head_object(Bucket=bucket, Key=key, **enc)
    assert head["ContentLength"] == size
    got = s3.get_object(Bucket=bucket, Key=key, **enc)
    assert got["ContentLength"] == size
    assert got["Body"].read() == whole
    boundary = len(parts[0])
    for first, last in [(0, 0), (boundary - 10, boundary + 10), (boundary - 1, boundary),
                        (SEGMENT - 1, SEGMENT), (boundary + SEGMENT - 3, boundary + 2 * SEGMENT + 3),
                        (size - 1005, size - 1), (boundary - 5, size - 1), (size - 1, size - 1)]:
        if first < 0 or last >= size or first > last:
            continue
        answer = s3.get_object(Bucket=bucket, Key=key, Range=f"bytes={first}-{last}", **enc)
        assert answer["ContentRange"] == f"bytes {first}-{last}/{size}"
        assert answer["Body"].read() == whole[first:last + 1], (first, last)
    start = 0
    for number, body in enumerate(parts, start=1):
        part = s3.get_object(Bucket=bucket, Key=key, PartNumber=number, **enc)
        assert part["PartsCount"] == len(parts)
        assert part["ContentLength"] == len(body)
        assert part["ContentRange"] == f"bytes {start}-{start + len(body) - 1}/{size}"
        assert part["Body"].read() == body, number
        head_part = s3.head_object(Bucket=bucket, Key=key, PartNumber=number, **enc)
        assert head_part["ContentLength"] == len(body)
        start += len(body)
    refused(s3.get_object, (416, "InvalidPartNumber"), Bucket=bucket, Key=key, PartNumber=len(parts) + 1, **enc)
    return head


def test_sse_s3_multipart_round_trip(sse_s3, sse_bucket):
    parts = bodies("sse-s3")
    created, answers, done = upload_all(sse_s3, sse_bucket, "k", parts, {}, **SSE_S3)
    assert created["ServerSideEncryption"] == "AES256"
    for answer, body in zip(answers, parts):
        assert answer["ServerSideEncryption"] == "AES256"
        # As a single SSE-S3 PUT: the plaintext's MD5.
        assert answer["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    assert done["ServerSideEncryption"] == "AES256"
    assert done["ETag"] == multipart_etag(parts)
    head = check_reads(sse_s3, sse_bucket, "k", parts, {})
    assert head["ServerSideEncryption"] == "AES256"
    assert head["ETag"] == done["ETag"]
    assert sse_s3.get_object(Bucket=sse_bucket, Key="k")["ServerSideEncryption"] == "AES256"
    # A customer key is not applicable to it.
    refused(sse_s3.get_object, (400, "InvalidRequest"), Bucket=sse_bucket, Key="k", **SSE_C)


def test_sse_c_multipart_round_trip_and_key_checks(sse_s3, sse_raw, sse_bucket):
    parts = bodies("sse-c")
    created = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="k", **SSE_C)
    assert (created["SSECustomerAlgorithm"], created["SSECustomerKeyMD5"]) == ("AES256", KEY_MD5)
    upload = created["UploadId"]
    try:
        # Every part must carry the upload's key: none, or another, is AWS's 400.
        err = refused(sse_s3.upload_part, (400, "InvalidRequest"), Bucket=sse_bucket, Key="k", UploadId=upload,
                      PartNumber=1, Body=parts[0])
        assert "encryption" in err.response["Error"]["Message"]
        refused(sse_s3.upload_part, (400, "InvalidRequest"), Bucket=sse_bucket, Key="k", UploadId=upload,
                PartNumber=1, Body=parts[0], **WRONG)
        # A malformed key is refused as on PutObject.
        bad = headers(md5_of=b"another key entirely, not this one")
        assert_s3_error(sse_raw.request("PUT", sse_bucket, "k", body=b"x", headers=bad,
                                        query=[("partNumber", "1"), ("uploadId", upload)]),
                        400, "InvalidArgument")
        # SSE-S3's header is not UploadPart's: AWS's 400.
        sse_header = {**headers(), "x-amz-server-side-encryption": "AES256"}
        assert_s3_error(sse_raw.request("PUT", sse_bucket, "k", body=b"x", headers=sse_header,
                                        query=[("partNumber", "1"), ("uploadId", upload)]),
                        400, "InvalidArgument")
        assert sse_s3.list_parts(Bucket=sse_bucket, Key="k", UploadId=upload).get("Parts", []) == []
        answers = []
        for number, body in enumerate(parts, start=1):
            answer = sse_s3.upload_part(Bucket=sse_bucket, Key="k", UploadId=upload, PartNumber=number,
                                        Body=body, **SSE_C)
            assert (answer["SSECustomerAlgorithm"], answer["SSECustomerKeyMD5"]) == ("AES256", KEY_MD5)
            # As a single SSE-C PUT: an opaque ETag, not the plaintext's MD5.
            assert answer["ETag"] != f'"{hashlib.md5(body).hexdigest()}"'
            answers.append(answer)
        # ListParts reports the sizes the client sent.
        listed = sse_s3.list_parts(Bucket=sse_bucket, Key="k", UploadId=upload)["Parts"]
        assert [(p["PartNumber"], p["Size"], p["ETag"]) for p in listed] == [
            (n, len(body), a["ETag"]) for n, (body, a) in enumerate(zip(parts, answers), start=1)]
        done = sse_s3.complete_multipart_upload(
            Bucket=sse_bucket, Key="k", UploadId=upload,
            MultipartUpload={"Parts": [{"PartNumber": n, "ETag": a["ETag"]}
                                       for n, a in enumerate(answers, start=1)]})
    except BaseException:
        sse_s3.abort_multipart_upload(Bucket=sse_bucket, Key="k", UploadId=upload)
        raise
    assert done["ETag"].strip('"').endswith("-3")
    # As AWS: CompleteMultipartUpload's answer has no SSE-C headers.
    assert "SSECustomerKeyMD5" not in done
    head = check_reads(sse_s3, sse_bucket, "k", parts, SSE_C)
    assert (head["SSECustomerAlgorithm"], head["SSECustomerKeyMD5"]) == ("AES256", KEY_MD5)
    # Reads need the key, as for a single PUT.
    refused(sse_s3.get_object, (400, "InvalidRequest"), Bucket=sse_bucket, Key="k")
    refused(sse_s3.get_object, (403, "AccessDenied"), Bucket=sse_bucket, Key="k", **WRONG)
    refused(sse_s3.get_object, (400, "InvalidRequest"), Bucket=sse_bucket, Key="k", PartNumber=2)
    assert sse_raw.request("HEAD", sse_bucket, "k").status_code == 400
    assert sse_raw.request("HEAD", sse_bucket, "k", headers=headers(b"x" * 32)).status_code == 403


def test_a_part_uploaded_again_replaces_the_first(sse_s3, sse_bucket):
    upload = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="k", **SSE_S3)["UploadId"]
    first = sse_s3.upload_part(Bucket=sse_bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"a" * 100)
    again = sse_s3.upload_part(Bucket=sse_bucket, Key="k", UploadId=upload, PartNumber=1, Body=b"b" * 200)
    assert first["ETag"] != again["ETag"]
    listed = sse_s3.list_parts(Bucket=sse_bucket, Key="k", UploadId=upload)["Parts"]
    assert [(p["PartNumber"], p["Size"]) for p in listed] == [(1, 200)]
    sse_s3.complete_multipart_upload(Bucket=sse_bucket, Key="k", UploadId=upload,
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": again["ETag"]}]})
    got = sse_s3.get_object(Bucket=sse_bucket, Key="k")
    assert (got["Body"].read(), got["ContentLength"]) == (b"b" * 200, 200)


def test_a_key_for_an_unencrypted_upload_and_conflicting_schemes_are_refused(sse_s3, sse_bucket):
    upload = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="plain")["UploadId"]
    try:
        refused(sse_s3.upload_part, (400, "InvalidRequest"), Bucket=sse_bucket, Key="plain", UploadId=upload,
                PartNumber=1, Body=b"x", **SSE_C)
        assert sse_s3.list_parts(Bucket=sse_bucket, Key="plain", UploadId=upload).get("Parts", []) == []
    finally:
        sse_s3.abort_multipart_upload(Bucket=sse_bucket, Key="plain", UploadId=upload)
    refused(sse_s3.create_multipart_upload, (400, "InvalidArgument"), Bucket=sse_bucket, Key="both",
            **SSE_C, **SSE_S3)
    refused(sse_s3.create_multipart_upload, (501, "NotImplemented"), Bucket=sse_bucket, Key="kms",
            ServerSideEncryption="aws:kms")
    refused(sse_s3.create_multipart_upload, (400, "InvalidArgument"), Bucket=sse_bucket, Key="other",
            ServerSideEncryption="AES128")
    assert sse_s3.list_multipart_uploads(Bucket=sse_bucket).get("Uploads", []) == []


def test_part_copies_open_their_source_and_seal_for_the_upload(sse_s3, sse_bucket):
    first = os.urandom(PART + 11)
    second = os.urandom(300_000)
    sse_s3.put_object(Bucket=sse_bucket, Key="src-c", Body=first, **SSE_C)
    sse_s3.put_object(Bucket=sse_bucket, Key="src-s3", Body=second, **SSE_S3)
    sse_s3.put_object(Bucket=sse_bucket, Key="src-plain", Body=b"plain source" * 100)

    def copy(key, upload, number, source, enc, **extra):
        return sse_s3.upload_part_copy(Bucket=sse_bucket, Key=key, UploadId=upload, PartNumber=number,
                                       CopySource={"Bucket": sse_bucket, "Key": source}, **enc, **extra)

    # Into an SSE-C upload: an SSE-C source needs its key, an SSE-S3 source none.
    upload = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="c", **SSE_C)["UploadId"]
    try:
        refused(copy, (400, "InvalidRequest"), key="c", upload=upload, number=1, source="src-c", enc=SSE_C)
        refused(copy, (403, "AccessDenied"), key="c", upload=upload, number=1, source="src-c", enc=SSE_C,
                CopySourceSSECustomerAlgorithm="AES256", CopySourceSSECustomerKey=WRONG["SSECustomerKey"])
        refused(copy, (400, "InvalidRequest"), key="c", upload=upload, number=1, source="src-c", enc={},
                **COPY_SOURCE_SSE_C)
        one = copy("c", upload, 1, "src-c", SSE_C, **COPY_SOURCE_SSE_C)
        assert one["SSECustomerKeyMD5"] == KEY_MD5
        two = copy("c", upload, 2, "src-s3", SSE_C, CopySourceRange="bytes=1000-200999")
        listed = sse_s3.list_parts(Bucket=sse_bucket, Key="c", UploadId=upload)["Parts"]
        assert [p["Size"] for p in listed] == [len(first), 200_000]
        sse_s3.complete_multipart_upload(Bucket=sse_bucket, Key="c", UploadId=upload, MultipartUpload={"Parts": [
            {"PartNumber": 1, "ETag": one["CopyPartResult"]["ETag"]},
            {"PartNumber": 2, "ETag": two["CopyPartResult"]["ETag"]}]})
    except BaseException:
        sse_s3.abort_multipart_upload(Bucket=sse_bucket, Key="c", UploadId=upload)
        raise
    check_reads(sse_s3, sse_bucket, "c", [first, second[1000:201000]], SSE_C)

    # Into an SSE-S3 upload, and an encrypted source into a plain upload (stored as its plaintext).
    upload = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="s3", **SSE_S3)["UploadId"]
    one = copy("s3", upload, 1, "src-c", {}, **COPY_SOURCE_SSE_C)
    assert one["ServerSideEncryption"] == "AES256"
    two = copy("s3", upload, 2, "src-plain", {})
    sse_s3.complete_multipart_upload(Bucket=sse_bucket, Key="s3", UploadId=upload, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": one["CopyPartResult"]["ETag"]},
        {"PartNumber": 2, "ETag": two["CopyPartResult"]["ETag"]}]})
    check_reads(sse_s3, sse_bucket, "s3", [first, b"plain source" * 100], {})
    upload = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="plain")["UploadId"]
    one = copy("plain", upload, 1, "s3", {}, CopySourceRange=f"bytes=0-{PART - 1}")
    assert "ServerSideEncryption" not in one
    sse_s3.complete_multipart_upload(Bucket=sse_bucket, Key="plain", UploadId=upload, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": one["CopyPartResult"]["ETag"]}]})
    plain = sse_s3.get_object(Bucket=sse_bucket, Key="plain")
    assert "ServerSideEncryption" not in plain
    assert plain["Body"].read() == first[:PART]
    # CopyObject of a multipart encrypted object reads its plaintext.
    sse_s3.copy_object(Bucket=sse_bucket, Key="whole", CopySource={"Bucket": sse_bucket, "Key": "c"},
                       **COPY_SOURCE_SSE_C)
    assert sse_s3.get_object(Bucket=sse_bucket, Key="whole")["Body"].read() == first + second[1000:201000]


def test_a_bucket_default_encrypts_multipart_uploads(sse_s3, sse_bucket):
    sse_s3.put_bucket_encryption(Bucket=sse_bucket, ServerSideEncryptionConfiguration=AES256_DEFAULT)
    try:
        parts = bodies("default", (PART, 77))
        created, answers, done = upload_all(sse_s3, sse_bucket, "k", parts, {})
        assert created["ServerSideEncryption"] == "AES256"
        assert [a["ServerSideEncryption"] for a in answers] == ["AES256", "AES256"]
        head = check_reads(sse_s3, sse_bucket, "k", parts, {})
        assert head["ServerSideEncryption"] == "AES256"
        # SSE-C still wins over the default.
        created, _, _ = upload_all(sse_s3, sse_bucket, "c", parts, SSE_C, **SSE_C)
        assert created["SSECustomerKeyMD5"] == KEY_MD5
        assert sse_s3.head_object(Bucket=sse_bucket, Key="c", **SSE_C)["SSECustomerKeyMD5"] == KEY_MD5
    finally:
        sse_s3.delete_bucket_encryption(Bucket=sse_bucket)


def test_no_plaintext_of_a_multipart_object_is_stored(server, sse_s3, sse_bucket):
    started = time.time() - 2
    markers = {scheme: f"MULTIPART-{scheme}-MARKER-never-on-disk-{os.urandom(4).hex()}".encode()
               for scheme in ("sse-c", "sse-s3", "copied")}
    plain_marker = f"MULTIPART-PLAIN-MARKER-stored-as-sent-{os.urandom(4).hex()}".encode()

    def body(marker, size):
        return (marker * (size // len(marker) + 1))[:size]

    upload_all(sse_s3, sse_bucket, "c", [body(markers["sse-c"], PART), body(markers["sse-c"], 1000)],
               SSE_C, **SSE_C)
    upload_all(sse_s3, sse_bucket, "s3", [body(markers["sse-s3"], PART), body(markers["sse-s3"], 1000)],
               {}, **SSE_S3)
    sse_s3.put_object(Bucket=sse_bucket, Key="src", Body=body(markers["copied"], 200_000), **SSE_C)
    upload = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="copied", **SSE_S3)["UploadId"]
    part = sse_s3.upload_part_copy(Bucket=sse_bucket, Key="copied", UploadId=upload, PartNumber=1,
                                   CopySource={"Bucket": sse_bucket, "Key": "src"}, **COPY_SOURCE_SSE_C)
    sse_s3.complete_multipart_upload(Bucket=sse_bucket, Key="copied", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": part["CopyPartResult"]["ETag"]}]})
    upload_all(sse_s3, sse_bucket, "plain", [body(plain_marker, PART), body(plain_marker, 10)], {})
    # Only what was written since the test began: a datanode's directories hold the whole suite's data.
    stored = b"".join(path.read_bytes() for path in stored_files(server) if path.stat().st_mtime >= started)
    # The check can see plaintext: the unencrypted upload's marker is found.
    assert plain_marker in stored
    for scheme, marker in markers.items():
        assert marker not in stored, scheme
    assert sse_s3.get_object(Bucket=sse_bucket, Key="copied")["Body"].read() == body(markers["copied"], 200_000)


def test_completion_judges_the_plaintext_parts(sse_s3, sse_bucket):
    # A FULL_OBJECT checksum is combined from the parts' plaintext lengths.
    parts = bodies("crc", (PART, 5000))
    created, answers, done = upload_all(sse_s3, sse_bucket, "crc", parts, {"ChecksumAlgorithm": "CRC32"},
                                        ChecksumAlgorithm="CRC32", ChecksumType="FULL_OBJECT", **SSE_S3)
    whole = base64.b64encode(zlib.crc32(b"".join(parts)).to_bytes(4, "big")).decode()
    assert done["ChecksumCRC32"] == whole
    head = sse_s3.head_object(Bucket=sse_bucket, Key="crc", ChecksumMode="ENABLED")
    assert (head["ChecksumCRC32"], head["ContentLength"]) == (whole, len(b"".join(parts)))
    # A part the client sent below 5 MiB is too small, however much larger it is stored.
    upload = sse_s3.create_multipart_upload(Bucket=sse_bucket, Key="small", **SSE_C)["UploadId"]
    try:
        small = [sse_s3.upload_part(Bucket=sse_bucket, Key="small", UploadId=upload, PartNumber=n,
                                    Body=b"s" * (PART - 100), **SSE_C) for n in (1, 2)]
        err = refused(sse_s3.complete_multipart_upload, (400, "EntityTooSmall"), Bucket=sse_bucket, Key="small",
                      UploadId=upload, MultipartUpload={"Parts": [{"PartNumber": n, "ETag": a["ETag"]}
                                                                  for n, a in enumerate(small, start=1)]})
        assert err.response["Error"]["ProposedSize"] == str(PART - 100)
    finally:
        sse_s3.abort_multipart_upload(Bucket=sse_bucket, Key="small", UploadId=upload)


def test_listings_and_attributes_show_the_plaintext_sizes(sse_s3, sse_bucket):
    """ListObjectsV2, ListObjects, ListObjectVersions and GetObjectAttributes report the size the
    client stored, as HEAD does, for every scheme (SSE-S3, SSE-C, a bucket default), written in one
    piece or in parts of different sizes; an unencrypted object keeps its own."""
    expected = {}

    def single(key, size, **enc):
        sse_s3.put_object(Bucket=sse_bucket, Key=key, Body=os.urandom(size), **enc)
        expected[key] = (size, [])

    def multipart(key, sizes, enc, **create):
        upload_all(sse_s3, sse_bucket, key, bodies(key, sizes), enc, **create)
        expected[key] = (sum(sizes), list(sizes))

    single("plain", 70_000)
    multipart("plain-mp", (PART, 999), {})
    single("s3", 3 * SEGMENT + 17, **SSE_S3)
    single("s3-empty", 0, **SSE_S3)
    single("c", 1000, **SSE_C)
    multipart("s3-mp", (PART, PART + 3, 1000), {}, **SSE_S3)
    multipart("c-mp", (PART + SEGMENT + 7, 77), SSE_C, **SSE_C)
    sse_s3.put_bucket_encryption(Bucket=sse_bucket, ServerSideEncryptionConfiguration=AES256_DEFAULT)
    try:
        single("default", 12_345)
        multipart("default-mp", (PART + 1, SEGMENT), {})
    finally:
        sse_s3.delete_bucket_encryption(Bucket=sse_bucket)
    sizes = {key: size for key, (size, _) in expected.items()}
    # The stored sizes differ (so the listing is not right by chance), HEAD's do not.
    for key, size in sizes.items():
        enc = SSE_C if key.startswith("c") else {}
        assert sse_s3.head_object(Bucket=sse_bucket, Key=key, **enc)["ContentLength"] == size

    v2 = sse_s3.list_objects_v2(Bucket=sse_bucket)["Contents"]
    assert {o["Key"]: o["Size"] for o in v2} == sizes
    # Paged (max-keys 2) and with a prefix and delimiter.
    paged, token = {}, None
    while True:
        page = sse_s3.list_objects_v2(Bucket=sse_bucket, MaxKeys=2,
                                      **({"ContinuationToken": token} if token else {}))
        paged.update({o["Key"]: o["Size"] for o in page["Contents"]})
        if not page["IsTruncated"]:
            break
        token = page["NextContinuationToken"]
    assert paged == sizes
    grouped = sse_s3.list_objects_v2(Bucket=sse_bucket, Prefix="s3", Delimiter="-")
    assert {o["Key"]: o["Size"] for o in grouped["Contents"]} == {"s3": sizes["s3"]}
    v1 = sse_s3.list_objects(Bucket=sse_bucket)["Contents"]
    assert {o["Key"]: o["Size"] for o in v1} == sizes
    versions = sse_s3.list_object_versions(Bucket=sse_bucket)["Versions"]
    assert {v["Key"]: v["Size"] for v in versions} == sizes

    for key, (size, part_sizes) in expected.items():
        enc = ATTRIBUTES_SSE_C if key.startswith("c") else {}
        attributes = sse_s3.get_object_attributes(Bucket=sse_bucket, Key=key, **enc,
                                                  ObjectAttributes=["ObjectSize", "ObjectParts", "ETag"])
        assert attributes["ObjectSize"] == size, key
        head = sse_s3.head_object(Bucket=sse_bucket, Key=key, **(SSE_C if key.startswith("c") else {}))
        assert attributes["ETag"] == head["ETag"].strip('"')
        if part_sizes:
            parts = attributes["ObjectParts"]
            assert parts["TotalPartsCount"] == len(part_sizes)
            assert [p["Size"] for p in parts["Parts"]] == part_sizes, key
        else:
            assert "ObjectParts" not in attributes
    # An SSE-C object's attributes need its key, as HEAD does: none is 400, another 403.
    for key in ("c", "c-mp"):
        refused(sse_s3.get_object_attributes, (400, "InvalidRequest"), Bucket=sse_bucket, Key=key,
                ObjectAttributes=["ObjectSize"])
        refused(sse_s3.get_object_attributes, (403, "AccessDenied"), Bucket=sse_bucket, Key=key,
                ObjectAttributes=["ObjectSize"], **ATTRIBUTES_WRONG)
    refused(sse_s3.get_object_attributes, (400, "InvalidRequest"), Bucket=sse_bucket, Key="plain",
            ObjectAttributes=["ObjectSize"], **ATTRIBUTES_SSE_C)


@pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")
def test_every_version_is_listed_with_its_plaintext_size(sse_s3):
    bucket = unique_bucket_name("ssever")
    sse_s3.create_bucket(Bucket=bucket)
    try:
        sse_s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
        written = []
        for size, enc in [(100, {}), (SEGMENT + 5, SSE_S3), (3000, SSE_C), (0, SSE_S3)]:
            put = sse_s3.put_object(Bucket=bucket, Key="k", Body=os.urandom(size), **enc)
            written.append((put["VersionId"], size))
        upload_all(sse_s3, bucket, "k", bodies("v", (PART, 10)), SSE_C, **SSE_C)
        head = sse_s3.head_object(Bucket=bucket, Key="k", **SSE_C)
        written.append((head["VersionId"], PART + 10))
        sse_s3.delete_object(Bucket=bucket, Key="k")
        listed = sse_s3.list_object_versions(Bucket=bucket)
        assert [(v["VersionId"], v["Size"]) for v in listed["Versions"]] == written[::-1]
        assert len(listed["DeleteMarkers"]) == 1
        # A noncurrent SSE-C version's attributes, by version id.
        version, size = written[2]
        attributes = sse_s3.get_object_attributes(Bucket=bucket, Key="k", VersionId=version,
                                                  ObjectAttributes=["ObjectSize"], **ATTRIBUTES_SSE_C)
        assert attributes["ObjectSize"] == size
    finally:
        for page in sse_s3.get_paginator("list_object_versions").paginate(Bucket=bucket):
            for entry in page.get("Versions", []) + page.get("DeleteMarkers", []):
                sse_s3.delete_object(Bucket=bucket, Key=entry["Key"], VersionId=entry["VersionId"])
        sse_s3.delete_bucket(Bucket=bucket)

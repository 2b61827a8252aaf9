"""Multipart uploads: create, parts, complete, abort, listings, part reads, checksums, the AWS CLI."""

import base64
import hashlib
import os
import xml.etree.ElementTree as ET

import pytest
from botocore.exceptions import ClientError

from aws_chunked import crc32_base64
from client_errors import error_code, status
from conftest import multipart_etag
from raw_client import assert_s3_error, object_path, strip_ns, xml_fields
from sigv4 import sha256_hex

MIB = 1024 * 1024
PART = 5 * MIB


def md5_hex(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def start(s3, bucket, key, **extra) -> str:
    return s3.create_multipart_upload(Bucket=bucket, Key=key, **extra)["UploadId"]


def put_part(s3, bucket, key, upload_id, number, body, **extra) -> dict:
    response = s3.upload_part(
        Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=body, **extra
    )
    return {"PartNumber": number, "ETag": response["ETag"]}


def complete(s3, bucket, key, upload_id, parts, **extra):
    return s3.complete_multipart_upload(
        Bucket=bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": parts}, **extra
    )


def client_error(call, *args, **kwargs) -> ClientError:
    with pytest.raises(ClientError) as err:
        call(*args, **kwargs)
    return err.value


def assert_error(err: ClientError, http_status: int, code: str) -> None:
    assert (status(err), error_code(err)) == (http_status, code), err.response


# ---- round trips ----


def test_out_of_order_parts_make_one_object_with_the_multipart_etag(s3, bucket):
    bodies = [os.urandom(PART) for _ in range(3)] + [os.urandom(1234)]
    upload_id = start(s3, bucket, "big", ContentType="text/plain", Metadata={"color": "blue"})
    parts = [put_part(s3, bucket, "big", upload_id, n, bodies[n - 1]) for n in (3, 1, 4, 2)]
    for part in parts:
        assert part["ETag"] == f'"{md5_hex(bodies[part["PartNumber"] - 1])}"'
    parts.sort(key=lambda p: p["PartNumber"])
    done = complete(s3, bucket, "big", upload_id, parts)
    assert done["ETag"] == multipart_etag(bodies)
    assert (done["Bucket"], done["Key"]) == (bucket, "big")
    assert done["Location"].endswith(f"/{bucket}/big")

    got = s3.get_object(Bucket=bucket, Key="big")
    assert got["Body"].read() == b"".join(bodies)
    assert got["ETag"] == multipart_etag(bodies)
    assert got["ContentType"] == "text/plain"
    assert got["Metadata"] == {"color": "blue"}
    listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
    assert [(o["Key"], o["Size"], o["ETag"]) for o in listed] == [
        ("big", 3 * PART + 1234, multipart_etag(bodies))
    ]
    # Completing ends the upload.
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []


def test_a_reuploaded_part_replaces_the_earlier_one(s3, bucket):
    upload_id = start(s3, bucket, "k")
    put_part(s3, bucket, "k", upload_id, 1, os.urandom(PART))
    first = os.urandom(PART)
    part1 = put_part(s3, bucket, "k", upload_id, 1, first)
    part2 = put_part(s3, bucket, "k", upload_id, 2, b"tail")
    listed = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id)["Parts"]
    assert [(p["PartNumber"], p["ETag"], p["Size"]) for p in listed] == [
        (1, part1["ETag"], PART),
        (2, part2["ETag"], 4),
    ]
    complete(s3, bucket, "k", upload_id, [part1, part2])
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == first + b"tail"


def test_part_numbers_with_gaps_and_a_single_small_part(s3, bucket):
    upload_id = start(s3, bucket, "single")
    part = put_part(s3, bucket, "single", upload_id, 7, b"only part")
    done = complete(s3, bucket, "single", upload_id, [part])
    assert done["ETag"] == multipart_etag([b"only part"])
    assert s3.get_object(Bucket=bucket, Key="single")["Body"].read() == b"only part"


# ---- completion errors ----


def test_entity_too_small_for_a_small_part_that_is_not_last(s3, bucket):
    upload_id = start(s3, bucket, "k")
    parts = [put_part(s3, bucket, "k", upload_id, n, os.urandom(MIB)) for n in (1, 2)]
    err = client_error(complete, s3, bucket, "k", upload_id, parts)
    assert_error(err, 400, "EntityTooSmall")
    # The failed completion left the upload in place.
    assert len(s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id)["Parts"]) == 2


def test_invalid_part_for_a_missing_part_or_a_wrong_etag(s3, bucket):
    upload_id = start(s3, bucket, "k")
    part = put_part(s3, bucket, "k", upload_id, 1, b"data")
    missing = client_error(complete, s3, bucket, "k", upload_id, [part, {"PartNumber": 2, "ETag": part["ETag"]}])
    assert_error(missing, 400, "InvalidPart")
    wrong = client_error(complete, s3, bucket, "k", upload_id, [{"PartNumber": 1, "ETag": '"' + "0" * 32 + '"'}])
    assert_error(wrong, 400, "InvalidPart")
    # An unquoted ETag is the same ETag.
    complete(s3, bucket, "k", upload_id, [{"PartNumber": 1, "ETag": part["ETag"].strip('"')}])
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"data"


def test_invalid_part_order(s3, bucket):
    upload_id = start(s3, bucket, "k")
    parts = [put_part(s3, bucket, "k", upload_id, n, os.urandom(PART)) for n in (1, 2)]
    err = client_error(complete, s3, bucket, "k", upload_id, list(reversed(parts)))
    assert_error(err, 400, "InvalidPartOrder")


def test_unknown_upload_ids_are_no_such_upload(s3, bucket):
    bogus = "0123456789abcdef0123456789abcdef"
    part = {"PartNumber": 1, "ETag": '"' + md5_hex(b"x") + '"'}
    for call, kwargs in [
        (s3.upload_part, {"PartNumber": 1, "Body": b"x"}),
        (s3.complete_multipart_upload, {"MultipartUpload": {"Parts": [part]}}),
        (s3.abort_multipart_upload, {}),
        (s3.list_parts, {}),
    ]:
        err = client_error(call, Bucket=bucket, Key="k", UploadId=bogus, **kwargs)
        assert_error(err, 404, "NoSuchUpload")


def test_an_upload_id_is_bound_to_its_key(s3, bucket):
    upload_id = start(s3, bucket, "mine")
    err = client_error(s3.list_parts, Bucket=bucket, Key="other", UploadId=upload_id)
    assert_error(err, 404, "NoSuchUpload")


def test_malformed_or_empty_part_lists_are_malformed_xml(raw, bucket, s3):
    upload_id = start(s3, bucket, "k")
    query = [("uploadId", upload_id)]
    for body in [b"<CompleteMultipartUpload>", b"<CompleteMultipartUpload></CompleteMultipartUpload>",
                 b"<CompleteMultipartUpload><Part><PartNumber>one</PartNumber><ETag>x</ETag></Part>"
                 b"</CompleteMultipartUpload>"]:
        assert_s3_error(raw.request("POST", bucket, "k", query=query, body=body), 400, "MalformedXML")


def test_complete_with_a_chunked_body_and_no_content_length(raw, bucket, s3):
    upload_id = start(s3, bucket, "k")
    part = put_part(s3, bucket, "k", upload_id, 1, b"chunked completion")
    body = (
        "<CompleteMultipartUpload><Part><PartNumber>1</PartNumber>"
        f"<ETag>{part['ETag']}</ETag></Part></CompleteMultipartUpload>"
    ).encode()
    query = [("uploadId", upload_id)]
    path = object_path(bucket, "k")
    signature = raw.sign("POST", path, query, {}, sha256_hex(body))
    # A generator body makes requests send Transfer-Encoding: chunked.
    response = raw.send("POST", raw.url(path, query), signature.headers, body=(piece for piece in [body[:40], body[40:]]))
    assert response.status_code == 200, response.text
    assert "Content-Length" not in response.request.headers
    root, fields = xml_fields(response.content)
    assert root == "CompleteMultipartUploadResult"
    assert fields["ETag"] == multipart_etag([b"chunked completion"])
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"chunked completion"


def test_conditional_complete(s3, bucket):
    s3.put_object(Bucket=bucket, Key="taken", Body=b"old")
    upload_id = start(s3, bucket, "taken")
    part = put_part(s3, bucket, "taken", upload_id, 1, b"new")
    err = client_error(complete, s3, bucket, "taken", upload_id, [part], IfNoneMatch="*")
    assert_error(err, 412, "PreconditionFailed")
    err = client_error(complete, s3, bucket, "taken", upload_id, [part], IfMatch='"' + "1" * 32 + '"')
    assert_error(err, 412, "PreconditionFailed")
    assert s3.get_object(Bucket=bucket, Key="taken")["Body"].read() == b"old"
    complete(s3, bucket, "taken", upload_id, [part], IfMatch=f'"{md5_hex(b"old")}"')
    assert s3.get_object(Bucket=bucket, Key="taken")["Body"].read() == b"new"

    upload_id = start(s3, bucket, "fresh")
    part = put_part(s3, bucket, "fresh", upload_id, 1, b"first")
    complete(s3, bucket, "fresh", upload_id, [part], IfNoneMatch="*")
    assert s3.get_object(Bucket=bucket, Key="fresh")["Body"].read() == b"first"


# ---- part uploads ----


@pytest.mark.parametrize("number", ["0", "10001", "x"])
def test_part_numbers_outside_1_to_10000_are_invalid_argument(raw, bucket, s3, number):
    upload_id = start(s3, bucket, "k")
    response = raw.request("PUT", bucket, "k", query=[("partNumber", number), ("uploadId", upload_id)], body=b"x")
    assert_s3_error(response, 400, "InvalidArgument")


def test_a_part_with_a_bad_digest_is_not_stored(raw, bucket, s3):
    upload_id = start(s3, bucket, "k")
    query = [("partNumber", "1"), ("uploadId", upload_id)]
    bad_md5 = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    response = raw.request("PUT", bucket, "k", query=query, body=b"data", headers={"Content-MD5": bad_md5})
    assert_s3_error(response, 400, "BadDigest")
    response = raw.request("PUT", bucket, "k", query=query, body=b"data",
                           headers={"x-amz-checksum-crc32": crc32_base64(b"other")})
    assert_s3_error(response, 400, "BadDigest")
    assert s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id).get("Parts", []) == []
    good = raw.request("PUT", bucket, "k", query=query, body=b"data",
                       headers={"x-amz-checksum-crc32": crc32_base64(b"data")})
    assert good.status_code == 200, good.text
    assert good.headers["ETag"] == f'"{md5_hex(b"data")}"'
    assert good.headers["x-amz-checksum-crc32"] == crc32_base64(b"data")


def test_a_part_checksum_must_use_the_uploads_algorithm(raw, bucket, s3):
    upload_id = start(s3, bucket, "k", ChecksumAlgorithm="CRC32")
    sha1 = base64.b64encode(hashlib.sha1(b"data").digest()).decode()
    response = raw.request("PUT", bucket, "k", query=[("partNumber", "1"), ("uploadId", upload_id)],
                           body=b"data", headers={"x-amz-checksum-sha1": sha1})
    assert_s3_error(response, 400, "InvalidRequest")


def test_upload_part_copy_with_a_source_range(s3, bucket):
    source = os.urandom(PART + 100)
    s3.put_object(Bucket=bucket, Key="src", Body=source)
    upload_id = start(s3, bucket, "dst")
    copied = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=1,
                                 CopySource={"Bucket": bucket, "Key": "src"})
    ranged = s3.upload_part_copy(Bucket=bucket, Key="dst", UploadId=upload_id, PartNumber=2,
                                 CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange="bytes=10-19")
    assert copied["CopyPartResult"]["ETag"] == f'"{md5_hex(source)}"'
    assert ranged["CopyPartResult"]["ETag"] == f'"{md5_hex(source[10:20])}"'
    listed = s3.list_parts(Bucket=bucket, Key="dst", UploadId=upload_id)["Parts"]
    assert [copied["CopyPartResult"]["LastModified"], ranged["CopyPartResult"]["LastModified"]] == \
        [part["LastModified"] for part in listed], "each copied part is answered with its stored time"
    parts = [{"PartNumber": 1, "ETag": copied["CopyPartResult"]["ETag"]},
             {"PartNumber": 2, "ETag": ranged["CopyPartResult"]["ETag"]}]
    complete(s3, bucket, "dst", upload_id, parts)
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == source + source[10:20]

    err = client_error(s3.upload_part_copy, Bucket=bucket, Key="dst2", UploadId=start(s3, bucket, "dst2"),
                       PartNumber=1, CopySource={"Bucket": bucket, "Key": "src"},
                       CopySourceRange=f"bytes=0-{len(source)}")
    assert_error(err, 416, "InvalidRange")


# ---- abort and listings ----


def test_abort_discards_the_upload(s3, bucket):
    upload_id = start(s3, bucket, "k")
    part = put_part(s3, bucket, "k", upload_id, 1, b"data")
    aborted = s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload_id)
    assert aborted["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []) == []
    err = client_error(complete, s3, bucket, "k", upload_id, [part])
    assert_error(err, 404, "NoSuchUpload")
    err = client_error(s3.abort_multipart_upload, Bucket=bucket, Key="k", UploadId=upload_id)
    assert_error(err, 404, "NoSuchUpload")
    assert_error(client_error(s3.head_object, Bucket=bucket, Key="k"), 404, "404")


def test_list_parts_pages_with_the_part_number_marker(s3, bucket):
    upload_id = start(s3, bucket, "k")
    for n in (5, 1, 3, 2, 4):
        put_part(s3, bucket, "k", upload_id, n, bytes([n]) * 10)
    first = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id, MaxParts=2)
    assert [p["PartNumber"] for p in first["Parts"]] == [1, 2]
    assert first["IsTruncated"] is True
    assert first["NextPartNumberMarker"] == 2
    assert first["MaxParts"] == 2
    rest = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id, PartNumberMarker=2)
    assert [p["PartNumber"] for p in rest["Parts"]] == [3, 4, 5]
    assert rest["IsTruncated"] is False
    assert rest["PartNumberMarker"] == 2
    assert all(p["Size"] == 10 and p["ETag"].startswith('"') for p in rest["Parts"])
    paginated = s3.get_paginator("list_parts").paginate(
        Bucket=bucket, Key="k", UploadId=upload_id, PaginationConfig={"PageSize": 2})
    assert [p["PartNumber"] for page in paginated for p in page["Parts"]] == [1, 2, 3, 4, 5]


def test_list_multipart_uploads_pages_prefixes_and_markers(s3, bucket):
    keys = ["a/1", "a/2", "b", "b", "c d"]
    ids = sorted((key, start(s3, bucket, key)) for key in keys)
    everything = s3.list_multipart_uploads(Bucket=bucket)
    assert [(u["Key"], u["UploadId"]) for u in everything["Uploads"]] == ids
    assert everything["IsTruncated"] is False

    seen = []
    pages = s3.get_paginator("list_multipart_uploads").paginate(Bucket=bucket, PaginationConfig={"PageSize": 2})
    for page in pages:
        assert len(page.get("Uploads", [])) <= 2
        seen += [(u["Key"], u["UploadId"]) for u in page.get("Uploads", [])]
    assert seen == ids

    grouped = s3.list_multipart_uploads(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in grouped["CommonPrefixes"]] == ["a/"]
    assert [u["Key"] for u in grouped["Uploads"]] == ["b", "b", "c d"]
    under_a = s3.list_multipart_uploads(Bucket=bucket, Prefix="a/")
    assert [u["Key"] for u in under_a["Uploads"]] == ["a/1", "a/2"]
    after_b = s3.list_multipart_uploads(Bucket=bucket, KeyMarker="b")
    assert [u["Key"] for u in after_b["Uploads"]] == ["c d"]
    b_ids = [upload_id for key, upload_id in ids if key == "b"]
    second_b = s3.list_multipart_uploads(Bucket=bucket, KeyMarker="b", UploadIdMarker=b_ids[0])
    assert [(u["Key"], u["UploadId"]) for u in second_b["Uploads"]] == [("b", b_ids[1]), ("c d", ids[-1][1])]


def test_list_multipart_uploads_url_encoding(raw, bucket, s3):
    start(s3, bucket, "sp ace/é")
    response = raw.request("GET", bucket, query=[("uploads", ""), ("encoding-type", "url")])
    assert response.status_code == 200, response.text
    root = ET.fromstring(response.content)
    assert strip_ns(root.tag) == "ListMultipartUploadsResult"
    found = {strip_ns(e.tag): e.text for e in root.iter()}
    assert found["EncodingType"] == "url"
    assert found["Key"] == "sp%20ace/%C3%A9"
    response = raw.request("GET", bucket, query=[("uploads", ""), ("max-uploads", "many")])
    assert_s3_error(response, 400, "InvalidArgument")


# ---- part reads ----


def test_get_and_head_by_part_number(s3, bucket):
    bodies = [os.urandom(PART), os.urandom(1000)]
    upload_id = start(s3, bucket, "k")
    parts = [put_part(s3, bucket, "k", upload_id, n, body) for n, body in enumerate(bodies, 1)]
    complete(s3, bucket, "k", upload_id, parts)

    first = s3.get_object(Bucket=bucket, Key="k", PartNumber=1)
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert first["PartsCount"] == 2
    assert first["ContentRange"] == f"bytes 0-{PART - 1}/{PART + 1000}"
    assert first["Body"].read() == bodies[0]
    second = s3.head_object(Bucket=bucket, Key="k", PartNumber=2)
    assert second["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert second["PartsCount"] == 2
    assert second["ContentLength"] == 1000
    assert second["ContentRange"] == f"bytes {PART}-{PART + 999}/{PART + 1000}"
    assert second["ETag"] == multipart_etag(bodies)
    err = client_error(s3.get_object, Bucket=bucket, Key="k", PartNumber=3)
    assert_error(err, 416, "InvalidPartNumber")


# ---- checksums ----


def test_composite_crc32_checksum(s3, bucket):
    bodies = [os.urandom(PART), os.urandom(777)]
    upload_id = start(s3, bucket, "k", ChecksumAlgorithm="CRC32")
    parts = []
    for n, body in enumerate(bodies, 1):
        response = s3.upload_part(Bucket=bucket, Key="k", UploadId=upload_id, PartNumber=n, Body=body,
                                  ChecksumAlgorithm="CRC32")
        assert response["ChecksumCRC32"] == crc32_base64(body)
        parts.append({"PartNumber": n, "ETag": response["ETag"], "ChecksumCRC32": response["ChecksumCRC32"]})
    listed = s3.list_parts(Bucket=bucket, Key="k", UploadId=upload_id)
    assert listed["ChecksumAlgorithm"] == "CRC32"
    assert [p["ChecksumCRC32"] for p in listed["Parts"]] == [crc32_base64(b) for b in bodies]

    done = complete(s3, bucket, "k", upload_id, parts)
    joined = b"".join(base64.b64decode(crc32_base64(b)) for b in bodies)
    expected = f"{crc32_base64(joined)}-2"
    assert done["ChecksumCRC32"] == expected
    assert done["ChecksumType"] == "COMPOSITE"
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == expected
    assert head["ChecksumType"] == "COMPOSITE"
    got = s3.get_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert got["Body"].read() == b"".join(bodies)

    upload_id = start(s3, bucket, "k2", ChecksumAlgorithm="CRC32")
    part1 = s3.upload_part(Bucket=bucket, Key="k2", UploadId=upload_id, PartNumber=1, Body=bodies[1],
                           ChecksumAlgorithm="CRC32")
    bad = {"PartNumber": 1, "ETag": part1["ETag"], "ChecksumCRC32": crc32_base64(b"not the part")}
    assert_error(client_error(complete, s3, bucket, "k2", upload_id, [bad]), 400, "InvalidPart")


def crc_header(raw, bucket, key, headers) -> dict:
    response = raw.request("HEAD", bucket, key, headers={"x-amz-checksum-mode": "ENABLED", **headers})
    assert response.status_code == 200, response.headers
    return response.headers


def test_full_object_crc64nvme_is_combined_from_the_parts(raw, bucket):
    bodies = [os.urandom(PART), os.urandom(PART), os.urandom(4321)]
    created = raw.request("POST", bucket, "k", query=[("uploads", "")],
                          headers={"x-amz-checksum-algorithm": "CRC64NVME"})
    assert created.status_code == 200, created.text
    assert created.headers["x-amz-checksum-type"] == "FULL_OBJECT"
    upload_id = xml_fields(created.content)[1]["UploadId"]
    xml_parts = ""
    for n, body in enumerate(bodies, 1):
        # No checksum sent: the gateway computes the upload's algorithm itself.
        response = raw.request("PUT", bucket, "k", query=[("partNumber", str(n)), ("uploadId", upload_id)],
                               body=body)
        assert response.status_code == 200, response.text
        part_crc = response.headers["x-amz-checksum-crc64nvme"]
        xml_parts += (f"<Part><PartNumber>{n}</PartNumber><ETag>{response.headers['ETag']}</ETag>"
                      f"<ChecksumCRC64NVME>{part_crc}</ChecksumCRC64NVME></Part>")
    body = f"<CompleteMultipartUpload>{xml_parts}</CompleteMultipartUpload>".encode()
    done = raw.request("POST", bucket, "k", query=[("uploadId", upload_id)], body=body)
    assert done.status_code == 200, done.text
    fields = xml_fields(done.content)[1]
    assert fields["ChecksumType"] == "FULL_OBJECT"
    assert not fields["ChecksumCRC64NVME"].endswith("-3")

    # The same bytes in one PUT: the gateway streams a CRC64NVME over them.
    whole = b"".join(bodies)
    single = raw.request("PUT", bucket, "whole", body=whole, headers={"x-amz-sdk-checksum-algorithm": "CRC64NVME"})
    assert single.status_code == 200, single.text
    expected = single.headers["x-amz-checksum-crc64nvme"]
    assert fields["ChecksumCRC64NVME"] == expected
    head = crc_header(raw, bucket, "k", {})
    assert head["x-amz-checksum-crc64nvme"] == expected
    assert head["x-amz-checksum-type"] == "FULL_OBJECT"


def test_full_object_crc32_and_a_declared_whole_object_checksum(raw, bucket):
    bodies = [os.urandom(PART), os.urandom(10)]
    created = raw.request("POST", bucket, "k", query=[("uploads", "")],
                          headers={"x-amz-checksum-algorithm": "CRC32", "x-amz-checksum-type": "FULL_OBJECT"})
    upload_id = xml_fields(created.content)[1]["UploadId"]
    xml_parts = ""
    for n, body in enumerate(bodies, 1):
        response = raw.request("PUT", bucket, "k", query=[("partNumber", str(n)), ("uploadId", upload_id)],
                               body=body, headers={"x-amz-checksum-crc32": crc32_base64(body)})
        assert response.status_code == 200, response.text
        xml_parts += f"<Part><PartNumber>{n}</PartNumber><ETag>{response.headers['ETag']}</ETag></Part>"
    body = f"<CompleteMultipartUpload>{xml_parts}</CompleteMultipartUpload>".encode()
    query = [("uploadId", upload_id)]
    wrong = raw.request("POST", bucket, "k", query=query, body=body,
                        headers={"x-amz-checksum-crc32": crc32_base64(b"wrong")})
    assert_s3_error(wrong, 400, "BadDigest")
    whole = crc32_base64(b"".join(bodies))
    done = raw.request("POST", bucket, "k", query=query, body=body, headers={"x-amz-checksum-crc32": whole})
    assert done.status_code == 200, done.text
    assert xml_fields(done.content)[1]["ChecksumCRC32"] == whole
    assert crc_header(raw, bucket, "k", {})["x-amz-checksum-crc32"] == whole


def test_invalid_checksum_settings_on_create(raw, bucket):
    for headers in [{"x-amz-checksum-algorithm": "CRC64NVME", "x-amz-checksum-type": "COMPOSITE"},
                    {"x-amz-checksum-algorithm": "SHA256", "x-amz-checksum-type": "FULL_OBJECT"},
                    {"x-amz-checksum-type": "COMPOSITE"},
                    {"x-amz-checksum-algorithm": "MD5"}]:
        response = raw.request("POST", bucket, "k", query=[("uploads", "")], headers=headers)
        assert_s3_error(response, 400, "InvalidRequest")


# ---- the AWS CLI ----


def test_aws_cli_copies_a_20_mib_file_with_multipart_both_ways(aws, bucket, tmp_path, s3):
    # The default configuration: multipart above 8 MiB, 8 MiB parts.
    (tmp_path / "aws-config").write_text("[default]\ns3 =\n    addressing_style = path\n")
    source = tmp_path / "source.bin"
    data = os.urandom(20 * MIB)
    source.write_bytes(data)
    aws("s3", "cp", str(source), f"s3://{bucket}/big.bin")
    head = s3.head_object(Bucket=bucket, Key="big.bin")
    assert head["ContentLength"] == 20 * MIB
    assert head["ETag"].endswith('-3"'), head["ETag"]
    target = tmp_path / "back.bin"
    aws("s3", "cp", f"s3://{bucket}/big.bin", str(target))
    assert hashlib.sha256(target.read_bytes()).digest() == hashlib.sha256(data).digest()

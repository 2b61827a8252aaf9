"""Every SigV4 payload mode, framed by hand: the stored object is the payload, never the framing."""

import hashlib
import os

import pytest

from aws_chunked import (
    SIGNED_PAYLOAD,
    SIGNED_PAYLOAD_TRAILER,
    UNSIGNED_PAYLOAD_TRAILER,
    crc32_base64,
    signed_body,
    split,
    unsigned_trailer_body,
)
from raw_client import RawClient, assert_s3_error, object_path
from sigv4 import UNSIGNED_PAYLOAD, sha256_hex

CHUNK = 64 * 1024
PAYLOAD = os.urandom(3 * CHUNK + 1234)  # three full chunks and a short last one


def chunked_headers(payload: bytes, trailer: str | None = None) -> dict:
    headers = {
        "Content-Encoding": "aws-chunked",
        "x-amz-decoded-content-length": str(len(payload)),
        "Content-Type": "application/x-test",
    }
    if trailer:
        headers["x-amz-trailer"] = trailer
    return headers


def put_signed_chunks(raw: RawClient, bucket: str, key: str, payload: bytes, trailers: dict | None = None,
                      **tamper):
    path = object_path(bucket, key)
    mode = SIGNED_PAYLOAD_TRAILER if trailers else SIGNED_PAYLOAD
    trailer_name = ",".join(trailers) if trailers else None
    seed = raw.sign("PUT", path, headers=chunked_headers(payload, trailer_name), payload_hash=mode)
    body = signed_body(seed, split(payload, CHUNK), trailers, **tamper)
    return raw.send("PUT", raw.url(path), seed.headers, body)


def put_unsigned_trailer(raw: RawClient, bucket: str, key: str, payload: bytes, checksum: str):
    path = object_path(bucket, key)
    headers = chunked_headers(payload, "x-amz-checksum-crc32")
    signed = raw.sign("PUT", path, headers=headers, payload_hash=UNSIGNED_PAYLOAD_TRAILER)
    body = unsigned_trailer_body(split(payload, CHUNK), {"x-amz-checksum-crc32": checksum})
    return raw.send("PUT", raw.url(path), signed.headers, body)


def assert_stored_exactly(raw: RawClient, bucket: str, key: str, payload: bytes):
    got = raw.request("GET", bucket, key, headers={"x-amz-checksum-mode": "ENABLED"})
    assert got.status_code == 200, got.text
    assert len(got.content) == len(payload), "stored length differs from the decoded payload length"
    assert hashlib.sha256(got.content).digest() == hashlib.sha256(payload).digest(), "stored bytes differ"
    assert "aws-chunked" not in got.headers.get("Content-Encoding", "")
    assert got.headers.get("ETag") == '"' + hashlib.md5(payload).hexdigest() + '"'
    returned = got.headers.get("x-amz-checksum-crc32")
    if returned is not None:
        assert returned == crc32_base64(payload), "a returned checksum must match the bytes returned"
    head = raw.request("HEAD", bucket, key)
    assert head.headers.get("Content-Length") == str(len(payload))
    assert "aws-chunked" not in head.headers.get("Content-Encoding", "")


def assert_not_stored(raw: RawClient, bucket: str, key: str):
    assert raw.request("HEAD", bucket, key).status_code == 404, "a rejected upload left an object behind"


def test_unsigned_payload(raw: RawClient, bucket):
    response = raw.request("PUT", bucket, "unsigned", body=PAYLOAD, payload_hash=UNSIGNED_PAYLOAD)
    assert response.status_code == 200, response.text
    assert_stored_exactly(raw, bucket, "unsigned", PAYLOAD)


def test_signed_sha256_payload(raw: RawClient, bucket):
    response = raw.request("PUT", bucket, "sha", body=PAYLOAD, payload_hash=sha256_hex(PAYLOAD))
    assert response.status_code == 200, response.text
    assert_stored_exactly(raw, bucket, "sha", PAYLOAD)


def test_streaming_signed_chunks(raw: RawClient, bucket):
    response = put_signed_chunks(raw, bucket, "signed-chunks", PAYLOAD)
    assert response.status_code == 200, response.text
    assert_stored_exactly(raw, bucket, "signed-chunks", PAYLOAD)


def test_streaming_signed_chunks_keep_content_encoding_other_than_aws_chunked(raw: RawClient, bucket):
    path = object_path(bucket, "gz")
    headers = chunked_headers(PAYLOAD)
    headers["Content-Encoding"] = "aws-chunked,gzip"
    seed = raw.sign("PUT", path, headers=headers, payload_hash=SIGNED_PAYLOAD)
    response = raw.send("PUT", raw.url(path), seed.headers, signed_body(seed, split(PAYLOAD, CHUNK)))
    assert response.status_code == 200, response.text
    head = raw.request("HEAD", bucket, "gz")
    assert head.headers.get("Content-Encoding") == "gzip"


def test_streaming_signed_empty_object(raw: RawClient, bucket):
    response = put_signed_chunks(raw, bucket, "empty", b"")
    assert response.status_code == 200, response.text
    assert_stored_exactly(raw, bucket, "empty", b"")


def test_streaming_unsigned_payload_with_crc32_trailer(raw: RawClient, bucket):
    response = put_unsigned_trailer(raw, bucket, "unsigned-trailer", PAYLOAD, crc32_base64(PAYLOAD))
    assert response.status_code == 200, response.text
    assert_stored_exactly(raw, bucket, "unsigned-trailer", PAYLOAD)


def test_streaming_signed_chunks_with_signed_trailer(raw: RawClient, bucket):
    trailers = {"x-amz-checksum-crc32": crc32_base64(PAYLOAD)}
    response = put_signed_chunks(raw, bucket, "signed-trailer", PAYLOAD, trailers)
    assert response.status_code == 200, response.text
    assert_stored_exactly(raw, bucket, "signed-trailer", PAYLOAD)


@pytest.mark.parametrize("chunk_index", [0, 2, 4], ids=["first", "middle", "final-empty"])
def test_tampered_chunk_signature_is_refused_and_nothing_stored(raw: RawClient, bucket, chunk_index):
    response = put_signed_chunks(raw, bucket, "tampered", PAYLOAD, tamper_chunk=chunk_index)
    assert_s3_error(response, 403, "SignatureDoesNotMatch")
    assert_not_stored(raw, bucket, "tampered")


def test_tampered_chunk_data_is_refused_and_nothing_stored(raw: RawClient, bucket):
    path = object_path(bucket, "tampered-data")
    seed = raw.sign("PUT", path, headers=chunked_headers(PAYLOAD), payload_hash=SIGNED_PAYLOAD)
    body = bytearray(signed_body(seed, split(PAYLOAD, CHUNK)))
    inside_first_chunk = body.index(b"\r\n") + 2 + 100  # past the first chunk's header line
    body[inside_first_chunk] ^= 0xFF
    response = raw.send("PUT", raw.url(path), seed.headers, bytes(body))
    assert_s3_error(response, 403, "SignatureDoesNotMatch")
    assert_not_stored(raw, bucket, "tampered-data")


def test_overwrite_refused_upload_keeps_old_object(raw: RawClient, bucket):
    assert put_signed_chunks(raw, bucket, "keep", b"old content").status_code == 200
    response = put_signed_chunks(raw, bucket, "keep", PAYLOAD, tamper_chunk=1)
    assert response.status_code == 403
    assert raw.request("GET", bucket, "keep").content == b"old content"


def test_tampered_trailer_signature_is_refused_and_nothing_stored(raw: RawClient, bucket):
    trailers = {"x-amz-checksum-crc32": crc32_base64(PAYLOAD)}
    response = put_signed_chunks(raw, bucket, "bad-trailer-sig", PAYLOAD, trailers,
                                 tamper_trailer_signature=True)
    assert_s3_error(response, 403, "SignatureDoesNotMatch")
    assert_not_stored(raw, bucket, "bad-trailer-sig")


def test_wrong_unsigned_trailer_checksum_is_bad_digest(raw: RawClient, bucket):
    response = put_unsigned_trailer(raw, bucket, "bad-crc", PAYLOAD, crc32_base64(PAYLOAD + b"x"))
    assert_s3_error(response, 400, "BadDigest")
    assert_not_stored(raw, bucket, "bad-crc")


def test_wrong_signed_trailer_checksum_is_bad_digest(raw: RawClient, bucket):
    trailers = {"x-amz-checksum-crc32": crc32_base64(b"not the payload")}
    response = put_signed_chunks(raw, bucket, "bad-signed-crc", PAYLOAD, trailers)
    assert_s3_error(response, 400, "BadDigest")
    assert_not_stored(raw, bucket, "bad-signed-crc")


def test_decoded_length_mismatch_is_refused(raw: RawClient, bucket):
    path = object_path(bucket, "short")
    headers = chunked_headers(PAYLOAD)
    headers["x-amz-decoded-content-length"] = str(len(PAYLOAD) + 10)
    seed = raw.sign("PUT", path, headers=headers, payload_hash=SIGNED_PAYLOAD)
    response = raw.send("PUT", raw.url(path), seed.headers, signed_body(seed, split(PAYLOAD, CHUNK)))
    assert 400 <= response.status_code < 500, response.text
    assert_not_stored(raw, bucket, "short")


def test_truncated_chunked_body_is_refused(raw: RawClient, bucket):
    path = object_path(bucket, "truncated")
    seed = raw.sign("PUT", path, headers=chunked_headers(PAYLOAD), payload_hash=SIGNED_PAYLOAD)
    body = signed_body(seed, split(PAYLOAD, CHUNK))
    response = raw.send("PUT", raw.url(path), seed.headers, body[: len(body) // 2])
    assert 400 <= response.status_code < 500, response.text
    assert_not_stored(raw, bucket, "truncated")


def test_trailer_header_together_with_checksum_header_is_refused(raw: RawClient, bucket):
    path = object_path(bucket, "both")
    headers = chunked_headers(PAYLOAD, "x-amz-checksum-crc32")
    headers["x-amz-checksum-crc32"] = crc32_base64(PAYLOAD)
    signed = raw.sign("PUT", path, headers=headers, payload_hash=UNSIGNED_PAYLOAD_TRAILER)
    body = unsigned_trailer_body(split(PAYLOAD, CHUNK), {"x-amz-checksum-crc32": crc32_base64(PAYLOAD)})
    response = raw.send("PUT", raw.url(path), signed.headers, body)
    assert 400 <= response.status_code < 500, response.text
    assert_not_stored(raw, bucket, "both")


def test_chunked_helper_frames_the_documented_layout():
    """The unsigned-trailer framing is what botocore's AwsChunkedWrapper emits."""
    assert unsigned_trailer_body([b"abc"], {"x-amz-checksum-crc32": "AAAAAA=="}) == (
        b"3\r\nabc\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n"
    )

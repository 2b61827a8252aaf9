#!/usr/bin/env python3
"""The SDK matrix scenarios driven by boto3 (see ../README.md for what each checks)."""

import http.client
import sys
import urllib.parse

import boto3
import botocore
from botocore.config import Config
from botocore.exceptions import ClientError

from matrix_common import (
    CHECKSUM_BODY_SIZE,
    EXPECTED_TREE_PAGES,
    PART_SIZE,
    TAGS,
    TREE_KEYS,
    Endpoint,
    Failure,
    Reporter,
    bucket_prefix,
    check,
    check_same_bytes,
    crc32_base64,
    log,
    multipart_etag,
    quoted_md5,
    random_bytes,
    selected_scenarios,
)

SDK = "boto3"


def make_client(endpoint, **checksum_settings):
    config = Config(s3={"addressing_style": "path"}, **checksum_settings)
    return boto3.client(
        "s3",
        endpoint_url=endpoint.url,
        aws_access_key_id=endpoint.access_key,
        aws_secret_access_key=endpoint.secret_key,
        region_name=endpoint.region,
        config=config,
    )


def status_of(error):
    return error.response.get("ResponseMetadata", {}).get("HTTPStatusCode")


def expect_missing(call, what):
    try:
        call()
    except ClientError as error:
        check(status_of(error) == 404, f"{what}: expected 404, got {status_of(error)}: {error}")
        return
    raise Failure(f"{what}: still exists")


def http_request(method, url, body=None):
    """Sends a request with no headers beyond Host and Content-Length, as curl would."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    try:
        path = parts.path + ("?" + parts.query if parts.query else "")
        connection.putrequest(method, path, skip_accept_encoding=True)
        if body is not None:
            connection.putheader("Content-Length", str(len(body)))
        connection.endheaders(body)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


class Scenarios:
    def __init__(self, endpoint, s3, prefix):
        self.endpoint = endpoint
        self.s3 = s3
        self.prefix = prefix
        self.bucket = prefix

    def create_bucket(self, name):
        """us-east-1 is the one region where CreateBucket takes no LocationConstraint."""
        region = self.endpoint.region
        config = {} if region == "us-east-1" else {"CreateBucketConfiguration": {"LocationConstraint": region}}
        self.s3.create_bucket(Bucket=name, **config)

    def bucket_scenario(self):
        name = self.prefix + "-b"
        self.create_bucket(name)
        try:
            self.s3.head_bucket(Bucket=name)
            names = [b["Name"] for b in self.s3.list_buckets()["Buckets"]]
            check(name in names, f"ListBuckets does not list {name}: {names}")
        finally:
            self.s3.delete_bucket(Bucket=name)
        expect_missing(lambda: self.s3.head_bucket(Bucket=name), "HeadBucket after DeleteBucket")

    def object_scenario(self):
        key = "object/hello world.txt"
        body = random_bytes(64 * 1024 + 7)
        put = self.s3.put_object(
            Bucket=self.bucket, Key=key, Body=body, ContentType="text/plain", Metadata={"color": "blue"}
        )
        check(put["ETag"] == quoted_md5(body), f"PutObject ETag {put['ETag']}, expected {quoted_md5(body)}")
        got = self.s3.get_object(Bucket=self.bucket, Key=key)
        check_same_bytes(got["Body"].read(), body, "GetObject body")
        check(got["ContentType"] == "text/plain", f"GetObject Content-Type {got['ContentType']}")
        check(got["Metadata"] == {"color": "blue"}, f"GetObject metadata {got['Metadata']}")
        check(got["ETag"] == put["ETag"], f"GetObject ETag {got['ETag']}")
        head = self.s3.head_object(Bucket=self.bucket, Key=key)
        check(head["ContentLength"] == len(body), f"HeadObject Content-Length {head['ContentLength']}")
        check(head["ETag"] == put["ETag"], f"HeadObject ETag {head['ETag']}")
        check(head["Metadata"] == {"color": "blue"}, f"HeadObject metadata {head['Metadata']}")
        self.s3.delete_object(Bucket=self.bucket, Key=key)
        expect_missing(lambda: self.s3.head_object(Bucket=self.bucket, Key=key), "HeadObject after DeleteObject")

    def range_scenario(self):
        key = "range/data.bin"
        body = random_bytes(10_000)
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)
        cases = [
            ("bytes=100-199", body[100:200], "bytes 100-199/10000"),
            ("bytes=9950-", body[9950:], "bytes 9950-9999/10000"),
            ("bytes=-50", body[-50:], "bytes 9950-9999/10000"),
        ]
        for header, expected, content_range in cases:
            got = self.s3.get_object(Bucket=self.bucket, Key=key, Range=header)
            check_same_bytes(got["Body"].read(), expected, f"Range {header}")
            check(got.get("ContentRange") == content_range, f"Range {header}: Content-Range {got.get('ContentRange')}")

    def list_scenario(self):
        for key in TREE_KEYS:
            self.s3.put_object(Bucket=self.bucket, Key=key, Body=key.encode())
        pages = []
        token = None
        while len(pages) <= len(EXPECTED_TREE_PAGES):
            args = {"Bucket": self.bucket, "Prefix": "tree/", "Delimiter": "/", "MaxKeys": 2}
            if token:
                args["ContinuationToken"] = token
            page = self.s3.list_objects_v2(**args)
            keys = [o["Key"] for o in page.get("Contents", [])]
            prefixes = [p["Prefix"] for p in page.get("CommonPrefixes", [])]
            pages.append((keys, prefixes))
            check(page["KeyCount"] == len(keys) + len(prefixes), f"page {len(pages)}: KeyCount {page['KeyCount']}")
            if not page["IsTruncated"]:
                break
            token = page.get("NextContinuationToken")
            check(token, f"page {len(pages)} is truncated but has no NextContinuationToken")
        check(pages == EXPECTED_TREE_PAGES, f"pages {pages}, expected {EXPECTED_TREE_PAGES}")

    def multipart_scenario(self):
        key = "multipart/big.bin"
        parts = [random_bytes(PART_SIZE) for _ in range(3)]
        upload_id = self.s3.create_multipart_upload(Bucket=self.bucket, Key=key)["UploadId"]
        try:
            completed = []
            for number, part in enumerate(parts, start=1):
                etag = self.s3.upload_part(
                    Bucket=self.bucket, Key=key, UploadId=upload_id, PartNumber=number, Body=part
                )["ETag"]
                check(etag == quoted_md5(part), f"UploadPart {number} ETag {etag}")
                completed.append({"PartNumber": number, "ETag": etag})
            done = self.s3.complete_multipart_upload(
                Bucket=self.bucket, Key=key, UploadId=upload_id, MultipartUpload={"Parts": completed}
            )
        except Exception:
            abort_quietly(self.s3, self.bucket, key, upload_id)
            raise
        etag = done["ETag"]
        check(etag.strip('"').endswith("-3"), f"CompleteMultipartUpload ETag {etag} does not end in -3")
        check(etag == multipart_etag(parts), f"CompleteMultipartUpload ETag {etag}, expected {multipart_etag(parts)}")
        got = self.s3.get_object(Bucket=self.bucket, Key=key)
        check_same_bytes(got["Body"].read(), b"".join(parts), "GetObject of the completed upload")
        check(got["ETag"] == etag, f"GetObject ETag {got['ETag']}, expected {etag}")

    def copy_scenario(self):
        source, target = "copy/source.bin", "copy/target.bin"
        body = random_bytes(32 * 1024)
        put = self.s3.put_object(Bucket=self.bucket, Key=source, Body=body, Metadata={"origin": "copy-test"})
        copied = self.s3.copy_object(Bucket=self.bucket, Key=target, CopySource={"Bucket": self.bucket, "Key": source})
        check(copied["CopyObjectResult"]["ETag"] == put["ETag"], f"CopyObject ETag {copied['CopyObjectResult']['ETag']}")
        got = self.s3.get_object(Bucket=self.bucket, Key=target)
        check_same_bytes(got["Body"].read(), body, "GetObject of the copy")
        check(got["Metadata"] == {"origin": "copy-test"}, f"copy metadata {got['Metadata']}")

    def tagging_scenario(self):
        key = "tagging/object.txt"
        self.s3.put_object(Bucket=self.bucket, Key=key, Body=b"tagged")
        tag_set = [{"Key": k, "Value": v} for k, v in TAGS.items()]
        self.s3.put_object_tagging(Bucket=self.bucket, Key=key, Tagging={"TagSet": tag_set})
        got = {t["Key"]: t["Value"] for t in self.s3.get_object_tagging(Bucket=self.bucket, Key=key)["TagSet"]}
        check(got == TAGS, f"GetObjectTagging {got}, expected {TAGS}")
        self.s3.delete_object_tagging(Bucket=self.bucket, Key=key)
        left = self.s3.get_object_tagging(Bucket=self.bucket, Key=key)["TagSet"]
        check(left == [], f"GetObjectTagging after DeleteObjectTagging: {left}")

    def presigned_scenario(self):
        key = "presigned/file.bin"
        body = random_bytes(20 * 1024)
        params = {"Bucket": self.bucket, "Key": key}
        put_url = self.s3.generate_presigned_url("put_object", Params=params, ExpiresIn=600)
        status, answer = http_request("PUT", put_url, body)
        check(status == 200, f"presigned PUT: HTTP {status}: {answer[:300]!r}")
        get_url = self.s3.generate_presigned_url("get_object", Params=params, ExpiresIn=600)
        status, answer = http_request("GET", get_url)
        check(status == 200, f"presigned GET: HTTP {status}: {answer[:300]!r}")
        check_same_bytes(answer, body, "presigned GET body")
        return "SigV4 URLs" if "X-Amz-Signature=" in get_url else "SigV2 URLs"

    def checksum_default_scenario(self):
        key = "checksum/default.bin"
        body = random_bytes(CHECKSUM_BODY_SIZE)
        expected = crc32_base64(body)
        put = self.s3.put_object(Bucket=self.bucket, Key=key, Body=body)
        returned = put.get("ChecksumCRC32")
        check(returned in (None, expected), f"PutObject ChecksumCRC32 {returned}, expected {expected}")
        got = self.s3.get_object(Bucket=self.bucket, Key=key, ChecksumMode="ENABLED")
        check_same_bytes(got["Body"].read(), body, "GetObject body")
        returned = got.get("ChecksumCRC32")
        check(returned in (None, expected), f"GetObject ChecksumCRC32 {returned}, expected {expected}")

    def checksum_off_scenario(self):
        s3 = make_client(
            self.endpoint, request_checksum_calculation="when_required", response_checksum_validation="when_required"
        )
        key = "checksum/off.bin"
        body = random_bytes(CHECKSUM_BODY_SIZE)
        put = s3.put_object(Bucket=self.bucket, Key=key, Body=body)
        check(put["ETag"] == quoted_md5(body), f"PutObject ETag {put['ETag']}, expected {quoted_md5(body)}")
        got = s3.get_object(Bucket=self.bucket, Key=key)
        check_same_bytes(got["Body"].read(), body, "GetObject body")


def abort_quietly(s3, bucket, key, upload_id):
    try:
        s3.abort_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id)
    except Exception as error:  # noqa: BLE001 - cleanup is best effort
        log(f"{SDK}: abort of upload {upload_id} failed: {error}")


def remove_bucket(s3, bucket):
    """Best-effort cleanup: delete every object and upload, then the bucket."""
    try:
        s3.head_bucket(Bucket=bucket)
    except ClientError:
        return
    try:
        for page in s3.get_paginator("list_objects_v2").paginate(Bucket=bucket):
            for item in page.get("Contents", []):
                s3.delete_object(Bucket=bucket, Key=item["Key"])
    except Exception as error:  # noqa: BLE001
        log(f"{SDK}: cleanup listing of {bucket} failed: {error}")
    try:
        for upload in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
            abort_quietly(s3, bucket, upload["Key"], upload["UploadId"])
    except Exception as error:  # noqa: BLE001
        log(f"{SDK}: cleanup of uploads in {bucket} failed: {error}")
    try:
        s3.delete_bucket(Bucket=bucket)
    except Exception as error:  # noqa: BLE001
        log(f"{SDK}: cleanup could not delete bucket {bucket}: {error}")


def main(argv):
    wanted = selected_scenarios(argv)
    endpoint = Endpoint()
    s3 = make_client(endpoint)
    reporter = Reporter(SDK, f"{boto3.__version__} (botocore {botocore.__version__})")
    scenarios = Scenarios(endpoint, s3, bucket_prefix(SDK))
    bodies = {
        "object": scenarios.object_scenario,
        "range": scenarios.range_scenario,
        "list-v2-delimiter": scenarios.list_scenario,
        "multipart": scenarios.multipart_scenario,
        "copy": scenarios.copy_scenario,
        "tagging": scenarios.tagging_scenario,
        "presigned": scenarios.presigned_scenario,
        "checksum-default": scenarios.checksum_default_scenario,
        "checksum-off": scenarios.checksum_off_scenario,
    }
    setup_error = None
    if any(name != "bucket" for name in wanted):
        try:
            scenarios.create_bucket(scenarios.bucket)
        except Exception as error:  # noqa: BLE001
            setup_error = f"CreateBucket {scenarios.bucket}: {error}"
    try:
        for name in wanted:
            if name == "bucket":
                reporter.run(name, scenarios.bucket_scenario)
            else:
                reporter.run(name, bodies[name], setup_error)
    finally:
        remove_bucket(s3, scenarios.bucket)
        remove_bucket(s3, scenarios.prefix + "-b")


if __name__ == "__main__":
    main(sys.argv[1:])

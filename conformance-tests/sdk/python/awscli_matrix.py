#!/usr/bin/env python3
"""The SDK matrix scenarios driven by the AWS CLI v1 (`aws s3api` and `aws s3`).

Every S3 call is a real `aws` process; this script only prepares files, reads the
CLI's JSON output and checks it (see ../README.md for what each scenario checks).
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

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

SDK = "aws-cli"

# Path-style addressing, and 5 MiB multipart parts so `aws s3 cp` of 15 MiB makes three parts.
CONFIG = """[default]
s3 =
    addressing_style = path
    multipart_threshold = 5MB
    multipart_chunksize = 5MB
"""


class CliError(Exception):
    """An `aws` command exited non-zero."""


class Cli:
    def __init__(self, endpoint, workdir):
        self.endpoint = endpoint
        self.workdir = workdir
        config = workdir / "config"
        config.write_text(CONFIG)
        self.env = {
            **os.environ,
            "AWS_ACCESS_KEY_ID": endpoint.access_key,
            "AWS_SECRET_ACCESS_KEY": endpoint.secret_key,
            "AWS_DEFAULT_REGION": endpoint.region,
            "AWS_CONFIG_FILE": str(config),
            "AWS_SHARED_CREDENTIALS_FILE": os.devnull,
            "AWS_PAGER": "",
        }
        for name in ("AWS_PROFILE", "AWS_SESSION_TOKEN", "AWS_REQUEST_CHECKSUM_CALCULATION", "AWS_RESPONSE_CHECKSUM_VALIDATION"):
            self.env.pop(name, None)
        self.aws = shutil.which("aws", path=str(Path(sys.executable).parent)) or "aws"

    def run(self, *args, extra_env=None):
        """Runs one `aws` command and returns its parsed JSON output (None when it prints nothing)."""
        command = [self.aws, "--endpoint-url", self.endpoint.url, "--output", "json", *args]
        env = {**self.env, **(extra_env or {})}
        done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=300, check=False)
        if done.returncode != 0:
            raise CliError(f"`aws {' '.join(args[:2])}` exited {done.returncode}: {done.stderr.strip()}")
        text = done.stdout.strip()
        if not text:
            return None
        try:
            return json.loads(text)
        except json.JSONDecodeError:
            return text

    def fails_with_404(self, *args):
        try:
            self.run(*args)
        except CliError as error:
            text = str(error)
            check("404" in text or "Not Found" in text, f"`aws {' '.join(args[:2])}`: expected 404: {text}")
            return
        raise Failure(f"`aws {' '.join(args[:2])}`: still exists")

    def version(self):
        done = subprocess.run([self.aws, "--version"], env=self.env, capture_output=True, text=True, check=False)
        words = (done.stdout or done.stderr).split()
        fields = dict(word.split("/", 1) for word in words if "/" in word)
        return f"{fields.get('aws-cli', 'unknown')} (botocore {fields.get('botocore', 'unknown')})"


class Scenarios:
    def __init__(self, cli, prefix):
        self.cli = cli
        self.prefix = prefix
        self.bucket = prefix

    def file(self, name, data=None):
        path = self.cli.workdir / name
        if data is not None:
            path.write_bytes(data)
        return str(path)

    def create_bucket(self, name):
        """us-east-1 is the one region where CreateBucket takes no LocationConstraint."""
        region = self.cli.endpoint.region
        config = [] if region == "us-east-1" else ["--create-bucket-configuration", f"LocationConstraint={region}"]
        self.cli.run("s3api", "create-bucket", "--bucket", name, *config)

    def bucket_scenario(self):
        name = self.prefix + "-b"
        self.create_bucket(name)
        try:
            self.cli.run("s3api", "head-bucket", "--bucket", name)
            names = [b["Name"] for b in self.cli.run("s3api", "list-buckets")["Buckets"]]
            check(name in names, f"list-buckets does not list {name}: {names}")
        finally:
            self.cli.run("s3api", "delete-bucket", "--bucket", name)
        self.cli.fails_with_404("s3api", "head-bucket", "--bucket", name)

    def object_scenario(self):
        key = "object/hello world.txt"
        body = random_bytes(64 * 1024 + 7)
        where = ("--bucket", self.bucket, "--key", key)
        put = self.cli.run(
            "s3api", "put-object", *where, "--body", self.file("object.in", body),
            "--content-type", "text/plain", "--metadata", "color=blue",
        )
        check(put["ETag"] == quoted_md5(body), f"put-object ETag {put['ETag']}, expected {quoted_md5(body)}")
        got = self.cli.run("s3api", "get-object", *where, self.file("object.out"))
        check_same_bytes(Path(self.file("object.out")).read_bytes(), body, "get-object body")
        check(got["ContentType"] == "text/plain", f"get-object ContentType {got['ContentType']}")
        check(got["Metadata"] == {"color": "blue"}, f"get-object Metadata {got['Metadata']}")
        check(got["ETag"] == put["ETag"], f"get-object ETag {got['ETag']}")
        head = self.cli.run("s3api", "head-object", *where)
        check(head["ContentLength"] == len(body), f"head-object ContentLength {head['ContentLength']}")
        check(head["ETag"] == put["ETag"], f"head-object ETag {head['ETag']}")
        check(head["Metadata"] == {"color": "blue"}, f"head-object Metadata {head['Metadata']}")
        self.cli.run("s3api", "delete-object", *where)
        self.cli.fails_with_404("s3api", "head-object", *where)

    def range_scenario(self):
        where = ("--bucket", self.bucket, "--key", "range/data.bin")
        body = random_bytes(10_000)
        self.cli.run("s3api", "put-object", *where, "--body", self.file("range.in", body))
        cases = [
            ("bytes=100-199", body[100:200], "bytes 100-199/10000"),
            ("bytes=9950-", body[9950:], "bytes 9950-9999/10000"),
            ("bytes=-50", body[-50:], "bytes 9950-9999/10000"),
        ]
        for header, expected, content_range in cases:
            got = self.cli.run("s3api", "get-object", *where, "--range", header, self.file("range.out"))
            check_same_bytes(Path(self.file("range.out")).read_bytes(), expected, f"--range {header}")
            check(got.get("ContentRange") == content_range, f"--range {header}: ContentRange {got.get('ContentRange')}")

    def list_scenario(self):
        for key in TREE_KEYS:
            self.cli.run("s3api", "put-object", "--bucket", self.bucket, "--key", key, "--body", self.file("tree.in", key.encode()))
        pages = []
        token = None
        while len(pages) <= len(EXPECTED_TREE_PAGES):
            # --no-paginate: one ListObjectsV2 call per command, so each page can be checked.
            args = ["s3api", "list-objects-v2", "--no-paginate", "--bucket", self.bucket,
                    "--prefix", "tree/", "--delimiter", "/", "--max-keys", "2"]
            if token:
                args += ["--continuation-token", token]
            page = self.cli.run(*args)
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
        """`aws s3 cp` uploads 15 MiB as three 5 MiB parts (see CONFIG), in parallel as users see it."""
        parts = [random_bytes(PART_SIZE) for _ in range(3)]
        url = f"s3://{self.bucket}/multipart/big.bin"
        self.cli.run("s3", "cp", "--only-show-errors", self.file("big.in", b"".join(parts)), url)
        head = self.cli.run("s3api", "head-object", "--bucket", self.bucket, "--key", "multipart/big.bin")
        etag = head["ETag"]
        check(etag.strip('"').endswith("-3"), f"ETag {etag} does not end in -3")
        check(etag == multipart_etag(parts), f"ETag {etag}, expected {multipart_etag(parts)}")
        self.cli.run("s3", "cp", "--only-show-errors", url, self.file("big.out"))
        check_same_bytes(Path(self.file("big.out")).read_bytes(), b"".join(parts), "aws s3 cp download")

    def copy_scenario(self):
        body = random_bytes(32 * 1024)
        put = self.cli.run(
            "s3api", "put-object", "--bucket", self.bucket, "--key", "copy/source.bin",
            "--body", self.file("copy.in", body), "--metadata", "origin=copy-test",
        )
        copied = self.cli.run(
            "s3api", "copy-object", "--bucket", self.bucket, "--key", "copy/target.bin",
            "--copy-source", f"{self.bucket}/copy/source.bin",
        )
        check(copied["CopyObjectResult"]["ETag"] == put["ETag"], f"copy-object ETag {copied['CopyObjectResult']['ETag']}")
        got = self.cli.run("s3api", "get-object", "--bucket", self.bucket, "--key", "copy/target.bin", self.file("copy.out"))
        check_same_bytes(Path(self.file("copy.out")).read_bytes(), body, "get-object of the copy")
        check(got["Metadata"] == {"origin": "copy-test"}, f"copy Metadata {got['Metadata']}")

    def tagging_scenario(self):
        where = ("--bucket", self.bucket, "--key", "tagging/object.txt")
        self.cli.run("s3api", "put-object", *where, "--body", self.file("tagging.in", b"tagged"))
        tag_set = [{"Key": k, "Value": v} for k, v in TAGS.items()]
        self.cli.run("s3api", "put-object-tagging", *where, "--tagging", json.dumps({"TagSet": tag_set}))
        got = {t["Key"]: t["Value"] for t in self.cli.run("s3api", "get-object-tagging", *where)["TagSet"]}
        check(got == TAGS, f"get-object-tagging {got}, expected {TAGS}")
        self.cli.run("s3api", "delete-object-tagging", *where)
        left = self.cli.run("s3api", "get-object-tagging", *where)["TagSet"]
        check(left == [], f"get-object-tagging after delete-object-tagging: {left}")

    def presigned_scenario(self):
        """The CLI can presign only GETs (`aws s3 presign`); the object is put with s3api."""
        key = "presigned/file.bin"
        body = random_bytes(20 * 1024)
        self.cli.run("s3api", "put-object", "--bucket", self.bucket, "--key", key, "--body", self.file("presigned.in", body))
        url = self.cli.run("s3", "presign", f"s3://{self.bucket}/{key}", "--expires-in", "600")
        out = self.file("presigned.out")
        done = subprocess.run(
            ["curl", "--silent", "--show-error", "--output", out, "--write-out", "%{http_code}", url],
            capture_output=True, text=True, timeout=120, check=False,
        )
        check(done.stdout == "200", f"curl GET of the presigned URL: HTTP {done.stdout} {done.stderr.strip()}: "
              f"{Path(out).read_bytes()[:300]!r}")
        check_same_bytes(Path(out).read_bytes(), body, "presigned GET body")
        signing = "SigV4" if "X-Amz-Signature=" in url else "SigV2"
        return f"GET only: the CLI cannot presign a PUT; {signing} URL"

    def checksum_default_scenario(self):
        where = ("--bucket", self.bucket, "--key", "checksum/default.bin")
        body = random_bytes(CHECKSUM_BODY_SIZE)
        expected = crc32_base64(body)
        put = self.cli.run("s3api", "put-object", *where, "--body", self.file("default.in", body))
        check(put.get("ChecksumCRC32") in (None, expected), f"put-object ChecksumCRC32 {put.get('ChecksumCRC32')}, expected {expected}")
        got = self.cli.run("s3api", "get-object", *where, "--checksum-mode", "ENABLED", self.file("default.out"))
        check_same_bytes(Path(self.file("default.out")).read_bytes(), body, "get-object body")
        check(got.get("ChecksumCRC32") in (None, expected), f"get-object ChecksumCRC32 {got.get('ChecksumCRC32')}, expected {expected}")

    def checksum_off_scenario(self):
        off = {"AWS_REQUEST_CHECKSUM_CALCULATION": "when_required", "AWS_RESPONSE_CHECKSUM_VALIDATION": "when_required"}
        where = ("--bucket", self.bucket, "--key", "checksum/off.bin")
        body = random_bytes(CHECKSUM_BODY_SIZE)
        put = self.cli.run("s3api", "put-object", *where, "--body", self.file("off.in", body), extra_env=off)
        check(put["ETag"] == quoted_md5(body), f"put-object ETag {put['ETag']}, expected {quoted_md5(body)}")
        self.cli.run("s3api", "get-object", *where, self.file("off.out"), extra_env=off)
        check_same_bytes(Path(self.file("off.out")).read_bytes(), body, "get-object body")


def remove_bucket(cli, bucket):
    """Best-effort cleanup with the CLI's own `rb --force` (empties, then deletes)."""
    try:
        cli.run("s3api", "head-bucket", "--bucket", bucket)
    except CliError:
        return
    try:
        cli.run("s3", "rb", "--force", f"s3://{bucket}")
    except CliError as error:
        log(f"{SDK}: cleanup of {bucket} failed: {error}")


def main(argv):
    wanted = selected_scenarios(argv)
    endpoint = Endpoint()
    with tempfile.TemporaryDirectory(prefix="sdk-matrix-awscli-") as workdir:
        cli = Cli(endpoint, Path(workdir))
        reporter = Reporter(SDK, cli.version())
        scenarios = Scenarios(cli, bucket_prefix(SDK))
        bodies = {
            "bucket": scenarios.bucket_scenario,
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
            except CliError as error:
                setup_error = str(error)
        try:
            for name in wanted:
                reporter.run(name, bodies[name], None if name == "bucket" else setup_error)
        finally:
            remove_bucket(cli, scenarios.bucket)
            remove_bucket(cli, scenarios.prefix + "-b")


if __name__ == "__main__":
    main(sys.argv[1:])

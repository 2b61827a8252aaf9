"""Shared plumbing for the Python-driven matrix clients (boto3 and the AWS CLI).

Each client program runs the scenarios named in SCENARIOS (or those given as
arguments) and prints one JSON line per scenario; see ../README.md.
"""

import base64
import hashlib
import json
import os
import secrets
import sys
import zlib

SCENARIOS = [
    "bucket",
    "object",
    "range",
    "list-v2-delimiter",
    "multipart",
    "copy",
    "tagging",
    "presigned",
    "checksum-default",
    "checksum-off",
]

PART_SIZE = 5 * 1024 * 1024
# Larger than one aws-chunked chunk in every SDK (64 KiB botocore, 128 KiB Java),
# so streaming uploads span several chunks plus a trailer.
CHECKSUM_BODY_SIZE = 256 * 1024 + 123
TREE_KEYS = [
    "tree/a.txt",
    "tree/b.txt",
    "tree/c.txt",
    "tree/dir1/x.txt",
    "tree/dir1/y.txt",
    "tree/dir2/z.txt",
    "tree/dir3/w.txt",
]
# ListObjectsV2 with prefix tree/, delimiter / and max-keys 2: (keys, common prefixes) per page.
EXPECTED_TREE_PAGES = [
    (["tree/a.txt", "tree/b.txt"], []),
    (["tree/c.txt"], ["tree/dir1/"]),
    ([], ["tree/dir2/", "tree/dir3/"]),
]
TAGS = {"project": "s3gw", "tier": "gold"}


class Endpoint:
    """The S3 endpoint under test, from the environment."""

    def __init__(self):
        missing = [n for n in ("S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY") if not os.environ.get(n)]
        if missing:
            sys.exit(f"missing environment: {', '.join(missing)}")
        self.url = os.environ["S3_ENDPOINT"].rstrip("/")
        self.access_key = os.environ["S3_ACCESS_KEY"]
        self.secret_key = os.environ["S3_SECRET_KEY"]
        self.region = os.environ.get("S3_REGION") or "us-east-1"


class Failure(Exception):
    """A scenario's check did not hold."""


def check(condition, message):
    if not condition:
        raise Failure(message)


def bucket_prefix(sdk):
    return f"{sdk}-{secrets.token_hex(4)}"


def random_bytes(size):
    return os.urandom(size)


def quoted_md5(data):
    return '"' + hashlib.md5(data).hexdigest() + '"'


def multipart_etag(parts):
    """The S3 multipart ETag: md5 of the concatenated binary part md5s, then -N.
    With S3_MULTIPART_ETAG=ozone, Ozone's: md5 of the parts' hex md5s as text."""
    if os.environ.get("S3_MULTIPART_ETAG") == "ozone":
        joined = "".join(hashlib.md5(p).hexdigest() for p in parts).encode()
    else:
        joined = b"".join(hashlib.md5(p).digest() for p in parts)
    return '"' + hashlib.md5(joined).hexdigest() + f'-{len(parts)}"'


def crc32_base64(data):
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def describe(data):
    return f"{len(data)} bytes sha256 {hashlib.sha256(data).hexdigest()[:16]}"


def check_same_bytes(got, expected, what):
    check(got == expected, f"{what}: got {describe(got)}, expected {describe(expected)}")


def selected_scenarios(argv):
    unknown = [a for a in argv if a not in SCENARIOS]
    if unknown:
        sys.exit(f"unknown scenario(s): {', '.join(unknown)}; known: {', '.join(SCENARIOS)}")
    return argv or SCENARIOS


class Reporter:
    """Prints one JSON line per scenario result."""

    def __init__(self, sdk, version):
        self.sdk = sdk
        self.version = version

    def emit(self, scenario, ok, detail=""):
        line = {"sdk": self.sdk, "version": self.version, "scenario": scenario, "ok": ok, "detail": detail}
        print(json.dumps(line), flush=True)

    def run(self, scenario, body, setup_error=None):
        if setup_error is not None:
            self.emit(scenario, False, f"setup failed: {setup_error}")
            return
        try:
            note = body()
        except Exception as error:  # noqa: BLE001 - any failure is this scenario's result
            self.emit(scenario, False, error_text(error))
        else:
            self.emit(scenario, True, note or "")


def error_text(error):
    text = str(error) if isinstance(error, Failure) else f"{type(error).__name__}: {error}"
    return text if len(text) <= 600 else text[:600] + "..."


def log(message):
    print(message, file=sys.stderr, flush=True)

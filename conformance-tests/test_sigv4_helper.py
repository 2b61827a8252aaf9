"""The suite's own SigV4 signer agrees with botocore's (no server needed).

Every raw-request test relies on sigv4.py; if it drifted from what AWS
clients compute, server failures would be misattributed.
"""

import datetime

import pytest
from botocore.auth import S3SigV4Auth, S3SigV4QueryAuth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials as BotoCredentials

from raw_client import object_path
from sigv4 import Credentials, canonical_query, presign_query, sha256_hex, sign_headers

CREDS = Credentials("AKIDEXAMPLE0000000001", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "us-east-1")
HOST = "127.0.0.1:9878"


def botocore_signed(method, url, headers, body):
    request = AWSRequest(method=method, url=url, headers=headers, data=body)
    S3SigV4Auth(BotoCredentials(CREDS.access_key, CREDS.secret_key), "s3", CREDS.region).add_auth(request)
    return request


@pytest.mark.parametrize(
    "method,bucket,key,query,body",
    [
        ("GET", None, None, [], b""),
        ("PUT", "bucket", "plain/key.txt", [], b"hello"),
        ("GET", "bucket", None, [("list-type", "2"), ("prefix", "a b/"), ("delimiter", "/")], b""),
        ("PUT", "bucket", "with space+plus=eq", [], b"x" * 100),
        ("POST", "bucket", None, [("delete", "")], b"<Delete/>"),
    ],
)
def test_header_signature_matches_botocore(method, bucket, key, query, body):
    path = object_path(bucket, key)
    url = f"http://{HOST}{path}" + (f"?{canonical_query(query)}" if query else "")
    theirs = botocore_signed(method, url, {"x-amz-meta-color": "blue"}, body)
    when = datetime.datetime.strptime(theirs.headers["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
        tzinfo=datetime.timezone.utc
    )
    ours = sign_headers(
        CREDS,
        method,
        path,
        query,
        {"Host": HOST, "x-amz-meta-color": "blue"},
        sha256_hex(body),
        now=when,
    )
    assert ours.headers["Authorization"] == theirs.headers["Authorization"]


def test_presigned_signature_matches_botocore():
    path = object_path("bucket", "some key")
    url = f"http://{HOST}{path}"
    request = AWSRequest(method="GET", url=url, headers={})
    S3SigV4QueryAuth(
        BotoCredentials(CREDS.access_key, CREDS.secret_key), "s3", CREDS.region, expires=300
    ).add_auth(request)
    theirs = dict(p.split("=", 1) for p in request.url.split("?", 1)[1].split("&"))
    when = datetime.datetime.strptime(theirs["X-Amz-Date"], "%Y%m%dT%H%M%SZ").replace(
        tzinfo=datetime.timezone.utc
    )
    ours = dict(presign_query(CREDS, "GET", HOST, path, 300, now=when))
    assert ours["X-Amz-Signature"] == theirs["X-Amz-Signature"]


def test_chunk_signatures_match_aws_documentation_example():
    """The worked example of STREAMING-AWS4-HMAC-SHA256-PAYLOAD in the S3 API reference."""
    from aws_chunked import SIGNED_PAYLOAD, signed_body, split

    creds = Credentials("AKIAIOSFODNN7EXAMPLE", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "us-east-1")
    seed = sign_headers(
        creds,
        "PUT",
        "/examplebucket/chunkObject.txt",
        [],
        {
            "Host": "s3.amazonaws.com",
            "x-amz-storage-class": "REDUCED_REDUNDANCY",
            "Content-Encoding": "aws-chunked",
            "Content-Length": "66824",
            "x-amz-decoded-content-length": "66560",
        },
        SIGNED_PAYLOAD,
        now=datetime.datetime(2013, 5, 24, tzinfo=datetime.timezone.utc),
    )
    assert seed.signature == "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9"
    body = signed_body(seed, split(b"a" * 66560, 65536))
    assert len(body) == 66824
    assert b"ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648" in body
    assert b"0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497" in body
    assert body.endswith(
        b"0;chunk-signature=b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9\r\n\r\n"
    )

"""AWS Signature Version 4 for hand-made S3 requests.

The suite signs raw requests itself (instead of going through botocore) so a
test can change exactly one thing a real client would get right: the date,
the secret, an unsigned header, a payload hash, a chunk signature.
test_sigv4_helper.py checks this signer against botocore's, so a failure
elsewhere is the server's and not the helper's.
"""

import datetime
import hashlib
import hmac
import urllib.parse
from dataclasses import dataclass

ALGORITHM = "AWS4-HMAC-SHA256"
EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()
UNSIGNED_PAYLOAD = "UNSIGNED-PAYLOAD"


@dataclass(frozen=True)
class Credentials:
    access_key: str
    secret_key: str
    region: str = "us-east-1"


@dataclass(frozen=True)
class Signature:
    """What a signed request carries, kept so aws-chunked can chain from it."""

    headers: dict
    signature: str
    amz_date: str
    scope: str
    signing_key: bytes


def sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def uri_encode(value: str, keep_slash: bool) -> str:
    """S3's URI encoding: every byte but the unreserved set is %XX (upper hex).

    S3 encodes the path once (other services encode twice) and never
    normalises it, so `a/../b` and `a//b` are signed exactly as sent.
    """
    safe = "-_.~" + ("/" if keep_slash else "")
    return urllib.parse.quote(value, safe=safe)


def canonical_query(params) -> str:
    pairs = sorted((uri_encode(k, False), uri_encode(v, False)) for k, v in params)
    return "&".join(f"{k}={v}" for k, v in pairs)


def utc_now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)


def amz_timestamps(now: datetime.datetime) -> tuple[str, str]:
    return now.strftime("%Y%m%dT%H%M%SZ"), now.strftime("%Y%m%d")


def derive_signing_key(secret_key: str, date: str, region: str) -> bytes:
    key = ("AWS4" + secret_key).encode()
    for part in (date, region, "s3", "aws4_request"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def hmac_hex(key: bytes, message: str) -> str:
    return hmac.new(key, message.encode(), hashlib.sha256).hexdigest()


def _canonical_header_value(value: str) -> str:
    return " ".join(str(value).strip().split())


def sign_headers(
    creds: Credentials,
    method: str,
    path: str,
    query,
    headers: dict,
    payload_hash: str,
    now: datetime.datetime | None = None,
    unsigned_headers=(),
    scope_region: str | None = None,
    scope_date: str | None = None,
) -> Signature:
    """Signs a request with an Authorization header.

    `path` is the encoded path exactly as it goes on the wire; `query` is a
    list of unencoded (name, value) pairs; `headers` must include Host.
    Headers named in `unsigned_headers` are sent but left out of the
    signature. `scope_region` / `scope_date` forge the credential scope.
    """
    now = now or utc_now()
    amz_date, date = amz_timestamps(now)
    out = dict(headers)
    out["x-amz-date"] = amz_date
    out["x-amz-content-sha256"] = payload_hash
    skip = {h.lower() for h in unsigned_headers}
    canon = {}
    for name, value in out.items():
        if name.lower() not in skip:
            canon[name.lower()] = _canonical_header_value(value)
    signed_names = sorted(canon)
    canonical_request = "\n".join(
        [
            method,
            path,
            canonical_query(query),
            "".join(f"{n}:{canon[n]}\n" for n in signed_names),
            ";".join(signed_names),
            payload_hash,
        ]
    )
    region = scope_region or creds.region
    scope = f"{scope_date or date}/{region}/s3/aws4_request"
    string_to_sign = "\n".join([ALGORITHM, amz_date, scope, sha256_hex(canonical_request.encode())])
    key = derive_signing_key(creds.secret_key, scope_date or date, region)
    signature = hmac_hex(key, string_to_sign)
    out["Authorization"] = (
        f"{ALGORITHM} Credential={creds.access_key}/{scope}, "
        f"SignedHeaders={';'.join(signed_names)}, Signature={signature}"
    )
    return Signature(out, signature, amz_date, scope, key)


def presign_query(
    creds: Credentials,
    method: str,
    host: str,
    path: str,
    expires: int,
    now: datetime.datetime | None = None,
    extra_query=(),
) -> list[tuple[str, str]]:
    """Query parameters of a presigned URL (signature last), unencoded."""
    now = now or utc_now()
    amz_date, date = amz_timestamps(now)
    scope = f"{date}/{creds.region}/s3/aws4_request"
    query = list(extra_query) + [
        ("X-Amz-Algorithm", ALGORITHM),
        ("X-Amz-Credential", f"{creds.access_key}/{scope}"),
        ("X-Amz-Date", amz_date),
        ("X-Amz-Expires", str(expires)),
        ("X-Amz-SignedHeaders", "host"),
    ]
    canonical_request = "\n".join(
        [method, path, canonical_query(query), f"host:{host}\n", "host", UNSIGNED_PAYLOAD]
    )
    string_to_sign = "\n".join([ALGORITHM, amz_date, scope, sha256_hex(canonical_request.encode())])
    key = derive_signing_key(creds.secret_key, date, creds.region)
    return query + [("X-Amz-Signature", hmac_hex(key, string_to_sign))]

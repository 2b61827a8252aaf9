"""AWS Signature Version 2 for hand-made requests (header and presigned).

The string to sign is `VERB\\nContent-MD5\\nContent-Type\\nDate\\n`, the
`x-amz-*` headers, then the resource: `/bucket/key` (the bucket from the
host in virtual-host style) plus any sub-resource.
"""

import base64
import email.utils
import hashlib
import hmac
import time
import urllib.parse

from sigv4 import Credentials


def sign(secret_key: str, string_to_sign: str) -> str:
    digest = hmac.new(secret_key.encode(), string_to_sign.encode(), hashlib.sha1).digest()
    return base64.b64encode(digest).decode()


def header_auth(creds: Credentials, method: str, resource: str, content_type: str = "") -> dict:
    """`Date` and `Authorization` headers signing `resource` (`/bucket/key`)."""
    date = email.utils.formatdate(usegmt=True)
    signature = sign(creds.secret_key, f"{method}\n\n{content_type}\n{date}\n{resource}")
    return {"Date": date, "Authorization": f"AWS {creds.access_key}:{signature}"}


def presigned_query(creds: Credentials, method: str, resource: str, expires_in: int = 300,
                    expires_at: int | None = None) -> str:
    """The encoded query string of a V2 presigned URL for `resource`."""
    expires = str(expires_at if expires_at is not None else int(time.time()) + expires_in)
    signature = sign(creds.secret_key, f"{method}\n\n\n{expires}\n{resource}")
    return urllib.parse.urlencode(
        [("AWSAccessKeyId", creds.access_key), ("Expires", expires), ("Signature", signature)]
    )

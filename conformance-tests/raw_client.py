"""A small raw S3 client: requests on the wire exactly as a test builds them.

The URL is put on the prepared request after `prepare()`, because requests
and urllib3 would otherwise normalise `..` segments and re-quote the path,
and the server must see (and sign-check) the path the test meant.
"""

import socket
import urllib.parse
import xml.etree.ElementTree as ET
from dataclasses import dataclass

import requests

from sigv4 import (
    Credentials,
    Signature,
    canonical_query,
    presign_query,
    sha256_hex,
    sign_headers,
    uri_encode,
)


def object_path(bucket: str | None = None, key: str | None = None) -> str:
    path = "/"
    if bucket is not None:
        path += uri_encode(bucket, keep_slash=False)
    if key is not None:
        path += "/" + uri_encode(key, keep_slash=True)
    return path


@dataclass
class S3Error:
    status: int
    code: str | None
    message: str | None
    request_id: str | None
    fields: dict


def strip_ns(tag: str) -> str:
    return tag.rsplit("}", 1)[-1]


def xml_fields(body: bytes) -> tuple[str, dict]:
    """Root tag and its direct children's text, namespaces dropped."""
    root = ET.fromstring(body)
    return strip_ns(root.tag), {strip_ns(child.tag): child.text for child in root}


def parse_error(response: requests.Response) -> S3Error:
    """The S3 XML error body of `response`; fails the test if there is none."""
    assert response.content, (
        f"HTTP {response.status_code} without an XML error body; headers {dict(response.headers)}"
    )
    root, fields = xml_fields(response.content)
    assert root == "Error", f"error body root is <{root}>: {response.text[:500]}"
    return S3Error(
        response.status_code,
        fields.get("Code"),
        fields.get("Message"),
        fields.get("RequestId"),
        fields,
    )


def assert_s3_error(response: requests.Response, status: int, code: str) -> S3Error:
    """Checks status, Code, RequestId and the x-amz-request-id header together."""
    assert response.status_code == status, (
        f"expected {status} {code}, got {response.status_code}: {response.text[:500]}"
    )
    error = parse_error(response)
    assert error.code == code, f"expected Code {code}, got {error.code}: {response.text[:500]}"
    assert error.request_id, f"error body has no RequestId: {response.text[:500]}"
    assert response.headers.get("x-amz-request-id"), "error response has no x-amz-request-id header"
    assert error.message, f"error body has no Message: {response.text[:500]}"
    return error


def assert_client_error(response: requests.Response) -> S3Error:
    """A 4xx (or 501) with a complete S3 XML error body, whatever the code."""
    assert 400 <= response.status_code < 500 or response.status_code == 501, (
        f"expected a client error, got {response.status_code}: {response.text[:500]}"
    )
    code = parse_error(response).code
    assert code, f"error body has no Code: {response.text[:500]}"
    return assert_s3_error(response, response.status_code, code)


class RawClient:
    def __init__(self, endpoint: str, creds: Credentials, host: str | None = None):
        """`host` overrides the Host header (virtual-host style) while connecting to `endpoint`."""
        self.endpoint = endpoint.rstrip("/")
        self.address = urllib.parse.urlsplit(self.endpoint).netloc
        self.host = host or self.address
        self.creds = creds
        self.session = requests.Session()

    def url(self, path: str, query=()) -> str:
        q = canonical_query(query)
        return f"{self.endpoint}{path}" + (f"?{q}" if q else "")

    def send(self, method: str, url: str, headers: dict, body=None, timeout=60) -> requests.Response:
        prepared = requests.Request(method, self.endpoint + "/", headers=headers, data=body).prepare()
        prepared.url = url
        return self.session.send(prepared, timeout=timeout, allow_redirects=False)

    def sign(
        self,
        method: str,
        path: str,
        query=(),
        headers: dict | None = None,
        payload_hash: str = "",
        creds: Credentials | None = None,
        **sign_options,
    ) -> Signature:
        all_headers = {"Host": self.host, **(headers or {})}
        return sign_headers(
            creds or self.creds, method, path, query, all_headers, payload_hash, **sign_options
        )

    def request(
        self,
        method: str,
        bucket: str | None = None,
        key: str | None = None,
        query=(),
        headers: dict | None = None,
        body: bytes = b"",
        payload_hash: str | None = None,
        creds: Credentials | None = None,
        path: str | None = None,
        **sign_options,
    ) -> requests.Response:
        """A header-signed request; the payload hash defaults to the body's SHA-256."""
        path = path or object_path(bucket, key)
        if payload_hash is None:
            payload_hash = sha256_hex(body)
        signature = self.sign(method, path, query, headers, payload_hash, creds, **sign_options)
        return self.send(method, self.url(path, query), signature.headers, body if body else None)

    def unsigned(
        self,
        method: str,
        bucket: str | None = None,
        key: str | None = None,
        query=(),
        headers: dict | None = None,
        body: bytes = b"",
    ) -> requests.Response:
        path = object_path(bucket, key)
        return self.send(method, self.url(path, query), dict(headers or {}), body if body else None)

    def presigned_url(self, method: str, bucket: str, key: str, expires: int, **options) -> str:
        path = object_path(bucket, key)
        query = presign_query(self.creds, method, self.host, path, expires, **options)
        return self.url(path, query)

    def send_headers_only(self, method: str, path: str, headers: dict, timeout: float = 30) -> bytes:
        """Sends a request head without its body and returns whatever the server answers.

        Used for a declared Content-Length the test never intends to upload.
        """
        host, port = self.address.rsplit(":", 1)
        lines = [f"{method} {path} HTTP/1.1"] + [f"{k}: {v}" for k, v in headers.items()]
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            sock.sendall(head)
            received = b""
            while b"\r\n\r\n" not in received:
                data = sock.recv(65536)
                if not data:
                    return received
                received += data
            head_part, _, body = received.partition(b"\r\n\r\n")
            length = 0
            for line in head_part.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            while len(body) < length:
                data = sock.recv(65536)
                if not data:
                    break
                body += data
            return head_part + b"\r\n\r\n" + body

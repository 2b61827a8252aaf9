"""A request signed for one bucket never acts on another (issue 8, item 1).

With `--domain`, a request signed for `a.<domain>` is replayed with an
absolute-form target naming `b.<domain>` and the original `Host`. SigV4
signs the Host header and SigV2 the bucket derived from it, so a router
that read the target's authority acted on bucket b: it served b's object
and took a write into b. Each case first sends the signed request as it was
meant (it must work, so the refusal below is about the swap alone), then
the swapped one, which must be refused and leave both buckets unchanged.
"""

import pytest

import sigv2
from conftest import make_s3_client, start_server, unique_bucket_name
from sigv4 import Credentials, canonical_query, presign_query, sha256_hex, sign_headers
import wire
from wire import exchange

DOMAIN = "s3.confusion.test"
KINDS = ["sigv4-header", "sigv4-presigned", "sigv2-header", "sigv2-presigned"]


@pytest.fixture(scope="module")
def server(tmp_path_factory, target):
    if not target.managed:
        pytest.skip("starts its own server with --domain (S3_ENDPOINT is set)")
    server = start_server(tmp_path_factory, "host-confusion", extra_args=["--domain", DOMAIN])
    yield server
    server.stop()


@pytest.fixture
def buckets(server):
    """Two buckets of the same owner, each holding `k` with its own content."""
    client = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
    names = unique_bucket_name("a"), unique_bucket_name("b")
    for name in names:
        client.create_bucket(Bucket=name)
        client.put_object(Bucket=name, Key="k", Body=f"content of {name}".encode())
    yield client, names


def signed(server, kind: str, method: str, bucket: str, key: str, body: bytes):
    """The query string and headers of `method /key` signed for `bucket.<domain>`."""
    creds = Credentials(server.access_key, server.secret_key)
    host = f"{bucket}.{DOMAIN}:{server.port}"
    path = f"/{key}"
    length = [("Content-Length", str(len(body)))] if method == "PUT" else []
    if kind == "sigv4-header":
        signature = sign_headers(creds, method, path, [], {"Host": host}, sha256_hex(body))
        return "", list(signature.headers.items()) + length
    if kind == "sigv4-presigned":
        query = presign_query(creds, method, host, path, 300)
        return "?" + canonical_query(query), [("Host", host)] + length
    resource = f"/{bucket}{path}"
    if kind == "sigv2-header":
        return "", [("Host", host)] + list(sigv2.header_auth(creds, method, resource).items()) + length
    return "?" + sigv2.presigned_query(creds, method, resource), [("Host", host)] + length


def send(server, method: str, target_host: str | None, path_and_query: str, headers, body: bytes):
    target = f"http://{target_host}{path_and_query}" if target_host else path_and_query
    return exchange(server.port, f"{method} {target} HTTP/1.1", headers, body)


@pytest.mark.parametrize("kind", KINDS)
def test_a_signed_get_is_not_replayed_against_another_bucket(server, buckets, kind):
    client, (a, b) = buckets
    query, headers = signed(server, kind, "GET", a, "k", b"")
    as_meant = send(server, "GET", None, "/k" + query, headers, b"")
    assert as_meant.status == 200 and as_meant.body == f"content of {a}".encode(), as_meant

    swapped = send(server, "GET", f"{b}.{DOMAIN}:{server.port}", "/k" + query, headers, b"")
    assert swapped.status == 400 and swapped.error_code() == "InvalidRequest", swapped
    assert f"content of {b}".encode() not in swapped.body


@pytest.mark.parametrize("kind", KINDS)
def test_a_signed_put_is_not_replayed_against_another_bucket(server, buckets, kind):
    client, (a, b) = buckets
    body = b"written through a signature for bucket a"
    query, headers = signed(server, kind, "PUT", a, "k", body)
    swapped = send(server, "PUT", f"{b}.{DOMAIN}:{server.port}", "/k" + query, headers, body)
    assert swapped.status == 400 and swapped.error_code() == "InvalidRequest", swapped
    for name in (a, b):
        assert client.get_object(Bucket=name, Key="k")["Body"].read() == f"content of {name}".encode()

    as_meant = send(server, "PUT", None, "/k" + query, headers, body)
    assert as_meant.status == 200, as_meant
    assert client.get_object(Bucket=a, Key="k")["Body"].read() == body
    assert client.get_object(Bucket=b, Key="k")["Body"].read() == f"content of {b}".encode()


def test_a_sigv2_path_style_url_does_not_reach_a_bucket_named_by_an_odd_host(server, buckets):
    """SigV2 signs the bucket it derives from the host; the router once read
    `a.<domain>.` (trailing dot) as bucket a while SigV2 saw no bucket there,
    so a path-style URL for `b/k` reached the key `b/k` of bucket a."""
    client, (a, b) = buckets
    client.put_object(Bucket=a, Key=f"{b}/k", Body=b"a's private object")
    creds = Credentials(server.access_key, server.secret_key)
    query = "?" + sigv2.presigned_query(creds, "GET", f"/{b}/k")
    as_meant = send(server, "GET", None, f"/{b}/k" + query, [("Host", f"127.0.0.1:{server.port}")], b"")
    assert as_meant.status == 200 and as_meant.body == f"content of {b}".encode(), as_meant

    for host in (f"{a}.{DOMAIN}.:{server.port}", f"{a}.{DOMAIN}:{server.port}"):
        odd = send(server, "GET", None, f"/{b}/k" + query, [("Host", host)], b"")
        assert odd.status == 403 and odd.error_code() == "SignatureDoesNotMatch", (host, odd)
        assert b"private" not in odd.body


def test_two_host_headers_are_refused(server, buckets):
    client, (a, b) = buckets
    creds = Credentials(server.access_key, server.secret_key)
    resource = f"/{a}/k"
    headers = [("Host", f"{a}.{DOMAIN}:{server.port}"), ("Host", f"{b}.{DOMAIN}:{server.port}")]
    reply = send(server, "GET", None, "/k", headers + list(sigv2.header_auth(creds, "GET", resource).items()), b"")
    assert reply.status == 400 and reply.error_code() == "InvalidRequest", reply


def test_http2_authority_and_host_must_name_the_same_bucket(server, buckets):
    """HTTP/2 carries the target's host as `:authority`; a `host` header
    beside it naming another bucket is the same swap."""
    client, (a, b) = buckets
    query, headers = signed(server, "sigv4-presigned", "GET", a, "k", b"")
    fields = [
        (":method", "GET"),
        (":scheme", "http"),
        (":path", "/k" + query),
        (":authority", f"{b}.{DOMAIN}:{server.port}"),
        ("host", f"{a}.{DOMAIN}:{server.port}"),
    ]
    with wire.connect(server.port) as sock:
        sock.sendall(wire.h2_start() + wire.h2_frame(
            wire.H2_HEADERS, wire.END_STREAM | wire.END_HEADERS, 1, wire.h2_header_block(fields)))
        _, body = wire.h2_response(sock, 1)
    assert b"<Code>InvalidRequest</Code>" in body, body
    assert f"content of {b}".encode() not in body

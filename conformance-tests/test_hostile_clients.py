"""Clients that misbehave on purpose (issue 8): none may hold the server or
store anything, and a well-behaved client keeps getting answers.

The server gets small limits of its own (a 2 s header and idle deadline, 64
connections, a 256 KiB chunk budget) so each bound shows within seconds;
the assertions allow generous margins and never time a healthy request.
"""

import resource
import socket
import time

import pytest
import requests

from aws_chunked import SIGNED_PAYLOAD, chunk_signature
from conftest import make_s3_client, start_server, unique_bucket_name
from sigv4 import UNSIGNED_PAYLOAD, Credentials, sign_headers
from wire import (
    END_HEADERS,
    END_STREAM,
    H2_HEADERS,
    closed_by_server,
    connect,
    h2_frame,
    h2_header_block,
    h2_response,
    h2_start,
    read_reply,
    request_bytes,
)

IDLE_CONNECTIONS = 1000
LIMITS = [
    "--request-header-timeout", "2s",
    "--idle-timeout", "2s",
    "--body-idle-timeout", "2s",
    "--max-connections", "64",
    "--max-header-count", "50",
    "--max-signed-chunk", "256KiB",
    "--chunk-buffer-budget", "256KiB",
    "--chunk-buffer-wait", "1s",
]
# Twice a deadline above plus the close grace, and then some: a bound that
# only a connection nobody closes can miss.
CLOSED_WITHIN = 20
# Each server started here has its own root key, and on the Ozone back end one
# cluster outlives every server and every run: each needs bucket names of its own.
BUCKET = unique_bucket_name("hostile")
ROOMY_BUCKET = unique_bucket_name("hostile-roomy")
ALL_BUSY_BUCKET = unique_bucket_name("hostile-all-busy")


def raise_fd_limit(wanted: int) -> None:
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"needs {wanted} file descriptors; the hard limit is {hard}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))


@pytest.fixture(scope="module")
def server(tmp_path_factory, target):
    if not target.managed:
        pytest.skip("starts its own server with small limits (S3_ENDPOINT is set)")
    # This process holds the idle connections; the server inherits the limit.
    raise_fd_limit(4 * IDLE_CONNECTIONS)
    server = start_server(tmp_path_factory, "hostile", extra_args=LIMITS)
    client = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
    client.create_bucket(Bucket=BUCKET)
    yield server
    server.stop()


@pytest.fixture
def s3(server):
    return make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))


def assert_responsive(server) -> None:
    response = requests.get(server.endpoint + "/health", timeout=30)
    assert response.status_code == 200, response.text


def assert_not_stored(s3, key: str) -> None:
    keys = [item["Key"] for item in s3.list_objects_v2(Bucket=BUCKET).get("Contents", [])]
    assert key not in keys, keys


def signed_put_head(server, key: str, headers: dict, payload_hash: str, bucket: str = BUCKET) -> tuple[str, dict]:
    creds = Credentials(server.access_key, server.secret_key)
    host = f"127.0.0.1:{server.port}"
    path = f"/{bucket}/{key}"
    signature = sign_headers(creds, "PUT", path, [], {"Host": host, **headers}, payload_hash)
    return path, signature


def test_slowloris_headers_are_cut_off(server):
    with connect(server.port) as sock:
        sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\n")
        started = time.monotonic()
        closed = False
        while time.monotonic() - started < CLOSED_WITHIN:
            try:
                sock.sendall(b"X")  # one byte of a header name, twice a second
            except OSError:
                closed = True
                break
            if closed_by_server(sock, 0.5):
                closed = True
                break
        assert closed, "a header section that never ends kept its connection"
    assert_responsive(server)


def test_an_h2c_preface_alone_is_closed(server):
    with connect(server.port) as sock:
        sock.sendall(h2_start())
        assert closed_by_server(sock, CLOSED_WITHIN), "an HTTP/2 preface with no request kept its connection"
    assert_responsive(server)


def test_a_half_sent_h2c_headers_frame_is_closed(server):
    block = h2_header_block([(":method", "GET"), (":scheme", "http"), (":path", "/health")])
    with connect(server.port) as sock:
        # HEADERS without END_HEADERS: the block promises a CONTINUATION that never comes.
        sock.sendall(h2_start() + h2_frame(H2_HEADERS, END_STREAM, 1, block))
        assert closed_by_server(sock, CLOSED_WITHIN), "an unfinished HEADERS frame kept its connection"
    assert_responsive(server)


def test_an_h2c_connection_idle_after_a_request_is_closed(server):
    block = h2_header_block([(":method", "GET"), (":scheme", "http"), (":path", "/health"), (":authority", "x")])
    with connect(server.port) as sock:
        sock.sendall(h2_start() + h2_frame(H2_HEADERS, END_STREAM | END_HEADERS, 1, block))
        _, body = h2_response(sock, 1)
        assert body == b"ok\n"
        half = h2_header_block([(":method", "GET"), (":scheme", "http")])
        sock.sendall(h2_frame(H2_HEADERS, END_STREAM, 3, half))
        assert closed_by_server(sock, CLOSED_WITHIN), "an idle HTTP/2 connection was kept"


def test_a_stalled_body_is_a_request_timeout_and_stores_nothing(server, s3):
    path, signature = signed_put_head(server, "stalled", {"Content-Length": "1000"}, UNSIGNED_PAYLOAD)
    with connect(server.port) as sock:
        sock.sendall(request_bytes(f"PUT {path} HTTP/1.1", list(signature.headers.items())) + b"x")
        sock.settimeout(CLOSED_WITHIN)
        reply = read_reply(sock)
    assert reply.status == 400 and reply.error_code() == "RequestTimeout", reply
    assert b"not read from or written to within the timeout period" in reply.body
    assert_not_stored(s3, "stalled")
    assert_responsive(server)


def open_idle_connections(port: int, count: int) -> list[socket.socket]:
    """`count` connections that send no complete request: a third nothing, a
    third an HTTP/2 preface, a third half a request head."""
    idle = []
    for i in range(count):
        try:
            sock = socket.create_connection(("127.0.0.1", port), timeout=30)
            if i % 3 == 1:
                sock.sendall(h2_start())
            elif i % 3 == 2:
                sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")
        except OSError:
            continue  # closed at the limit: it holds nothing
        idle.append(sock)
    return idle


def assert_served_while_idle_connections_are_held(server, s3, count: int, bucket: str = BUCKET) -> None:
    s3.put_object(Bucket=bucket, Key="wanted", Body=b"still served")
    idle = open_idle_connections(server.port, count)
    try:
        assert idle, "no connection was accepted at all"
        for _ in range(10):
            # No retries: every request must be answered the first time.
            assert s3.get_object(Bucket=bucket, Key="wanted")["Body"].read() == b"still served"
            assert_responsive(server)
    finally:
        for sock in idle:
            sock.close()


def test_a_thousand_idle_connections_do_not_lock_out_a_well_behaved_client(tmp_path_factory, server):
    """1000 idle connections within a limit of 2048: all are held (until
    their 2 s deadline) and cost the well-behaved client nothing."""
    limits = [value if previous != "--max-connections" else "2048" for previous, value in zip([""] + LIMITS, LIMITS)]
    roomy = start_server(tmp_path_factory, "roomy", extra_args=limits)
    try:
        client = make_s3_client(roomy.endpoint, Credentials(roomy.access_key, roomy.secret_key))
        client.create_bucket(Bucket=ROOMY_BUCKET)
        assert_served_while_idle_connections_are_held(roomy, client, IDLE_CONNECTIONS, ROOMY_BUCKET)
    finally:
        roomy.stop()


def test_idle_connections_beyond_the_limit_make_way_for_a_well_behaved_client(server, s3):
    """150 idle connections against a limit of 64: the longest-idle one is
    closed for each newcomer, which takes its place."""
    assert_served_while_idle_connections_are_held(server, s3, 150)


def test_an_oversized_header_set_gets_an_s3_error(server):
    path, signature = signed_put_head(server, "big-head", {"x-amz-meta-big": "v" * 9000}, UNSIGNED_PAYLOAD)
    with connect(server.port) as sock:
        headers = list(signature.headers.items()) + [("Content-Length", "1")]
        sock.sendall(request_bytes(f"PUT {path} HTTP/1.1", headers, b"x"))
        reply = read_reply(sock)
    assert reply.status == 400 and reply.error_code() == "RequestHeaderSectionTooLarge", reply
    assert b"<MaxSizeAllowed>8192</MaxSizeAllowed>" in reply.body

    many = [("Host", f"127.0.0.1:{server.port}")] + [(f"x-filler-{i}", "v") for i in range(60)]
    with connect(server.port) as sock:
        sock.sendall(request_bytes("GET /health HTTP/1.1", many))
        reply = read_reply(sock)
    assert reply.status == 400 and reply.error_code() == "RequestHeaderSectionTooLarge", reply

    with connect(server.port) as sock:
        sock.sendall(request_bytes(f"GET /{BUCKET}/{'k' * 17000} HTTP/1.1", [("Host", "x")]))
        reply = read_reply(sock)
    assert reply.status == 414 and reply.error_code() == "RequestURITooLong", reply
    assert_responsive(server)


def chunked_put(server, key: str, declared_length: int):
    headers = {
        "Content-Encoding": "aws-chunked",
        "x-amz-decoded-content-length": str(declared_length),
    }
    path, seed = signed_put_head(server, key, headers, SIGNED_PAYLOAD)
    head = list(seed.headers.items()) + [("Transfer-Encoding", "chunked")]
    return path, seed, head


def http_chunk(data: bytes) -> bytes:
    """One HTTP/1.1 transfer chunk (the aws-chunked body rides inside them)."""
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


def test_a_huge_declared_chunk_is_refused_before_it_is_buffered(server, s3):
    path, seed, head = chunked_put(server, "huge-chunk", 1 << 30)
    line = f"{1 << 30:x};chunk-signature={'0' * 64}\r\n".encode()
    with connect(server.port) as sock:
        sock.sendall(request_bytes(f"PUT {path} HTTP/1.1", head) + http_chunk(line + b"x" * 1000))
        sock.settimeout(CLOSED_WITHIN)
        reply = read_reply(sock)
    assert reply.status == 400 and reply.error_code() == "InvalidRequest", reply
    assert_not_stored(s3, "huge-chunk")
    assert_responsive(server)


def test_signed_chunks_beyond_the_buffer_budget_get_slow_down(server, s3):
    """One upload holds the whole 256 KiB budget with a chunk it has not
    finished sending; a second one waits 1 s for room, then gets 503
    SlowDown; the first, finished, is stored."""
    data = b"a" * (256 << 10)
    path, seed, head = chunked_put(server, "holds-the-budget", len(data))
    signature = chunk_signature(seed, seed.signature, data)
    last = chunk_signature(seed, signature, b"")
    first = f"{len(data):x};chunk-signature={signature}\r\n".encode() + data + b"\r\n"
    final = f"0;chunk-signature={last}\r\n\r\n".encode()
    with connect(server.port) as holder:
        holder.sendall(request_bytes(f"PUT {path} HTTP/1.1", head) + http_chunk(first[:1000]))
        sent = 1000

        def trickle():
            """A little more of the holder's chunk, so its body never falls silent
            for the 2 s body timeout while the other upload waits."""
            nonlocal sent
            holder.sendall(http_chunk(first[sent:sent + 100]))
            sent += 100

        # Time for the server to parse the holder's size line and reserve.
        for _ in range(4):
            time.sleep(0.5)
            trickle()
        reply = None
        for _ in range(5):
            other_path, _, other_head = chunked_put(server, "waits-for-room", 1 << 10)
            # The size line alone: its chunk is yet to come, so it needs room.
            other = f"{1 << 10:x};chunk-signature={'0' * 64}\r\n".encode()
            with connect(server.port) as sock:
                sock.sendall(request_bytes(f"PUT {other_path} HTTP/1.1", other_head) + http_chunk(other))
                sock.settimeout(CLOSED_WITHIN)
                reply = read_reply(sock)
            if reply.error_code() == "SlowDown":
                break
            trickle()
        assert reply.status == 503 and reply.error_code() == "SlowDown", reply

        holder.sendall(http_chunk(first[sent:]) + http_chunk(final) + b"0\r\n\r\n")
        holder.settimeout(CLOSED_WITHIN)
        stored = read_reply(holder)
    assert stored.status == 200, stored
    assert s3.get_object(Bucket=BUCKET, Key="holds-the-budget")["Body"].read() == data
    assert_not_stored(s3, "waits-for-room")


def test_health_answers_when_every_connection_is_busy(tmp_path_factory, target):
    """Busy connections are never closed for a newcomer: beyond the limit it
    is answered on the overflow lane, `/health` with 200 and S3 with 503
    SlowDown (which SDKs retry), and the busy requests are unharmed."""
    if not target.managed:
        pytest.skip("starts its own server")
    server = start_server(tmp_path_factory, "all-busy", extra_args=["--max-connections", "2", "--idle-timeout", "1s"])
    try:
        client = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
        client.create_bucket(Bucket=ALL_BUSY_BUCKET)
        time.sleep(2)  # the client's pooled connection is closed as idle: both places are free
        busy = []
        for i in range(2):
            path, signature = signed_put_head(server, f"busy-{i}", {"Content-Length": "2"}, UNSIGNED_PAYLOAD, ALL_BUSY_BUCKET)
            sock = connect(server.port)
            sock.sendall(request_bytes(f"PUT {path} HTTP/1.1", list(signature.headers.items())) + b"a")
            busy.append(sock)
        time.sleep(2)  # both requests are in flight, each waiting for its second byte

        health = requests.get(server.endpoint + "/health", timeout=30)
        assert health.status_code == 200 and health.text == "ok\n", health.text
        refused = requests.get(f"{server.endpoint}/{ALL_BUSY_BUCKET}?list-type=2", timeout=30)
        assert refused.status_code == 503 and "<Code>SlowDown</Code>" in refused.text, refused.text

        for sock in busy:
            sock.sendall(b"b")
            assert read_reply(sock).status == 200
            sock.close()
        assert client.get_object(Bucket=ALL_BUSY_BUCKET, Key="busy-0")["Body"].read() == b"ab"
    finally:
        server.stop()

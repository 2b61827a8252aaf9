"""The operations surface of a real gateway process: /metrics (checked by
promtool), the access log (one line per request on HTTP/1.1, h2c and TLS,
text or JSON, or none), TLS certificate reload on SIGHUP, and the drain on
SIGTERM (/ready fails at once, connections are accepted for drain_delay,
exit 0), including a SIGTERM that comes while storage is still opening."""

import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import time
from pathlib import Path

import pytest
import requests

import ozone_cluster
import wire
from conftest import (BINARY, backend_args, external_endpoint, gateway_binary, make_s3_client, random_key_pair,
                      unique_bucket_name)
from gateway_process import free_port
from sigv4 import Credentials

FIXTURES = Path(__file__).resolve().parent.parent / "gateway" / "tests" / "fixtures"
ACCESS_LINE = re.compile(r"s3_gateway::access")

pytestmark = pytest.mark.skipif(external_endpoint() is not None, reason="starts its own servers")


class Launched:
    """A gateway process with its stderr (the log) in a file."""

    def __init__(self, tmp_path: Path, *args: str, env_extra: dict | None = None, wait: bool = True):
        self.log_path = tmp_path / f"gateway-{time.monotonic_ns()}.log"
        self.access, self.secret = random_key_pair()
        env = dict(os.environ, S3GW_ROOT_ACCESS_KEY=self.access, S3GW_ROOT_SECRET_KEY=self.secret)
        env.update(env_extra or {})
        self.port = free_port()
        binary = BINARY[0] if BINARY else gateway_binary()
        command = [str(binary), "--listen", f"127.0.0.1:{self.port}", "--data-dir", str(tmp_path / "data"), *args]
        if "--backend" not in args:
            command += backend_args()
        if "ozone" in command:
            ozone_cluster.give_s3_secret(self.access, self.secret)
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=log, stdin=subprocess.DEVNULL,
                                            env=env, text=True)
        self.endpoint = None
        if wait:
            line = ""
            while not line.startswith("s3-gateway listening on "):
                line = self.process.stdout.readline()
                assert line, f"the gateway exited before listening:\n{self.log()}"
            self.endpoint = line.split()[-1]

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def wait_for_log(self, pattern: str, timeout: float = 60) -> str:  # a hang guard
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if re.search(pattern, self.log()):
                return self.log()
            time.sleep(0.05)
        raise AssertionError(f"{pattern!r} not logged within {timeout}s:\n{self.log()}")

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        return self.process.wait(timeout=30)

    def close(self):
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()


@pytest.fixture
def launch(tmp_path):
    started = []

    def start(*args, **kwargs) -> Launched:
        directory = tmp_path / f"server{len(started)}"
        directory.mkdir()
        server = Launched(directory, *args, **kwargs)
        started.append(server)
        return server

    yield start
    for server in started:
        server.close()


def metric(text: str, name: str, **labels) -> float:
    """The value of one sample, or 0 when the page has none."""
    wanted = ",".join(f'{key}="{value}"' for key, value in labels.items())
    pattern = rf"^{re.escape(name)}{re.escape('{' + wanted + '}') if wanted else ''} (\S+)$"
    found = re.search(pattern, text, re.MULTILINE)
    return float(found.group(1)) if found else 0.0


# ---- /metrics ----

def test_a_501_is_counted_as_not_implemented_not_as_a_server_error(launch):
    """A client probing for a feature the gateway does not offer (here SSE-KMS)
    must not fire the documented alert on class="5xx"."""
    server = launch()
    client = make_s3_client(server.endpoint, Credentials(server.access, server.secret))
    bucket = unique_bucket_name("metrics501")
    client.create_bucket(Bucket=bucket)
    with pytest.raises(client.exceptions.ClientError) as err:
        client.put_object(Bucket=bucket, Key="k", Body=b"x", ServerSideEncryption="aws:kms")
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 501, err.value.response
    text = requests.get(f"{server.endpoint}/metrics", timeout=10).text
    assert metric(text, "s3gw_requests_total", operation="PutObject", **{"class": "not_implemented"}) == 1, text
    assert metric(text, "s3gw_requests_total", operation="PutObject", **{"class": "5xx"}) == 0, text
    assert 'class="5xx"' not in text, text


def test_metrics_count_what_was_served(launch, tmp_path):
    server = launch()
    client = make_s3_client(server.endpoint, Credentials(server.access, server.secret))
    bucket = unique_bucket_name("metrics")
    client.create_bucket(Bucket=bucket)
    client.put_object(Bucket=bucket, Key="k", Body=b"x" * 1000)
    for _ in range(3):
        assert client.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x" * 1000
    client.head_object(Bucket=bucket, Key="k")
    with pytest.raises(client.exceptions.NoSuchKey):
        client.get_object(Bucket=bucket, Key="missing")
    upload = client.create_multipart_upload(Bucket=bucket, Key="open")["UploadId"]
    done = client.create_multipart_upload(Bucket=bucket, Key="done")["UploadId"]
    client.abort_multipart_upload(Bucket=bucket, Key="done", UploadId=done)

    # A keep-alive connection held open while the page is read.
    with wire.connect(server.port) as held:
        held.sendall(wire.request_bytes("GET /health HTTP/1.1", [("Host", "x")]))
        assert wire.read_reply(held).status == 200
        text = requests.get(f"{server.endpoint}/metrics", timeout=10).text

    assert metric(text, "s3gw_requests_total", operation="GetObject", **{"class": "2xx"}) == 3
    assert metric(text, "s3gw_requests_total", operation="GetObject", **{"class": "4xx"}) == 1
    assert metric(text, "s3gw_requests_total", operation="HeadObject", **{"class": "2xx"}) == 1
    assert metric(text, "s3gw_request_duration_seconds_count", operation="GetObject") == 4
    assert metric(text, "s3gw_request_duration_seconds_bucket", operation="GetObject", le="+Inf") == 4
    assert metric(text, "s3gw_request_duration_seconds_sum", operation="GetObject") > 0
    assert metric(text, "s3gw_received_bytes_total") >= 1000
    assert metric(text, "s3gw_sent_bytes_total") >= 3000
    assert metric(text, "s3gw_connections_open") >= 2, "the held connection and the scrape's"
    assert metric(text, "s3gw_requests_in_flight") == 0
    assert metric(text, "s3gw_multipart_uploads_in_progress") == 1
    assert re.search(r'^s3gw_build_info\{version="[^"]+",commit="(?:[0-9a-f]{12}|unknown)"\} 1$', text, re.MULTILINE), text
    assert metric(text, "s3gw_cache_misses_total", cache="credentials") >= 1
    for family in ("s3gw_backend_call_duration_seconds", "s3gw_backend_call_errors_total"):
        assert f"# TYPE {family} " in text
    if "--backend" in backend_args():
        # On Ozone every request reached the OM: GetKeyInfo was timed.
        assert metric(text, "s3gw_backend_call_duration_seconds_count", service="om", call="GET_KEY_INFO") >= 4
        assert metric(text, "s3gw_backend_call_errors_total", service="om", call="GET_KEY_INFO") == 0
        assert metric(text, "s3gw_backend_call_duration_seconds_count", service="ratis", call="WRITE_CHUNK") >= 1
        # Block reads: GetSmallFile for a small block of one chunk, ReadChunk otherwise.
        reads = sum(metric(text, "s3gw_backend_call_duration_seconds_count", service="dn", call=call)
                    for call in ("READ_CHUNK", "GET_SMALL_FILE"))
        assert reads >= 3

    promtool = shutil.which("promtool") or str(Path(os.environ.get("S3GW_TOOLS", "")) / "bin" / "promtool")
    if not Path(promtool).is_file():
        pytest.skip("promtool is not installed (scripts/install-deploy-tools installs it; helm/tests checks it too)")
    checked = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True, text=True)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    client.abort_multipart_upload(Bucket=bucket, Key="open", UploadId=upload)


# ---- the access log ----

def http1_requests(sock, paths):
    for path in paths:
        sock.sendall(wire.request_bytes(f"GET {path} HTTP/1.1", [("Host", "127.0.0.1")]))
        wire.read_reply(sock)


def h2_requests(sock, paths, scheme):
    sock.sendall(wire.h2_start())
    for number, path in enumerate(paths):
        stream = 2 * number + 1
        fields = [(":method", "GET"), (":scheme", scheme), (":path", path), (":authority", "127.0.0.1")]
        sock.sendall(wire.h2_frame(wire.H2_HEADERS, wire.END_STREAM | wire.END_HEADERS, stream,
                                   wire.h2_header_block(fields)))
        wire.h2_response(sock, stream)


def tls_socket(port: int, alpn: str) -> ssl.SSLSocket:
    context = ssl.create_default_context(cafile=str(FIXTURES / "test-ca.pem"))
    context.set_alpn_protocols([alpn])
    sock = context.wrap_socket(wire.connect(port), server_hostname="localhost")
    assert sock.selected_alpn_protocol() == alpn
    return sock


PATHS = ["/logged-one/", "/logged-two/k", "/logged-three/", "/health"]
S3_REQUESTS = 3


def lines_for(server: Launched, send, wanted: list[str]) -> list[str]:
    """The log lines written while `send` ran (and the connection closed),
    once each of `wanted` is in one."""
    before = len(server.log().splitlines())
    send()
    # A line is written when its response body ends: wait for them (60 s is a
    # hang guard), then a moment more so that a line too many shows.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        written = "\n".join(server.log().splitlines()[before:])
        if all(w in written for w in wanted):
            break
        time.sleep(0.05)
    time.sleep(0.5)
    return server.log().splitlines()[before:]


def test_debug_logs_one_line_per_request_on_every_protocol(launch):
    plain = launch("--log-level", "debug")
    tls = launch("--log-level", "debug", "--tls-cert", str(FIXTURES / "tls-cert.pem"),
                 "--tls-key", str(FIXTURES / "tls-key.pem"))
    cases = {
        "HTTP/1.1": lambda: http1_requests(wire.connect(plain.port), PATHS),
        "h2c": lambda: h2_requests(wire.connect(plain.port), PATHS, "http"),
        "HTTP/1.1 over TLS": lambda: http1_requests(tls_socket(tls.port, "http/1.1"), PATHS),
        "h2 over TLS": lambda: h2_requests(tls_socket(tls.port, "h2"), PATHS, "https"),
    }
    for protocol, send in cases.items():
        server = tls if "TLS" in protocol else plain
        lines = lines_for(server, send, [f'bucket="{b}"' for b in ("logged-one", "logged-two", "logged-three")])
        # Probes are not logged; every other request is, once; the crates
        # below (h2, hyper, rustls) add nothing at the gateway's debug level.
        assert len(lines) == S3_REQUESTS, f"{protocol}: {len(lines)} lines:\n" + "\n".join(lines)
        assert all("request_id=" in line for line in lines), f"{protocol}:\n" + "\n".join(lines)
        for bucket in ("logged-one", "logged-two", "logged-three"):
            assert sum(f'bucket="{bucket}"' in line for line in lines) == 1, f"{protocol}:\n" + "\n".join(lines)


def test_json_access_log_names_everything_about_a_request(launch):
    server = launch("--log-format", "json")
    client = make_s3_client(server.endpoint, Credentials(server.access, server.secret))
    bucket = unique_bucket_name("jsonlog")
    client.create_bucket(Bucket=bucket)
    put = client.put_object(Bucket=bucket, Key="k", Body=b"12345")
    request_id = put["ResponseMetadata"]["RequestId"]
    server.wait_for_log(request_id)
    entries = [json.loads(line) for line in server.log().splitlines() if line.strip()]
    access = [entry for entry in entries if entry.get("target") == "s3_gateway::access"]
    mine = [entry["fields"] for entry in access if entry["fields"]["request_id"] == request_id]
    assert len(mine) == 1, access
    fields = mine[0]
    assert fields["operation"] == "PutObject" and fields["bucket"] == bucket, fields
    assert fields["method"] == "PUT" and fields["status"] == 200, fields
    assert fields["bytes_in"] >= 5 and isinstance(fields["duration_us"], int), fields
    assert fields["access_key"] == server.access and fields["client"] == "127.0.0.1", fields
    # (The first line may be another's: a record this cluster's key did not seal is logged as a WARN.)
    line = next(entry for entry in access if entry["fields"]["request_id"] == request_id)
    assert line["level"] == "INFO" and "timestamp" in line, line
    assert all("level" in entry and "timestamp" in entry for entry in entries), entries
    # Anonymous (and refused) requests name no key.
    anonymous = requests.get(f"{server.endpoint}/{bucket}/k", timeout=10)
    assert anonymous.status_code == 403
    server.wait_for_log(anonymous.headers["x-amz-request-id"])
    entries = [json.loads(line) for line in server.log().splitlines() if line.strip()]
    refused = [entry["fields"] for entry in entries if entry.get("target") == "s3_gateway::access"
               and entry["fields"]["request_id"] == anonymous.headers["x-amz-request-id"]]
    assert [fields["access_key"] for fields in refused] == ["-"], refused


def logged_client(server, headers: dict) -> str:
    """The access log's `client` for one anonymous request sent with `headers`."""
    answer = requests.get(f"{server.endpoint}/no-such-bucket-xff/k", headers=headers, timeout=10)
    request_id = answer.headers["x-amz-request-id"]
    server.wait_for_log(request_id)
    entries = [json.loads(line) for line in server.log().splitlines() if line.strip()]
    return next(entry["fields"]["client"] for entry in entries if entry.get("target") == "s3_gateway::access"
                and entry["fields"]["request_id"] == request_id)


def test_the_client_a_trusted_proxy_forwards_is_logged_and_nobody_elses(launch):
    # This test's requests come from 127.0.0.1: a proxy only where it is trusted.
    trusting = launch("--log-format", "json", "--trusted-proxies", "127.0.0.0/8, ::1")
    forwarded = {"X-Forwarded-For": "198.51.100.1, 203.0.113.9"}
    # The rightmost address the proxy did not add itself; what the client claimed left of it is not believed.
    assert logged_client(trusting, forwarded) == "203.0.113.9"
    assert logged_client(trusting, {"X-Forwarded-For": "198.51.100.1, 203.0.113.9, 127.0.0.5"}) == "203.0.113.9"
    assert logged_client(trusting, {}) == "127.0.0.1"
    # Without the setting, the header is anyone's claim: the peer is logged.
    plain = launch("--log-format", "json")
    assert logged_client(plain, forwarded) == "127.0.0.1"
    # On the back end under test: the suite's environment names settings only that back end reads.
    refused = subprocess.run([str(gateway_binary()), *backend_args(), "--trusted-proxies", "10.0.0.0/33"],
                             capture_output=True,
                             text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert refused.returncode == 2 and "--trusted-proxies" in refused.stderr, refused.stderr


def through_proxy(server, header: bytes, path: str = "/no-such-bucket-proxy/k", extra: str = "") -> bytes:
    """One anonymous HTTP/1.1 request on a new connection that starts with `header`; the answer's bytes."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n{extra}Connection: close\r\n\r\n"
        sock.sendall(header + request.encode())
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:  # closed with the request unread
            pass
        return answer


def logged_client_of(server, answer: bytes) -> str:
    request_id = re.search(rb"x-amz-request-id: (\w+)", answer, re.IGNORECASE).group(1).decode()
    server.wait_for_log(request_id)
    entries = [json.loads(line) for line in server.log().splitlines() if line.strip()]
    return next(entry["fields"]["client"] for entry in entries if entry.get("target") == "s3_gateway::access"
                and entry["fields"]["request_id"] == request_id)


def test_a_trusted_proxys_proxy_protocol_header_names_the_client(launch):
    server = launch("--log-format", "json", "--trusted-proxies", "127.0.0.0/8", "--proxy-protocol", "true")
    v1 = through_proxy(server, b"PROXY TCP4 203.0.113.9 127.0.0.1 51234 9878\r\n")
    assert v1.startswith(b"HTTP/1.1 404") and logged_client_of(server, v1) == "203.0.113.9", v1
    v2 = (b"\r\n\r\n\0\r\nQUIT\n" + bytes([0x21, 0x11, 0, 12]) + bytes([198, 51, 100, 7, 127, 0, 0, 1])
          + (40000).to_bytes(2, "big") + (9878).to_bytes(2, "big"))
    answer = through_proxy(server, v2)
    assert logged_client_of(server, answer) == "198.51.100.7", answer
    # The client the header named is no proxy: its X-Forwarded-For is its own claim.
    claimed = through_proxy(server, b"PROXY TCP4 203.0.113.9 127.0.0.1 51234 9878\r\n",
                            extra="X-Forwarded-For: 192.0.2.1\r\n")
    assert logged_client_of(server, claimed) == "203.0.113.9"
    # The proxy's own health check (v2 LOCAL) is served as the proxy's.
    local = through_proxy(server, b"\r\n\r\n\0\r\nQUIT\n" + bytes([0x20, 0x00, 0, 0]), path="/health")
    assert local.startswith(b"HTTP/1.1 200"), local
    # From a trusted proxy a connection without the header is closed unanswered.
    assert through_proxy(server, b"") == b""
    needs_proxies = subprocess.run([str(gateway_binary()), *backend_args(), "--proxy-protocol", "true"],
                                   capture_output=True,
                                   text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert needs_proxies.returncode == 2 and "trusted_proxies" in needs_proxies.stderr, needs_proxies.stderr


def test_the_access_log_can_be_turned_off(launch):
    server = launch("--access-log", "false")
    requests.get(f"{server.endpoint}/some-bucket", timeout=10)
    time.sleep(0.3)
    assert not ACCESS_LINE.search(server.log()), server.log()
    assert requests.get(f"{server.endpoint}/metrics", timeout=10).text.count("s3gw_requests_total{") == 1


# ---- TLS certificate reload ----

def peer_certificate(port: int) -> bytes:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.check_hostname = False
    context.verify_mode = ssl.CERT_NONE
    with context.wrap_socket(wire.connect(port), server_hostname="localhost") as sock:
        return sock.getpeercert(binary_form=True)


def self_signed(directory: Path) -> tuple[Path, Path]:
    cert, key = directory / "new-cert.pem", directory / "new-key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
                    "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1"], check=True, capture_output=True)
    return cert, key


def der_of(pem: Path) -> bytes:
    return ssl.PEM_cert_to_DER_cert(pem.read_text())


def test_sighup_reloads_the_certificate_without_dropping_connections(launch, tmp_path):
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    shutil.copy(FIXTURES / "tls-cert.pem", cert)
    shutil.copy(FIXTURES / "tls-key.pem", key)
    server = launch("--tls-cert", str(cert), "--tls-key", str(key))
    assert peer_certificate(server.port) == der_of(FIXTURES / "tls-cert.pem")

    kept = tls_socket(server.port, "http/1.1")
    http1_requests(kept, ["/health"])
    new_cert, new_key = self_signed(tmp_path)
    shutil.copy(new_cert, cert)
    shutil.copy(new_key, key)
    server.process.send_signal(signal.SIGHUP)
    server.wait_for_log("TLS certificate reloaded")

    # The open connection goes on with its session; new handshakes get the new certificate.
    kept.sendall(wire.request_bytes("GET /health HTTP/1.1", [("Host", "127.0.0.1")]))
    assert wire.read_reply(kept).status == 200
    assert peer_certificate(server.port) == der_of(new_cert)

    # An unusable file keeps the certificate in use, and says why.
    cert.write_text("not a certificate\n")
    server.process.send_signal(signal.SIGHUP)
    log = server.wait_for_log("TLS certificate not reloaded")
    assert re.search(r"not reloaded.*(certificate file|no certificate)", log), log
    assert peer_certificate(server.port) == der_of(new_cert)
    kept.sendall(wire.request_bytes("GET /health HTTP/1.1", [("Host", "127.0.0.1")]))
    assert wire.read_reply(kept).status == 200
    kept.close()
    assert server.stop() == 0


# ---- drain ----

# Long enough that the checks made during the drain finish inside it however
# loaded the machine is: a hang guard for the test itself, not a claim on speed.
DRAIN_DELAY_SECONDS = 10


def test_sigterm_drains_then_exits_0(launch):
    server = launch("--drain-delay", f"{DRAIN_DELAY_SECONDS}s")
    assert requests.get(f"{server.endpoint}/ready", timeout=10).status_code == 200
    server.process.send_signal(signal.SIGTERM)
    signalled = time.monotonic()
    # /ready fails as soon as the signal is handled; the gateway's claim is
    # that it does so before the drain ends (it then stops listening).
    while requests.get(f"{server.endpoint}/ready", timeout=10).status_code != 503:
        time.sleep(0.02)
    # Still accepting (the balancer has not noticed yet): new connections are served.
    assert requests.get(f"{server.endpoint}/health", timeout=10).status_code == 200
    assert time.monotonic() - signalled < DRAIN_DELAY_SECONDS, "the checks above took the whole delay"
    assert server.process.wait(timeout=DRAIN_DELAY_SECONDS + 30) == 0
    # A lower bound the gateway owns: a loaded machine only makes it longer.
    assert time.monotonic() - signalled >= DRAIN_DELAY_SECONDS, "stopped before drain_delay"
    with pytest.raises(requests.ConnectionError):
        requests.get(f"{server.endpoint}/health", timeout=2)


def test_sigterm_while_storage_opens_stops_cleanly(launch, tmp_path):
    # No Ozone Manager answers this port: opening storage retries for seconds.
    silent = free_port()
    records_key = tmp_path / "records.key"
    records_key.write_text("an-example-records-key-of-32-characters-or-more\n")
    records_key.chmod(0o600)
    server = launch("--backend", "ozone", "--om", f"127.0.0.1:{silent}", "--ozone-connect-timeout", "5s",
                    "--ozone-records-key-file", str(records_key), wait=False)
    time.sleep(1)
    assert server.process.poll() is None, server.log()
    server.process.send_signal(signal.SIGTERM)
    assert server.process.wait(timeout=10) == 0, server.log()
    assert "stopped before serving" in server.log()

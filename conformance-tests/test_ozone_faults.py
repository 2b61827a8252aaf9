"""Ozone roles failing under a running s3-gateway with a short request
timeout: the OM killed and restarted under load, and the datanode paused
with SIGSTOP (a hung process: its sockets stay open and never answer).

Every request is answered within a bound that follows from the timeouts
(an OM call: 6 attempts of 5 s and the pauses between them, about 33 s),
with 503 while the role is away and the right bytes after; none hangs, none
returns wrong bytes. A pause stays under a minute: Ratis shuts an OM or
datanode down when it wakes from a longer one. Runs only when S3GW_OZONE_OM
names the cluster, on a private gateway.
"""

import hashlib
import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests

import ozone_cluster
from conftest import OZONE_OM, payload, start_server, unique_bucket_name
from ozone_cluster import ozone_dev
from raw_client import RawClient, parse_error
from sigv4 import Credentials

if not OZONE_OM:
    pytest.skip("needs a running Ozone cluster (S3GW_OZONE_OM)", allow_module_level=True)
if ozone_cluster.PROFILE != "default":
    # The ha profile's OM ring is tested in test_ozone_om_ha.py, its datanodes in test_ozone_replication.py.
    pytest.skip("stops the only OM and datanode of the default profile", allow_module_level=True)

from test_ozone_datanode_failure import RECOVERY_SECONDS  # noqa: E402

pytestmark = pytest.mark.disrupts_cluster

REQUEST_TIMEOUT_SECONDS = 5
GATEWAY_ARGS = ["--ozone-request-timeout", f"{REQUEST_TIMEOUT_SECONDS}s", "--ozone-connect-timeout", "2s"]
# An OM call is tried 6 times (each bounded by the request timeout) and a
# datanode read tries each replica: a minute covers both with room to spare.
ANSWER_BOUND_SECONDS = 60
OZONE_DEV_DIR = Path(os.environ.get("OZONE_DEV_DIR", Path.home() / ".cache" / "s3gw-ozone"))
# The longest the OM stays away: a paused OM's Ratis server shuts the OM
# down when it wakes after a pause of 60 s or more (its close threshold).
OM_AWAY_SECONDS = 45
SMALL = 100_000
UNREAD = "unread-by-the-load"
MULTI_BLOCK = 2_500_000  # 3 blocks of the dev cluster's 1 MiB


@pytest.fixture
def gateway(tmp_path_factory):
    server = start_server(tmp_path_factory, "ozone-faults", GATEWAY_ARGS)
    client = RawClient(server.endpoint, Credentials(server.access_key, server.secret_key))
    bucket = unique_bucket_name("ozone-faults")
    assert client.request("PUT", bucket).status_code == 200
    try:
        yield server, client, bucket
    finally:
        server.stop()


class Load:
    """Four clients GETting the originals and PUTting new keys in turn (half
    of them starting with a PUT, so both kinds are always in flight),
    recording every answer."""

    def __init__(self, server, bucket: str, originals: dict):
        self.server, self.bucket, self.originals = server, bucket, originals
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.answers = []  # (when, op, status, code, seconds)
        self.wrong = []
        self.stored = {}
        self.threads = [threading.Thread(target=self.run, args=(n,), daemon=True) for n in range(4)]

    def __enter__(self):
        for thread in self.threads:
            thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        for thread in self.threads:
            thread.join(timeout=ANSWER_BOUND_SECONDS * 2)
        assert not any(t.is_alive() for t in self.threads), "a load client hung"

    def run(self, n: int) -> None:
        client = RawClient(self.server.endpoint, Credentials(self.server.access_key, self.server.secret_key))
        i = n % 2
        while not self.stop.is_set():
            i += 1
            if i % 2:
                self.get(client, list(self.originals)[i % 4 // 2])
            else:
                self.put(client, f"load-{n}-{i}")

    def get(self, client: RawClient, key: str) -> None:
        response = self.call("GET", lambda: client.request("GET", self.bucket, key))
        if response is not None and response.status_code == 200 and response.content != self.originals[key]:
            with self.lock:
                self.wrong.append((key, len(response.content)))

    def put(self, client: RawClient, key: str) -> None:
        body = payload(SMALL, key)
        response = self.call("PUT", lambda: client.request("PUT", self.bucket, key, body=body))
        if response is not None and response.status_code == 200:
            with self.lock:
                self.stored[key] = body

    def call(self, op: str, send):
        """Sends one request; a client-side timeout (60 s of silence) is recorded as status 0."""
        began = time.monotonic()
        try:
            response = send()
        except requests.RequestException as err:
            with self.lock:
                self.answers.append((began, op, 0, repr(err), time.monotonic() - began))
            return None
        self.record(op, response, began)
        return response

    def record(self, op: str, response, began: float) -> None:
        code = parse_error(response).code if response.status_code >= 300 else ""
        with self.lock:
            self.answers.append((began, op, response.status_code, code, time.monotonic() - began))

    def since(self, moment: float):
        with self.lock:
            return [a for a in self.answers if a[0] >= moment]

    def wait_for(self, op: str, status: int, after: float, seconds: float) -> bool:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            if any(a[1] == op and a[2] == status for a in self.since(after)):
                return True
            time.sleep(0.5)
        return False


def timed(send):
    began = time.monotonic()
    response = send()
    return response, time.monotonic() - began


def check_answers(load: Load) -> None:
    with load.lock:
        answers = list(load.answers)
    slow = [a for a in answers if a[4] > ANSWER_BOUND_SECONDS]
    assert not slow, f"answers slower than {ANSWER_BOUND_SECONDS}s: {slow[:5]}"
    odd = [a for a in answers if a[2] not in (200, 503) or (a[2] == 503 and a[3] != "ServiceUnavailable")]
    assert not odd, f"answers other than 200 or 503 ServiceUnavailable: {odd[:5]}"
    assert not load.wrong, f"wrong bytes served: {load.wrong[:5]}"


def put_originals(client: RawClient, bucket: str) -> dict:
    originals = {"small": payload(SMALL, "small"), "multi-block": payload(MULTI_BLOCK, "multi-block")}
    for key, body in originals.items():
        assert client.request("PUT", bucket, key, body=body).status_code == 200, key
    return originals


def role_pid(role: str) -> int:
    return int((OZONE_DEV_DIR / "pids" / f"{role}.pid").read_text().strip())


def kill_om():
    ozone_dev("kill", "om", timeout=60)
    return lambda: ozone_dev("start", timeout=400)


def pause_om():
    pid = role_pid("om")
    os.kill(pid, signal.SIGSTOP)
    return lambda: os.kill(pid, signal.SIGCONT)


@pytest.mark.timeout(900)
@pytest.mark.parametrize("outage", [kill_om, pause_om], ids=["killed", "paused"])
def test_om_away_under_load_is_503_in_time_then_served(gateway, outage):
    server, client, bucket = gateway
    originals = put_originals(client, bucket)
    assert client.request("PUT", bucket, UNREAD, body=b"unread").status_code == 200
    with Load(server, bucket, originals) as load:
        assert load.wait_for("PUT", 200, 0, 60), "the load never got going"
        back = outage()
        away_at = time.monotonic()
        try:
            # A GET and a PUT sent now are answered 503, in time. The GET is
            # of a key the load never reads: a GET of one it reads may share
            # a lookup the load began before the outage (concurrent lookups
            # of a key share one OM call), whose answer may still arrive.
            with ThreadPoolExecutor(2) as pool:
                probes = [pool.submit(timed, lambda: client.request("GET", bucket, UNREAD)),
                          pool.submit(timed, lambda: client.request("PUT", bucket, "probe", body=b"x"))]
                answers = [probe.result() for probe in probes]
            for (response, seconds), op in zip(answers, ["GET", "PUT"]):
                assert response.status_code == 503, f"{op} with the OM away: {response.status_code}"
                assert parse_error(response).code == "ServiceUnavailable"
                assert seconds < OM_AWAY_SECONDS, f"{op} with the OM away took {seconds:.1f}s"
            # So is everything the load sent meanwhile.
            outage_answers = [a for a in load.since(away_at + 1) if a[0] + a[4] < time.monotonic()]
            assert all(a[2] == 503 for a in outage_answers), f"answers with the OM away: {outage_answers[:5]}"
        finally:
            back()
        back_at = time.monotonic()
        assert load.wait_for("GET", 200, back_at, RECOVERY_SECONDS), load.since(back_at)[-5:]
        assert load.wait_for("PUT", 200, back_at, RECOVERY_SECONDS), load.since(back_at)[-5:]
    check_answers(load)
    slowest = max(a[4] for a in load.answers)
    print(f"{len(load.answers)} answers, slowest {slowest:.1f}s")
    for key, body in {**originals, **load.stored}.items():
        response = client.request("GET", bucket, key)
        assert response.status_code == 200 and response.content == body, key


@pytest.mark.timeout(900)
def test_datanode_paused_is_bounded_by_the_request_timeout(gateway):
    server, client, bucket = gateway
    originals = put_originals(client, bucket)
    pid = role_pid("dn")
    os.kill(pid, signal.SIGSTOP)
    try:
        # Only the OM is needed to describe an object.
        head = client.request("HEAD", bucket, "small")
        assert head.status_code == 200, head.status_code
        for key in originals:
            began = time.monotonic()
            response = client.request("GET", bucket, key)
            elapsed = time.monotonic() - began
            assert elapsed < ANSWER_BOUND_SECONDS, f"GET {key} with the datanode paused took {elapsed:.1f}s"
            assert response.status_code == 503, f"GET {key}: {response.status_code} {response.text[:300]}"
            assert parse_error(response).code == "ServiceUnavailable"
        began = time.monotonic()
        response = client.request("PUT", bucket, "while-paused", body=payload(SMALL, "paused"))
        elapsed = time.monotonic() - began
        assert elapsed < ANSWER_BOUND_SECONDS, f"PUT with the datanode paused took {elapsed:.1f}s"
        assert response.status_code == 503, f"PUT: {response.status_code} {response.text[:300]}"
        assert client.request("HEAD", bucket, "while-paused").status_code == 404
    finally:
        os.kill(pid, signal.SIGCONT)
    deadline = time.monotonic() + RECOVERY_SECONDS
    for key, body in originals.items():
        while True:
            response = client.request("GET", bucket, key)
            if response.status_code != 503 or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert response.status_code == 200, f"GET {key} after SIGCONT: {response.status_code}"
        assert hashlib.sha256(response.content).digest() == hashlib.sha256(body).digest(), key
    body = payload(SMALL, "after-pause")
    while True:
        response = client.request("PUT", bucket, "after-pause", body=body)
        if response.status_code != 503 or time.monotonic() > deadline:
            break
        time.sleep(1)
    assert response.status_code == 200, response.text[:300]
    assert client.request("GET", bucket, "after-pause").content == body

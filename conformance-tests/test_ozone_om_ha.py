"""The OM ring's leader killed, and separately handed over, under load.

On the ha profile (three OMs in one Ratis ring) one gateway, started with
all three OM addresses, serves a verifying workload and an `s3-bench mixed`
load while the leader OM is killed with SIGKILL (or leadership is moved with
`ozone admin om transfer`). What must hold:

- requests fail only while the ring has no leader: every failure is a 503
  ServiceUnavailable and overlaps a span without a leader, as the OMs' own
  logs record it (on a loaded machine a ring also loses its leader by
  itself now and then), or the event's own span until `ozone admin om
  roles` names the new leader; a span ends at the first write the gateway
  gets acknowledged after the new leader announced itself (a leader may
  take a while to serve after its election, which is Ozone's, not the
  gateway's). How long Ozone takes to elect, or the CLI to say so, is no
  claim of this test: it depends on the machine's load;
- the same gateway process serves on afterwards (no restart);
- no acknowledged write is lost and no wrong bytes are ever served: every
  object acknowledged with 200 reads back identical, every GET of one is
  either those bytes or a 503;
- no retry applies a non-idempotent operation twice: a conditional PUT
  (If-None-Match: *) of body A, retried through 503s, is applied once and a
  later one of body B is refused (412), so the key holds A and the OM's audit
  log shows one successful commit; every multipart upload, its completion
  retried through 503s, is completed once (one successful completion in the
  audit log) and holds exactly its parts.

The OM audit log is read from an OM that stayed up: every OM of the ring
applies, and audits, every write.
"""

import hashlib
import json
import random
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import ozone_cluster
from conftest import OZONE_OM, bench_binary, payload, unique_bucket_name
from raw_client import RawClient, parse_error
from sigv4 import Credentials

if not OZONE_OM or not ozone_cluster.HA:
    pytest.skip("needs the ha or ha-secure profile of the Ozone dev cluster (S3GW_OZONE_PROFILE=ha)", allow_module_level=True)

pytestmark = pytest.mark.disrupts_cluster

MIB = 1024 * 1024
# The load runs this long at least, and on until a request sent after the
# new leader was named is served (run_through): 20 s after the event covers
# an idle machine's election; a slower one extends the load, not the test's luck.
LOAD_SECONDS = 30
EVENT_AFTER_SECONDS = 10
# Hang guards, not timing claims (an election at Ozone's default timeouts
# takes 5-15 s on an idle machine, a JVM CLI poll some more, and a loaded
# machine stretches both): how long a new leader may take to be named, and
# how long a client retries 503s, before the test gives up on a ring that
# never recovers.
NEW_LEADER_HANG_GUARD_SECONDS = 300
RETRY_DEADLINE_SECONDS = 300


class Journal:
    """Every request of the verifying workload: when (wall clock, to compare
    with the OMs' logs), what, and the answer."""

    def __init__(self):
        self.lock = threading.Lock()
        self.entries = []  # (start, end, op, status, code)

    def record(self, op: str, call):
        start = time.time()
        try:
            response = call()
        except Exception as error:  # a transport failure is a failure like any other
            with self.lock:
                self.entries.append((start, time.time(), op, 0, repr(error)))
            raise
        code = ""
        if response.status_code >= 300 and response.content:
            code = parse_error(response).code
        with self.lock:
            self.entries.append((start, time.time(), op, response.status_code, code))
        return response

    def failures(self):
        return [e for e in self.entries if e[3] >= 500 or e[3] == 0]

    def served_since(self, at: float) -> bool:
        with self.lock:
            return any(e[0] > at and e[3] == 200 for e in self.entries)

    def first_write_acknowledged_after(self, at: float) -> float | None:
        """When the first write sent after `at` was acknowledged: the ring
        then had a leader that serves (a GET may be answered from the
        gateway's metadata cache, a write never is)."""
        with self.lock:
            ends = [e[1] for e in self.entries if e[0] >= at and e[3] == 200 and e[2].startswith(("PUT", "POST"))]
        return min(ends, default=None)


class Workload:
    """Writers, readers, a conditional writer and a multipart uploader, each
    retrying on 503 as an S3 client would, with a shared journal."""

    def __init__(self, client: RawClient, bucket: str, stop: threading.Event):
        self.client = client
        self.bucket = bucket
        self.stop = stop
        self.journal = Journal()
        self.acked: dict[str, str] = {}  # key -> sha256 of what a 200 acknowledged
        self.conditional: dict[str, tuple[bytes, bytes]] = {}  # key -> (A, B)
        self.uploads: dict[str, bytes] = {}  # key -> the object its parts make
        self.wrong: list[str] = []
        self.lock = threading.Lock()

    def until_not_503(self, op: str, call):
        deadline = time.monotonic() + RETRY_DEADLINE_SECONDS
        while True:
            response = self.journal.record(op, call)
            if response.status_code != 503 or time.monotonic() > deadline:
                return response
            time.sleep(0.2)

    def writer(self, name: str) -> None:
        rng = random.Random(name)
        n = 0
        while not self.stop.is_set():
            n += 1
            key = f"{name}/{n}"
            body = payload(rng.randrange(1_000, 300_000), key)
            response = self.journal.record("PUT", lambda: self.client.request("PUT", self.bucket, key, body=body))
            if response.status_code == 200:
                with self.lock:
                    self.acked[key] = hashlib.sha256(body).hexdigest()
            elif response.status_code != 503:
                self.wrong.append(f"PUT {key}: {response.status_code} {response.text[:200]}")
            self.read_back_one(rng)

    def read_back_one(self, rng: random.Random) -> None:
        with self.lock:
            if not self.acked:
                return
            key, sha = rng.choice(list(self.acked.items()))
        response = self.journal.record("GET", lambda: self.client.request("GET", self.bucket, key))
        if response.status_code == 200:
            if hashlib.sha256(response.content).hexdigest() != sha:
                self.wrong.append(f"GET {key}: wrong bytes")
        elif response.status_code != 503:
            self.wrong.append(f"GET {key}: {response.status_code} {response.text[:200]}")

    def conditional_writer(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            key = f"once/{n}"
            first, second = payload(50_000, f"{key}/A"), payload(50_000, f"{key}/B")
            self.conditional[key] = (first, second)
            headers = {"If-None-Match": "*"}
            a = self.until_not_503("PUT if-none-match", lambda: self.client.request(
                "PUT", self.bucket, key, body=first, headers=headers))
            # 200, or 412 when an attempt that was answered 503 had been applied.
            if a.status_code not in (200, 412):
                self.wrong.append(f"conditional PUT A {key}: {a.status_code} {a.text[:200]}")
            b = self.until_not_503("PUT if-none-match", lambda: self.client.request(
                "PUT", self.bucket, key, body=second, headers=headers))
            if b.status_code != 412:
                self.wrong.append(f"conditional PUT B {key}: {b.status_code} {b.text[:200]}")

    def multipart_uploader(self) -> None:
        n = 0
        while not self.stop.is_set():
            n += 1
            key = f"multipart/{n}"
            parts = [payload(5 * MIB, f"{key}/1"), payload(100_000, f"{key}/2")]
            started = self.until_not_503("POST uploads", lambda: self.client.request(
                "POST", self.bucket, key, query=[("uploads", "")]))
            if started.status_code != 200:
                self.wrong.append(f"CreateMultipartUpload {key}: {started.status_code}")
                continue
            upload_id = started.text.split("<UploadId>")[1].split("</UploadId>")[0]
            etags = []
            for number, body in enumerate(parts, 1):
                query = [("partNumber", str(number)), ("uploadId", upload_id)]
                part = self.until_not_503("PUT part", lambda: self.client.request(
                    "PUT", self.bucket, key, body=body, query=query))
                if part.status_code != 200:
                    self.wrong.append(f"UploadPart {key} {number}: {part.status_code} {part.text[:200]}")
                    break
                etags.append(part.headers["ETag"])
            else:
                xml = "".join(f"<Part><PartNumber>{i}</PartNumber><ETag>{e}</ETag></Part>"
                              for i, e in enumerate(etags, 1))
                body = f"<CompleteMultipartUpload>{xml}</CompleteMultipartUpload>".encode()
                done = self.until_not_503("POST complete", lambda: self.client.request(
                    "POST", self.bucket, key, body=body, query=[("uploadId", upload_id)]))
                if done.status_code == 200:
                    self.uploads[key] = b"".join(parts)
                else:
                    self.wrong.append(f"CompleteMultipartUpload {key}: {done.status_code} {done.text[:200]}")

    def run(self) -> list[threading.Thread]:
        threads = [threading.Thread(target=self.writer, args=(f"w{i}",)) for i in range(3)]
        threads.append(threading.Thread(target=self.conditional_writer))
        threads.append(threading.Thread(target=self.multipart_uploader))
        for thread in threads:
            thread.start()
        return threads


def s3_bench(server, bucket: str, seconds: int) -> subprocess.Popen:
    bench = bench_binary(server.binary)
    assert bench.exists(), f"{bench} is missing (cargo build --workspace builds it, or set S3GW_BENCH_BIN)"
    env = {"AWS_ACCESS_KEY_ID": server.access_key, "AWS_SECRET_ACCESS_KEY": server.secret_key, "PATH": "/usr/bin:/bin"}
    return subprocess.Popen(
        [str(bench), "mixed", "--endpoint", server.endpoint, "--bucket", bucket, "--concurrency", "4",
         "--objects", "50", "--obj-size", "16KiB", "--duration", f"{seconds}s", "--json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def new_leader_after(old: str, deadline: float) -> tuple[str, float]:
    """Polls the OMs' JMX (`ozone-dev om-leader`) until a leader other than
    `old` is named; that leader and when (wall clock)."""
    while True:
        try:
            leader = ozone_cluster.om_leader()
            if leader != old:
                return leader, time.time()
        except AssertionError:
            pass
        assert time.monotonic() < deadline, f"no new OM leader after {old}"
        time.sleep(1)


@pytest.fixture
def ring():
    """The OM ring; whatever a test does to it, all three OMs run afterwards."""
    yield
    ozone_cluster.start()


def run_through(event, own_server):
    """Runs the workload and s3-bench, calls `event()` after a while; returns
    what happened for the checks."""
    client = RawClient(own_server.endpoint, Credentials(own_server.access_key, own_server.secret_key))
    bucket = unique_bucket_name("om-ha")
    bench_bucket = unique_bucket_name("om-ha-bench")
    assert client.request("PUT", bucket).status_code == 200
    stop = threading.Event()
    workload = Workload(client, bucket, stop)
    pid = own_server.process.pid
    bench = s3_bench(own_server, bench_bucket, LOAD_SECONDS)
    threads = workload.run()
    time.sleep(EVENT_AFTER_SECONDS)
    event_at = time.time()
    old_leader, leader_known_at = event()
    time.sleep(max(0.0, event_at + LOAD_SECONDS - EVENT_AFTER_SECONDS - time.time()))
    # However long the event took, the load runs on until a request sent
    # after the new leader was named succeeded (the check below wants one);
    # the deadline only guards against a hang.
    deadline = time.monotonic() + RETRY_DEADLINE_SECONDS
    while not workload.journal.served_since(leader_known_at) and time.monotonic() < deadline:
        time.sleep(0.5)
    stop.set()
    for thread in threads:
        thread.join(RETRY_DEADLINE_SECONDS + 60)
    bench_out, bench_err = bench.communicate(timeout=RETRY_DEADLINE_SECONDS)
    assert own_server.process.pid == pid and own_server.process.poll() is None, "the gateway restarted"
    return workload, event_at, leader_known_at, old_leader, bench_out, bench_err, bucket


def check(workload: Workload, event_at: float, leader_known_at: float, bench_out: str, bench_err: str,
          bucket: str, audit_role: str):
    journal = workload.journal
    assert workload.wrong == [], workload.wrong
    failures = journal.failures()
    print(f"{len(journal.entries)} requests, {len(failures)} failed with 503 "
          f"({', '.join(sorted({f[2] for f in failures}))})")
    # No claim on how long Ozone took to elect (or the CLI to tell): that
    # is the machine's load, not the gateway. The gateway's claim is that it
    # fails only while there is no leader to serve it.
    leaderless = ozone_cluster.om_leaderless_windows(["om1", "om2", "om3"]) + [(event_at, leader_known_at)]
    # A span ends when the gateway got a write acknowledged that it sent after
    # the new leader announced itself (a new leader serves only once it has
    # applied its log, which takes as long as the machine lets it); with no
    # such write, at the announcement.
    serving = [(opened, journal.first_write_acknowledged_after(closed) or closed) for opened, closed in leaderless]
    for start, end, op, status, code in failures:
        assert (status, code) == (503, "ServiceUnavailable"), f"{op}: {status} {code}"
        assert any(end >= opened and start <= served for opened, served in serving), \
            f"{op} failed {start - event_at:.1f}s after the event, while the ring had a leader serving"
    if failures:
        window = max(f[1] for f in failures) - min(f[0] for f in failures)
        print(f"failures spanned {window:.1f}s")
    # Served on after the event, by the same process.
    assert any(e[0] > leader_known_at and e[3] == 200 for e in journal.entries), "nothing succeeded afterwards"

    # s3-bench: whatever failed, failed with 503.
    results = json.loads(bench_out)["results"]
    assert sum(row["ops"] for row in results if row["op"] == "TOTAL") > 0, bench_out
    errors = [line for line in bench_err.splitlines() if line.startswith("error:") and "counted" not in line]
    for line in errors:
        assert "HTTP 503" in line, line

    client = workload.client

    def read_back(item):
        key, sha = item
        got = client.request("GET", bucket, key)
        assert got.status_code == 200, f"acknowledged {key}: {got.status_code}"
        assert hashlib.sha256(got.content).hexdigest() == sha, f"acknowledged {key}: wrong bytes"

    # Every acknowledged object, four at a time: a few hundred GETs are most
    # of the check's time when read one after another.
    with ThreadPoolExecutor(4) as pool:
        list(pool.map(read_back, workload.acked.items()))
    commits = successes("COMMIT_KEY", audit_role)
    for key, (first, _) in workload.conditional.items():
        got = client.request("GET", bucket, key)
        assert got.status_code == 200 and got.content == first, f"{key} does not hold its first body"
        assert commits.get((bucket, key)) == 1, f"{key}: {commits.get((bucket, key))} commits applied"
    completions = successes("COMPLETE_MULTIPART_UPLOAD", audit_role)
    for key, body in workload.uploads.items():
        assert client.request("GET", bucket, key).content == body, f"{key}: wrong bytes"
        assert completions.get((bucket, key)) == 1, f"{key}: {completions.get((bucket, key))} completions"
    assert workload.conditional and workload.uploads and workload.acked, "the workload did too little to judge"


def successes(op: str, role: str) -> dict[tuple[str, str], int]:
    counts: dict[tuple[str, str], int] = {}
    for params, ret in ozone_cluster.om_audit(op, role=role):
        if ret == "SUCCESS":
            fields = json.loads(params)
            where = (fields.get("bucket"), fields.get("key"))
            counts[where] = counts.get(where, 0) + 1
    return counts


@pytest.mark.timeout(900)
def test_om_leader_killed_under_load(own_server, ring):
    def kill_leader():
        leader = ozone_cluster.om_leader()
        ozone_cluster.kill(leader)
        _, known_at = new_leader_after(leader, time.monotonic() + NEW_LEADER_HANG_GUARD_SECONDS)
        return leader, known_at

    workload, event_at, known_at, killed, out, err, bucket = run_through(kill_leader, own_server)
    print(f"new leader known {known_at - event_at:.1f}s after the kill of {killed}")
    survivor = next(om for om in ("om1", "om2", "om3") if om != killed)
    # The audit log is written asynchronously; give it a moment.
    time.sleep(2)
    check(workload, event_at, known_at, out, err, bucket, survivor)


@pytest.mark.timeout(900)
def test_om_leadership_transferred_under_load(own_server, ring):
    def transfer():
        leader = ozone_cluster.om_leader()
        target = next(om for om in ("om1", "om2", "om3") if om != leader)
        ozone_cluster.transfer_om_leader(target)
        new, known_at = new_leader_after(leader, time.monotonic() + NEW_LEADER_HANG_GUARD_SECONDS)
        assert new == target
        return leader, known_at

    workload, event_at, known_at, old, out, err, bucket = run_through(transfer, own_server)
    print(f"leadership moved from {old} in {known_at - event_at:.1f}s")
    time.sleep(2)
    check(workload, event_at, known_at, out, err, bucket, old)

"""Three s3-gateway replicas on one Ozone cluster behind a real HAProxy.

What a Helm deployment relies on, shown on this machine: any replica reads
what another one wrote (strong read-after-write, no sticky sessions), keys
made through one replica work on all, a deleted key stops working on every
replica within `metadata_cache_ttl` (and an object's first changed ACL in a
bucket holds on every replica within it, later ones at once), and load through the balancer survives
a replica draining on SIGTERM (no failed request) and one killed with
SIGKILL (only requests in flight on it fail, none returns wrong bytes).

HAProxy (Debian's, installed by scripts/install-deploy-tools) checks
`/ready` every 500 ms and retries a request whose connection was refused or
closed before any answer on another replica (`retry-on conn-failure
empty-response`, `option redispatch`); a POST is never replayed. Runs only
when S3GW_OZONE_OM names the cluster.
"""

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import time
import uuid
from pathlib import Path

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import (BINARY, OZONE_OM, backend_args, bench_binary, make_s3_client, random_key_pair,
                      unique_bucket_name)
from gateway_process import GatewayProcess, free_port
from sigv4 import Credentials

if not OZONE_OM:
    pytest.skip("needs a running Ozone cluster (S3GW_OZONE_OM)", allow_module_level=True)
if shutil.which("haproxy") is None:
    pytest.fail("haproxy is missing: scripts/install-deploy-tools installs it", pytrace=False)

REPLICAS = 3
# Short, so the deleted-key bound is tested in seconds; the default is 60 s.
METADATA_CACHE_TTL = 5
CHECK_INTERVAL_MS = 500
BENCH_CONCURRENCY = 32
BENCH_SECONDS = 20
BENCH_OBJECTS = 64
KILLED_OBJECT_SIZE = "256KiB"

HAPROXY_CONFIG = """
global
    log stdout format raw local0 info
    stats socket {socket} mode 600 level admin
    maxconn 2048

defaults
    mode http
    log global
    # backend server status termination-state retries method uri
    log-format "%b %s %ST %tsc %rc %HM %HU"
    timeout connect 2s
    timeout client 60s
    timeout server 60s
    timeout http-keep-alive 10s
    # A request whose connection was refused, or closed before any byte of
    # an answer, goes to another replica; never a POST (not idempotent).
    retries 3
    option redispatch 1
    retry-on conn-failure empty-response junk-response

frontend s3
    bind 127.0.0.1:{port}
    default_backend gateways

backend gateways
    balance roundrobin
    http-request disable-l7-retry if METH_POST
    option httpchk GET /ready
    http-check expect status 200
    # /ready waits up to 2 s for storage before answering 503.
    timeout check 3s
    default-server inter {interval}ms fastinter {interval}ms downinter {interval}ms fall 2 rise 2
{servers}
"""


class HAProxy:
    """HAProxy in the foreground, logging one line per request to a file."""

    def __init__(self, workdir: Path, replicas: list[GatewayProcess]):
        self.workdir = workdir
        self.socket = workdir / "admin.sock"
        self.log_path = workdir / "haproxy.log"
        self.port = free_port()
        servers = "\n".join(f"    server gw{i} 127.0.0.1:{r.port} check" for i, r in enumerate(replicas))
        config = workdir / "haproxy.cfg"
        config.write_text(HAPROXY_CONFIG.format(socket=self.socket, port=self.port, interval=CHECK_INTERVAL_MS,
                                                servers=servers))
        with open(self.log_path, "wb") as log:
            self.process = subprocess.Popen([shutil.which("haproxy"), "-db", "-f", str(config)], stdout=log,
                                            stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def command(self, line: str) -> str:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(5)
            sock.connect(str(self.socket))
            sock.sendall(line.encode() + b"\n")
            answer = b""
            while chunk := sock.recv(65536):
                answer += chunk
        return answer.decode()

    def stat_rows(self) -> list[dict[str, str]]:
        lines = self.command("show stat").splitlines()
        header = lines[0].lstrip("# ").split(",")
        return [dict(zip(header, line.split(","))) for line in lines[1:] if line]

    def stats(self) -> dict[str, dict[str, str]]:
        """`show stat` of the gateways backend, by server (and BACKEND)."""
        return {row["svname"]: row for row in self.stat_rows() if row["pxname"] == "gateways"}

    def wait_until_idle(self, timeout: float = 10) -> None:
        """No stream open on the frontend: every request has ended, and is logged."""
        deadline = time.monotonic() + timeout
        while any(row["scur"] != "0" for row in self.stat_rows() if row["pxname"] == "s3"):
            assert time.monotonic() < deadline, f"requests still open on the balancer after {timeout} s"
            time.sleep(0.1)

    def server_status(self) -> dict[str, str]:
        return {name: row["status"] for name, row in self.stats().items() if name != "BACKEND"}

    def wait_until(self, wanted: dict[str, str], timeout: float = 30) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise AssertionError(f"haproxy exited {self.process.returncode}:\n{self.log_path.read_text()}")
            try:
                status = self.server_status()
            except OSError:
                status = {}
            if all(status.get(name, "").startswith(state) for name, state in wanted.items()):
                return
            time.sleep(0.1)
        raise AssertionError(f"servers not {wanted} within {timeout} s: {status}")

    def move(self, name: str, port: int) -> None:
        """Points a server at a replica restarted on another port."""
        answer = self.command(f"set server gateways/{name} addr 127.0.0.1 port {port}")
        assert "changed" in answer or answer.strip() == "", answer

    def requests_logged(self) -> list[dict]:
        entries = []
        for line in self.log_path.read_text(errors="replace").splitlines():
            fields = line.split(" ", 6)
            if len(fields) == 7 and fields[0] == "gateways":
                entries.append({"server": fields[1], "status": int(fields[2]), "termination": fields[3],
                                "retries": fields[4], "method": fields[5], "uri": fields[6]})
        return entries

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=10)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    """Three replicas (one root key, each its own data dir) and HAProxy in front."""
    workdir = tmp_path_factory.mktemp("load-balancer")
    access_key, secret_key = random_key_pair()
    replicas = []
    haproxy = None
    try:
        for i in range(REPLICAS):
            replica = GatewayProcess(BINARY[0], workdir / f"data{i}", workdir / f"gateway{i}.log", access_key,
                                     secret_key,
                                     extra_args=[*backend_args(), "--metadata-cache-ttl", f"{METADATA_CACHE_TTL}s"])
            replica.start()
            replicas.append(replica)
        haproxy = HAProxy(workdir, replicas)
        haproxy.wait_until({f"gw{i}": "UP" for i in range(REPLICAS)})
        yield {"replicas": replicas, "haproxy": haproxy, "creds": Credentials(access_key, secret_key, "us-east-1")}
    finally:
        if haproxy is not None:
            haproxy.stop()
        for replica in replicas:
            replica.stop()


def client(endpoint: str, creds: Credentials):
    return make_s3_client(endpoint, creds)


def direct_clients(cluster) -> list:
    return [client(r.endpoint, cluster["creds"]) for r in cluster["replicas"]]


def listed(s3, bucket: str, key: str) -> bool:
    return any(o["Key"] == key for o in s3.list_objects_v2(Bucket=bucket, Prefix=key).get("Contents", []))


def test_every_replica_reads_what_another_one_wrote(cluster):
    """PUT through one replica, then GET, HEAD and LIST through each other
    one at once; the same for an overwrite and a delete, and for buckets."""
    clients = direct_clients(cluster)
    for writer_index, writer in enumerate(clients):
        readers = [c for i, c in enumerate(clients) if i != writer_index]
        bucket = unique_bucket_name(f"lb-raw-{writer_index}")
        writer.create_bucket(Bucket=bucket)
        for reader in readers:
            reader.head_bucket(Bucket=bucket)  # a bucket made by one replica is usable through another
        key = f"object-from-{writer_index}"
        for version in range(2):  # the first write, then an overwrite
            body = os.urandom(100_000 + version)
            etag = writer.put_object(Bucket=bucket, Key=key, Body=body)["ETag"]
            for reader in readers:
                assert reader.get_object(Bucket=bucket, Key=key)["Body"].read() == body, "old or wrong bytes"
                head = reader.head_object(Bucket=bucket, Key=key)
                assert (head["ETag"], head["ContentLength"]) == (etag, len(body))
                assert listed(reader, bucket, key)
        writer.delete_object(Bucket=bucket, Key=key)
        for reader in readers:
            with pytest.raises(ClientError) as missing:
                reader.get_object(Bucket=bucket, Key=key)
            assert missing.value.response["Error"]["Code"] == "NoSuchKey"
            assert not listed(reader, bucket, key)
        readers[0].delete_bucket(Bucket=bucket)  # deleted through yet another replica
        for other in (writer, readers[-1]):
            with pytest.raises(ClientError) as gone:
                other.put_object(Bucket=bucket, Key="late", Body=b"x")
            assert gone.value.response["Error"]["Code"] == "NoSuchBucket"


def refused(s3, bucket: str) -> bool:
    try:
        s3.head_bucket(Bucket=bucket)
        return False
    except ClientError as err:
        return err.response["ResponseMetadata"]["HTTPStatusCode"] == 403


def test_keys_reach_every_replica_and_a_deleted_key_stops_within_the_cache_ttl(cluster):
    replicas = cluster["replicas"]
    key = replicas[0].create_key(f"lb-app-{uuid.uuid4().hex[:8]}")  # key names are unique; the cluster outlives runs
    creds = Credentials(key["access_key"], key["secret_key"], "us-east-1")
    through = [client(r.endpoint, creds) for r in replicas] + [client(cluster["haproxy"].endpoint, creds)]
    bucket = unique_bucket_name("lb-keys")
    through[1].create_bucket(Bucket=bucket)
    for i, s3 in enumerate(through):  # every replica now has the key cached
        s3.put_object(Bucket=bucket, Key=f"k{i}", Body=b"hello")
        assert s3.get_object(Bucket=bucket, Key=f"k{i}")["Body"].read() == b"hello"
    for i in range(len(through)):
        through[0].delete_object(Bucket=bucket, Key=f"k{i}")
    through[0].delete_bucket(Bucket=bucket)

    deleted_at = time.monotonic()
    replicas[1].admin("keys", "delete", key["access_key"])
    assert refused(through[1], bucket), "the replica that deleted the key refuses it at once"
    # The others may still hold it in their credentials cache, filled before
    # the deletion: at most metadata_cache_ttl. What is bounded is when a
    # request that was still accepted was sent, not how long it took (that
    # is the machine's load); a second covers the clocks' granularity.
    bound = METADATA_CACHE_TTL + 1
    for index in (0, 2):
        while True:
            sent_at = time.monotonic()
            if refused(through[index], bucket):
                break
            assert sent_at - deleted_at < bound, f"replica {index} accepted a key deleted {bound} s before"
            time.sleep(0.2)
    assert all(refused(s3, bucket) for s3 in through), "refused everywhere, also through the balancer"


def anonymous_status(replica, bucket: str, key: str) -> int:
    return requests.get(f"{replica.endpoint}/{bucket}/{key}", timeout=10).status_code


def test_an_object_acl_changed_through_one_replica_holds_on_every_replica(cluster):
    """Ozone keeps a changed object ACL as a gateway record, looked for only
    in buckets that have one (a marker each replica reads at most once per
    metadata_cache_ttl): the first change in a bucket reaches the others
    within that bound, later ones at once, and none outlives an overwrite."""
    replicas = cluster["replicas"]
    clients = direct_clients(cluster)
    bucket = unique_bucket_name("lb-acl")
    clients[0].create_bucket(Bucket=bucket)
    try:
        for key in ("a", "b"):
            clients[0].put_object(Bucket=bucket, Key=key, Body=b"shared")
        # Every replica has read the bucket as one without records.
        assert [anonymous_status(r, bucket, "a") for r in replicas] == [403] * REPLICAS
        changed_at = time.monotonic()
        clients[0].put_object_acl(Bucket=bucket, Key="a", ACL="public-read")
        assert anonymous_status(replicas[0], bucket, "a") == 200, "the replica that changed it, at once"
        bound = METADATA_CACHE_TTL + 1
        for replica in replicas[1:]:
            while True:
                sent_at = time.monotonic()
                if anonymous_status(replica, bucket, "a") == 200:
                    break
                assert sent_at - changed_at < bound, f"a replica still refused {bound} s after the change"
                time.sleep(0.2)
        # Now every replica knows the bucket has records: changes hold at once.
        clients[1].put_object_acl(Bucket=bucket, Key="a", ACL="private")
        clients[2].put_object_acl(Bucket=bucket, Key="b", ACL="public-read")
        assert [anonymous_status(r, bucket, "a") for r in replicas] == [403] * REPLICAS
        assert [anonymous_status(r, bucket, "b") for r in replicas] == [200] * REPLICAS
        # An overwrite takes the ACL its own request names (none: private).
        clients[1].put_object(Bucket=bucket, Key="b", Body=b"new")
        assert [anonymous_status(r, bucket, "b") for r in replicas] == [403] * REPLICAS
    finally:
        for key in ("a", "b"):
            clients[0].delete_object(Bucket=bucket, Key=key)
        clients[0].delete_bucket(Bucket=bucket)


def bench(cluster, workdir: Path, object_size: str) -> subprocess.Popen:
    creds = cluster["creds"]
    binary = bench_binary(BINARY[0])
    assert binary.is_file(), f"{binary} is missing: cargo build --workspace (or set S3GW_BENCH_BIN)"
    env = dict(os.environ, AWS_ACCESS_KEY_ID=creds.access_key, AWS_SECRET_ACCESS_KEY=creds.secret_key)
    out = open(workdir / "bench.json", "wb")
    err = open(workdir / "bench.err", "wb")
    return subprocess.Popen([str(binary), "mixed", "--endpoint", cluster["haproxy"].endpoint, "--concurrency",
                             str(BENCH_CONCURRENCY), "--duration", f"{BENCH_SECONDS}s", "--objects", str(BENCH_OBJECTS),
                             "--obj-size", object_size, "--verify", "--json"],
                            stdout=out, stderr=err, stdin=subprocess.DEVNULL, env=env)


# Requests of the timed phase answered before a replica is stopped, so that
# every worker is busy when it stops: a count, not a pause, whose worth in
# requests would depend on the machine's load.
TIMED_REQUESTS_BEFORE_STOP = 5 * BENCH_CONCURRENCY


def wait_for_timed_phase(haproxy: HAProxy, before: int) -> None:
    """The objects are prepared (the bucket and one PUT each), and load is on."""
    deadline = time.monotonic() + 120
    while len(haproxy.requests_logged()) < before + 1 + BENCH_OBJECTS + TIMED_REQUESTS_BEFORE_STOP:
        assert time.monotonic() < deadline, "s3-bench did not get going"
        time.sleep(0.1)


def bench_result(process: subprocess.Popen, workdir: Path) -> dict:
    process.wait(timeout=BENCH_SECONDS + 120)
    report = json.loads((workdir / "bench.json").read_text() or "{}")
    assert report, f"s3-bench printed no report:\n{(workdir / 'bench.err').read_text()}"
    return report


def failures(entries: list[dict]) -> list[dict]:
    """Requests the balancer could not complete: no answer or a 5xx from a replica."""
    return [e for e in entries if e["status"] >= 500 or e["status"] < 0 or e["termination"][0] in "SsPR"]


def requests_made(report: dict) -> int:
    return sum(row["ops"] for row in report["results"] if row["op"] != "TOTAL")


def failed_requests(report: dict) -> int:
    return sum(row["errors"] for row in report["results"] if row["op"] != "TOTAL")


def retried(entries: list[dict]) -> int:
    """Requests HAProxy sent again, to another replica (`%rc` is `+N` after a redispatch)."""
    return sum(1 for e in entries if e["retries"] not in ("0", "+0"))


def test_load_survives_a_replica_draining_on_sigterm(cluster, tmp_path):
    haproxy, victim = cluster["haproxy"], cluster["replicas"][1]
    before = len(haproxy.requests_logged())
    load = bench(cluster, tmp_path, "4KiB")
    wait_for_timed_phase(haproxy, before)
    victim.process.send_signal(signal.SIGTERM)
    assert victim.process.wait(timeout=60) == 0, "a draining replica exits 0 once in-flight requests are done"
    haproxy.wait_until({"gw1": "DOWN"})
    report = bench_result(load, tmp_path)
    entries = haproxy.requests_logged()[before:]
    errors = failed_requests(report)
    print(f"SIGTERM: {requests_made(report)} requests, {errors} failed, "
          f"{retried(entries)} retried by HAProxy on another replica")
    assert report["wrong_bytes"] == 0
    assert errors == 0, (f"{errors} requests failed while a replica drained:\n{(tmp_path / 'bench.err').read_text()}"
                         f"\nbalancer: {failures(entries)[:10]}")
    assert not failures(entries)
    victim.start()
    haproxy.move("gw1", victim.port)
    haproxy.wait_until({f"gw{i}": "UP" for i in range(REPLICAS)})


def test_load_loses_only_requests_in_flight_on_a_killed_replica(cluster, tmp_path):
    haproxy, victim = cluster["haproxy"], cluster["replicas"][2]
    before = len(haproxy.requests_logged())
    stats_before = haproxy.stats()
    # Objects large enough that some answers are mid-body at the kill:
    # those cannot be retried, and are the ones that may fail.
    load = bench(cluster, tmp_path, KILLED_OBJECT_SIZE)
    wait_for_timed_phase(haproxy, before)
    victim.kill9()
    haproxy.wait_until({"gw2": "DOWN"})
    victim.start()
    haproxy.move("gw2", victim.port)
    haproxy.wait_until({"gw2": "UP"})
    report = bench_result(load, tmp_path)
    haproxy.wait_until_idle()
    stats_after = haproxy.stats()
    entries = haproxy.requests_logged()[before:]
    # What HAProxy's counters say of each replica: no answer (eresp) or an
    # answer cut short (srv_abrt). On the killed one they are no count of
    # failed requests: eresp also counts a request then retried elsewhere,
    # and a request that was not the first on its client connection and got
    # no answer is closed without a counter or a log line, for the client to
    # retry (http_ana.c, abort_keep_alive), which a PUT streaming its body
    # cannot.
    delta = {name: {f: int(stats_after[name][f] or 0) - int(stats_before[name][f] or 0)
                    for f in ("eresp", "srv_abrt", "stot", "wredis")} for name in ("gw0", "gw1", "gw2")}
    died = {name: delta[name]["eresp"] + delta[name]["srv_abrt"] for name in ("gw0", "gw1")}
    # Requests lost on the killed replica, however HAProxy ended them: those
    # it sent there (stot) and did not move to another replica (wredis), less
    # those the replica answered in full (logged with no termination flag).
    answered = sum(1 for e in entries if e["server"] == "gw2" and e["termination"].startswith("--"))
    lost = {"gw2": delta["gw2"]["stot"] - delta["gw2"]["wredis"] - answered}
    errors = failed_requests(report)
    print(f"SIGKILL: {requests_made(report)} requests, {errors} failed, {lost['gw2']} lost on the killed replica, "
          f"{retried(entries)} retried on another replica")
    assert report["wrong_bytes"] == 0, "no request ever returns bytes other than those written"
    # The live replicas are judged by what HAProxy says died there (above)
    # and by the log's failures (below), not by `lost`: on a loaded machine
    # it came out at 1-2 of ~12,000 requests on a live replica, with this
    # gateway and the build before it alike, while the clients saw no
    # failure beyond the killed replica's. Counters and log do not
    # reconcile exactly there.
    assert died["gw0"] == died["gw1"] == 0, f"requests died on a live replica: {died}"
    assert all(e["server"] == "gw2" for e in failures(entries)), f"failures on a live replica: {failures(entries)[:20]}"
    assert errors <= lost["gw2"], (f"{errors} failed, but only {lost['gw2']} were cut off on the killed replica\n"
                                   f"{(tmp_path / 'bench.err').read_text()}")

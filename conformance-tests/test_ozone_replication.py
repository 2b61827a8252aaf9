"""Replication THREE on the ha profile: a datanode killed in the middle of uploads.

Every key on the ha profile is RATIS/THREE: the gateway writes each block
through a three-datanode Raft group and waits until every member has it
(ALL_COMMITTED), or, when a member does not confirm in time, a majority
(MAJORITY_COMMITTED). Here the leader of a pipeline is killed while uploads
run. Each upload must either complete on the two remaining replicas or fail
cleanly with 503, and the S3 client's retry must then succeed; objects
written before read back intact while the datanode is down (reads go to
another replica); and every object reads back byte-identical both through
this gateway and through Ozone's own S3 gateway. (That each replica holds
every block once a write is acknowledged is checked block by block in
storage-client/tests/ozone_live.rs.)
"""

import threading
import time

import pytest

import ozone_cluster
from conftest import OZONE_OM, payload, unique_bucket_name
from raw_client import RawClient, parse_error
from sigv4 import Credentials

if not OZONE_OM or not ozone_cluster.HA:
    pytest.skip("needs the ha or ha-secure profile of the Ozone dev cluster (S3GW_OZONE_PROFILE=ha)", allow_module_level=True)

pytestmark = pytest.mark.disrupts_cluster

MULTI_BLOCK = 3_500_000  # 4 blocks of the dev cluster's 1 MiB
# An upload may wait out a pipeline leader election and, per pipeline, one
# datanode watch timeout (10 s on the ha profile) before it settles for a majority.
UPLOAD_BOUND_SECONDS = 120
RETRY_DEADLINE_SECONDS = 240


@pytest.fixture
def datanodes():
    """Whatever a test kills, every datanode runs again afterwards."""
    yield
    ozone_cluster.start()


def ozone_s3g(credentials: Credentials) -> RawClient:
    """Ozone's own S3 gateway as the same key: with security on (ha-secure) it checks the
    signature under the key's secret in the OM's store, which the gateway's keys have there."""
    return RawClient(f"http://{ozone_cluster.settings()['OZONE_S3G_ADDRESS']}", credentials)


@pytest.mark.timeout(900)
def test_a_pipeline_leader_killed_mid_upload(own_server, datanodes):
    client = RawClient(own_server.endpoint, Credentials(own_server.access_key, own_server.secret_key))
    bucket = unique_bucket_name("three")
    assert client.request("PUT", bucket).status_code == 200
    before = {f"before-{i}": payload(size, f"before-{i}") for i, size in enumerate((MULTI_BLOCK, 100_000, 1))}
    for key, body in before.items():
        assert client.request("PUT", bucket, key, body=body).status_code == 200, key

    answers: list[tuple[str, int, str, float, float]] = []  # key, status, error code, start, end (monotonic)
    written: dict[str, bytes] = {}
    lock = threading.Lock()
    killed = threading.Event()

    def upload(name: str) -> None:
        # Back to back until the kill and two after it: some upload is under
        # way when the kill lands, however fast the machine uploads.
        n, after_kill = 0, 0
        while after_kill < 2:
            after_kill += killed.is_set()
            key = f"{name}-{n}"
            n += 1
            body = payload(MULTI_BLOCK, key)
            deadline = time.monotonic() + RETRY_DEADLINE_SECONDS
            while True:
                began = time.monotonic()
                response = client.request("PUT", bucket, key, body=body)
                code = parse_error(response).code if response.status_code != 200 else ""
                with lock:
                    answers.append((key, response.status_code, code, began, time.monotonic()))
                if response.status_code != 503 or time.monotonic() > deadline:
                    break
                time.sleep(2)  # as an S3 client backs off
            if response.status_code == 200:
                with lock:
                    written[key] = body

    victim = ozone_cluster.ratis_three_leaders()[0]
    uploaders = [threading.Thread(target=upload, args=(f"during-{i}",)) for i in range(3)]
    for thread in uploaders:
        thread.start()
    time.sleep(1.5)
    ozone_cluster.kill(victim)
    killed_at = time.monotonic()
    killed.set()

    # With one replica gone, reads go to another. (A 503 is retried: on a
    # loaded machine the OM ring may be electing a leader too.)
    for key, body in before.items():
        deadline = time.monotonic() + 60
        while True:
            got = client.request("GET", bucket, key)
            if got.status_code != 503 or time.monotonic() > deadline:
                break
            time.sleep(1)
        assert got.status_code == 200, f"GET {key} with {victim} down: {got.status_code} {got.text[:300]}"
        assert got.content == body, f"GET {key} with {victim} down: wrong bytes"

    for thread in uploaders:
        thread.join()
    print(f"killed {victim}; answers (key, status, code, seconds, after the kill): "
          f"{[(k, s, c, round(e - b, 1), round(e - killed_at, 1)) for k, s, c, b, e in answers]}")
    for key, status, code, began, ended in answers:
        assert (status, code) in ((200, ""), (503, "ServiceUnavailable")), f"PUT {key}: {status} {code}"
        assert ended - began < UPLOAD_BOUND_SECONDS, f"PUT {key} took {ended - began:.0f}s"
    # `kill` returns once the process is gone: an upload that began before
    # and ended after it was cut off mid-way.
    assert any(began < killed_at < ended for _, _, _, began, ended in answers), "no upload was under way at the kill"
    attempted = {key for key, *_ in answers}
    assert set(written) == attempted, f"uploads that never got through: {sorted(attempted - set(written))}"

    s3g = ozone_s3g(Credentials(own_server.access_key, own_server.secret_key))
    for key, body in {**before, **written}.items():
        ours = client.request("GET", bucket, key)
        assert ours.status_code == 200 and ours.content == body, f"GET {key} through s3-gateway"
        theirs = s3g.request("GET", bucket, key)
        assert theirs.status_code == 200, f"GET {key} through Ozone's S3 gateway: {theirs.status_code}"
        assert theirs.content == body, f"GET {key} through Ozone's S3 gateway: wrong bytes"

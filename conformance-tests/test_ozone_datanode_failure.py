"""The Ozone datanode killed and restarted under a running s3-gateway.

With the only datanode gone, every request that needs block data (GET, ranged
GET, PUT) must fail fast with 503 ServiceUnavailable — never wrong
bytes, never a hang — while HEAD and LIST, which only need the OM, still work.
Once `ozone-dev start` has brought the datanode back, the same objects read back
intact and new writes succeed. Runs only when S3GW_OZONE_OM names the cluster,
on a private gateway so a failure here cannot disturb the shared one.
"""

import hashlib
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

import ozone_cluster
from conftest import OZONE_OM, payload, unique_bucket_name
from raw_client import RawClient, parse_error
from sigv4 import Credentials

if not OZONE_OM:
    pytest.skip("needs a running Ozone cluster (S3GW_OZONE_OM)", allow_module_level=True)
if ozone_cluster.PROFILE != "default":
    # With three replicas one datanode down is not an outage: see test_ozone_replication.py.
    pytest.skip("kills the only datanode of the default profile", allow_module_level=True)

# Kills the datanode: runs after every other test (see conftest.py).
pytestmark = pytest.mark.disrupts_cluster

MIB = 1024 * 1024
SMALL = 100_000
MULTI_BLOCK = 3_500_000  # 4 blocks of the dev cluster's 1 MiB
# A request that needs the datanode must be answered within this; a hang fails the test.
UNAVAILABLE_BOUND_SECONDS = 60
# How long the datanode's pipeline may take to serve again once `ozone-dev start` returns.
RECOVERY_SECONDS = 120
UNAVAILABLE_CODES = {"ServiceUnavailable"}


@pytest.fixture
def datanode():
    """Kills the datanode on request; whatever happens, it is running again afterwards."""
    killed = []

    def kill() -> None:
        killed.append(True)
        ozone_cluster.kill("dn")

    def restart() -> None:
        ozone_cluster.ozone_dev("start", timeout=400)
        killed.clear()

    yield kill, restart
    if killed:
        restart()


@pytest.fixture
def gateway(own_server):
    """A raw client on a private gateway, and a bucket in it."""
    client = RawClient(own_server.endpoint, Credentials(own_server.access_key, own_server.secret_key))
    bucket = unique_bucket_name("dn-failure")
    assert client.request("PUT", bucket).status_code == 200
    yield client, bucket
    for key in ("small", "multi-block", "after-small", "after-multi-block"):
        client.request("DELETE", bucket, key)
    client.request("DELETE", bucket)


def timed(call):
    began = time.monotonic()
    response = call()
    return response, time.monotonic() - began


def assert_unavailable(response, elapsed: float, what: str) -> None:
    assert elapsed < UNAVAILABLE_BOUND_SECONDS, f"{what} took {elapsed:.1f}s"
    assert response.status_code == 503, f"{what}: {response.status_code} {response.text[:500]}"
    code = parse_error(response).code
    assert code in UNAVAILABLE_CODES, f"{what}: code {code}"


def get_until_served(client: RawClient, bucket: str, key: str, headers=None):
    """GETs until the answer is not a 503 (the pipeline coming back) or RECOVERY_SECONDS pass."""
    deadline = time.monotonic() + RECOVERY_SECONDS
    while True:
        response = client.request("GET", bucket, key, headers=headers)
        if response.status_code != 503 or time.monotonic() > deadline:
            return response
        time.sleep(2)


def put_until_stored(client: RawClient, bucket: str, key: str, body: bytes):
    deadline = time.monotonic() + RECOVERY_SECONDS
    while True:
        response = client.request("PUT", bucket, key, body=body)
        if response.status_code != 503 or time.monotonic() > deadline:
            return response
        time.sleep(2)


@pytest.mark.timeout(900)
def test_datanode_down_then_back(gateway, datanode):
    client, bucket = gateway
    kill, restart = datanode
    originals = {"small": payload(SMALL, "small"), "multi-block": payload(MULTI_BLOCK, "multi-block")}
    for key, body in originals.items():
        assert client.request("PUT", bucket, key, body=body).status_code == 200, key
    # A range across the first block boundary.
    block_range = {"Range": f"bytes={MIB - 1000}-{MIB + 999}"}

    kill()

    # Only the OM is needed to describe and list objects.
    for key, body in originals.items():
        head, elapsed = timed(lambda: client.request("HEAD", bucket, key))
        assert head.status_code == 200, f"HEAD {key}: {head.status_code}"
        assert int(head.headers["Content-Length"]) == len(body)
        assert head.headers["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    listed = client.request("GET", bucket, query=[("list-type", "2")])
    assert listed.status_code == 200
    for key in originals:
        assert f"<Key>{key}</Key>".encode() in listed.content

    for key in originals:
        response, elapsed = timed(lambda: client.request("GET", bucket, key))
        assert_unavailable(response, elapsed, f"GET {key}")
    response, elapsed = timed(lambda: client.request("GET", bucket, "multi-block", headers=block_range))
    assert_unavailable(response, elapsed, "ranged GET across a block boundary")
    # Both PUTs at once: each waits out the Ratis client's retries (its
    # 40 attempts outlast a pipeline's leader election) before its 503.
    def put(key: str, size: int):
        return timed(lambda: client.request("PUT", bucket, key, body=payload(size, key)))

    sizes = {"after-small": SMALL, "after-multi-block": MULTI_BLOCK}
    with ThreadPoolExecutor(len(sizes)) as pool:
        answers = dict(zip(sizes, pool.map(put, sizes, sizes.values())))
    for key, (response, elapsed) in answers.items():
        assert_unavailable(response, elapsed, f"PUT {key}")
        # A failed write leaves no object behind, so nothing partial can ever be read.
        assert client.request("HEAD", bucket, key).status_code == 404, key

    restart()

    for key, body in originals.items():
        response = get_until_served(client, bucket, key)
        assert response.status_code == 200, f"GET {key} after restart: {response.status_code} {response.text[:300]}"
        assert hashlib.sha256(response.content).hexdigest() == hashlib.sha256(body).hexdigest(), key
    response = get_until_served(client, bucket, "multi-block", headers=block_range)
    assert response.status_code == 206
    assert response.content == originals["multi-block"][MIB - 1000: MIB + 1000]
    for key, size in (("after-small", SMALL), ("after-multi-block", MULTI_BLOCK)):
        body = payload(size, key)
        response = put_until_stored(client, bucket, key, body)
        assert response.status_code == 200, f"PUT {key} after restart: {response.status_code} {response.text[:300]}"
        assert client.request("GET", bucket, key).content == body, key

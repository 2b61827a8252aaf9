"""An OM applies a command and its answer never reaches the gateway.

That is what a crashed OM leader, a leader stepping down, or a broken
connection looks like to a client: the command may or may not have been
carried out. Ozone's gRPC server gives every call a fresh Raft client id, so
its retry cache never recognises a resend; the OM itself refuses a second
commit of the same open key, part or upload, so a resend cannot apply
anything twice, but its refusal ("not found") must not reach the S3 client
as the answer. The gateway answers 503 instead; the S3 client's own retry
then finds the command applied and gets the answer S3 gives a retry.

The gateway reaches every OM through `om_answer_loss.AnswerLossProxy`, which
passes one chosen request on to the OM and loses everything the OM says
after it. Each test checks the S3 answers, the bytes, and in the OM's audit
log that the command was applied exactly once. Runs on any Ozone profile.
"""

import hashlib
import json
import time
import xml.etree.ElementTree as ET

import pytest

import ozone_cluster
from conftest import BINARY, OZONE_OM, STARTED_SERVERS, gateway_binary, payload, random_key_pair, unique_bucket_name
from gateway_process import GatewayProcess
from om_answer_loss import AnswerLossProxy
from raw_client import RawClient, parse_error
from sigv4 import Credentials

if not OZONE_OM:
    pytest.skip("needs a running Ozone cluster (S3GW_OZONE_OM)", allow_module_level=True)

COMMIT_KEY = 36
COMMIT_MULTIPART_UPLOAD = 46
COMPLETE_MULTIPART_UPLOAD = 47
MIB = 1024 * 1024
# Long enough for the OM to apply what it was sent before the connection is cut.
HOLD_SECONDS = 1.5


@pytest.fixture(scope="module")
def proxies():
    proxies = []
    for address in ozone_cluster.om_addresses():
        host, port = address.rsplit(":", 1)
        proxies.append(AnswerLossProxy((host, int(port)), hold=HOLD_SECONDS))
    yield proxies
    for proxy in proxies:
        proxy.close()


@pytest.fixture(scope="module")
def client(proxies, tmp_path_factory):
    """A raw client of a gateway that reaches the OMs only through the proxies."""
    base = tmp_path_factory.mktemp("lost-answer-gateway")
    access, secret = random_key_pair()
    om = ",".join(proxy.address for proxy in proxies)
    binary = BINARY[0] if BINARY else gateway_binary()
    server = GatewayProcess(binary, base / "data", base / "gateway.log", access, secret,
                            ["--backend", "ozone", "--om", om])
    STARTED_SERVERS.append(server)
    server.start()
    try:
        yield RawClient(server.endpoint, Credentials(access, secret))
    finally:
        server.stop()


@pytest.fixture
def bucket(client):
    name = unique_bucket_name("lost-answer")
    assert client.request("PUT", name).status_code == 200
    yield name
    # Best effort: leftover uploads and keys do not disturb other tests.
    listed = client.request("GET", name, query=[("list-type", "2")])
    for key in _keys(listed.content):
        client.request("DELETE", name, key)
    client.request("DELETE", name)


def _keys(listing: bytes) -> list[str]:
    return xml_texts(listing, "Key")


def xml_texts(body: bytes, tag: str) -> list[str]:
    """The text of every `tag` element, whatever its namespace."""
    return [el.text for el in ET.fromstring(body).iter() if el.tag.rsplit("}", 1)[-1] == tag]


def lose_answer_to(proxies, command_type: int) -> None:
    for proxy in proxies:
        proxy.arm(command_type)


def assert_answer_was_lost(proxies) -> None:
    assert any(proxy.lost.is_set() for proxy in proxies), "no proxy saw the armed request"
    for proxy in proxies:
        proxy.armed = None


def assert_unknown_outcome(response, what: str) -> None:
    assert response.status_code == 503, f"{what}: {response.status_code} {response.text[:500]}"
    assert parse_error(response).code == "ServiceUnavailable", what


def applied(op: str, bucket: str, key: str) -> list[dict]:
    """The OM's audit entries of `op` on this key, with their results."""
    entries = []
    for params, ret in ozone_cluster.om_audit(op, role=_an_om_role()):
        fields = json.loads(params)
        if fields.get("bucket") == bucket and fields.get("key") == key:
            entries.append({**fields, "ret": ret})
    return entries


def _an_om_role() -> str:
    return "om1" if ozone_cluster.HA else "om"


def audit_settles(op: str, bucket: str, key: str, want: int) -> list[dict]:
    """The audit entries once `want` of them are there (the log is written
    asynchronously), or whatever is there after a few seconds."""
    deadline = time.monotonic() + 10
    while True:
        entries = applied(op, bucket, key)
        if len(entries) >= want or time.monotonic() > deadline:
            return entries
        time.sleep(0.2)


@pytest.mark.timeout(300)
def test_a_put_whose_commit_answer_is_lost(client, proxies, bucket):
    body = payload(300_000, "lost-commit")
    lose_answer_to(proxies, COMMIT_KEY)
    response = client.request("PUT", bucket, "object", body=body)
    assert_answer_was_lost(proxies)
    assert_unknown_outcome(response, "PUT whose CommitKey answer was lost")
    # The commit was applied: the object is there, whole.
    got = client.request("GET", bucket, "object")
    assert got.status_code == 200
    assert hashlib.sha256(got.content).hexdigest() == hashlib.sha256(body).hexdigest()
    # The S3 client's retry is a new write of the same bytes.
    assert client.request("PUT", bucket, "object", body=body).status_code == 200
    assert client.request("GET", bucket, "object").content == body
    # One CommitKey applied per PUT; the gateway's resend was refused, not applied.
    results = [entry["ret"] for entry in audit_settles("COMMIT_KEY", bucket, "object", 3)]
    assert results.count("SUCCESS") == 2, results
    assert results.count("FAILURE") == 1, results


@pytest.mark.timeout(300)
def test_a_conditional_put_whose_commit_answer_is_lost_is_applied_once(client, proxies, bucket):
    first, second = payload(100_000, "first writer"), payload(100_000, "second writer")
    lose_answer_to(proxies, COMMIT_KEY)
    response = client.request("PUT", bucket, "once", body=first, headers={"If-None-Match": "*"})
    assert_answer_was_lost(proxies)
    assert_unknown_outcome(response, "conditional PUT whose CommitKey answer was lost")
    # The retry finds the key there, as S3 answers a retried conditional write.
    retry = client.request("PUT", bucket, "once", body=first, headers={"If-None-Match": "*"})
    assert retry.status_code == 412, retry.text[:300]
    other = client.request("PUT", bucket, "once", body=second, headers={"If-None-Match": "*"})
    assert other.status_code == 412
    assert client.request("GET", bucket, "once").content == first
    results = [entry["ret"] for entry in audit_settles("COMMIT_KEY", bucket, "once", 1)]
    assert results.count("SUCCESS") == 1, results


def start_upload(client, bucket: str, key: str) -> str:
    response = client.request("POST", bucket, key, query=[("uploads", "")])
    assert response.status_code == 200, response.text[:300]
    return response.text.split("<UploadId>")[1].split("</UploadId>")[0]


def upload_part(client, bucket: str, key: str, upload_id: str, number: int, body: bytes):
    return client.request("PUT", bucket, key, body=body,
                          query=[("partNumber", str(number)), ("uploadId", upload_id)])


def complete(client, bucket: str, key: str, upload_id: str, etags: list[str]):
    parts = "".join(f"<Part><PartNumber>{n}</PartNumber><ETag>{etag}</ETag></Part>"
                    for n, etag in enumerate(etags, 1))
    body = f"<CompleteMultipartUpload>{parts}</CompleteMultipartUpload>".encode()
    return client.request("POST", bucket, key, body=body, query=[("uploadId", upload_id)])


@pytest.mark.timeout(300)
def test_an_upload_part_whose_commit_answer_is_lost(client, proxies, bucket):
    parts = [payload(5 * MIB, "part 1"), payload(MIB, "part 2")]
    upload_id = start_upload(client, bucket, "parts")
    lose_answer_to(proxies, COMMIT_MULTIPART_UPLOAD)
    response = upload_part(client, bucket, "parts", upload_id, 1, parts[0])
    assert_answer_was_lost(proxies)
    assert_unknown_outcome(response, "UploadPart whose CommitMultipartUpload answer was lost")
    etags = []
    for number, body in enumerate(parts, 1):
        retry = upload_part(client, bucket, "parts", upload_id, number, body)
        assert retry.status_code == 200, retry.text[:300]
        etags.append(retry.headers["ETag"])
    done = complete(client, bucket, "parts", upload_id, etags)
    assert done.status_code == 200, done.text[:300]
    assert client.request("GET", bucket, "parts").content == b"".join(parts)


@pytest.mark.timeout(300)
def test_a_completion_whose_answer_is_lost_is_completed_once(client, proxies, bucket):
    parts = [payload(5 * MIB, "part one"), payload(200_000, "part two")]
    upload_id = start_upload(client, bucket, "completed")
    etags = []
    for number, body in enumerate(parts, 1):
        response = upload_part(client, bucket, "completed", upload_id, number, body)
        assert response.status_code == 200
        etags.append(response.headers["ETag"])
    lose_answer_to(proxies, COMPLETE_MULTIPART_UPLOAD)
    response = complete(client, bucket, "completed", upload_id, etags)
    assert_answer_was_lost(proxies)
    assert_unknown_outcome(response, "CompleteMultipartUpload whose answer was lost")
    # The retry is answered with the object the completion made, as S3 does.
    retry = complete(client, bucket, "completed", upload_id, etags)
    assert retry.status_code == 200, retry.text[:300]
    head = client.request("HEAD", bucket, "completed")
    assert xml_texts(retry.content, "ETag") == [head.headers["ETag"]], retry.text
    assert client.request("GET", bucket, "completed").content == b"".join(parts)
    results = [entry["ret"] for entry in audit_settles("COMPLETE_MULTIPART_UPLOAD", bucket, "completed", 2)]
    assert results.count("SUCCESS") == 1, results

"""Identity: objects belong to the key that wrote them, keys switch per request, deleted keys stop at once."""

import uuid
import xml.etree.ElementTree as ET

import pytest
import requests
from botocore.exceptions import ClientError

import ozone_cluster
import sigv2
from conftest import empty_and_delete_bucket, make_s3_client, start_server, unique_bucket_name
from raw_client import RawClient, assert_s3_error, strip_ns
from sigv4 import Credentials, presign_query


def new_key(target, hint: str) -> Credentials:
    key = target.server.create_key(f"ct-{hint}-{uuid.uuid4().hex[:6]}")
    return Credentials(key["access_key"], key["secret_key"], target.creds.region)


@pytest.fixture
def two_users(managed_target):
    """Two fresh keys with a bucket each; buckets are cleaned up by their owners."""
    users = []
    for hint in ("alice", "bob"):
        creds = new_key(managed_target, hint)
        users.append((creds, make_s3_client(managed_target.endpoint, creds), unique_bucket_name(hint)))
    yield users
    for _, client, name in users:
        empty_and_delete_bucket(client, name)


def denied(call, **kwargs) -> str:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    assert err.value.response["ResponseMetadata"]["HTTPStatusCode"] == 403, err.value.response
    return err.value.response["Error"]["Code"]


def test_alternating_boto3_clients_each_own_what_they_write(two_users):
    (_, alice, alice_bucket), (_, bob, bob_bucket) = two_users
    alice.create_bucket(Bucket=alice_bucket)
    bob.create_bucket(Bucket=bob_bucket)
    for i in range(10):
        alice.put_object(Bucket=alice_bucket, Key=f"k{i}", Body=b"alice")
        bob.put_object(Bucket=bob_bucket, Key=f"k{i}", Body=b"bob")
        assert bob.get_object(Bucket=bob_bucket, Key=f"k{i}")["Body"].read() == b"bob"
        assert alice.get_object(Bucket=alice_bucket, Key=f"k{i}")["Body"].read() == b"alice"

    assert denied(bob.get_object, Bucket=alice_bucket, Key="k0") == "AccessDenied"
    assert denied(bob.put_object, Bucket=alice_bucket, Key="intruder", Body=b"x") == "AccessDenied"
    assert denied(bob.list_objects_v2, Bucket=alice_bucket) == "AccessDenied"
    assert denied(bob.delete_object, Bucket=alice_bucket, Key="k0") == "AccessDenied"
    assert denied(bob.delete_bucket, Bucket=alice_bucket) == "AccessDenied"
    denied(bob.head_object, Bucket=alice_bucket, Key="k0")
    assert denied(alice.get_object, Bucket=bob_bucket, Key="k0") == "AccessDenied"

    assert [b["Name"] for b in alice.list_buckets()["Buckets"]] == [alice_bucket]
    assert [b["Name"] for b in bob.list_buckets()["Buckets"]] == [bob_bucket]
    assert sorted(o["Key"] for o in alice.list_objects_v2(Bucket=alice_bucket)["Contents"]) == [
        f"k{i}" for i in range(10)
    ]
    assert alice.get_object(Bucket=alice_bucket, Key="k0")["Body"].read() == b"alice"


def bucket_names_in(response: requests.Response) -> list[str]:
    assert response.status_code == 200, response.text
    root = ET.fromstring(response.content)
    return [
        el.text for el in root.iter() if strip_ns(el.tag) == "Name" and el.text
    ]


def test_one_http_session_signing_alternately(managed_target, two_users):
    """One keep-alive connection, the key changing on every request: nothing may stick to the connection."""
    (alice_creds, alice, alice_bucket), (bob_creds, bob, bob_bucket) = two_users
    alice.create_bucket(Bucket=alice_bucket)
    bob.create_bucket(Bucket=bob_bucket)
    session = requests.Session()
    as_alice = RawClient(managed_target.endpoint, alice_creds)
    as_bob = RawClient(managed_target.endpoint, bob_creds)
    as_alice.session = as_bob.session = session
    for i in range(15):
        assert as_alice.request("PUT", alice_bucket, f"a{i}", body=b"from alice").status_code == 200
        assert_s3_error(as_bob.request("GET", alice_bucket, f"a{i}"), 403, "AccessDenied")
        assert as_bob.request("PUT", bob_bucket, f"b{i}", body=b"from bob").status_code == 200
        assert_s3_error(as_alice.request("GET", bob_bucket, f"b{i}"), 403, "AccessDenied")
        assert_s3_error(as_bob.request("PUT", alice_bucket, f"x{i}", body=b"intruder"), 403, "AccessDenied")
        assert as_alice.request("GET", alice_bucket, f"a{i}").content == b"from alice"
        assert bucket_names_in(as_alice.request("GET")) == [alice_bucket]
        assert bucket_names_in(as_bob.request("GET")) == [bob_bucket]
    keys = [o["Key"] for o in alice.list_objects_v2(Bucket=alice_bucket)["Contents"]]
    assert sorted(keys) == sorted(f"a{i}" for i in range(15))


def test_deleted_key_is_refused_on_its_next_request(managed_target):
    creds = new_key(managed_target, "doomed")
    client = make_s3_client(managed_target.endpoint, creds)
    raw = RawClient(managed_target.endpoint, creds)
    for _ in range(3):  # warm every cache the gateway may keep for this key
        assert client.list_buckets()["ResponseMetadata"]["HTTPStatusCode"] == 200
        assert raw.request("GET").status_code == 200

    managed_target.server.admin("keys", "delete", creds.access_key)

    assert_s3_error(raw.request("GET"), 403, "InvalidAccessKeyId")
    with pytest.raises(ClientError) as err:
        client.list_buckets()
    assert err.value.response["Error"]["Code"] == "InvalidAccessKeyId"
    listing = managed_target.server.admin("keys", "list").stdout
    assert creds.access_key not in listing


def test_admin_keys_list_shows_created_keys_without_secrets(managed_target):
    creds = new_key(managed_target, "listed")
    listing = managed_target.server.admin("keys", "list").stdout
    assert creds.access_key in listing
    assert creds.secret_key not in listing


def test_admin_with_wrong_root_secret_fails(managed_target):
    server = managed_target.server
    result = server.admin("--access-key", server.access_key, "--secret-key", "wrong", "keys", "list", check=False)
    assert result.returncode != 0


def test_a_file_of_new_keys_does_not_hold_the_start(tmp_path_factory, managed_target):
    # Each new key of the file used to wait for the next listing of the
    # unknown-key set (unknown_key_cache_ttl, here 15 minutes) before the
    # gateway listened; start_server's 60 s wait for /health is the guard.
    directory = tmp_path_factory.mktemp("many-keys")
    path = directory / "keys.toml"
    keys = [(f"CTMANYKEYS0000000{i:03d}", f"many-keys-secret-{i:03d}-0123456789abcdefghij") for i in range(4)]
    path.write_text("".join(f'[[keys]]\nname = "many-{i}"\naccess_key = "{access}"\nsecret_key = "{secret}"\n\n'
                            for i, (access, secret) in enumerate(keys)))
    path.chmod(0o600)
    for access, secret in keys:
        ozone_cluster.give_s3_secret(access, secret)
    server = start_server(tmp_path_factory, "many-keys",
                          extra_args=["--credentials", str(path), "--unknown-key-cache-ttl", "15m"])
    try:
        for access, secret in keys:
            client = make_s3_client(server.endpoint, Credentials(access, secret))
            assert client.list_buckets()["Buckets"] == []
    finally:
        server.stop()


def test_credentials_file_keys_are_loaded(tmp_path_factory, managed_target):
    directory = tmp_path_factory.mktemp("credentials")
    path = directory / "keys.toml"
    path.write_text(
        '[[keys]]\nname = "from-file"\naccess_key = "CTFILEKEY00000000001"\n'
        'secret_key = "file-secret-0123456789abcdefghijklmnopqrstu"\n'
    )
    path.chmod(0o600)  # a file others may read is refused
    # A secure Ozone cluster must hold the same secret (the gateway refuses the key otherwise).
    ozone_cluster.give_s3_secret("CTFILEKEY00000000001", "file-secret-0123456789abcdefghijklmnopqrstu")
    server = start_server(tmp_path_factory, "credentials-file", extra_args=["--credentials", str(path)])
    try:
        creds = Credentials("CTFILEKEY00000000001", "file-secret-0123456789abcdefghijklmnopqrstu")
        client = make_s3_client(server.endpoint, creds)
        name = unique_bucket_name("from-file")
        client.create_bucket(Bucket=name)
        client.put_object(Bucket=name, Key="k", Body=b"v")
        assert client.get_object(Bucket=name, Key="k")["Body"].read() == b"v"
        root = make_s3_client(server.endpoint, Credentials(server.access_key, server.secret_key))
        assert name not in [b["Name"] for b in root.list_buckets()["Buckets"]]
    finally:
        server.stop()


def test_the_admin_api_refuses_presigned_urls(managed_target):
    """A root key's presigned URL for the admin API (SigV4 or SigV2) is refused before
    anything happens: a leaked link can neither list keys nor make one (issue 19, 11b)."""
    raw = RawClient(managed_target.endpoint, managed_target.creds)
    path = "/_s3gw/admin/keys"
    name = f"ct-presigned-{uuid.uuid4().hex[:6]}"
    listing = raw.url(path, presign_query(raw.creds, "GET", raw.host, path, 300))
    creating = raw.url(path, presign_query(raw.creds, "POST", raw.host, path, 300, extra_query=[("name", name)]))
    v2_listing = f"{raw.endpoint}{path}?{sigv2.presigned_query(raw.creds, 'GET', path)}"
    for method, url in (("GET", listing), ("POST", creating), ("GET", v2_listing)):
        response = raw.send(method, url, {})
        error = assert_s3_error(response, 403, "AccessDenied")
        assert "presigned" in error.message, error.message
        assert raw.creds.access_key not in response.text
    assert name not in managed_target.server.admin("keys", "list").stdout
    # Signed in its header, the same root key still lists keys.
    assert raw.request("GET", path=path).status_code == 200

"""`s3-gateway admin buckets`: every bucket whoever owns it, a deleted key's
bucket handed to another key, and a bucket deleted with everything in it."""

import json
import uuid

import pytest
from botocore.exceptions import ClientError

from conftest import OZONE_OM, make_s3_client, unique_bucket_name
from raw_client import RawClient, assert_s3_error
from sigv4 import Credentials


def new_key(target, hint: str) -> Credentials:
    key = target.server.create_key(f"ct-{hint}-{uuid.uuid4().hex[:6]}")
    return Credentials(key["access_key"], key["secret_key"], target.creds.region)


def listed(target) -> dict:
    """`admin buckets list --json`, by bucket name."""
    lines = target.server.admin("buckets", "list", "--json").stdout.splitlines()
    return {entry["name"]: entry for entry in map(json.loads, lines)}


def error_code(call, **kwargs) -> str:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    return err.value.response["Error"]["Code"]


@pytest.fixture
def stranded(managed_target):
    """A bucket with objects, an open upload and a public-read ACL, whose
    owner key has been deleted."""
    creds = new_key(managed_target, "leaver")
    client = make_s3_client(managed_target.endpoint, creds)
    bucket = unique_bucket_name("stranded")
    client.create_bucket(Bucket=bucket)
    client.put_object(Bucket=bucket, Key="a.txt", Body=b"12345")
    client.put_object(Bucket=bucket, Key="dir/b.bin", Body=b"x" * 1000)
    client.create_multipart_upload(Bucket=bucket, Key="unfinished")
    client.put_bucket_acl(Bucket=bucket, ACL="public-read")
    managed_target.server.admin("keys", "delete", creds.access_key)
    return bucket, creds


def test_list_shows_every_bucket_with_its_owner_and_contents(managed_target, stranded):
    bucket, leaver = stranded
    entry = listed(managed_target)[bucket]
    assert entry["owner"] == leaver.access_key
    assert entry["owner_name"] is None, "the owner key was deleted"
    assert (entry["objects"], entry["bytes"]) == (2, 1005)
    assert entry["created"] > 0
    table = managed_target.server.admin("buckets", "list").stdout
    assert bucket in table and "(deleted)" in table


def test_a_deleted_keys_bucket_is_handed_to_another_key(managed_target, stranded):
    bucket, leaver = stranded
    heir = new_key(managed_target, "heir")
    heir_client = make_s3_client(managed_target.endpoint, heir)
    assert error_code(heir_client.get_object, Bucket=bucket, Key="a.txt") == "AccessDenied"

    out = managed_target.server.admin("buckets", "set-owner", bucket, heir.access_key).stdout
    assert heir.access_key in out

    assert heir_client.get_object(Bucket=bucket, Key="a.txt")["Body"].read() == b"12345"
    assert bucket in [b["Name"] for b in heir_client.list_buckets()["Buckets"]]
    assert listed(managed_target)[bucket]["owner"] == heir.access_key
    # The old owner's ACL went with it: private to the heir now.
    acl = heir_client.get_bucket_acl(Bucket=bucket)
    assert [g["Permission"] for g in acl["Grants"]] == ["FULL_CONTROL"]
    anonymous = RawClient(managed_target.endpoint, heir)
    assert_s3_error(anonymous.unsigned("GET", bucket), 403, "AccessDenied")

    heir_client.delete_object(Bucket=bucket, Key="a.txt")
    heir_client.delete_object(Bucket=bucket, Key="dir/b.bin")
    for upload in heir_client.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
        heir_client.abort_multipart_upload(Bucket=bucket, Key=upload["Key"], UploadId=upload["UploadId"])
    heir_client.delete_bucket(Bucket=bucket)


def test_set_owner_refuses_an_unknown_key_or_bucket(managed_target, stranded):
    bucket, leaver = stranded
    unknown_key = managed_target.server.admin("buckets", "set-owner", bucket, "AKIANOSUCHKEY0000000", check=False)
    assert unknown_key.returncode == 1
    assert "No key with access key id AKIANOSUCHKEY0000000" in unknown_key.stderr
    assert listed(managed_target)[bucket]["owner"] == leaver.access_key
    missing = managed_target.server.admin(
        "buckets", "set-owner", unique_bucket_name("nobucket"), managed_target.creds.access_key, check=False
    )
    assert missing.returncode == 1 and "NoSuchBucket" in missing.stderr
    managed_target.server.admin("buckets", "delete", "--force", bucket)


def test_delete_refuses_a_bucket_with_objects_unless_forced(managed_target, stranded):
    bucket, _ = stranded
    refused = managed_target.server.admin("buckets", "delete", bucket, check=False)
    assert refused.returncode == 1 and "BucketNotEmpty" in refused.stderr
    assert bucket in listed(managed_target)

    managed_target.server.admin("buckets", "delete", "--force", bucket)

    assert bucket not in listed(managed_target)
    # The name is free again.
    root = make_s3_client(managed_target.endpoint, managed_target.creds)
    root.create_bucket(Bucket=bucket)
    root.delete_bucket(Bucket=bucket)


@pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")
def test_forced_delete_removes_every_version_and_delete_marker(managed_target):
    creds = new_key(managed_target, "versions")
    client = make_s3_client(managed_target.endpoint, creds)
    bucket = unique_bucket_name("versioned")
    client.create_bucket(Bucket=bucket)
    client.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    for body in (b"one", b"two", b"three"):
        client.put_object(Bucket=bucket, Key="k", Body=body)
    client.delete_object(Bucket=bucket, Key="k")
    client.put_object(Bucket=bucket, Key="other", Body=b"0123456789")
    entry = listed(managed_target)[bucket]
    assert (entry["objects"], entry["bytes"]) == (1, 10)
    assert (entry["noncurrent_versions"], entry["noncurrent_bytes"]) == (3, 11)

    managed_target.server.admin("buckets", "delete", "--force", bucket)

    assert error_code(client.head_bucket, Bucket=bucket) in ("404", "NoSuchBucket")


def test_the_bucket_commands_are_for_root_keys_only(managed_target):
    creds = new_key(managed_target, "plain")
    raw = RawClient(managed_target.endpoint, creds)
    assert_s3_error(raw.request("GET", path="/_s3gw/admin/buckets"), 403, "AccessDenied")
    forced = raw.request("DELETE", path="/_s3gw/admin/buckets/anything", query=[("force", "true")])
    assert_s3_error(forced, 403, "AccessDenied")

"""Ozone's own users sign with the S3 secrets Ozone gave them (`ozone s3 getsecret`), with
nothing configured in the gateway: the OM vouches for each request's signature (the gateway
rebuilds the string to sign from the request it serves; aws-chunked chunk signatures are
vouched for one by one) and then acts as that user, as Ozone's own S3 gateway does
(`ozone_user_secrets`, docs/security.md). A revoked secret stops the key at its next request. Runs on the profiles with security on; with security off the
OM checks no signature, so an unknown key stays refused (test_auth_errors.py)."""

import os
import re
import time
import uuid

import pytest
import requests
from botocore.exceptions import ClientError

import ozone_cluster
from aws_chunked import SIGNED_PAYLOAD, SIGNED_PAYLOAD_TRAILER, crc32_base64, signed_body, split
from conftest import OZONE_OM, Credentials, make_s3_client, payload
from raw_client import RawClient, object_path

if not OZONE_OM or not ozone_cluster.SECURE:
    pytest.skip("needs a profile of the Ozone dev cluster with security on (S3GW_OZONE_PROFILE=secure)",
                allow_module_level=True)


def ozone_user_key() -> tuple[str, str]:
    """A new Ozone user's access id and the secret the OM made for it, as its holder gets them."""
    user = f"ozuser-{uuid.uuid4().hex[:10]}"
    out = ozone_cluster.ozone_dev("s3", "getsecret", "-u", user, timeout=120)
    secret = next(line.split("=", 1)[1] for line in out.splitlines() if line.startswith("awsSecret="))
    return user, secret


def client_of(target, access: str, secret: str, checksum_mode: str = "when_supported"):
    return make_s3_client(target.endpoint, Credentials(access, secret, target.creds.region), checksum_mode)


def skip_without_ozones_gateway() -> None:
    if ozone_cluster.TLS:
        pytest.skip("Ozone's own S3 gateway cannot run on the loopback-only TLS profile (ozone/README.md)")


def ozones_gateway_client(target, access: str, secret: str):
    """A client of Ozone's own S3 gateway on the same cluster, signing as `access`."""
    return make_s3_client(os.environ.get("OZONE_S3G_ENDPOINT", "http://127.0.0.1:29878"),
                          Credentials(access, secret, target.creds.region), "when_required")


def error_code(call) -> tuple[str, int]:
    with pytest.raises(ClientError) as caught:
        call()
    return caught.value.response["Error"]["Code"], caught.value.response["ResponseMetadata"]["HTTPStatusCode"]


@pytest.mark.parametrize("checksum_mode", ["when_supported", "when_required"])
def test_an_ozone_users_key_works_through_the_gateway_with_nothing_configured_there(target, checksum_mode):
    user, secret = ozone_user_key()
    s3 = client_of(target, user, secret, checksum_mode)
    bucket = f"ozuser-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    body = payload(300_000, user)
    s3.put_object(Bucket=bucket, Key="dir/object", Body=body, Metadata={"who": "ozone-user"})
    got = s3.get_object(Bucket=bucket, Key="dir/object")
    assert got["Body"].read() == body
    assert got["Metadata"] == {"who": "ozone-user"}
    listed = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in listed["CommonPrefixes"]] == ["dir/"]
    assert bucket in [b["Name"] for b in s3.list_buckets()["Buckets"]]
    # A presigned URL of the same key is vouched for the same way.
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "dir/object"}, ExpiresIn=300)
    assert requests.get(url, timeout=30).content == body
    # The OM acted as the user: the bucket it made is the user's.
    creations = [params for params, ret in ozone_cluster.om_audit("CREATE_BUCKET")
                 if f'"bucket":"{bucket}"' in params and ret == "SUCCESS"]
    assert len(creations) == 1 and f'"owner":"{user}"' in creations[0], creations
    s3.delete_object(Bucket=bucket, Key="dir/object")
    s3.delete_bucket(Bucket=bucket)


def test_a_wrong_secret_or_an_unknown_key_is_refused(target):
    user, secret = ozone_user_key()
    wrong = client_of(target, user, secret[:-1] + ("0" if secret[-1] != "0" else "1"))
    assert error_code(wrong.list_buckets) == ("InvalidAccessKeyId", 403)
    unknown = client_of(target, f"nobody-{uuid.uuid4().hex[:8]}", secret)
    assert error_code(unknown.list_buckets) == ("InvalidAccessKeyId", 403)
    # The gateway's own system identity is no key a client signs as.
    assert error_code(client_of(target, ".s3gw", secret).list_buckets) == ("InvalidAccessKeyId", 403)


def test_a_revoked_secret_stops_the_key_at_its_next_request(target):
    user, secret = ozone_user_key()
    s3 = client_of(target, user, secret)
    s3.list_buckets()
    ozone_cluster.ozone_dev("s3", "revokesecret", "-u", user, "-y", timeout=120)
    deadline = time.monotonic() + 30
    while True:
        try:
            s3.list_buckets()
        except ClientError as e:
            assert e.response["Error"]["Code"] == "InvalidAccessKeyId"
            break
        # The OM answers from its replicated secret table; allow its apply to land.
        assert time.monotonic() < deadline, "the revoked key still works"
        time.sleep(1)


@pytest.mark.parametrize("trailer", [False, True], ids=["signed-chunks", "signed-chunks-and-trailer"])
def test_every_chunk_signature_is_vouched_for_by_the_om(target, trailer):
    """The gateway has no secret to check chunk signatures with: each one (the final chunk's
    and the trailer's too) goes to the OM before its chunk is released, so a changed chunk
    fails the upload and stores nothing."""
    user, secret = ozone_user_key()
    s3 = client_of(target, user, secret)
    bucket = f"ozuser-{uuid.uuid4().hex[:12]}"
    s3.create_bucket(Bucket=bucket)
    raw = RawClient(target.endpoint, Credentials(user, secret, target.creds.region))
    body = payload(3 * 65536 + 1234, user)
    trailers = {"x-amz-checksum-crc32": crc32_base64(body)} if trailer else None

    def put(key: str, **tamper):
        path = object_path(bucket, key)
        headers = {"Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(len(body))}
        if trailer:
            headers["x-amz-trailer"] = "x-amz-checksum-crc32"
        seed = raw.sign("PUT", path, headers=headers,
                        payload_hash=SIGNED_PAYLOAD_TRAILER if trailer else SIGNED_PAYLOAD)
        return raw.send("PUT", raw.url(path), seed.headers, signed_body(seed, split(body, 65536), trailers, **tamper))

    try:
        response = put("chunked")
        assert response.status_code == 200, response.text
        assert s3.get_object(Bucket=bucket, Key="chunked")["Body"].read() == body
        tampers = [{"tamper_chunk": 1}, {"tamper_chunk": 3}]  # a data chunk; the final empty one
        if trailer:
            tampers.append({"tamper_trailer_signature": True})
        for tamper in tampers:
            response = put("tampered", **tamper)
            assert response.status_code == 403, (tamper, response.text)
            assert "<Code>SignatureDoesNotMatch</Code>" in response.text, tamper
            assert error_code(lambda: s3.head_object(Bucket=bucket, Key="tampered"))[1] == 404
    finally:
        s3.delete_object(Bucket=bucket, Key="chunked")
        s3.delete_bucket(Bucket=bucket)


def test_an_ozone_users_objects_are_the_same_through_ozones_own_gateway_both_ways(target):
    skip_without_ozones_gateway()
    user, secret = ozone_user_key()
    ours = client_of(target, user, secret)
    s3g = ozones_gateway_client(target, user, secret)
    bucket = f"ozuser-{uuid.uuid4().hex[:12]}"
    ours.create_bucket(Bucket=bucket)
    try:
        written_here = payload(200_000, "here")
        ours.put_object(Bucket=bucket, Key="here", Body=written_here, Metadata={"side": "s3gw"})
        assert s3g.get_object(Bucket=bucket, Key="here")["Body"].read() == written_here
        # Ozone's S3G 2.2 sends x-amz-meta-* on HEAD only, with what s3-gateway keeps there too.
        theirs = s3g.head_object(Bucket=bucket, Key="here")
        assert theirs["Metadata"].get("side") == "s3gw"
        assert theirs["ETag"] == ours.head_object(Bucket=bucket, Key="here")["ETag"]
        written_there = payload(150_000, "there")
        s3g.put_object(Bucket=bucket, Key="there", Body=written_there, Metadata={"side": "s3g"})
        mine = ours.get_object(Bucket=bucket, Key="there")
        assert mine["Body"].read() == written_there
        assert mine["Metadata"] == {"side": "s3g"}
        assert mine["ETag"] == s3g.head_object(Bucket=bucket, Key="there")["ETag"]
    finally:
        for key in ("here", "there"):
            ours.delete_object(Bucket=bucket, Key=key)
        ours.delete_bucket(Bucket=bucket)


def tenant_user_key(tenant: str) -> tuple[str, str]:
    """A new user of `tenant` (made if need be) and the access id and secret Ozone gives it."""
    user = f"tu{uuid.uuid4().hex[:8]}"
    out = ozone_cluster.ozone_dev("tenant", "user", "assign", user, f"--tenant={tenant}", timeout=120)
    access = re.search(r"AWS_ACCESS_KEY_ID='([^']+)'", out).group(1)
    secret = re.search(r"AWS_SECRET_ACCESS_KEY='([^']+)'", out).group(1)
    assert access == f"{tenant}${user}"
    return access, secret


@pytest.fixture(scope="module")
def two_tenants():
    tenants = [f"t{uuid.uuid4().hex[:8]}" for _ in range(2)]
    for tenant in tenants:
        ozone_cluster.ozone_dev("tenant", "create", tenant, timeout=120)
    return tenants


def test_each_tenant_has_its_own_buckets_and_sees_no_other(target, two_tenants):
    """Ozone's S3 multi-tenancy: a tenant's access id (`tenant$user`) names the buckets of the
    tenant's volume, as Ozone's S3G serves them. Two tenants may each own a bucket of one name;
    neither sees the other's, nor does a key outside any tenant see theirs."""
    clients = [client_of(target, *tenant_user_key(tenant)) for tenant in two_tenants]
    shared_user = client_of(target, *ozone_user_key())
    bucket = f"tb-{uuid.uuid4().hex[:10]}"
    bodies = [payload(70_000 + i, f"tenant {i}") for i in range(2)]
    for s3, body in zip(clients, bodies):
        s3.create_bucket(Bucket=bucket)
        s3.put_object(Bucket=bucket, Key="dir/k", Body=body, Metadata={"side": "s3gw"})
    try:
        for s3, body in zip(clients, bodies):
            assert s3.get_object(Bucket=bucket, Key="dir/k")["Body"].read() == body
            assert [b["Name"] for b in s3.list_buckets()["Buckets"]].count(bucket) == 1
            listed = s3.list_objects_v2(Bucket=bucket)["Contents"]
            assert [(o["Key"], o["Size"]) for o in listed] == [("dir/k", len(body))]
        # The shared namespace has no such bucket, and lists none of theirs.
        assert error_code(lambda: shared_user.head_object(Bucket=bucket, Key="dir/k"))[1] == 404
        assert bucket not in [b["Name"] for b in shared_user.list_buckets()["Buckets"]]
        # Bucket configuration is each tenant's own: a policy in one is not the other's.
        first, second = clients
        policy = ('{"Version":"2012-10-17","Statement":[{"Effect":"Deny","Principal":"*",'
                  f'"Action":"s3:GetObject","Resource":"arn:aws:s3:::{bucket}/private/*"}}]}}')
        first.put_bucket_policy(Bucket=bucket, Policy=policy)
        assert first.get_bucket_policy(Bucket=bucket)["Policy"] == policy
        assert error_code(lambda: second.get_bucket_policy(Bucket=bucket)) == ("NoSuchBucketPolicy", 404)
        second.put_object(Bucket=bucket, Key="private/x", Body=b"second's")
        assert second.get_object(Bucket=bucket, Key="private/x")["Body"].read() == b"second's"
        # An object's changed ACL is the tenant's object's alone (a record per bucket path).
        first.put_object_acl(Bucket=bucket, Key="dir/k", ACL="public-read")
        grantees = [g["Grantee"].get("URI") for g in first.get_object_acl(Bucket=bucket, Key="dir/k")["Grants"]]
        assert "http://acs.amazonaws.com/groups/global/AllUsers" in grantees
        grantees = [g["Grantee"].get("URI") for g in second.get_object_acl(Bucket=bucket, Key="dir/k")["Grants"]]
        assert "http://acs.amazonaws.com/groups/global/AllUsers" not in grantees
        # A lifecycle rule the gateway would never run is refused, not stored.
        rules = {"Rules": [{"ID": "r", "Status": "Enabled", "Filter": {"Prefix": ""},
                            "Expiration": {"Days": 1}}]}
        assert error_code(lambda: first.put_bucket_lifecycle_configuration(
            Bucket=bucket, LifecycleConfiguration=rules)) == ("NotImplemented", 501)
    finally:
        for s3 in clients:
            for key in ("dir/k", "private/x"):
                s3.delete_object(Bucket=bucket, Key=key)
            s3.delete_bucket(Bucket=bucket)


def test_a_tenants_multipart_upload_lives_in_its_volume(target, two_tenants):
    s3 = client_of(target, *tenant_user_key(two_tenants[0]))
    other = client_of(target, *tenant_user_key(two_tenants[1]))
    bucket = f"tmp-{uuid.uuid4().hex[:10]}"
    s3.create_bucket(Bucket=bucket)
    try:
        upload = s3.create_multipart_upload(Bucket=bucket, Key="big")["UploadId"]
        parts = [payload(5 * 1024 * 1024, "p1"), payload(1000, "p2")]
        etags = [s3.upload_part(Bucket=bucket, Key="big", UploadId=upload, PartNumber=n + 1,
                                Body=body)["ETag"] for n, body in enumerate(parts)]
        listed = s3.list_parts(Bucket=bucket, Key="big", UploadId=upload)["Parts"]
        assert [(p["PartNumber"], p["Size"]) for p in listed] == [(1, len(parts[0])), (2, len(parts[1]))]
        uploads = s3.list_multipart_uploads(Bucket=bucket)["Uploads"]
        assert [u["UploadId"] for u in uploads] == [upload]
        # Another tenant names no such bucket, let alone the upload.
        assert error_code(lambda: other.list_parts(Bucket=bucket, Key="big", UploadId=upload))[1] == 404
        s3.complete_multipart_upload(
            Bucket=bucket, Key="big", UploadId=upload,
            MultipartUpload={"Parts": [{"PartNumber": n + 1, "ETag": e} for n, e in enumerate(etags)]})
        assert s3.get_object(Bucket=bucket, Key="big")["Body"].read() == b"".join(parts)
    finally:
        for u in s3.list_multipart_uploads(Bucket=bucket).get("Uploads", []):
            s3.abort_multipart_upload(Bucket=bucket, Key=u["Key"], UploadId=u["UploadId"])
        s3.delete_object(Bucket=bucket, Key="big")
        s3.delete_bucket(Bucket=bucket)


def test_a_tenants_objects_are_the_same_through_ozones_own_gateway_both_ways(target, two_tenants):
    skip_without_ozones_gateway()
    access, secret = tenant_user_key(two_tenants[0])
    ours = client_of(target, access, secret)
    s3g = ozones_gateway_client(target, access, secret)
    bucket = f"tg-{uuid.uuid4().hex[:10]}"
    ours.create_bucket(Bucket=bucket)
    try:
        assert bucket in [b["Name"] for b in s3g.list_buckets()["Buckets"]]
        written_here = payload(120_000, "here")
        ours.put_object(Bucket=bucket, Key="here", Body=written_here)
        assert s3g.get_object(Bucket=bucket, Key="here")["Body"].read() == written_here
        written_there = payload(90_000, "there")
        s3g.put_object(Bucket=bucket, Key="there", Body=written_there)
        mine = ours.get_object(Bucket=bucket, Key="there")
        assert mine["Body"].read() == written_there
        assert mine["ETag"] == s3g.head_object(Bucket=bucket, Key="there")["ETag"]
    finally:
        for key in ("here", "there"):
            ours.delete_object(Bucket=bucket, Key=key)
        ours.delete_bucket(Bucket=bucket)


def test_the_gateways_own_keys_still_sign_with_their_own_secrets(root_s3):
    assert "Buckets" in root_s3.list_buckets()

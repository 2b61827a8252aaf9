"""Issue 19, defect 1: the gateway's own records on Ozone are not open to every Ozone user.

An Ozone user (`alice`, with her own S3 secret from `ozone s3 getsecret -u alice` on the
secure profile) attacks the gateway's records the way the issue reproduced it: through
Ozone's own S3 gateway (which serves volume `s3v`) and through the Ozone shell. Earlier
releases kept the records in `s3v` buckets with each secret in clear key metadata: she
could list them, read the root secret from a HEAD, and write a root credential of her own
that the gateway honoured. Now:

- nothing of the gateway's is in `s3v`: she lists no records bucket and HEADs no record;
- records she writes where the gateway used to keep them are never read (on a secure
  cluster her own key works through the gateway, vouched for by the OM, but as herself:
  never as the root her forged record names);
- the records volume (`s3gw-records`) is the gateway's, with owner-only ACLs; the dev
  cluster runs with Ozone's ACLs off (Ozone's default), so an Ozone user can still list,
  read and write there (the shell shows it, and a bucket link exposes a records bucket to
  Ozone's S3 gateway): she finds no secret in any record, and every record she forges,
  copies or alters (a root credential, a bucket document, a checksum record, an object's
  changed ACL) is refused
  by the gateway and logged, with no secret in the log.

Runs on any Ozone profile with Ozone's S3 gateway (`ozone-dev start --with-s3g`); the
secure profile is where the issue reproduced it (scripts/test.sh runs it there).
"""

import base64
import hashlib
import os
import re
import subprocess
import uuid

import pytest
import requests
from botocore.exceptions import ClientError

import ozone_cluster
from conftest import OZONE_OM, make_s3_client, start_server
from sigv4 import Credentials

if not OZONE_OM:
    pytest.skip("needs a running Ozone cluster (S3GW_OZONE_OM)", allow_module_level=True)

OZONE_S3G_ENDPOINT = os.environ.get("OZONE_S3G_ENDPOINT", "http://127.0.0.1:29878").rstrip("/")
RECORDS_VOLUME = "s3gw-records"
RECORD_BUCKETS = ("s3gw-credentials", "s3gw-bucket-documents", "s3gw-checksums")
REFUSAL = "refused a gateway record that fails its MAC"
ALICE = "alice"


def ozone_s3g_up() -> bool:
    try:
        requests.get(OZONE_S3G_ENDPOINT, timeout=5)
        return True
    except requests.RequestException:
        return False


@pytest.fixture(scope="module")
def alice() -> Credentials:
    """Alice's own Ozone S3 secret: `ozone s3 getsecret -u alice` on the secure profile
    (revoked first if an earlier run made one); any secret where security is off."""
    if not ozone_s3g_up():
        pytest.skip(f"needs Ozone's own S3 gateway at {OZONE_S3G_ENDPOINT} (ozone-dev start --with-s3g)")
    if not ozone_cluster.SECURE:
        return Credentials(ALICE, "alice-secret-" + uuid.uuid4().hex)
    try:
        printed = ozone_cluster.ozone_dev("s3", "getsecret", "-u", ALICE, timeout=120)
    except AssertionError:
        ozone_cluster.ozone_dev("s3", "revokesecret", "-u", ALICE, "-y", timeout=120)
        printed = ozone_cluster.ozone_dev("s3", "getsecret", "-u", ALICE, timeout=120)
    secret = re.search(r"awsSecret=(\S+)", printed).group(1)
    return Credentials(ALICE, secret)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    """Our gateway, with a root key, a bucket with a CORS document and a multipart object
    with checksums (so that every kind of record exists)."""
    server = start_server(tmp_path_factory, "records-gateway")
    try:
        yield server
    finally:
        server.kill9()


def ours(server, creds=None):
    return make_s3_client(server.endpoint, creds or Credentials(server.access_key, server.secret_key))


def refused(call) -> ClientError:
    with pytest.raises(ClientError) as caught:
        call()
    return caught.value


def status(err: ClientError) -> int:
    return err.response["ResponseMetadata"]["HTTPStatusCode"]


def shell(*args: str, check: bool = True) -> subprocess.CompletedProcess:
    """`ozone-dev sh ARGS` as the cluster's dev user: any Ozone user, where ACLs are off."""
    result = subprocess.run([str(ozone_cluster.OZONE_DEV), "--profile", ozone_cluster.PROFILE, "sh", *args],
                            capture_output=True, text=True, timeout=180, stdin=subprocess.DEVNULL)
    if check and result.returncode != 0:
        raise AssertionError(f"ozone sh {' '.join(args)} exited {result.returncode}:\n{result.stderr[-2000:]}")
    return result


def no_secret_in(text: str, *secrets: str) -> None:
    for secret in secrets:
        assert secret not in text, "a secret in the clear"
        # Nor base64 or hex of it.
        assert base64.b64encode(secret.encode()).decode() not in text
        assert secret.encode().hex() not in text


def anonymous_get(server, bucket: str, key: str) -> requests.Response:
    return requests.get(f"{server.endpoint}/{bucket}/{key}", timeout=30)


def not_root(server, creds: Credentials, roots_bucket: str) -> None:
    """`creds` act as no more than themselves: the admin API refuses them, and they see
    nothing of the root's. Where security is on, an Ozone user's own key (and a gateway
    key, whose secret the OM holds too) is vouched for by the OM and acts as itself
    (`ozone_user_secrets`), so its ListBuckets answers with its own buckets; elsewhere
    the key is refused."""
    try:
        names = [b["Name"] for b in ours(server, creds).list_buckets()["Buckets"]]
        assert ozone_cluster.SECURE, "a key the gateway does not hold was honoured"
        assert roots_bucket not in names, "a forged or altered record made a key root"
    except ClientError as e:
        assert status(e) == 403, e
    admin = subprocess.run([str(server.binary), "admin", "--endpoint", server.endpoint, "keys", "list"],
                           env={**os.environ, "S3GW_ROOT_ACCESS_KEY": creds.access_key,
                                "S3GW_ROOT_SECRET_KEY": creds.secret_key},
                           capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert admin.returncode != 0, admin.stdout


def test_an_ozone_user_can_neither_read_nor_forge_the_gateways_records(gateway, alice):
    root = ours(gateway)
    bucket = f"records-{uuid.uuid4().hex[:10]}"
    root.create_bucket(Bucket=bucket)
    cors = {"CORSRules": [{"AllowedMethods": ["GET"], "AllowedOrigins": ["https://ours.example"]}]}
    root.put_bucket_cors(Bucket=bucket, CORSConfiguration=cors)
    upload = root.create_multipart_upload(Bucket=bucket, Key="mp", ChecksumAlgorithm="SHA256")
    part_bytes = os.urandom(1000)
    part = root.upload_part(Bucket=bucket, Key="mp", UploadId=upload["UploadId"], PartNumber=1,
                            Body=part_bytes, ChecksumAlgorithm="SHA256")
    root.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload["UploadId"], MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": part["ETag"], "ChecksumSHA256": part["ChecksumSHA256"]}]})
    assert root.head_object(Bucket=bucket, Key="mp", ChecksumMode="ENABLED").get("ChecksumSHA256")
    # An object made public by PutObjectAcl (a record, since Ozone cannot change a key's
    # metadata) and a private one, whose record she forges from the public one's.
    for key in ("public", "secret"):
        root.put_object(Bucket=bucket, Key=key, Body=key.encode())
    root.put_object_acl(Bucket=bucket, Key="public", ACL="public-read")
    assert anonymous_get(gateway, bucket, "public").status_code == 200
    user = gateway.create_key(f"records-user-{uuid.uuid4().hex[:8]}")
    secrets = (gateway.secret_key, user["secret_key"])

    alice_s3g = make_s3_client(OZONE_S3G_ENDPOINT, alice)

    # 1. Through Ozone's S3 gateway (volume s3v) she finds no records bucket, and no record.
    names = [b["Name"] for b in alice_s3g.list_buckets()["Buckets"]]
    assert not [n for n in names if n.endswith(RECORD_BUCKETS)], names
    for name in RECORD_BUCKETS:
        assert status(refused(lambda: alice_s3g.list_objects_v2(Bucket=name))) in (403, 404), name
    err = refused(lambda: alice_s3g.head_object(Bucket="s3gw-credentials", Key=gateway.access_key))
    assert status(err) in (403, 404)
    no_secret_in(str(err.response), *secrets)

    # 2. A root credential under her own access id where earlier releases kept credentials
    #    (s3v/s3gw-credentials), as the issue did it: the gateway never reads it.
    made = []
    for name in RECORD_BUCKETS:
        try:
            alice_s3g.create_bucket(Bucket=name)
            made.append(name)
        except ClientError as e:
            assert e.response["Error"]["Code"] in ("BucketAlreadyExists", "BucketAlreadyOwnedByYou"), e
    try:
        forged_root = {"s3gw-name": "alice", "s3gw-secret": alice.secret_key, "s3gw-root": "true"}
        alice_s3g.put_object(Bucket="s3gw-credentials", Key=ALICE, Body=b"", Metadata=forged_root)
        alice_s3g.put_object(Bucket="s3gw-bucket-documents", Key=f"{bucket}/cors", Body=b"",
                             Metadata={"s3gw-document": "<CORSConfiguration/>"})
        not_root(gateway, alice, bucket)
    finally:
        for name in made:
            for key in (ALICE, f"{bucket}/cors"):
                try:
                    alice_s3g.delete_object(Bucket=name, Key=key)
                except ClientError:
                    pass
            alice_s3g.delete_bucket(Bucket=name)

    # 3. Through the Ozone shell (ACLs off: any user may look): the volume and its buckets
    #    are the gateway's alone, and no record holds a secret in the clear.
    volume = shell("volume", "info", f"/{RECORDS_VOLUME}").stdout
    assert '"owner" : ".s3gw"' in volume or '".s3gw"' in volume, volume
    listing = shell("key", "list", f"/{RECORDS_VOLUME}/s3gw-credentials").stdout
    assert gateway.access_key in listing
    for access in (gateway.access_key, user["access_key"]):
        info = shell("key", "info", f"/{RECORDS_VOLUME}/s3gw-credentials/{access}").stdout
        assert "s3gw-sealed-secret" in info and "s3gw-mac" in info, info
        no_secret_in(info, *secrets)

    # 4. Where ACLs are off she can still write there: a bucket link puts each records bucket
    #    in s3v for Ozone's S3 gateway. What she forges, copies or alters is refused.
    links = {name: f"link-{uuid.uuid4().hex[:8]}" for name in RECORD_BUCKETS}
    shell(*ozone_cluster.batch_args(*[["bucket", "link", f"/{RECORDS_VOLUME}/{name}", f"/s3v/{link}"]
                                      for name, link in links.items()]))
    try:
        creds, docs, sums = (links[n] for n in RECORD_BUCKETS)
        root_record = alice_s3g.head_object(Bucket=creds, Key=gateway.access_key)
        no_secret_in(str(root_record), *secrets)
        # A root credential of her own, in today's format with a made-up MAC.
        alice_s3g.put_object(Bucket=creds, Key=ALICE, Body=b"", Metadata={
            "s3gw-name": "alice", "s3gw-sealed-secret": "v1:" + base64.b64encode(os.urandom(60)).decode(),
            "s3gw-secret": alice.secret_key, "s3gw-root": "true", "s3gw-mac": "00" * 32})
        # The user's real record copied to her name, and the user's record made root.
        user_record = alice_s3g.head_object(Bucket=creds, Key=user["access_key"])["Metadata"]
        alice_s3g.put_object(Bucket=creds, Key=ALICE, Body=b"", Metadata=user_record)
        alice_s3g.put_object(Bucket=creds, Key=user["access_key"], Body=b"",
                             Metadata={**user_record, "s3gw-root": "true"})
        # The bucket's CORS document changed to let her origin in, its MAC kept.
        doc = alice_s3g.head_object(Bucket=docs, Key=f"{bucket}/cors")["Metadata"]
        forged_cors = doc["s3gw-document"].replace("https://ours.example", "https://alice.example")
        assert forged_cors != doc["s3gw-document"]
        alice_s3g.put_object(Bucket=docs, Key=f"{bucket}/cors", Body=b"",
                             Metadata={**doc, "s3gw-document": forged_cors})
        # The multipart object's checksum record given another checksum.
        record = next(o["Key"] for o in alice_s3g.list_objects_v2(Bucket=sums)["Contents"]
                      if o["Key"].startswith("object/") and o["Key"].endswith(f"{bucket}/mp"))
        sums_meta = alice_s3g.head_object(Bucket=sums, Key=record)["Metadata"]
        bogus = base64.b64encode(hashlib.sha256(b"alice").digest()).decode()
        # "ALGORITHM TYPE VALUE": the value is hers.
        algorithm_and_type = sums_meta["s3gw-checksum"].rsplit(" ", 1)[0]
        altered = {**sums_meta, "s3gw-checksum": f"{algorithm_and_type} {bogus}"}
        assert altered != sums_meta, sums_meta
        alice_s3g.put_object(Bucket=sums, Key=record, Body=b"", Metadata=altered)
        # The public object's ACL record copied onto the private object's name.
        public_record = next(o["Key"] for o in alice_s3g.list_objects_v2(Bucket=sums, Prefix="entries/")["Contents"]
                             if o["Key"].endswith(f"{bucket}/public"))
        acl_meta = alice_s3g.head_object(Bucket=sums, Key=public_record)["Metadata"]
        assert "s3gw-changes" in acl_meta and "s3gw-mac" in acl_meta, acl_meta
        alice_s3g.put_object(Bucket=sums, Key=public_record.removesuffix("public") + "secret", Body=b"",
                             Metadata=acl_meta)
    finally:
        shell(*ozone_cluster.batch_args(*[["bucket", "delete", f"/s3v/{link}"] for link in links.values()]),
              check=False)

    # A restart: nothing the gateway read before is cached.
    gateway.stop()
    gateway.start()
    not_root(gateway, alice, bucket)
    not_root(gateway, Credentials(user["access_key"], user["secret_key"]), bucket)
    root = ours(gateway)
    try:
        served = root.get_bucket_cors(Bucket=bucket)["CORSRules"]
    except ClientError as e:
        assert e.response["Error"]["Code"] == "NoSuchCORSConfiguration", e
        served = []
    assert "https://alice.example" not in str(served)
    head = root.head_object(Bucket=bucket, Key="mp", ChecksumMode="ENABLED")
    assert head.get("ChecksumSHA256") != bogus
    assert anonymous_get(gateway, bucket, "secret").status_code == 403
    assert anonymous_get(gateway, bucket, "public").content == b"public"
    log = gateway.log_path.read_text(errors="replace")
    assert log.count(REFUSAL) >= 5, log[-5000:]
    no_secret_in(log, alice.secret_key, *secrets)

"""Access control: ACLs, anonymous access, bucket policies and public access blocks (boto3 + raw HTTP)."""

import json
import threading
import time

import pytest
from botocore.exceptions import ClientError

from conftest import OZONE_OM, make_s3_client
from raw_client import RawClient, assert_s3_error, object_path

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


@pytest.fixture
def alt_s3(target, second_key):
    return make_s3_client(target.endpoint, second_key)


def error_of(call, **kwargs) -> tuple[int, str]:
    with pytest.raises(ClientError) as err:
        call(**kwargs)
    response = err.value.response
    return response["ResponseMetadata"]["HTTPStatusCode"], response["Error"]["Code"]


def owner_id(client) -> str:
    return client.list_buckets()["Owner"]["ID"]


def policy(*statements) -> str:
    return json.dumps({"Version": "2012-10-17", "Statement": list(statements)})


def test_the_owner_id_is_one_canonical_id_everywhere(root_s3, bucket):
    me = owner_id(root_s3)
    assert len(me) == 64 and all(c in "0123456789abcdef" for c in me)
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    acl = root_s3.get_bucket_acl(Bucket=bucket)
    assert acl["Owner"]["ID"] == me
    assert acl["Grants"] == [
        {"Grantee": {"ID": me, "DisplayName": me, "Type": "CanonicalUser"}, "Permission": "FULL_CONTROL"}
    ]
    assert root_s3.get_object_acl(Bucket=bucket, Key="k")["Owner"]["ID"] == me
    listed = root_s3.list_objects_v2(Bucket=bucket, FetchOwner=True)["Contents"][0]
    assert listed["Owner"]["ID"] == me


def test_anonymous_callers_read_only_what_is_public(root_s3, raw, bucket):
    root_s3.put_object(Bucket=bucket, Key="public", Body=b"for all", ACL="public-read")
    root_s3.put_object(Bucket=bucket, Key="private", Body=b"mine")
    got = raw.unsigned("GET", bucket, "public")
    assert (got.status_code, got.content) == (200, b"for all")
    assert raw.unsigned("HEAD", bucket, "public").status_code == 200
    assert_s3_error(raw.unsigned("GET", bucket, "private"), 403, "AccessDenied")
    # Not allowed to list: a missing key is as forbidden as a private one.
    assert_s3_error(raw.unsigned("GET", bucket, "missing"), 403, "AccessDenied")
    assert_s3_error(raw.unsigned("GET", bucket), 403, "AccessDenied")
    assert_s3_error(raw.unsigned("PUT", bucket, "new", body=b"x"), 403, "AccessDenied")
    assert_s3_error(raw.unsigned("DELETE", bucket, "public"), 403, "AccessDenied")
    assert_s3_error(raw.unsigned("GET", bucket, "public", query=[("acl", "")]), 403, "AccessDenied")
    assert_s3_error(raw.unsigned("GET"), 403, "AccessDenied")
    assert_s3_error(raw.unsigned("GET", "no-such-bucket-for-anyone", "k"), 404, "NoSuchBucket")


def test_a_public_read_bucket_lists_but_does_not_open_its_objects(root_s3, raw, bucket_names):
    name = bucket_names()
    root_s3.create_bucket(Bucket=name, ACL="public-read")
    root_s3.put_object(Bucket=name, Key="k", Body=b"x")
    listing = raw.unsigned("GET", name, query=[("list-type", "2")])
    assert listing.status_code == 200 and "<Key>k</Key>" in listing.text
    assert_s3_error(raw.unsigned("GET", name, "k"), 403, "AccessDenied")
    # Allowed to list, so a missing key is told apart.
    assert_s3_error(raw.unsigned("GET", name, "missing"), 404, "NoSuchKey")
    assert_s3_error(raw.unsigned("PUT", name, "k2", body=b"y"), 403, "AccessDenied")
    grants = root_s3.get_bucket_acl(Bucket=name)["Grants"]
    assert {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"} in grants


def test_a_public_read_write_bucket_takes_anonymous_writes_owned_by_its_owner(root_s3, raw, bucket_names):
    name = bucket_names()
    root_s3.create_bucket(Bucket=name)
    root_s3.put_bucket_acl(Bucket=name, ACL="public-read-write")
    assert raw.unsigned("PUT", name, "drop", body=b"anonymous").status_code == 200
    assert root_s3.get_object(Bucket=name, Key="drop")["Body"].read() == b"anonymous"
    assert raw.unsigned("DELETE", name, "drop").status_code == 204
    root_s3.put_bucket_acl(Bucket=name, ACL="private")
    assert_s3_error(raw.unsigned("PUT", name, "drop", body=b"x"), 403, "AccessDenied")


def test_the_alt_key_is_denied_without_a_grant(root_s3, alt_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    for call, kwargs in [
        (alt_s3.get_object, {"Key": "k"}),
        (alt_s3.list_objects_v2, {}),
        (alt_s3.put_object, {"Key": "k2", "Body": b"y"}),
        (alt_s3.get_bucket_acl, {}),
        (alt_s3.get_object_acl, {"Key": "k"}),
        (alt_s3.put_bucket_acl, {"ACL": "public-read"}),
        (alt_s3.get_bucket_policy, {}),
        (alt_s3.put_bucket_policy, {"Policy": policy({"Effect": "Allow", "Principal": "*", "Action": "s3:*",
                                                      "Resource": f"arn:aws:s3:::{bucket}/*"})}),
    ]:
        assert error_of(call, Bucket=bucket, **kwargs) == (403, "AccessDenied"), call


def test_a_bucket_acl_grant_by_canonical_id_shares_listing_with_alt(root_s3, alt_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    me, alt = owner_id(root_s3), owner_id(alt_s3)
    root_s3.put_bucket_acl(
        Bucket=bucket,
        AccessControlPolicy={
            "Owner": {"ID": me},
            "Grants": [
                {"Grantee": {"Type": "CanonicalUser", "ID": me}, "Permission": "FULL_CONTROL"},
                {"Grantee": {"Type": "CanonicalUser", "ID": alt}, "Permission": "READ"},
            ],
        },
    )
    assert [o["Key"] for o in alt_s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="k") == (403, "AccessDenied")
    assert error_of(alt_s3.put_object, Bucket=bucket, Key="k2", Body=b"y") == (403, "AccessDenied")
    # Alt still owns nothing of root's: its own bucket list is unchanged.
    assert bucket not in [b["Name"] for b in alt_s3.list_buckets()["Buckets"]]


def test_an_object_grant_header_opens_one_object_to_alt(root_s3, alt_s3, bucket):
    alt = owner_id(alt_s3)
    root_s3.put_object(Bucket=bucket, Key="shared", Body=b"s", GrantRead=f'id="{alt}"')
    root_s3.put_object(Bucket=bucket, Key="other", Body=b"o")
    assert alt_s3.get_object(Bucket=bucket, Key="shared")["Body"].read() == b"s"
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="other") == (403, "AccessDenied")
    assert error_of(alt_s3.get_object_acl, Bucket=bucket, Key="shared") == (403, "AccessDenied")
    assert error_of(root_s3.put_object, Bucket=bucket, Key="x", Body=b"",
                    GrantRead='emailAddress="a@example.com"') == (400, "UnresolvableGrantByEmailAddress")


def test_a_policy_shares_reads_with_alt_and_nothing_else(root_s3, alt_s3, second_key, bucket, bucket_names):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"shared")
    other = bucket_names()
    root_s3.create_bucket(Bucket=other)
    root_s3.put_object(Bucket=other, Key="k", Body=b"not shared")
    root_s3.put_bucket_policy(Bucket=bucket, Policy=policy({
        "Effect": "Allow",
        "Principal": {"AWS": [second_key.access_key]},
        "Action": ["s3:GetObject", "s3:ListBucket"],
        "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
    }))
    assert alt_s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"shared"
    assert [o["Key"] for o in alt_s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]
    assert error_of(alt_s3.head_object, Bucket=bucket, Key="missing")[0] == 404
    assert error_of(alt_s3.put_object, Bucket=bucket, Key="k", Body=b"overwrite") == (403, "AccessDenied")
    assert error_of(alt_s3.delete_object, Bucket=bucket, Key="k") == (403, "AccessDenied")
    assert error_of(alt_s3.get_bucket_policy, Bucket=bucket) == (403, "AccessDenied")
    assert error_of(alt_s3.get_object, Bucket=other, Key="k") == (403, "AccessDenied")
    # A copy would read root's other bucket as root: refused.
    alt_bucket = bucket_names()
    alt_s3.create_bucket(Bucket=alt_bucket)
    try:
        assert error_of(alt_s3.copy_object, Bucket=alt_bucket, Key="stolen",
                        CopySource={"Bucket": other, "Key": "k"}) == (403, "AccessDenied")
    finally:
        alt_s3.delete_bucket(Bucket=alt_bucket)
    assert root_s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"shared"


def test_a_deny_statement_beats_a_public_acl(root_s3, alt_s3, raw, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x", ACL="public-read")
    assert raw.unsigned("GET", bucket, "k").status_code == 200
    root_s3.put_bucket_policy(Bucket=bucket, Policy=policy({
        "Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*",
    }))
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="k") == (403, "AccessDenied")
    assert error_of(root_s3.get_object, Bucket=bucket, Key="k") == (403, "AccessDenied")
    # The owner can always undo a policy that locks it out.
    root_s3.delete_bucket_policy(Bucket=bucket)
    assert root_s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"
    assert error_of(root_s3.get_bucket_policy, Bucket=bucket) == (404, "NoSuchBucketPolicy")


@pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")
def test_each_version_is_read_under_its_own_acl(root_s3, alt_s3, second_key, raw, bucket):
    root_s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    private = root_s3.put_object(Bucket=bucket, Key="k", Body=b"private draft")["VersionId"]
    public = root_s3.put_object(Bucket=bucket, Key="k", Body=b"published", ACL="public-read")["VersionId"]
    assert raw.unsigned("GET", bucket, "k").content == b"published"
    assert raw.unsigned("GET", bucket, "k", query=[("versionId", public)]).content == b"published"
    # The latest version's public-read grant says nothing of the older, private one.
    assert_s3_error(raw.unsigned("GET", bucket, "k", query=[("versionId", private)]), 403, "AccessDenied")
    assert raw.unsigned("HEAD", bucket, "k", query=[("versionId", private)]).status_code == 403
    attributes = {"x-amz-object-attributes": "ObjectSize"}
    for version, expected in ((public, 200), (private, 403)):
        answer = raw.unsigned("GET", bucket, "k", query=[("attributes", ""), ("versionId", version)],
                              headers=attributes)
        assert answer.status_code == expected, answer.text
    # s3:GetObject grants the latest version; a version by id is s3:GetObjectVersion.
    root_s3.put_bucket_policy(Bucket=bucket, Policy=policy({
        "Effect": "Allow", "Principal": {"AWS": second_key.access_key}, "Action": "s3:GetObject",
        "Resource": f"arn:aws:s3:::{bucket}/*",
    }))
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="k", VersionId=private) == (403, "AccessDenied")
    root_s3.put_bucket_policy(Bucket=bucket, Policy=policy({
        "Effect": "Allow", "Principal": {"AWS": second_key.access_key}, "Action": "s3:GetObjectVersion",
        "Resource": f"arn:aws:s3:::{bucket}/*",
    }))
    assert alt_s3.get_object(Bucket=bucket, Key="k", VersionId=private)["Body"].read() == b"private draft"


def test_policy_round_trip_status_and_refusals(root_s3, raw, bucket):
    public = policy({"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "s3:GetObject",
                     "Resource": f"arn:aws:s3:::{bucket}/*"})
    root_s3.put_bucket_policy(Bucket=bucket, Policy=public)
    assert json.loads(root_s3.get_bucket_policy(Bucket=bucket)["Policy"]) == json.loads(public)
    assert root_s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is True
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert raw.unsigned("GET", bucket, "k").status_code == 200
    private = policy({"Effect": "Allow", "Principal": {"AWS": "S3GWNOSUCHKEY0000000"}, "Action": "s3:*",
                      "Resource": f"arn:aws:s3:::{bucket}/*"})
    root_s3.put_bucket_policy(Bucket=bucket, Policy=private)
    assert root_s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is False
    for bad in [
        "{not json",
        policy({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                "Resource": f"arn:aws:s3:::{bucket}/*", "Condition": {"Bool": {"aws:ViaAWSService": "true"}}}),
        policy({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                "Resource": "arn:aws:s3:::someone-elses-bucket/*"}),
    ]:
        assert error_of(root_s3.put_bucket_policy, Bucket=bucket, Policy=bad) == (400, "MalformedPolicy")


def test_public_access_block_switches(root_s3, raw, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x", ACL="public-read")
    assert error_of(root_s3.get_public_access_block, Bucket=bucket) == (
        404, "NoSuchPublicAccessBlockConfiguration")

    def block(**switches):
        root_s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration=switches)

    block(IgnorePublicAcls=True)
    assert root_s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": False, "IgnorePublicAcls": True, "BlockPublicPolicy": False,
        "RestrictPublicBuckets": False}
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")

    block(BlockPublicAcls=True)
    assert raw.unsigned("GET", bucket, "k").status_code == 200
    assert error_of(root_s3.put_object, Bucket=bucket, Key="k2", Body=b"", ACL="public-read") == (
        403, "AccessDenied")
    assert error_of(root_s3.put_bucket_acl, Bucket=bucket, ACL="public-read") == (403, "AccessDenied")
    assert error_of(root_s3.copy_object, Bucket=bucket, Key="k2", CopySource={"Bucket": bucket, "Key": "k"},
                    ACL="public-read") == (403, "AccessDenied")
    assert error_of(root_s3.create_multipart_upload, Bucket=bucket, Key="k2", ACL="public-read") == (
        403, "AccessDenied")
    root_s3.put_object(Bucket=bucket, Key="k3", Body=b"", ACL="private")

    public = policy({"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject",
                     "Resource": f"arn:aws:s3:::{bucket}/*"})
    block(BlockPublicPolicy=True)
    assert error_of(root_s3.put_bucket_policy, Bucket=bucket, Policy=public) == (403, "AccessDenied")

    root_s3.delete_public_access_block(Bucket=bucket)
    root_s3.put_bucket_policy(Bucket=bucket, Policy=public)
    assert raw.unsigned("GET", bucket, "k3").status_code == 200
    block(RestrictPublicBuckets=True)
    assert_s3_error(raw.unsigned("GET", bucket, "k3"), 403, "AccessDenied")
    assert root_s3.get_object(Bucket=bucket, Key="k3")["Body"].read() == b""


def test_copies_and_multipart_uploads_take_the_acl_their_request_names(root_s3, raw, bucket):
    root_s3.put_object(Bucket=bucket, Key="src", Body=b"data", ACL="public-read")
    root_s3.copy_object(Bucket=bucket, Key="private-copy", CopySource={"Bucket": bucket, "Key": "src"})
    assert_s3_error(raw.unsigned("GET", bucket, "private-copy"), 403, "AccessDenied")
    root_s3.copy_object(Bucket=bucket, Key="public-copy", CopySource={"Bucket": bucket, "Key": "src"},
                        ACL="public-read")
    assert raw.unsigned("GET", bucket, "public-copy").content == b"data"
    upload = root_s3.create_multipart_upload(Bucket=bucket, Key="mp", ACL="public-read")["UploadId"]
    etag = root_s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"part")["ETag"]
    assert_s3_error(raw.unsigned("GET", bucket, "mp"), 403, "AccessDenied")
    root_s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload,
                                      MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert raw.unsigned("GET", bucket, "mp").content == b"part"
    # The ACL is no user metadata.
    assert root_s3.head_object(Bucket=bucket, Key="mp")["Metadata"] == {}


def test_put_object_acl_changes_an_existing_objects_acl(root_s3, raw, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    etag = root_s3.head_object(Bucket=bucket, Key="k")["ETag"]
    root_s3.put_object_acl(Bucket=bucket, Key="k", ACL="public-read")
    assert raw.unsigned("GET", bucket, "k").content == b"x"
    grants = root_s3.get_object_acl(Bucket=bucket, Key="k")["Grants"]
    assert {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"} in grants
    assert root_s3.head_object(Bucket=bucket, Key="k")["ETag"] == etag
    root_s3.put_object_acl(Bucket=bucket, Key="k", ACL="private")
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    assert error_of(root_s3.put_object_acl, Bucket=bucket, Key="missing", ACL="private")[0] == 404


def test_a_changed_object_acl_stays_with_that_object_only(root_s3, raw, bucket):
    """Tagging keeps the object, so its changed ACL; an overwrite or a delete
    and a new PUT is another object, with the ACL its own request names."""
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"first")
    root_s3.put_object_acl(Bucket=bucket, Key="k", ACL="public-read")
    root_s3.put_object_tagging(Bucket=bucket, Key="k", Tagging={"TagSet": [{"Key": "t", "Value": "v"}]})
    assert raw.unsigned("GET", bucket, "k").content == b"first"
    assert root_s3.head_object(Bucket=bucket, Key="k")["Metadata"] == {}, "the ACL is no user metadata"
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"second")
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    root_s3.put_object_acl(Bucket=bucket, Key="k", ACL="public-read")
    root_s3.delete_object(Bucket=bucket, Key="k")
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"third")
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    grants = root_s3.get_object_acl(Bucket=bucket, Key="k")["Grants"]
    assert [g["Permission"] for g in grants] == ["FULL_CONTROL"]
    # A PUT naming an ACL keeps it; a later PutObjectAcl replaces it.
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"fourth", ACL="public-read")
    assert raw.unsigned("GET", bucket, "k").content == b"fourth"
    root_s3.put_object_acl(Bucket=bucket, Key="k", ACL="private")
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")


def test_a_refused_anonymous_upload_is_answered_before_its_body(root_s3, raw, bucket):
    # s3-tests' test_100_continue: a client waiting on `Expect: 100-continue`
    # gets the 403 at once, and 100 Continue only where it may write.
    path = object_path(bucket, "k")
    headers = {"Host": raw.host, "Content-Length": "123", "Expect": "100-continue"}
    answer = raw.send_headers_only("PUT", path, headers)
    assert answer.split(b"\r\n", 1)[0].startswith(b"HTTP/1.1 403"), answer[:300]
    root_s3.put_bucket_acl(Bucket=bucket, ACL="public-read-write")
    answer = raw.send_headers_only("PUT", path, headers)
    assert answer.split(b"\r\n", 1)[0].startswith(b"HTTP/1.1 100"), answer[:300]


def test_an_expected_bucket_owner_that_differs_is_refused(root_s3, alt_s3, raw, bucket):
    me = owner_id(root_s3)
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x", ExpectedBucketOwner=me)
    assert error_of(root_s3.get_object, Bucket=bucket, Key="k", ExpectedBucketOwner=owner_id(alt_s3)) == (
        403, "AccessDenied")
    root_s3.put_bucket_acl(Bucket=bucket, ACL="public-read-write")
    assert_s3_error(raw.unsigned("PUT", bucket, "k2", body=b"y",
                                 headers={"x-amz-expected-bucket-owner": me + "0"}), 403, "AccessDenied")
    assert error_of(root_s3.copy_object, Bucket=bucket, Key="c", CopySource={"Bucket": bucket, "Key": "k"},
                    ExpectedSourceBucketOwner="0" * 64) == (403, "AccessDenied")
    root_s3.copy_object(Bucket=bucket, Key="c", CopySource={"Bucket": bucket, "Key": "k"},
                        ExpectedSourceBucketOwner=me, ExpectedBucketOwner=me)


def allow_alt(bucket, second_key, *actions):
    return policy({"Effect": "Allow", "Principal": {"AWS": second_key.access_key}, "Action": list(actions),
                   "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]})


def errors_by_key(result) -> dict:
    return {(e["Key"], e.get("VersionId")): e["Code"] for e in result.get("Errors", [])}


@pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")
def test_delete_objects_decides_each_entry_on_its_key_and_version_action(
        root_s3, alt_s3, second_key, bucket):
    root_s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = root_s3.put_object(Bucket=bucket, Key="k", Body=b"first")["VersionId"]
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"second")
    root_s3.put_object(Bucket=bucket, Key="tmp/x", Body=b"x")
    root_s3.put_object(Bucket=bucket, Key="keep", Body=b"keep")

    def versions():
        return {(v["Key"], v["VersionId"]) for v in root_s3.list_object_versions(Bucket=bucket)["Versions"]}

    # A key allowed only s3:DeleteObject may add delete markers, never delete a version for good.
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:DeleteObject"))
    result = alt_s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "k", "VersionId": v1},
                                                                     {"Key": "tmp/x"}]})
    assert errors_by_key(result) == {("k", v1): "AccessDenied"}
    assert [d["Key"] for d in result["Deleted"]] == ["tmp/x"]
    assert ("k", v1) in versions()
    assert error_of(alt_s3.delete_object, Bucket=bucket, Key="k", VersionId=v1) == (403, "AccessDenied")

    # Each entry on its own key: an Allow of tmp/* deletes tmp/ keys and nothing else.
    root_s3.put_bucket_policy(Bucket=bucket, Policy=policy({
        "Effect": "Allow", "Principal": {"AWS": second_key.access_key}, "Action": "s3:DeleteObject",
        "Resource": f"arn:aws:s3:::{bucket}/tmp/*"}))
    result = alt_s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "tmp/y"}, {"Key": "keep"}]})
    assert errors_by_key(result) == {("keep", None): "AccessDenied"}
    assert root_s3.get_object(Bucket=bucket, Key="keep")["Body"].read() == b"keep"

    # A Deny of s3:DeleteObjectVersion binds the owner's permanent deletes too.
    root_s3.put_bucket_policy(Bucket=bucket, Policy=policy({
        "Effect": "Deny", "Principal": "*", "Action": "s3:DeleteObjectVersion",
        "Resource": f"arn:aws:s3:::{bucket}/*"}))
    result = root_s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "k", "VersionId": v1},
                                                                      {"Key": "keep"}]})
    assert errors_by_key(result) == {("k", v1): "AccessDenied"}
    assert result["Deleted"][0]["Key"] == "keep" and result["Deleted"][0]["DeleteMarker"] is True
    assert ("k", v1) in versions()
    assert error_of(root_s3.delete_object, Bucket=bucket, Key="k", VersionId=v1) == (403, "AccessDenied")
    root_s3.delete_bucket_policy(Bucket=bucket)


@pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")
def test_object_acl_calls_act_on_the_version_they_name(root_s3, alt_s3, second_key, raw, bucket):
    root_s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    old = root_s3.put_object(Bucket=bucket, Key="k", Body=b"old")["VersionId"]
    new = root_s3.put_object(Bucket=bucket, Key="k", Body=b"new")["VersionId"]
    root_s3.put_object_acl(Bucket=bucket, Key="k", VersionId=old, ACL="public-read")
    # The old version is public; the current one stays private.
    assert raw.unsigned("GET", bucket, "k", query=[("versionId", old)]).content == b"old"
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    public_read = {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"}
    assert public_read in root_s3.get_object_acl(Bucket=bucket, Key="k", VersionId=old)["Grants"]
    assert public_read not in root_s3.get_object_acl(Bucket=bucket, Key="k", VersionId=new)["Grants"]
    assert public_read not in root_s3.get_object_acl(Bucket=bucket, Key="k")["Grants"]
    # s3:PutObjectAcl / s3:GetObjectAcl are the latest version's; a version's are their own actions.
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:PutObjectAcl",
                                                               "s3:GetObjectAcl"))
    assert error_of(alt_s3.put_object_acl, Bucket=bucket, Key="k", VersionId=new, ACL="public-read") == (
        403, "AccessDenied")
    assert error_of(alt_s3.get_object_acl, Bucket=bucket, Key="k", VersionId=old) == (403, "AccessDenied")
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:PutObjectVersionAcl",
                                                               "s3:GetObjectVersionAcl"))
    alt_s3.put_object_acl(Bucket=bucket, Key="k", VersionId=new, ACL="public-read")
    assert public_read in alt_s3.get_object_acl(Bucket=bucket, Key="k", VersionId=new)["Grants"]
    assert raw.unsigned("GET", bucket, "k").content == b"new"
    assert error_of(root_s3.get_object_acl, Bucket=bucket, Key="k", VersionId="nosuchversion")[0] in (400, 404)


@pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")
def test_version_tagging_is_decided_as_the_version_tagging_actions(root_s3, alt_s3, second_key, bucket):
    root_s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    v1 = root_s3.put_object(Bucket=bucket, Key="k", Body=b"1", Tagging="t=1")["VersionId"]
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"2", Tagging="t=2")
    tags = {"TagSet": [{"Key": "t", "Value": "x"}]}
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(
        bucket, second_key, "s3:GetObjectTagging", "s3:PutObjectTagging", "s3:DeleteObjectTagging"))
    assert alt_s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [{"Key": "t", "Value": "2"}]
    for call, kwargs in [
        (alt_s3.get_object_tagging, {}),
        (alt_s3.put_object_tagging, {"Tagging": tags}),
        (alt_s3.delete_object_tagging, {}),
    ]:
        assert error_of(call, Bucket=bucket, Key="k", VersionId=v1, **kwargs) == (403, "AccessDenied"), call
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(
        bucket, second_key, "s3:GetObjectVersionTagging", "s3:PutObjectVersionTagging",
        "s3:DeleteObjectVersionTagging"))
    assert alt_s3.get_object_tagging(Bucket=bucket, Key="k", VersionId=v1)["TagSet"] == [{"Key": "t", "Value": "1"}]
    alt_s3.put_object_tagging(Bucket=bucket, Key="k", VersionId=v1, Tagging=tags)
    assert root_s3.get_object_tagging(Bucket=bucket, Key="k", VersionId=v1)["TagSet"] == tags["TagSet"]
    alt_s3.delete_object_tagging(Bucket=bucket, Key="k", VersionId=v1)
    assert root_s3.get_object_tagging(Bucket=bucket, Key="k", VersionId=v1)["TagSet"] == []
    assert error_of(alt_s3.get_object_tagging, Bucket=bucket, Key="k") == (403, "AccessDenied")


def test_object_attributes_need_the_attributes_action_and_the_read(root_s3, alt_s3, second_key, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"abc")
    read = {"Bucket": bucket, "Key": "k", "ObjectAttributes": ["ObjectSize"]}
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:GetObjectAttributes"))
    assert error_of(alt_s3.get_object_attributes, **read) == (403, "AccessDenied")
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:GetObject"))
    assert error_of(alt_s3.get_object_attributes, **read) == (403, "AccessDenied")
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:GetObject",
                                                               "s3:GetObjectAttributes"))
    assert alt_s3.get_object_attributes(**read)["ObjectSize"] == 3


def anonymous_reader(target, bucket: str, public: bytes, stop, served: list, leaked: list):
    """A loop of anonymous GETs of `k` until `stop`: each one served counts
    in `served`, and one whose body is not `public` in `leaked`."""
    def read():
        client = RawClient(target.endpoint, target.creds)
        while not stop.is_set():
            answer = client.unsigned("GET", bucket, "k")
            if answer.status_code == 200:
                served.append(1)
                if answer.content != public:
                    leaked.append(answer.content)
    return read


def race(stop, workers, seconds: float = 6):
    """Runs each worker in a thread of its own for `seconds` (how long the
    race is tried, not a bound on anything), then stops and joins them."""
    threads = [threading.Thread(target=worker) for worker in workers]
    for thread in threads:
        thread.start()
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()


def test_an_anonymous_get_serves_only_the_version_whose_acl_was_judged(root_s3, target, bucket):
    # The owner alternates a private and a public-read PUT of one key while
    # anonymous callers GET it: each GET is judged on one version's ACL and
    # must serve that version, never a private one written in between.
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"public", ACL="public-read")
    stop = threading.Event()
    leaked, served, failures = [], [], []

    def write():
        try:
            while not stop.is_set():
                root_s3.put_object(Bucket=bucket, Key="k", Body=b"private")
                root_s3.put_object(Bucket=bucket, Key="k", Body=b"public", ACL="public-read")
        except Exception as err:  # noqa: BLE001 - reported below
            failures.append(err)

    read = anonymous_reader(target, bucket, b"public", stop, served, leaked)
    race(stop, [write] * 2 + [read] * 6)
    assert not failures, failures
    assert served, "no anonymous GET was served"
    assert leaked == [], f"{len(leaked)} of {len(served)} anonymous GETs served the private body"


def test_an_acl_change_lands_only_on_the_record_whose_acl_granted_it(root_s3, alt_s3, target, bucket):
    # The owner alternates a PUT whose ACL lets the second key change the
    # ACL and a private PUT, while the second key makes the object public
    # and anonymous callers read it: a change decided on the granting
    # record must never make the private one public (409 or 403 instead).
    grant = {"GrantWriteACP": f'id="{owner_id(alt_s3)}"', "GrantFullControl": f'id="{owner_id(root_s3)}"'}
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"granted", **grant)
    stop = threading.Event()
    leaked, served, changed, failures = [], [], [], []

    def write():
        try:
            while not stop.is_set():
                root_s3.put_object(Bucket=bucket, Key="k", Body=b"private")
                time.sleep(0.005)  # a leak would stay readable a while
                root_s3.put_object(Bucket=bucket, Key="k", Body=b"granted", **grant)
        except Exception as err:  # noqa: BLE001 - reported below
            failures.append(err)

    def make_public():
        while not stop.is_set():
            try:
                alt_s3.put_object_acl(Bucket=bucket, Key="k", ACL="public-read")
                changed.append(1)
            except ClientError as err:
                status = err.response["ResponseMetadata"]["HTTPStatusCode"]
                if (status, err.response["Error"]["Code"]) not in ((403, "AccessDenied"), (409, "OperationAborted")):
                    failures.append(err)

    read = anonymous_reader(target, bucket, b"granted", stop, served, leaked)
    race(stop, [write] * 2 + [make_public] * 3 + [read] * 3)
    assert not failures, failures
    assert changed, "the second key never changed the ACL"
    assert leaked == [], f"{len(leaked)} of {len(served)} anonymous GETs served the private body"


def test_a_caller_let_in_by_a_policy_learns_of_a_missing_key_only_if_it_may_list(
        root_s3, alt_s3, second_key, bucket):
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:GetObject"))
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="missing") == (403, "AccessDenied")
    assert error_of(alt_s3.head_object, Bucket=bucket, Key="missing")[0] == 403
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:GetObject",
                                                               "s3:ListBucket"))
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="missing") == (404, "NoSuchKey")
    # The owner denied s3:ListBucket by its own policy is no more told.
    root_s3.put_bucket_policy(Bucket=bucket, Policy=policy({
        "Effect": "Deny", "Principal": "*", "Action": "s3:ListBucket", "Resource": f"arn:aws:s3:::{bucket}"}))
    assert error_of(root_s3.get_object, Bucket=bucket, Key="missing") == (403, "AccessDenied")
    root_s3.delete_bucket_policy(Bucket=bucket)
    assert error_of(root_s3.get_object, Bucket=bucket, Key="missing") == (404, "NoSuchKey")


@pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")
def test_a_caller_with_no_grant_learns_nothing_of_versions_or_delete_markers(root_s3, raw, bucket):
    root_s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x", ACL="public-read")
    marker = root_s3.delete_object(Bucket=bucket, Key="k")["VersionId"]
    # The latest is a delete marker, one is named by id, one id names nothing:
    # to an anonymous caller that may not list, each is as forbidden as a private object.
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    assert raw.unsigned("HEAD", bucket, "k").status_code == 403
    assert_s3_error(raw.unsigned("GET", bucket, "k", query=[("versionId", marker)]), 403, "AccessDenied")
    assert raw.unsigned("HEAD", bucket, "k", query=[("versionId", marker)]).status_code == 403
    assert_s3_error(raw.unsigned("GET", bucket, "k", query=[("versionId", "0" * 16)]), 403, "AccessDenied")
    # The owner is told.
    assert error_of(root_s3.get_object, Bucket=bucket, Key="k", VersionId=marker) == (405, "MethodNotAllowed")


def test_put_object_setting_an_acl_needs_put_object_acl_too(root_s3, alt_s3, second_key, bucket):
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:PutObject"))
    alt_s3.put_object(Bucket=bucket, Key="plain", Body=b"x")
    assert error_of(alt_s3.put_object, Bucket=bucket, Key="public", Body=b"x", ACL="public-read") == (
        403, "AccessDenied")
    assert error_of(alt_s3.put_object, Bucket=bucket, Key="granted", Body=b"x",
                    GrantRead='uri="http://acs.amazonaws.com/groups/global/AllUsers"') == (403, "AccessDenied")
    root_s3.put_bucket_policy(Bucket=bucket, Policy=allow_alt(bucket, second_key, "s3:PutObject",
                                                               "s3:PutObjectAcl"))
    alt_s3.put_object(Bucket=bucket, Key="public", Body=b"x", ACL="public-read")
    root_s3.delete_bucket_policy(Bucket=bucket)

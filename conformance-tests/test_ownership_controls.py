"""Bucket ownership controls (Object Ownership): the document's round trip and errors, the
CreateBucket header, and who owns an object and whether ACLs count in each mode (boto3 + raw HTTP).

A bucket without the document keeps this gateway's behaviour from before the setting existed: ACLs
apply and the bucket owner owns every object (AWS makes new buckets BucketOwnerEnforced)."""

import json

import pytest
from botocore.exceptions import ClientError

from conftest import OZONE_OM, make_s3_client
from raw_client import assert_s3_error

ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"
MODES = ["BucketOwnerEnforced", "BucketOwnerPreferred", "ObjectWriter"]


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


def set_mode(client, bucket, mode):
    client.put_bucket_ownership_controls(
        Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": mode}]})


def let_alt_write(root_s3, bucket, second_key):
    root_s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Principal": {"AWS": second_key.access_key},
                       "Action": ["s3:PutObject", "s3:PutObjectAcl"],
                       "Resource": f"arn:aws:s3:::{bucket}/*"}],
    }))


def test_the_document_round_trips_and_is_not_found_without_one(root_s3, raw, bucket):
    assert error_of(root_s3.get_bucket_ownership_controls, Bucket=bucket) == (
        404, "OwnershipControlsNotFoundError")
    for mode in MODES:
        set_mode(root_s3, bucket, mode)
        rules = root_s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"]
        assert rules == [{"ObjectOwnership": mode}]
    stored = raw.request("GET", bucket, query=[("ownershipControls", "")])
    assert stored.status_code == 200 and "<ObjectOwnership>ObjectWriter</ObjectOwnership>" in stored.text
    for _ in range(2):
        assert raw.request("DELETE", bucket, query=[("ownershipControls", "")]).status_code == 204
    assert_s3_error(raw.request("GET", bucket, query=[("ownershipControls", "")]), 404,
                    "OwnershipControlsNotFoundError")


@pytest.mark.parametrize("body", [
    b"",
    b"<OwnershipControls>",
    b"<OwnershipControls/>",
    b"<OwnershipControls><Rule><ObjectOwnership>Everyone</ObjectOwnership></Rule></OwnershipControls>",
    b"<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>"
    b"<Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>",
])
def test_a_malformed_document_is_refused_and_nothing_stored(root_s3, raw, bucket, body):
    assert_s3_error(raw.request("PUT", bucket, query=[("ownershipControls", "")], body=body),
                    400, "MalformedXML")
    assert error_of(root_s3.get_bucket_ownership_controls, Bucket=bucket)[0] == 404


def test_only_the_bucket_owner_configures_it(root_s3, alt_s3, bucket):
    set_mode(root_s3, bucket, "ObjectWriter")
    assert error_of(alt_s3.get_bucket_ownership_controls, Bucket=bucket) == (403, "AccessDenied")
    assert error_of(alt_s3.delete_bucket_ownership_controls, Bucket=bucket) == (403, "AccessDenied")
    assert error_of(set_mode, client=alt_s3, bucket=bucket, mode="BucketOwnerEnforced") == (403, "AccessDenied")


def test_create_bucket_takes_the_setting_in_its_header(root_s3, bucket_names):
    name = bucket_names()
    root_s3.create_bucket(Bucket=name, ObjectOwnership="ObjectWriter")
    rules = root_s3.get_bucket_ownership_controls(Bucket=name)["OwnershipControls"]["Rules"]
    assert rules == [{"ObjectOwnership": "ObjectWriter"}]
    enforced = bucket_names()
    root_s3.create_bucket(Bucket=enforced, ObjectOwnership="BucketOwnerEnforced", ACL="private")
    assert error_of(root_s3.put_bucket_acl, Bucket=enforced, ACL="public-read") == (
        400, "AccessControlListNotSupported")


def test_create_bucket_refuses_a_bad_setting_or_an_acl_with_enforced(root_s3, raw, bucket_names):
    name = bucket_names()
    assert error_of(root_s3.create_bucket, Bucket=name, ObjectOwnership="BucketOwnerEnforced",
                    ACL="public-read") == (400, "InvalidBucketAclWithObjectOwnership")
    assert_s3_error(raw.request("PUT", name, headers={"x-amz-object-ownership": "Mine"}), 400,
                    "InvalidArgument")
    assert error_of(root_s3.head_bucket, Bucket=name)[0] == 404


def test_enforced_refuses_acls_but_the_bucket_owners_full_control(root_s3, raw, bucket):
    set_mode(root_s3, bucket, "BucketOwnerEnforced")
    assert error_of(root_s3.put_object, Bucket=bucket, Key="k", Body=b"x", ACL="public-read") == (
        400, "AccessControlListNotSupported")
    assert error_of(root_s3.put_object, Bucket=bucket, Key="k", Body=b"x",
                    GrantRead=f'uri="{ALL_USERS}"') == (400, "AccessControlListNotSupported")
    assert error_of(root_s3.create_multipart_upload, Bucket=bucket, Key="m", ACL="public-read") == (
        400, "AccessControlListNotSupported")
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x", ACL="bucket-owner-full-control")
    # Grants naming only the bucket owner's full control are that ACL "in XML form".
    root_s3.put_object(Bucket=bucket, Key="g", Body=b"x", GrantFullControl=f'id="{owner_id(root_s3)}"')
    # AWS refuses every other canned ACL there, `private` included.
    for refused in (lambda: root_s3.put_object(Bucket=bucket, Key="p", Body=b"x", ACL="private"),
                    lambda: root_s3.create_multipart_upload(Bucket=bucket, Key="p", ACL="private"),
                    lambda: root_s3.copy_object(Bucket=bucket, Key="p", CopySource=f"{bucket}/k", ACL="private"),
                    lambda: root_s3.put_bucket_acl(Bucket=bucket, ACL="private")):
        assert error_of(refused) == (400, "AccessControlListNotSupported")
    assert error_of(root_s3.copy_object, Bucket=bucket, Key="c", CopySource=f"{bucket}/k",
                    ACL="public-read") == (400, "AccessControlListNotSupported")
    assert error_of(root_s3.put_bucket_acl, Bucket=bucket, ACL="public-read") == (
        400, "AccessControlListNotSupported")
    assert error_of(root_s3.put_object_acl, Bucket=bucket, Key="k", ACL="public-read") == (
        400, "AccessControlListNotSupported")
    root_s3.put_object_acl(Bucket=bucket, Key="k", ACL="bucket-owner-full-control")
    me = owner_id(root_s3)
    acl = root_s3.get_object_acl(Bucket=bucket, Key="k")
    assert acl["Owner"]["ID"] == me
    assert [g["Permission"] for g in acl["Grants"]] == ["FULL_CONTROL"]
    assert raw.unsigned("GET", bucket, "k").status_code == 403


def test_enforced_makes_earlier_acls_grant_nothing_until_removed(root_s3, alt_s3, raw, bucket):
    alt = owner_id(alt_s3)
    root_s3.put_object(Bucket=bucket, Key="public", Body=b"p", ACL="public-read")
    root_s3.put_object(Bucket=bucket, Key="shared", Body=b"s", GrantRead=f'id="{alt}"')
    assert raw.unsigned("GET", bucket, "public").status_code == 200
    set_mode(root_s3, bucket, "BucketOwnerEnforced")
    assert_s3_error(raw.unsigned("GET", bucket, "public"), 403, "AccessDenied")
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="shared") == (403, "AccessDenied")
    grants = root_s3.get_object_acl(Bucket=bucket, Key="public")["Grants"]
    assert [g["Grantee"].get("URI") for g in grants] == [None]
    # The bucket owner still reads everything.
    assert root_s3.get_object(Bucket=bucket, Key="shared")["Body"].read() == b"s"
    root_s3.delete_bucket_ownership_controls(Bucket=bucket)
    assert raw.unsigned("GET", bucket, "public").status_code == 200
    assert alt_s3.get_object(Bucket=bucket, Key="shared")["Body"].read() == b"s"


def test_enforced_cannot_be_set_while_the_bucket_acl_grants_others(root_s3, bucket):
    root_s3.put_bucket_acl(Bucket=bucket, ACL="public-read")
    assert error_of(set_mode, client=root_s3, bucket=bucket, mode="BucketOwnerEnforced") == (
        400, "InvalidBucketAclWithObjectOwnership")
    set_mode(root_s3, bucket, "ObjectWriter")
    root_s3.put_bucket_acl(Bucket=bucket, ACL="private")
    set_mode(root_s3, bucket, "BucketOwnerEnforced")


def test_enforced_ignores_a_bucket_acl_grant_for_others(root_s3, alt_s3, raw, bucket_names):
    name = bucket_names()
    root_s3.create_bucket(Bucket=name)
    root_s3.put_bucket_acl(Bucket=name, ACL="public-read-write")
    assert raw.unsigned("PUT", name, "drop", body=b"x").status_code == 200
    root_s3.put_bucket_acl(Bucket=name, ACL="private")
    set_mode(root_s3, name, "BucketOwnerEnforced")
    assert_s3_error(raw.unsigned("PUT", name, "drop", body=b"x"), 403, "AccessDenied")


def test_without_a_document_the_bucket_owner_owns_what_others_write(
        root_s3, alt_s3, second_key, bucket):
    let_alt_write(root_s3, bucket, second_key)
    alt_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert root_s3.get_object_acl(Bucket=bucket, Key="k")["Owner"]["ID"] == owner_id(root_s3)
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="k") == (403, "AccessDenied")
    # ACLs apply: one granting the world is kept.
    alt_s3.put_object(Bucket=bucket, Key="public", Body=b"x", ACL="public-read")
    grants = root_s3.get_object_acl(Bucket=bucket, Key="public")["Grants"]
    assert {"Grantee": {"Type": "Group", "URI": ALL_USERS}, "Permission": "READ"} in grants


def test_object_writer_makes_the_writer_the_owner(root_s3, alt_s3, second_key, raw, bucket):
    me, alt = owner_id(root_s3), owner_id(alt_s3)
    set_mode(root_s3, bucket, "ObjectWriter")
    let_alt_write(root_s3, bucket, second_key)
    alt_s3.put_object(Bucket=bucket, Key="mine", Body=b"alt's")
    acl = alt_s3.get_object_acl(Bucket=bucket, Key="mine")
    assert acl["Owner"]["ID"] == alt
    assert [(g["Grantee"]["ID"], g["Permission"]) for g in acl["Grants"]] == [(alt, "FULL_CONTROL")]
    assert alt_s3.get_object(Bucket=bucket, Key="mine")["Body"].read() == b"alt's"
    # The owner of the object sets its ACL, and stays its owner.
    alt_s3.put_object_acl(Bucket=bucket, Key="mine", ACL="public-read")
    assert raw.unsigned("GET", bucket, "mine").content == b"alt's"
    assert root_s3.get_object_acl(Bucket=bucket, Key="mine")["Owner"]["ID"] == alt
    # bucket-owner-full-control grants the bucket owner, the writer still owns.
    alt_s3.put_object(Bucket=bucket, Key="shared", Body=b"x", ACL="bucket-owner-full-control")
    acl = root_s3.get_object_acl(Bucket=bucket, Key="shared")
    assert acl["Owner"]["ID"] == alt
    assert {(g["Grantee"]["ID"], g["Permission"]) for g in acl["Grants"]} == {
        (alt, "FULL_CONTROL"), (me, "FULL_CONTROL")}
    # An ACL body naming another owner cannot give the object away.
    assert error_of(alt_s3.put_object_acl, Bucket=bucket, Key="mine", AccessControlPolicy={
        "Owner": {"ID": me},
        "Grants": [{"Grantee": {"Type": "CanonicalUser", "ID": me}, "Permission": "FULL_CONTROL"}],
    }) == (403, "AccessDenied")
    # A multipart upload is the writer's too.
    upload = alt_s3.create_multipart_upload(Bucket=bucket, Key="parts")["UploadId"]
    part = alt_s3.upload_part(Bucket=bucket, Key="parts", UploadId=upload, PartNumber=1, Body=b"p")
    if not OZONE_OM:  # Ozone hands back no upload metadata, so no owner to be: the bucket's is named
        listed = root_s3.list_parts(Bucket=bucket, Key="parts", UploadId=upload)
        assert (listed["Owner"]["ID"], listed["Initiator"]["ID"]) == (alt, alt)
    alt_s3.complete_multipart_upload(Bucket=bucket, Key="parts", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]})
    assert root_s3.get_object_acl(Bucket=bucket, Key="parts")["Owner"]["ID"] == alt
    # What the bucket owner writes is its own, as before.
    root_s3.put_object(Bucket=bucket, Key="root's", Body=b"x")
    assert root_s3.get_object_acl(Bucket=bucket, Key="root's")["Owner"]["ID"] == me
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="root's") == (403, "AccessDenied")


def test_bucket_owner_preferred_hands_over_with_bucket_owner_full_control(
        root_s3, alt_s3, second_key, bucket):
    me, alt = owner_id(root_s3), owner_id(alt_s3)
    set_mode(root_s3, bucket, "BucketOwnerPreferred")
    let_alt_write(root_s3, bucket, second_key)
    alt_s3.put_object(Bucket=bucket, Key="kept", Body=b"x")
    assert root_s3.get_object_acl(Bucket=bucket, Key="kept")["Owner"]["ID"] == alt
    assert alt_s3.get_object(Bucket=bucket, Key="kept")["Body"].read() == b"x"
    alt_s3.put_object(Bucket=bucket, Key="handed", Body=b"x", ACL="bucket-owner-full-control")
    acl = root_s3.get_object_acl(Bucket=bucket, Key="handed")
    assert acl["Owner"]["ID"] == me
    assert [(g["Grantee"]["ID"], g["Permission"]) for g in acl["Grants"]] == [(me, "FULL_CONTROL")]
    assert error_of(alt_s3.get_object, Bucket=bucket, Key="handed") == (403, "AccessDenied")

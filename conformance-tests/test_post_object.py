"""PostObject: browser form uploads signed with a POST policy (boto3's generate_presigned_post),
sent as multipart/form-data by requests, as a browser form would send them."""

import base64
import hashlib
import hmac
import json
import time
import urllib.parse
import xml.etree.ElementTree as ET

import pytest
import requests

from conftest import make_s3_client, payload
from raw_client import assert_s3_error


def presigned_post(client, bucket, key, fields=None, conditions=None, expires=300):
    return client.generate_presigned_post(
        Bucket=bucket, Key=key, Fields=fields, Conditions=conditions, ExpiresIn=expires
    )


def post(form, data: bytes, filename="upload.bin", extra=None):
    fields = dict(form["fields"], **(extra or {}))
    return requests.post(form["url"], data=fields, files={"file": (filename, data)},
                         allow_redirects=False, timeout=120)


def test_a_form_upload_stores_the_file_with_its_metadata(root_s3, bucket):
    fields = {"Content-Type": "text/plain", "x-amz-meta-colour": "blue", "Cache-Control": "no-cache"}
    conditions = [{"Content-Type": "text/plain"}, {"x-amz-meta-colour": "blue"}, {"Cache-Control": "no-cache"}]
    form = presigned_post(root_s3, bucket, "docs/${filename}", fields, conditions)
    data = payload(100_000, "form")
    response = post(form, data, filename="report.txt")
    assert response.status_code == 204, response.text
    etag = f'"{hashlib.md5(data).hexdigest()}"'
    assert response.headers["ETag"] == etag
    assert response.headers["Location"].endswith(f"/{bucket}/docs/report.txt")
    stored = root_s3.get_object(Bucket=bucket, Key="docs/report.txt")
    assert stored["Body"].read() == data
    assert stored["ETag"] == etag
    assert stored["ContentType"] == "text/plain"
    assert stored["CacheControl"] == "no-cache"
    assert stored["Metadata"] == {"colour": "blue"}


@pytest.mark.parametrize("wanted, status", [("200", 200), ("201", 201), ("204", 204), ("302", 204)])
def test_success_action_status(root_s3, bucket, wanted, status):
    form = presigned_post(root_s3, bucket, "k", {"success_action_status": wanted},
                          [{"success_action_status": wanted}])
    response = post(form, b"data")
    assert response.status_code == status, response.text
    if status == 201:
        root = ET.fromstring(response.content)
        found = {child.tag.split("}")[-1]: child.text for child in root}
        assert root.tag.endswith("PostResponse")
        assert (found["Bucket"], found["Key"]) == (bucket, "k")
        assert found["ETag"] == f'"{hashlib.md5(b"data").hexdigest()}"'
        assert found["Location"].endswith(f"/{bucket}/k")
    else:
        assert response.content == b""


def test_success_action_redirect(root_s3, bucket):
    target = "https://app.example.com/done?from=form"
    form = presigned_post(root_s3, bucket, "k", {"success_action_redirect": target},
                          [{"success_action_redirect": target}])
    response = post(form, b"data")
    assert response.status_code == 303, response.text
    location = urllib.parse.urlsplit(response.headers["Location"])
    assert location.netloc == "app.example.com" and location.path == "/done"
    query = urllib.parse.parse_qs(location.query)
    assert query["from"] == ["form"]
    assert query["bucket"] == [bucket] and query["key"] == ["k"]
    assert query["etag"] == [f'"{hashlib.md5(b"data").hexdigest()}"']


def test_tagging_field_tags_the_object(root_s3, bucket):
    tagging = "<Tagging><TagSet><Tag><Key>project</Key><Value>blue</Value></Tag></TagSet></Tagging>"
    form = presigned_post(root_s3, bucket, "k", {"tagging": tagging}, [{"tagging": tagging}])
    assert post(form, b"x").status_code == 204
    assert root_s3.get_object_tagging(Bucket=bucket, Key="k")["TagSet"] == [{"Key": "project", "Value": "blue"}]


def test_content_length_range_is_enforced(root_s3, bucket):
    form = presigned_post(root_s3, bucket, "k", conditions=[["content-length-range", 10, 1000]])
    assert post(form, b"x" * 1000).status_code == 204
    too_big = post(form, b"y" * 1001)
    assert_s3_error(too_big, 400, "EntityTooLarge")
    too_small = post(form, b"z" * 9)
    assert_s3_error(too_small, 400, "EntityTooSmall")
    # The refused uploads stored nothing: the first one is still there.
    assert root_s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x" * 1000


def test_every_content_length_range_is_enforced(root_s3, bucket):
    # Every condition of a policy must hold, the second range as much as the first.
    form = presigned_post(root_s3, bucket, "k", conditions=[["content-length-range", 0, 1000],
                                                            ["content-length-range", 10, 100]])
    assert_s3_error(post(form, b"y" * 101), 400, "EntityTooLarge")
    assert_s3_error(post(form, b"z" * 9), 400, "EntityTooSmall")
    assert root_s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
    assert post(form, b"x" * 100).status_code == 204
    # Ranges that share no size admit no file.
    disjoint = presigned_post(root_s3, bucket, "d", conditions=[["content-length-range", 0, 10],
                                                                ["content-length-range", 20, 30]])
    for size in (5, 25):
        assert post(disjoint, b"d" * size).status_code == 400
    assert [o["Key"] for o in root_s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["k"]


def test_what_the_policy_does_not_allow_is_refused(root_s3, bucket):
    form = presigned_post(root_s3, bucket, "uploads/${filename}",
                          conditions=[["starts-with", "$key", "uploads/"]])
    wrong_key = post(form, b"x", extra={"key": "admin/secret"})
    assert "Policy Condition failed" in assert_s3_error(wrong_key, 403, "AccessDenied").message
    unsigned_field = post(form, b"x", extra={"x-amz-meta-sneaky": "1"})
    assert "Extra input fields" in assert_s3_error(unsigned_field, 403, "AccessDenied").message
    unsigned_type = post(form, b"x", extra={"Content-Type": "text/html"})
    assert_s3_error(unsigned_type, 403, "AccessDenied")
    assert root_s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
    # Fields named x-ignore-* need no condition.
    assert post(form, b"x", filename="ok.txt", extra={"x-ignore-note": "hi"}).status_code == 204


def test_the_policy_is_for_one_bucket(root_s3, bucket, bucket_names):
    other = bucket_names()
    root_s3.create_bucket(Bucket=other)
    form = presigned_post(root_s3, bucket, "k")
    form["url"] = form["url"].rsplit("/", 1)[0] + f"/{other}"
    assert_s3_error(post(form, b"x"), 403, "AccessDenied")


def test_expired_policy_and_bad_signature_are_refused(root_s3, bucket):
    expired = presigned_post(root_s3, bucket, "k", expires=-10)
    assert "Policy expired" in assert_s3_error(post(expired, b"x"), 403, "AccessDenied").message
    form = presigned_post(root_s3, bucket, "k")
    signature = form["fields"]["x-amz-signature"]
    forged = post(form, b"x", extra={"x-amz-signature": ("0" if signature[0] != "0" else "1") + signature[1:]})
    assert_s3_error(forged, 403, "SignatureDoesNotMatch")
    # A policy changed after signing does not verify.
    policy = json.loads(base64.b64decode(form["fields"]["policy"]))
    policy["conditions"].append(["starts-with", "$x-amz-meta-extra", ""])
    changed = base64.b64encode(json.dumps(policy).encode()).decode()
    assert_s3_error(post(form, b"x", extra={"policy": changed, "x-amz-meta-extra": "1"}), 403,
                    "SignatureDoesNotMatch")
    no_policy = {k: v for k, v in form["fields"].items() if k != "policy"}
    response = requests.post(form["url"], data=no_policy, files={"file": ("f", b"x")}, timeout=30)
    assert_s3_error(response, 403, "AccessDenied")


def test_unknown_key_is_invalid_access_key(target, bucket):
    from sigv4 import Credentials

    stranger = make_s3_client(target.endpoint, Credentials("CTNOSUCHKEY000000000", "x" * 40, target.creds.region))
    form = presigned_post(stranger, bucket, "k")
    assert_s3_error(post(form, b"x"), 403, "InvalidAccessKeyId")


def test_another_keys_policy_cannot_write_to_the_bucket(target, bucket, second_key):
    other = make_s3_client(target.endpoint, second_key)
    form = presigned_post(other, bucket, "k")
    assert_s3_error(post(form, b"x"), 403, "AccessDenied")


def test_a_form_upload_is_authorised_as_the_put_object_it_is(target, root_s3, bucket, second_key):
    """A bucket policy binds a form upload as it binds PutObject: a Deny stops even the
    owner, an Allow lets another key write (the object then belongs to the bucket owner)."""
    other = make_s3_client(target.endpoint, second_key)
    root_s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/locked/*"},
        {"Effect": "Allow", "Principal": {"AWS": second_key.access_key}, "Action": "s3:PutObject",
         "Resource": f"arn:aws:s3:::{bucket}/shared/*"},
    ]}))
    assert_s3_error(post(presigned_post(root_s3, bucket, "locked/k"), b"x"), 403, "AccessDenied")
    assert_s3_error(post(presigned_post(other, bucket, "locked/k"), b"x"), 403, "AccessDenied")
    assert_s3_error(post(presigned_post(other, bucket, "elsewhere"), b"x"), 403, "AccessDenied")
    assert post(presigned_post(other, bucket, "shared/k"), b"from alt").status_code == 204
    assert root_s3.get_object(Bucket=bucket, Key="shared/k")["Body"].read() == b"from alt"
    root_s3.delete_bucket_policy(Bucket=bucket)
    assert post(presigned_post(root_s3, bucket, "locked/k"), b"x").status_code == 204


def test_sigv2_policy(target, root_s3, bucket):
    v2 = make_s3_client(target.endpoint, target.creds, signature_version="s3")
    form = presigned_post(v2, bucket, "v2-key")
    assert "AWSAccessKeyId" in form["fields"] and "signature" in form["fields"]
    assert post(form, b"v2 data").status_code == 204
    assert root_s3.get_object(Bucket=bucket, Key="v2-key")["Body"].read() == b"v2 data"


def test_a_large_file_streams_through(root_s3, bucket):
    data = payload(24 * 1024 * 1024, "big form")
    form = presigned_post(root_s3, bucket, "big")
    response = post(form, data)
    assert response.status_code == 204, response.text
    # The form was read to its end: the connection can carry the next request.
    assert response.headers.get("Connection") != "close"
    head = root_s3.head_object(Bucket=bucket, Key="big")
    assert head["ContentLength"] == len(data)
    assert head["ETag"] == f'"{hashlib.md5(data).hexdigest()}"'


def test_malformed_forms_are_clear_400s(target, root_s3, bucket):
    url = f"{target.endpoint}/{bucket}"
    form = presigned_post(root_s3, bucket, "k")
    not_a_form = requests.post(url, data=b"key=k", headers={"Content-Type": "application/x-www-form-urlencoded"},
                               timeout=30)
    assert_s3_error(not_a_form, 412, "PreconditionFailed")
    no_boundary = requests.post(url, data=b"--x\r\n", headers={"Content-Type": "multipart/form-data"}, timeout=30)
    assert_s3_error(no_boundary, 400, "MalformedPOSTRequest")
    prepared = requests.Request("POST", url, data=form["fields"], files={"file": ("f", b"abc")}).prepare()
    truncated = requests.post(url, data=prepared.body[:-20], headers={"Content-Type": prepared.headers["Content-Type"]},
                              timeout=30)
    assert_s3_error(truncated, 400, "MalformedPOSTRequest")
    no_file = requests.post(url, files={k: (None, v) for k, v in form["fields"].items()}, timeout=30)
    assert_s3_error(no_file, 400, "InvalidArgument")
    no_key = {k: v for k, v in form["fields"].items() if k != "key"}
    missing_key = requests.post(url, data=no_key, files={"file": ("f", b"x")}, timeout=30)
    assert_s3_error(missing_key, 400, "InvalidArgument")
    huge_field = requests.post(url, data=dict(form["fields"], **{"x-ignore-pad": "p" * 70_000}),
                               files={"file": ("f", b"x")}, timeout=30)
    assert_s3_error(huge_field, 400, "MaxMessageLengthExceeded")
    assert root_s3.list_objects_v2(Bucket=bucket).get("KeyCount") == 0
    # The gateway still serves after all that.
    assert post(form, b"fine").status_code == 204


def test_a_checksum_field_is_verified_and_stored(root_s3, bucket):
    data = payload(50_000, "checksummed")
    good = base64.b64encode(hashlib.sha256(data).digest()).decode()
    form = presigned_post(root_s3, bucket, "k")
    assert post(form, data, extra={"x-amz-checksum-sha256": good}).status_code == 204
    head = root_s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert head["ChecksumSHA256"] == good
    wrong = base64.b64encode(hashlib.sha256(b"other").digest()).decode()
    assert_s3_error(post(form, b"other bytes", extra={"x-amz-checksum-sha256": wrong}), 400, "BadDigest")
    assert root_s3.get_object(Bucket=bucket, Key="k")["Body"].read() == data


def anonymous_post(target, bucket, key, data: bytes, extra=None):
    """A form with neither a policy nor a signature, as a page posting to a public bucket sends it."""
    fields = dict({"key": key}, **(extra or {}))
    return requests.post(f"{target.endpoint}/{bucket}", data=fields, files={"file": ("f", data)}, timeout=30)


def test_an_anonymous_form_upload_is_decided_by_the_bucket_acl_and_policy(target, root_s3, bucket):
    """As on S3: without a policy and a signature the upload is anonymous, refused unless the bucket's
    ACL or policy lets anyone write, and then stored as that write with the form's `acl`."""
    assert_s3_error(anonymous_post(target, bucket, "k", b"x"), 403, "AccessDenied")
    root_s3.put_bucket_acl(Bucket=bucket, ACL="public-read-write")
    response = anonymous_post(target, bucket, "anon", b"from anyone",
                              {"acl": "public-read", "Content-Type": "text/plain"})
    assert response.status_code == 204, response.text
    stored = root_s3.get_object(Bucket=bucket, Key="anon")
    assert stored["Body"].read() == b"from anyone"
    assert stored["ContentType"] == "text/plain"
    grants = root_s3.get_object_acl(Bucket=bucket, Key="anon")["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("/global/AllUsers") and g["Permission"] == "READ"
               for g in grants), grants
    assert requests.get(f"{target.endpoint}/{bucket}/anon", timeout=30).content == b"from anyone"
    assert_s3_error(anonymous_post(target, bucket, "bad-acl", b"x", {"acl": "no-such-acl"}), 400,
                    "InvalidArgument")
    root_s3.put_bucket_acl(Bucket=bucket, ACL="private")
    assert_s3_error(anonymous_post(target, bucket, "later", b"x"), 403, "AccessDenied")
    root_s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "s3:PutObject", "Resource": f"arn:aws:s3:::{bucket}/drop/*"},
    ]}))
    assert anonymous_post(target, bucket, "drop/k", b"dropped").status_code == 204
    assert_s3_error(anonymous_post(target, bucket, "other", b"x"), 403, "AccessDenied")
    root_s3.delete_bucket_policy(Bucket=bucket)


def test_the_acl_field_of_a_signed_form_is_the_objects_acl(root_s3, bucket):
    form = presigned_post(root_s3, bucket, "shared", {"acl": "public-read"}, [{"acl": "public-read"}])
    assert post(form, b"x").status_code == 204
    grants = root_s3.get_object_acl(Bucket=bucket, Key="shared")["Grants"]
    assert any(g["Grantee"].get("URI", "").endswith("/global/AllUsers") for g in grants), grants

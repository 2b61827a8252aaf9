"""Bucket policy conditions and NotAction/NotPrincipal/NotResource, with the AWS S3 user guide's
example bucket policies (bucket, account and user names substituted), each checked with requests it
allows and requests it refuses. The client's address comes from X-Forwarded-For: the server trusts
loopback as its proxy, as a gateway behind a load balancer would."""

import datetime
import json
import time
import uuid
from pathlib import Path

import pytest
import requests
from botocore.exceptions import ClientError

from conftest import OZONE_OM, backend_args, external_endpoint, gateway_binary, make_s3_client, start_server
from gateway_process import GatewayProcess
from raw_client import RawClient, assert_s3_error
from sigv4 import Credentials
ACCOUNT = "111122223333"
FIXTURES = Path(__file__).resolve().parent.parent / "gateway" / "tests" / "fixtures"


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    if external_endpoint() is not None:
        pytest.skip("starts its own server with trusted_proxies (S3_ENDPOINT is set)")
    server = start_server(tmp_path_factory, "policy-conditions", ["--trusted-proxies", "127.0.0.0/8, ::1"])
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def owner(server) -> Credentials:
    return Credentials(server.access_key, server.secret_key)


@pytest.fixture(scope="module")
def alt(server) -> Credentials:
    key = server.create_key(f"ct-policy-{uuid.uuid4().hex[:6]}")
    return Credentials(key["access_key"], key["secret_key"])


@pytest.fixture(scope="module")
def owner_s3(server, owner):
    return make_s3_client(server.endpoint, owner)


@pytest.fixture(scope="module")
def raw(server, owner) -> RawClient:
    return RawClient(server.endpoint, owner)


@pytest.fixture
def bucket(owner_s3) -> str:
    name = f"ct-{uuid.uuid4().hex[:10]}-cond"
    owner_s3.create_bucket(Bucket=name)
    return name


def put_policy(s3, bucket: str, text: str) -> None:
    s3.put_bucket_policy(Bucket=bucket, Policy=text.replace("amzn-s3-demo-bucket", bucket))


def from_address(address: str) -> dict:
    return {"X-Forwarded-For": address}


def test_a_deny_outside_an_address_block_binds_everyone_but_the_policys_management(
        owner_s3, raw, owner, bucket):
    # "Restrict access to specific IP addresses" (Deny with NotIpAddress).
    put_policy(owner_s3, bucket, """{
    "Version": "2012-10-17",
    "Id": "S3PolicyId1",
    "Statement": [
        {
            "Sid": "IPAllow",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:*",
            "Resource": [
                "arn:aws:s3:::amzn-s3-demo-bucket",
                "arn:aws:s3:::amzn-s3-demo-bucket/*"
            ],
            "Condition": {
                "NotIpAddress": {
                    "aws:SourceIp": "192.0.2.0/24"
                }
            }
        }
    ]
}""")
    inside = raw.request("PUT", bucket, "k", headers=from_address("192.0.2.17"), body=b"x")
    assert inside.status_code == 200, inside.text
    assert raw.request("GET", bucket, "k", headers=from_address("192.0.2.17")).content == b"x"
    for outside in ["203.0.113.9", "2001:db8::1"]:
        assert_s3_error(raw.request("GET", bucket, "k", headers=from_address(outside)), 403, "AccessDenied")
    # Without the header the client is the proxy itself, 127.0.0.1: outside too.
    assert_s3_error(raw.request("GET", bucket, "k"), 403, "AccessDenied")
    # Only the hop the trusted proxy saw counts: what the client claimed left of it is not believed.
    claimed = raw.request("GET", bucket, "k", headers=from_address("192.0.2.17, 203.0.113.9"))
    assert_s3_error(claimed, 403, "AccessDenied")
    # The owner may always manage the policy that locked it out.
    owner_s3.delete_bucket_policy(Bucket=bucket)
    assert raw.request("GET", bucket, "k").status_code == 200


def test_an_allow_for_ipv4_and_ipv6_blocks_is_not_public(owner_s3, raw, bucket):
    # "Allowing IPv4 and IPv6 addresses".
    put_policy(owner_s3, bucket, """{
  "Id": "PolicyId2",
  "Version": "2012-10-17",
  "Statement": [
    {
      "Sid": "AllowIPmix",
      "Effect": "Allow",
      "Principal": "*",
      "Action": "s3:*",
      "Resource": [
        "arn:aws:s3:::amzn-s3-demo-bucket",
        "arn:aws:s3:::amzn-s3-demo-bucket/*"
      ],
      "Condition": {
        "IpAddress": {
          "aws:SourceIp": [
            "192.0.2.0/24",
            "2001:DB8:1234:5678::/64"
          ]
        },
        "NotIpAddress": {
          "aws:SourceIp": [
            "203.0.113.0/24",
            "2001:DB8:1234:5678:ABCD::/80"
          ]
        }
      }
    }
  ]
}""")
    owner_s3.put_object(Bucket=bucket, Key="k", Body=b"open")
    for address in ["192.0.2.1", "2001:db8:1234:5678::9", "[2001:db8:1234:5678::9]:4711"]:
        got = raw.unsigned("GET", bucket, "k", headers=from_address(address))
        assert (got.status_code, got.content) == (200, b"open"), address
    for address in ["203.0.113.5", "2001:db8:1234:5678:abcd::1", "198.51.100.1", "2001:db8:1234:5679::1"]:
        assert_s3_error(raw.unsigned("GET", bucket, "k", headers=from_address(address)), 403, "AccessDenied")
    # Fixed address blocks: not public, so RestrictPublicBuckets leaves it in force.
    assert owner_s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is False
    owner_s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={
        "BlockPublicPolicy": True, "RestrictPublicBuckets": True})
    assert raw.unsigned("GET", bucket, "k", headers=from_address("192.0.2.1")).status_code == 200


def test_requests_without_tls_are_denied(owner_s3, raw, bucket, tmp_path_factory, owner):
    # "Enforce encryption of data in transit" (aws:SecureTransport).
    text = """{
    "Version": "2012-10-17",
    "Statement": [{
        "Sid": "RestrictToTLSRequestsOnly",
        "Action": "s3:*",
        "Effect": "Deny",
        "Resource": [
            "arn:aws:s3:::amzn-s3-demo-bucket",
            "arn:aws:s3:::amzn-s3-demo-bucket/*"
        ],
        "Condition": {
            "Bool": {
                "aws:SecureTransport": "false"
            }
        },
        "Principal": "*"
    }]
}"""
    put_policy(owner_s3, bucket, text)
    assert_s3_error(raw.request("PUT", bucket, "k", body=b"x"), 403, "AccessDenied")
    assert_s3_error(raw.request("GET", bucket, query=[("list-type", "2")]), 403, "AccessDenied")
    # The same policy on a server that speaks TLS: its requests are let through.
    tls = TlsGateway.start_with(tmp_path_factory, owner)
    try:
        client = RawClient(tls.endpoint, owner)
        client.session.verify = str(FIXTURES / "test-ca.pem")
        created = client.request("PUT", bucket, query=[])
        if OZONE_OM:
            # Both gateways serve one Ozone store: the bucket is there already, and the owner's.
            assert_s3_error(created, 409, "BucketAlreadyOwnedByYou")
        else:
            assert created.status_code == 200, created.text
        put = client.request("PUT", bucket, query=[("policy", "")], body=text.replace(
            "amzn-s3-demo-bucket", bucket).encode())
        assert put.status_code == 204, put.text
        assert client.request("PUT", bucket, "k", body=b"x").status_code == 200
        assert client.request("GET", bucket, "k").content == b"x"
        version = {"Condition": {"NumericLessThan": {"s3:TlsVersion": 1.2}}}
        deny_old = {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject",
                    "Resource": f"arn:aws:s3:::{bucket}/*", **version}
        body = json.dumps({"Version": "2012-10-17", "Statement": [deny_old]}).encode()
        assert client.request("PUT", bucket, query=[("policy", "")], body=body).status_code == 204
        assert client.request("GET", bucket, "k").status_code == 200, "TLS 1.2 or newer"
    finally:
        tls.stop()


class TlsGateway(GatewayProcess):
    """A gateway that serves TLS with the test certificate (for 127.0.0.1, by the test CA)."""

    @property
    def endpoint(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    def wait_healthy(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                health = requests.get(self.endpoint + "/health", timeout=2, verify=str(FIXTURES / "test-ca.pem"))
                if health.status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"the TLS gateway did not answer:\n{self.log_tail()}")

    @classmethod
    def start_with(cls, tmp_path_factory, creds: Credentials) -> "TlsGateway":
        base = tmp_path_factory.mktemp("policy-tls")
        args = backend_args() + ["--tls-cert", str(FIXTURES / "tls-cert.pem"),
                                 "--tls-key", str(FIXTURES / "tls-key.pem")]
        server = cls(gateway_binary(), base / "data", base / "gateway.log", creds.access_key, creds.secret_key, args)
        server.start()
        return server


def test_a_user_lists_only_the_prefix_the_policy_names(owner_s3, raw, alt, bucket):
    # "Granting permissions to list the objects in a folder" (s3:prefix, Allow and Deny), for Dave.
    put_policy(owner_s3, bucket, """{
   "Version":"2012-10-17",
   "Statement":[
      {
         "Sid":"statement1",
         "Effect":"Allow",
         "Principal": {
            "AWS": "arn:aws:iam::111122223333:user/Dave"
         },
         "Action":"s3:ListBucket",
         "Resource":"arn:aws:s3:::amzn-s3-demo-bucket",
         "Condition" : {
            "StringEquals" : {
               "s3:prefix": "projects"
            }
         }
      },
      {
         "Sid":"statement2",
         "Effect":"Deny",
         "Principal": {
            "AWS": "arn:aws:iam::111122223333:user/Dave"
         },
         "Action":"s3:ListBucket",
         "Resource":"arn:aws:s3:::amzn-s3-demo-bucket",
         "Condition" : {
            "StringNotEquals" : {
               "s3:prefix": "projects"
            }
         }
      }
   ]
}""".replace("Dave", alt.access_key))
    owner_s3.put_object(Bucket=bucket, Key="projects/a", Body=b"x")
    listed = raw.request("GET", bucket, query=[("list-type", "2"), ("prefix", "projects")], creds=alt)
    assert listed.status_code == 200 and "<Key>projects/a</Key>" in listed.text
    v1 = raw.request("GET", bucket, query=[("prefix", "projects")], creds=alt)
    assert v1.status_code == 200
    for query in [[("list-type", "2"), ("prefix", "other")], [("list-type", "2")],
                  [("list-type", "2"), ("prefix", "Projects")]]:
        assert_s3_error(raw.request("GET", bucket, query=query, creds=alt), 403, "AccessDenied")
    # The Deny names Dave only: the owner lists as before.
    assert raw.request("GET", bucket, query=[("list-type", "2")]).status_code == 200


def test_absence_is_revealed_only_where_the_caller_may_list(owner_s3, raw, alt, bucket):
    # S3 answers a missing key 404 to a caller that may list the bucket, else 403; a listing
    # limited by s3:prefix reveals absence only under that prefix (the key is the prefix).
    text = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Allow",
        "Principal": {"AWS": "*"},
        "Action": "s3:ListBucket",
        "Resource": f"arn:aws:s3:::{bucket}",
        "Condition": {"StringLike": {"s3:prefix": "public/*"}}}]})
    owner_s3.put_bucket_policy(Bucket=bucket, Policy=text)
    assert raw.request("HEAD", bucket, "public/missing", creds=alt).status_code == 404
    assert_s3_error(raw.request("GET", bucket, "public/missing", creds=alt), 404, "NoSuchKey")
    assert raw.request("HEAD", bucket, "private/missing", creds=alt).status_code == 403
    assert_s3_error(raw.request("GET", bucket, "private/missing", creds=alt), 403, "AccessDenied")


def test_a_listing_limited_by_max_keys_and_delimiter(owner_s3, raw, alt, bucket):
    text = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Sid": "SmallListingsOnly",
        "Effect": "Allow",
        "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/{alt.access_key}"},
        "Action": "s3:ListBucket",
        "Resource": f"arn:aws:s3:::{bucket}",
        "Condition": {"NumericLessThanEquals": {"s3:max-keys": "10"},
                      "StringEqualsIfExists": {"s3:delimiter": "/"}}}]})
    owner_s3.put_bucket_policy(Bucket=bucket, Policy=text)
    small = [("list-type", "2"), ("max-keys", "10")]
    assert raw.request("GET", bucket, query=small, creds=alt).status_code == 200
    assert raw.request("GET", bucket, query=small + [("delimiter", "/")], creds=alt).status_code == 200
    for query in [[("list-type", "2"), ("max-keys", "11")], [("list-type", "2")],
                  small + [("delimiter", "-")]]:
        assert_s3_error(raw.request("GET", bucket, query=query, creds=alt), 403, "AccessDenied")


def test_uploads_must_give_the_bucket_owner_full_control(owner_s3, raw, alt, bucket):
    # "Granting cross-account permissions to upload objects while ensuring the bucket owner has full
    # control" (s3:x-amz-acl). Setting an ACL in a PutObject also needs s3:PutObjectAcl (the PutObject
    # API reference), so the statement names it too.
    put_policy(owner_s3, bucket, """{
   "Version":"2012-10-17",
   "Statement":[
     {
       "Sid":"statement1",
       "Effect":"Allow",
       "Principal":{
         "AWS":"arn:aws:iam::111122223333:user/Dave"
       },
       "Action":["s3:PutObject","s3:PutObjectAcl"],
       "Resource":"arn:aws:s3:::amzn-s3-demo-bucket/*",
       "Condition":{
         "StringEquals":{
           "s3:x-amz-acl":"bucket-owner-full-control"
         }
       }
     }
   ]
}""".replace("Dave", alt.access_key))
    full = {"x-amz-acl": "bucket-owner-full-control"}
    assert raw.request("PUT", bucket, "k", headers=full, body=b"x", creds=alt).status_code == 200
    for headers in [{}, {"x-amz-acl": "private"}, {"x-amz-acl": "BUCKET-OWNER-FULL-CONTROL"}]:
        refused = raw.request("PUT", bucket, "k", headers=headers, body=b"x", creds=alt)
        assert_s3_error(refused, 403, "AccessDenied")


def test_tags_a_request_sets_and_tags_an_object_has(owner_s3, raw, alt, bucket):
    # "Tagging and access control policies": s3:RequestObjectTag and s3:ExistingObjectTag, for the
    # user JohnDoe (a role in the guide; this gateway's principals are keys).
    put_policy(owner_s3, bucket, """{
  "Version": "2012-10-17",
  "Statement": [
    {
      "Effect": "Allow",
      "Principal": {
        "AWS": "arn:aws:iam::111122223333:user/JohnDoe"
      },
      "Action": [
        "s3:PutObject"
      ],
      "Resource": [
        "arn:aws:s3:::amzn-s3-demo-bucket/*"
      ],
      "Condition": {
        "StringEquals": {
          "s3:RequestObjectTag/Department": "Finance"
        }
      }
    },
    {
      "Effect": "Allow",
      "Principal": {
        "AWS": "arn:aws:iam::111122223333:user/JohnDoe"
      },
      "Action": "s3:GetObject",
      "Resource": "arn:aws:s3:::amzn-s3-demo-bucket/*",
      "Condition": {
        "StringEquals": {
          "s3:ExistingObjectTag/environment": "production"
        }
      }
    }
  ]
}""".replace("JohnDoe", alt.access_key))
    finance = {"x-amz-tagging": "Department=Finance&Project=x"}
    assert raw.request("PUT", bucket, "f", headers=finance, body=b"x", creds=alt).status_code == 200
    for headers in [{}, {"x-amz-tagging": "Department=Sales"}, {"x-amz-tagging": "department=Finance"}]:
        assert_s3_error(raw.request("PUT", bucket, "f", headers=headers, body=b"x", creds=alt), 403, "AccessDenied")
    owner_s3.put_object(Bucket=bucket, Key="prod", Body=b"p", Tagging="environment=production")
    owner_s3.put_object(Bucket=bucket, Key="test", Body=b"t", Tagging="environment=test")
    owner_s3.put_object(Bucket=bucket, Key="none", Body=b"n")
    got = raw.request("GET", bucket, "prod", creds=alt)
    assert (got.status_code, got.content) == (200, b"p")
    for key in ["test", "none", "missing"]:
        assert_s3_error(raw.request("GET", bucket, key, creds=alt), 403, "AccessDenied")
    # Retagging the object changes the answer: the tags are read at each request.
    owner_s3.put_object_tagging(Bucket=bucket, Key="prod", Tagging={"TagSet": []})
    assert_s3_error(raw.request("GET", bucket, "prod", creds=alt), 403, "AccessDenied")


def test_the_tag_keys_of_a_request_as_a_set(owner_s3, raw, alt, bucket):
    # "Allow only specific tag keys" (ForAllValues with s3:RequestObjectTagKeys); a
    # PutObjectTagging's tags are in its body, read after the decision: an Allow on them grants
    # nothing, and a Deny on them binds.
    text = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": alt.access_key},
         "Action": ["s3:PutObject", "s3:PutObjectTagging"], "Resource": f"arn:aws:s3:::{bucket}/*",
         "Condition": {"ForAllValues:StringEquals": {"s3:RequestObjectTagKeys": ["Owner", "CreationDate"]}}},
        {"Effect": "Deny", "Principal": "*", "Action": "s3:PutObjectTagging",
         "Resource": f"arn:aws:s3:::{bucket}/locked/*",
         "Condition": {"ForAnyValue:StringEquals": {"s3:RequestObjectTagKeys": "Owner"}}}]})
    owner_s3.put_bucket_policy(Bucket=bucket, Policy=text)
    for tags in ["Owner=me", "Owner=me&CreationDate=today", None]:
        headers = {"x-amz-tagging": tags} if tags else {}
        assert raw.request("PUT", bucket, "k", headers=headers, body=b"x", creds=alt).status_code == 200, tags
    assert_s3_error(raw.request("PUT", bucket, "k", headers={"x-amz-tagging": "Owner=me&Colour=red"},
                                body=b"x", creds=alt), 403, "AccessDenied")
    tagging = (b'<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet><Tag><Key>Owner</Key>'
               b'<Value>me</Value></Tag></TagSet></Tagging>')
    assert_s3_error(raw.request("PUT", bucket, "k", query=[("tagging", "")], body=tagging, creds=alt),
                    403, "AccessDenied")
    owner_s3.put_object(Bucket=bucket, Key="locked/k", Body=b"x")
    assert_s3_error(raw.request("PUT", bucket, "locked/k", query=[("tagging", "")], body=tagging), 403,
                    "AccessDenied")
    assert raw.request("PUT", bucket, "k", query=[("tagging", "")], body=tagging).status_code == 200


def test_access_within_a_time_window(owner_s3, raw, bucket):
    # The IAM guide's date condition (aws:CurrentTime between two dates), open to anyone.
    def window(start: str, end: str) -> str:
        return json.dumps({"Version": "2012-10-17", "Statement": [{
            "Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*",
            "Condition": {"DateGreaterThan": {"aws:CurrentTime": start},
                          "DateLessThan": {"aws:CurrentTime": end}}}]})
    owner_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    owner_s3.put_bucket_policy(Bucket=bucket, Policy=window("2020-04-01T00:00:00Z", "2020-06-30T23:59:59Z"))
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")
    now = datetime.datetime.now(datetime.timezone.utc)
    owner_s3.put_bucket_policy(Bucket=bucket, Policy=window(
        (now - datetime.timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ"),
        str(int((now + datetime.timedelta(hours=1)).timestamp()))))
    assert raw.unsigned("GET", bucket, "k").status_code == 200
    assert owner_s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is True


def test_presigned_urls_refused_by_auth_type(owner_s3, raw, bucket):
    # Deny requests not signed in the Authorization header (s3:authType), e.g. presigned URLs.
    owner_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    owner_s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [{
        "Sid": "HeaderSignaturesOnly", "Effect": "Deny", "Principal": "*", "Action": "s3:*",
        "Resource": [f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"],
        "Condition": {"StringNotEquals": {"s3:authType": "REST-HEADER"},
                      "StringEqualsIfExists": {"s3:signatureversion": "AWS4-HMAC-SHA256"}}}]}))
    assert raw.request("GET", bucket, "k").status_code == 200
    assert_s3_error(requests.get(raw.presigned_url("GET", bucket, "k", 300), timeout=10), 403, "AccessDenied")
    # Anonymous requests carry no authType: StringNotEquals holds, the Deny binds.
    assert_s3_error(raw.unsigned("GET", bucket, "k"), 403, "AccessDenied")


def test_not_action_not_resource_and_not_principal(owner_s3, raw, owner, alt, bucket):
    owner_s3.put_object(Bucket=bucket, Key="public/a", Body=b"a")
    owner_s3.put_object(Bucket=bucket, Key="private/b", Body=b"b")
    owner_s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Sid": "ReadAllButPrivate", "Effect": "Allow", "Principal": {"AWS": alt.access_key},
         "NotAction": ["s3:Delete*", "s3:Put*"], "NotResource": f"arn:aws:s3:::{bucket}/private/*"},
        {"Sid": "OnlyTheOwnerDeletes", "Effect": "Deny",
         "NotPrincipal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/{owner.access_key}"},
         "Action": "s3:DeleteObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]}))
    assert raw.request("GET", bucket, "public/a", creds=alt).status_code == 200
    assert_s3_error(raw.request("GET", bucket, "private/b", creds=alt), 403, "AccessDenied")
    assert_s3_error(raw.request("PUT", bucket, "public/c", body=b"c", creds=alt), 403, "AccessDenied")
    assert_s3_error(raw.request("DELETE", bucket, "public/a", creds=alt), 403, "AccessDenied")
    assert raw.request("DELETE", bucket, "public/a").status_code == 204
    # An Allow to all but some is public: BlockPublicPolicy refuses it.
    owner_s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"BlockPublicPolicy": True})
    with pytest.raises(ClientError) as refused:
        owner_s3.put_bucket_policy(Bucket=bucket, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
            {"Effect": "Allow", "NotPrincipal": {"AWS": alt.access_key}, "Action": "s3:GetObject",
             "Resource": f"arn:aws:s3:::{bucket}/*"}]}))
    assert refused.value.response["Error"]["Code"] == "AccessDenied"


@pytest.mark.parametrize("condition, named", [
    ({"StringEquals": {"aws:SourceVpc": "vpc-1a2b3c4d"}}, "aws:SourceVpc"),
    ({"StringEqualsSortOf": {"aws:Referer": "x"}}, "StringEqualsSortOf"),
    ({"IpAddress": {"aws:SourceIp": "192.0.2.0/33"}}, "192.0.2.0/33"),
    ({"StringEquals": {"aws:username": "${aws:username}"}}, "${aws:username}"),
    ({"StringLike": {"s3:object-lock-mode": "GOVERNANCE"}}, "s3:object-lock-mode"),
])
def test_what_a_condition_cannot_mean_here_is_refused_naming_it(owner_s3, bucket, condition, named):
    text = json.dumps({"Version": "2012-10-17", "Statement": [{
        "Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*",
        "Condition": condition}]})
    with pytest.raises(ClientError) as refused:
        owner_s3.put_bucket_policy(Bucket=bucket, Policy=text)
    error = refused.value.response["Error"]
    assert error["Code"] == "MalformedPolicy" and named in error["Message"], error
    with pytest.raises(ClientError) as none:
        owner_s3.get_bucket_policy(Bucket=bucket)
    assert none.value.response["Error"]["Code"] == "NoSuchBucketPolicy"

"""Virtual-host style addressing (`--domain`): the bucket comes from the Host header."""

import pytest

from conftest import make_s3_client, start_server, unique_bucket_name
from raw_client import RawClient, assert_s3_error, xml_fields
from sigv4 import Credentials

DOMAIN = "s3.conformance.test"


@pytest.fixture(scope="module")
def domain_server(tmp_path_factory, target):
    if not target.managed:
        pytest.skip("starts its own server with --domain (S3_ENDPOINT is set)")
    server = start_server(tmp_path_factory, "virtual-host", extra_args=["--domain", DOMAIN])
    yield server
    server.stop()


def virtual(server, bucket: str) -> RawClient:
    creds = Credentials(server.access_key, server.secret_key)
    return RawClient(server.endpoint, creds, host=f"{bucket}.{DOMAIN}:{server.port}")


def test_object_round_trip_through_bucket_host(domain_server):
    path_style = make_s3_client(domain_server.endpoint, Credentials(domain_server.access_key, domain_server.secret_key))
    name = unique_bucket_name("vhost")
    path_style.create_bucket(Bucket=name)
    client = virtual(domain_server, name)

    put = client.request("PUT", path="/dir/key%20with%20space", body=b"virtual")
    assert put.status_code == 200, put.text
    got = client.request("GET", path="/dir/key%20with%20space")
    assert got.status_code == 200 and got.content == b"virtual"
    assert path_style.get_object(Bucket=name, Key="dir/key with space")["Body"].read() == b"virtual"

    listing = client.request("GET", path="/", query=[("list-type", "2")])
    assert listing.status_code == 200, listing.text
    root, fields = xml_fields(listing.content)
    assert root == "ListBucketResult" and fields["Name"] == name


def test_missing_bucket_through_bucket_host(domain_server):
    client = virtual(domain_server, "no-such-vhost-bucket")
    assert_s3_error(client.request("GET", path="/key"), 404, "NoSuchBucket")


def test_path_style_still_works_with_domain(domain_server):
    client = make_s3_client(domain_server.endpoint, Credentials(domain_server.access_key, domain_server.secret_key))
    name = unique_bucket_name("path-style-too")
    client.create_bucket(Bucket=name)
    client.put_object(Bucket=name, Key="k", Body=b"v")
    assert client.get_object(Bucket=name, Key="k")["Body"].read() == b"v"

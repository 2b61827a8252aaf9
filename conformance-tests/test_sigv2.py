"""SigV2 limits (issue 8, item 3): presigned URLs live at most a week, and V2 can be turned off."""

import pytest
import requests

import sigv2
from conftest import make_s3_client, start_server, unique_bucket_name
from raw_client import assert_s3_error
from sigv4 import Credentials

DAY = 24 * 3600


@pytest.mark.parametrize("days,status", [(6, 200), (8, 403), (365 * 100, 403)])
def test_sigv2_presigned_lifetime_is_at_most_a_week(target, root_s3, bucket, days, status):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"v2 presigned")
    query = sigv2.presigned_query(target.creds, "GET", f"/{bucket}/k", expires_in=days * DAY)
    response = requests.get(f"{target.endpoint}/{bucket}/k?{query}", timeout=30)
    if status == 200:
        assert response.status_code == 200 and response.content == b"v2 presigned", response.text
    else:
        assert_s3_error(response, 403, "AuthorizationQueryParametersError")


def test_sigv2_can_be_turned_off(tmp_path_factory, target):
    if not target.managed:
        pytest.skip("starts its own server with --sigv2 false")
    server = start_server(tmp_path_factory, "no-sigv2", extra_args=["--sigv2", "false"])
    try:
        creds = Credentials(server.access_key, server.secret_key)
        v4 = make_s3_client(server.endpoint, creds)
        bucket = unique_bucket_name("v2-off")  # on Ozone the cluster outlives every run
        v4.create_bucket(Bucket=bucket)
        v4.put_object(Bucket=bucket, Key="k", Body=b"x")
        header = sigv2.header_auth(creds, "GET", f"/{bucket}/k")
        refused = requests.get(f"{server.endpoint}/{bucket}/k", headers=header, timeout=30)
        error = assert_s3_error(refused, 400, "InvalidRequest")
        assert "AWS4-HMAC-SHA256" in error.message
        query = sigv2.presigned_query(creds, "GET", f"/{bucket}/k")
        assert_s3_error(requests.get(f"{server.endpoint}/{bucket}/k?{query}", timeout=30), 400, "InvalidRequest")
        assert v4.get_object(Bucket=bucket, Key="k")["Body"].read() == b"x"
    finally:
        server.stop()


@pytest.mark.parametrize("date,status,code", [
    ("Bad Date", 403, "AccessDenied"),
    ("", 403, "AccessDenied"),
    ("Tue, 07 Jul 1950 21:53:04 GMT", 403, "AccessDenied"),
    ("Tue, 07 Jul 2010 21:53:04 GMT", 403, "RequestTimeTooSkewed"),
    ("Tue, 07 Jul 9999 21:53:04 GMT", 403, "RequestTimeTooSkewed"),
])
def test_sigv2_request_dates_are_judged_as_s3_judges_them(target, bucket, date, status, code):
    """Whatever the signature: a date that is no date (none, unparseable, before the epoch) is
    AccessDenied, a real date outside the 15 minutes RequestTimeTooSkewed (s3-tests' _aws2 date cases)."""
    signature = sigv2.sign(target.creds.secret_key, f"PUT\n\n\n\nx-amz-date:{date}\n/{bucket}/k")
    headers = {"x-amz-date": date, "Authorization": f"AWS {target.creds.access_key}:{signature}"}
    response = requests.put(f"{target.endpoint}/{bucket}/k", data=b"bar", headers=headers, timeout=30)
    assert_s3_error(response, status, code)

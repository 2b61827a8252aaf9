"""S3 versioning through boto3: Put/GetBucketVersioning, version ids on every
write, reads/tags/deletes by VersionId, delete markers (404 for the latest,
405 by id, as AWS answers), the suspended `null` version, copies from a
version, DeleteObjects with versions, and ListObjectVersions paging. On the
Ozone back end, which keeps no versions, enabling them is NotImplemented."""

from xml.etree import ElementTree

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import OZONE_OM

keeps_versions = pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")


def enable(s3, bucket, state="Enabled"):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": state})


def versions_of(s3, bucket, **extra):
    """(key, version id, latest, is marker) in the order of the XML, which
    boto3 splits into Versions and DeleteMarkers."""
    bodies = []

    def keep(http_response, **_):
        bodies.append(http_response.content)

    s3.meta.events.register("after-call.s3.ListObjectVersions", keep)
    try:
        s3.list_object_versions(Bucket=bucket, **extra)
    finally:
        s3.meta.events.unregister("after-call.s3.ListObjectVersions", keep)
    ns = "{http://s3.amazonaws.com/doc/2006-03-01/}"
    rows = []
    for element in ElementTree.fromstring(bodies[0]):
        if element.tag in (ns + "Version", ns + "DeleteMarker"):
            rows.append((
                element.findtext(ns + "Key"), element.findtext(ns + "VersionId"),
                element.findtext(ns + "IsLatest") == "true", element.tag == ns + "DeleteMarker",
            ))
    return rows


@pytest.mark.skipif(not OZONE_OM, reason="what the Ozone back end answers")
def test_enabling_versioning_on_ozone_is_not_implemented(s3, bucket):
    with pytest.raises(ClientError) as err:
        enable(s3, bucket)
    assert (status(err.value), error_code(err.value)) == (501, "NotImplemented")
    assert "Ozone" in err.value.response["Error"]["Message"]
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)


@keeps_versions
def test_versioning_states_and_bad_configurations(s3, bucket):
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    enable(s3, bucket)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    enable(s3, bucket, "Suspended")
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"
    with pytest.raises(ClientError) as err:
        s3.put_bucket_versioning(
            Bucket=bucket,
            VersioningConfiguration={"Status": "Enabled", "MFADelete": "Enabled"},
            MFA="serial 123456",
        )
    assert (status(err.value), error_code(err.value)) == (501, "NotImplemented")
    with pytest.raises(ClientError) as err:
        enable(s3, bucket, "On")
    assert (status(err.value), error_code(err.value)) == (400, "IllegalVersioningConfigurationException")
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"


def test_unversioned_buckets_send_no_version_ids(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert "VersionId" not in put
    assert "x-amz-version-id" not in s3.get_object(Bucket=bucket, Key="k")["ResponseMetadata"]["HTTPHeaders"]
    deleted = s3.delete_object(Bucket=bucket, Key="k")
    assert "DeleteMarker" not in deleted and "VersionId" not in deleted


@keeps_versions
def test_versions_markers_and_reads_by_id(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"before")  # the null version
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    assert len({"null", v1, v2}) == 3
    got = s3.get_object(Bucket=bucket, Key="k")
    assert (got["Body"].read(), got["VersionId"]) == (b"two", v2)
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=v1)["Body"].read() == b"one"
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"before"
    assert s3.head_object(Bucket=bucket, Key="k", VersionId=v1)["ContentLength"] == 3

    deleted = s3.delete_object(Bucket=bucket, Key="k")
    assert deleted["DeleteMarker"] is True
    marker = deleted["VersionId"]
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key="k")
    headers = err.value.response["ResponseMetadata"]["HTTPHeaders"]
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchKey")
    assert (headers["x-amz-delete-marker"], headers["x-amz-version-id"]) == ("true", marker)
    with pytest.raises(ClientError) as err:
        s3.head_object(Bucket=bucket, Key="k", VersionId=marker)
    assert status(err.value) == 405
    assert err.value.response["ResponseMetadata"]["HTTPHeaders"]["x-amz-delete-marker"] == "true"
    assert "Contents" not in s3.list_objects_v2(Bucket=bucket)
    assert versions_of(s3, bucket) == [
        ("k", marker, True, True), ("k", v2, False, False), ("k", v1, False, False), ("k", "null", False, False),
    ]

    # Removing the marker brings the object back; removing a version for good.
    removed = s3.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    assert (removed["DeleteMarker"], removed["VersionId"]) == (True, marker)
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"
    assert s3.delete_object(Bucket=bucket, Key="k", VersionId=v2)["VersionId"] == v2
    assert s3.get_object(Bucket=bucket, Key="k")["VersionId"] == v1
    with pytest.raises(ClientError) as err:
        s3.get_object(Bucket=bucket, Key="k", VersionId=v2)
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchVersion")


@keeps_versions
def test_suspended_buckets_overwrite_the_null_version(s3, bucket):
    enable(s3, bucket)
    kept = s3.put_object(Bucket=bucket, Key="k", Body=b"kept")["VersionId"]
    enable(s3, bucket, "Suspended")
    # A write in a suspended bucket makes the null version and, as in AWS,
    # names no version id (s3-tests test_versioning_bucket_*_return_version_id).
    assert "VersionId" not in s3.put_object(Bucket=bucket, Key="k", Body=b"first")
    assert "VersionId" not in s3.put_object(Bucket=bucket, Key="k", Body=b"second")
    assert versions_of(s3, bucket) == [("k", "null", True, False), ("k", kept, False, False)]
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"second"
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=kept)["Body"].read() == b"kept"
    copied = s3.copy_object(Bucket=bucket, Key="c", CopySource={"Bucket": bucket, "Key": "k"})
    assert "VersionId" not in copied
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"part")["ETag"]
    done = s3.complete_multipart_upload(
        Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]},
    )
    assert "VersionId" not in done
    assert s3.head_object(Bucket=bucket, Key="mp", VersionId="null")["ContentLength"] == 4


@keeps_versions
def test_copy_tags_and_multipart_by_version(s3, bucket):
    enable(s3, bucket)
    old = s3.put_object(Bucket=bucket, Key="src", Body=b"old")["VersionId"]
    s3.put_object(Bucket=bucket, Key="src", Body=b"new")
    copied = s3.copy_object(Bucket=bucket, Key="dst", CopySource={"Bucket": bucket, "Key": "src", "VersionId": old})
    assert copied["CopySourceVersionId"] == old
    assert copied["VersionId"] not in ("null", old)
    assert s3.get_object(Bucket=bucket, Key="dst")["Body"].read() == b"old"

    s3.put_object_tagging(Bucket=bucket, Key="src", VersionId=old, Tagging={"TagSet": [{"Key": "t", "Value": "old"}]})
    tagged = s3.get_object_tagging(Bucket=bucket, Key="src", VersionId=old)
    assert (tagged["TagSet"], tagged["VersionId"]) == ([{"Key": "t", "Value": "old"}], old)
    assert s3.get_object_tagging(Bucket=bucket, Key="src")["TagSet"] == []
    s3.delete_object_tagging(Bucket=bucket, Key="src", VersionId=old)
    assert s3.get_object_tagging(Bucket=bucket, Key="src", VersionId=old)["TagSet"] == []

    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"part")["ETag"]
    done = s3.complete_multipart_upload(
        Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]},
    )
    assert s3.head_object(Bucket=bucket, Key="mp")["VersionId"] == done["VersionId"]


@keeps_versions
def test_object_attributes_by_version(s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"second")["VersionId"]
    latest = s3.get_object_attributes(Bucket=bucket, Key="k", ObjectAttributes=["ObjectSize"])
    assert (latest["ObjectSize"], latest["VersionId"]) == (6, v2)
    old = s3.get_object_attributes(Bucket=bucket, Key="k", VersionId=v1, ObjectAttributes=["ObjectSize"])
    assert (old["ObjectSize"], old["VersionId"]) == (3, v1)
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v1)
    with pytest.raises(ClientError) as err:
        s3.get_object_attributes(Bucket=bucket, Key="k", VersionId=v1, ObjectAttributes=["ObjectSize"])
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchVersion")


@keeps_versions
def test_delete_objects_with_versions(s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="a", Body=b"1")["VersionId"]
    s3.put_object(Bucket=bucket, Key="b", Body=b"2")
    result = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a", "VersionId": v1}, {"Key": "b"}]})
    deleted = {d["Key"]: d for d in result["Deleted"]}
    assert deleted["a"]["VersionId"] == v1 and "DeleteMarker" not in deleted["a"]
    assert deleted["b"]["DeleteMarker"] is True
    marker = deleted["b"]["DeleteMarkerVersionId"]
    assert [r for r in versions_of(s3, bucket) if r[0] == "b"][0] == ("b", marker, True, True)
    assert not [r for r in versions_of(s3, bucket) if r[0] == "a"]


@keeps_versions
def test_list_object_versions_pages_and_prefixes(s3, bucket):
    enable(s3, bucket)
    for key in ["a", "a", "d/x", "d/y", "d/y", "e"]:
        s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    s3.delete_object(Bucket=bucket, Key="e")
    everything = versions_of(s3, bucket)
    assert len(everything) == 7
    assert [r[0] for r in everything if r[2]] == ["a", "d/x", "d/y", "e"]  # one latest per key
    assert [r[0] for r in everything] == ["a", "a", "d/x", "d/y", "d/y", "e", "e"]

    seen, extra = [], {}
    while True:
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=2, **extra)
        entries = page.get("Versions", []) + page.get("DeleteMarkers", [])
        assert len(entries) <= 2
        seen += [(e["Key"], e["VersionId"]) for e in entries]
        if not page["IsTruncated"]:
            break
        extra = {"KeyMarker": page["NextKeyMarker"], "VersionIdMarker": page["NextVersionIdMarker"]}
    assert sorted(seen) == sorted((r[0], r[1]) for r in everything)
    assert len(seen) == len(set(seen))
    assert [k for k, _ in seen] == [r[0] for r in everything]

    folded = s3.list_object_versions(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in folded["CommonPrefixes"]] == ["d/"]
    assert {v["Key"] for v in folded["Versions"]} == {"a", "e"}
    assert {v["Key"] for v in s3.list_object_versions(Bucket=bucket, Prefix="d/")["Versions"]} == {"d/x", "d/y"}
    with pytest.raises(ClientError) as err:
        s3.list_object_versions(Bucket=bucket, VersionIdMarker="x")
    assert (status(err.value), error_code(err.value)) == (400, "InvalidArgument")

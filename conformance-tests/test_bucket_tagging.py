"""Bucket tagging: Put/Get/DeleteBucketTagging, with the object tag rules and up to 50 tags."""

import pytest
from botocore.exceptions import ClientError

from client_errors import error_code, status
from conftest import make_s3_client


def tag_set(pairs):
    return [{"Key": k, "Value": v} for k, v in pairs]


def test_put_get_delete_bucket_tagging(s3, bucket):
    with pytest.raises(ClientError) as err:
        s3.get_bucket_tagging(Bucket=bucket)
    assert (status(err.value), error_code(err.value)) == (404, "NoSuchTagSet")

    pairs = [("team", "storage"), ("cost-centre", "42"), ("empty", "")]
    put = s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tag_set(pairs)})
    assert put["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == tag_set(sorted(pairs))

    # A put replaces the whole set.
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tag_set([("only", "one")])})
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == tag_set([("only", "one")])

    deleted = s3.delete_bucket_tagging(Bucket=bucket)
    assert deleted["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as err:
        s3.get_bucket_tagging(Bucket=bucket)
    assert error_code(err.value) == "NoSuchTagSet"


def test_fifty_bucket_tags_are_allowed_not_fifty_one(s3, bucket):
    fifty = [(f"k{i:02}", f"v{i}") for i in range(50)]
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tag_set(fifty)})
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == tag_set(fifty)
    with pytest.raises(ClientError) as err:
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tag_set(fifty + [("k50", "v")])})
    assert (status(err.value), error_code(err.value)) == (400, "InvalidTag")
    # The refused set changed nothing.
    assert len(s3.get_bucket_tagging(Bucket=bucket)["TagSet"]) == 50


@pytest.mark.parametrize(
    "pairs",
    [[("aws:reserved", "x")], [("k" * 129, "x")], [("k", "v" * 257)], [("a", "1"), ("a", "2")]],
    ids=["aws-prefix", "long-key", "long-value", "duplicate"],
)
def test_bad_bucket_tags_are_invalid_tag(s3, bucket, pairs):
    with pytest.raises(ClientError) as err:
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tag_set(pairs)})
    assert (status(err.value), error_code(err.value)) == (400, "InvalidTag")


def test_bucket_tagging_of_a_missing_bucket_is_no_such_bucket(s3, bucket_names):
    name = bucket_names()
    for call in (
        lambda: s3.get_bucket_tagging(Bucket=name),
        lambda: s3.put_bucket_tagging(Bucket=name, Tagging={"TagSet": tag_set([("a", "b")])}),
        lambda: s3.delete_bucket_tagging(Bucket=name),
    ):
        with pytest.raises(ClientError) as err:
            call()
        assert (status(err.value), error_code(err.value)) == (404, "NoSuchBucket")


def test_another_key_can_neither_read_nor_change_bucket_tags(target, root_s3, bucket, second_key):
    root_s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tag_set([("owner", "root")])})
    other = make_s3_client(target.endpoint, second_key)
    for call in (
        lambda: other.get_bucket_tagging(Bucket=bucket),
        lambda: other.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tag_set([("owner", "alt")])}),
        lambda: other.delete_bucket_tagging(Bucket=bucket),
    ):
        with pytest.raises(ClientError) as err:
            call()
        assert (status(err.value), error_code(err.value)) == (403, "AccessDenied")
    assert root_s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == tag_set([("owner", "root")])


def test_bucket_tags_go_with_their_bucket(root_s3, bucket_names):
    name = bucket_names()
    root_s3.create_bucket(Bucket=name)
    root_s3.put_bucket_tagging(Bucket=name, Tagging={"TagSet": tag_set([("a", "b")])})
    root_s3.delete_bucket(Bucket=name)
    root_s3.create_bucket(Bucket=name)
    with pytest.raises(ClientError) as err:
        root_s3.get_bucket_tagging(Bucket=name)
    assert error_code(err.value) == "NoSuchTagSet"

"""ListObjectsV2 and ListObjects (v1), compared against a model of S3 listing semantics."""

import urllib.parse
import uuid
import xml.etree.ElementTree as ET

import pytest

from conftest import empty_and_delete_bucket, make_s3_client
from raw_client import RawClient, strip_ns

KEYS = sorted(
    [f"alpha/{i:02d}" for i in range(8)]
    + [f"beta/{i}.txt" for i in range(6)]
    + [f"beta/deep/{i}/leaf" for i in range(6)]
    + [f"top-{i:02d}" for i in range(10)]
    + [f"gamma/{i}/{leaf}" for i in range(5) for leaf in ("a", "b")]
    + ["alpha", "alpha0", "beta/", "dir with space/file", "ünïcödé/ключ", "z/last"]
    + ["a-b/c", "a.b/c", "a/b", "a0"]
)


def model(prefix="", delimiter="", start_after=""):
    """S3's answer as one ordered list of ("key", k) and ("prefix", p) entries."""
    entries = []
    seen_prefixes = set()
    for key in KEYS:
        if not key.startswith(prefix) or key <= start_after:
            continue
        rest = key[len(prefix) :]
        if delimiter and delimiter in rest:
            common = prefix + rest[: rest.index(delimiter) + len(delimiter)]
            # A prefix at or before start-after was already returned: v1 paging
            # hands the last CommonPrefix back as the marker and must move past it.
            if common not in seen_prefixes and common > start_after:
                seen_prefixes.add(common)
                entries.append(("prefix", common))
        else:
            entries.append(("key", key))
    return entries


def page_entries(page) -> list:
    keys = [("key", o["Key"]) for o in page.get("Contents", [])]
    prefixes = [("prefix", p["Prefix"]) for p in page.get("CommonPrefixes", [])]
    return sorted(keys + prefixes, key=lambda e: e[1])


@pytest.fixture(scope="module")
def listing_bucket(target):
    client = make_s3_client(target.endpoint, target.creds)
    name = f"ct-{uuid.uuid4().hex[:10]}-listing"
    client.create_bucket(Bucket=name)
    for key in KEYS:
        client.put_object(Bucket=name, Key=key, Body=key.encode())
    yield name
    empty_and_delete_bucket(client, name)


CASES = [
    dict(),
    dict(prefix="beta/"),
    dict(delimiter="/"),
    dict(prefix="beta/", delimiter="/"),
    dict(prefix="gamma/", delimiter="/"),
    dict(prefix="a", delimiter="/"),
    dict(prefix="nothing-here/"),
    dict(start_after="beta/deep/2/leaf"),
    dict(start_after="beta/", delimiter="/"),
    dict(delimiter="a"),
]
CASE_IDS = [
    "all", "prefix", "delimiter", "prefix+delimiter", "nested-prefixes", "partial-prefix",
    "no-match", "start-after", "start-after+delimiter", "non-slash-delimiter",
]


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("max_keys", [1000, 7, 1])
def test_list_objects_v2_pages_match_model(root_s3, listing_bucket, case, max_keys):
    expected = model(case.get("prefix", ""), case.get("delimiter", ""), case.get("start_after", ""))
    args = {"Bucket": listing_bucket, "MaxKeys": max_keys}
    if "prefix" in case:
        args["Prefix"] = case["prefix"]
    if "delimiter" in case:
        args["Delimiter"] = case["delimiter"]
    if "start_after" in case:
        args["StartAfter"] = case["start_after"]
    collected = []
    token = None
    for _ in range(len(KEYS) + 2):
        request = dict(args, ContinuationToken=token) if token else args
        page = root_s3.list_objects_v2(**request)
        entries = page_entries(page)
        assert page["KeyCount"] == len(entries)
        assert page["MaxKeys"] == max_keys
        assert page["Name"] == listing_bucket
        assert page.get("Prefix", "") == case.get("prefix", "")
        assert page.get("Delimiter", "") == case.get("delimiter", "")
        assert page.get("StartAfter", "") == case.get("start_after", "")
        if token:
            assert page["ContinuationToken"] == token
        collected += entries
        if not page["IsTruncated"]:
            assert "NextContinuationToken" not in page
            assert len(entries) <= max_keys
            break
        assert len(entries) == max_keys
        token = page["NextContinuationToken"]
        assert token
    else:
        pytest.fail("listing never ended")
    assert collected == expected


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("max_keys", [1000, 7])
def test_list_objects_v1_pages_match_model(root_s3, listing_bucket, case, max_keys):
    expected = model(case.get("prefix", ""), case.get("delimiter", ""), case.get("start_after", ""))
    args = {"Bucket": listing_bucket, "MaxKeys": max_keys}
    if "prefix" in case:
        args["Prefix"] = case["prefix"]
    if "delimiter" in case:
        args["Delimiter"] = case["delimiter"]
    marker = case.get("start_after")
    collected = []
    for _ in range(len(KEYS) + 2):
        page = root_s3.list_objects(**(dict(args, Marker=marker) if marker else args))
        entries = page_entries(page)
        assert page.get("Marker", "") == (marker or "")
        collected += entries
        if not page["IsTruncated"]:
            break
        assert len(entries) == max_keys
        if "delimiter" in case:
            assert page.get("NextMarker"), "a truncated v1 listing with a delimiter must carry NextMarker"
            marker = page["NextMarker"]
        else:
            marker = page.get("NextMarker") or page["Contents"][-1]["Key"]
    else:
        pytest.fail("listing never ended")
    assert collected == expected


def parse_listing(body: bytes) -> dict:
    root = ET.fromstring(body)
    assert strip_ns(root.tag) == "ListBucketResult", body[:300]
    result = {"keys": [], "prefixes": [], "owners": [], "fields": {}}
    for child in root:
        tag = strip_ns(child.tag)
        if tag == "Contents":
            entry = {strip_ns(c.tag): c for c in child}
            result["keys"].append(entry["Key"].text or "")
            owner = entry.get("Owner")
            result["owners"].append(
                None if owner is None else {strip_ns(c.tag): c.text for c in owner}
            )
        elif tag == "CommonPrefixes":
            result["prefixes"].append({strip_ns(c.tag): c.text for c in child}["Prefix"])
        else:
            result["fields"][tag] = child.text
    return result


def test_encoding_type_url_encodes_keys(raw: RawClient, root_s3, bucket):
    keys = ["with space", "ünïcödé/ключ", "plus+sign", "amp&ersand", "ctrl\x01char"]
    for key in keys:
        root_s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    for query in ([("list-type", "2")], []):
        response = raw.request("GET", bucket, query=query + [("encoding-type", "url")])
        assert response.status_code == 200, response.text
        listing = parse_listing(response.content)
        assert listing["fields"].get("EncodingType") == "url"
        for encoded in listing["keys"]:
            assert encoded.isascii() and " " not in encoded, f"key not URL-encoded: {encoded!r}"
        assert sorted(urllib.parse.unquote_plus(k) for k in listing["keys"]) == sorted(keys)


def test_encoding_type_url_encodes_prefixes_and_delimiter(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="dir ü/file", Body=b"x")
    query = [("list-type", "2"), ("encoding-type", "url"), ("delimiter", "/")]
    listing = parse_listing(raw.request("GET", bucket, query=query).content)
    assert [urllib.parse.unquote_plus(p) for p in listing["prefixes"]] == ["dir ü/"]
    assert listing["prefixes"][0].isascii() and " " not in listing["prefixes"][0]


def test_without_encoding_type_keys_are_literal(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="a&b <c> ü", Body=b"x")
    listing = parse_listing(raw.request("GET", bucket, query=[("list-type", "2")]).content)
    assert listing["keys"] == ["a&b <c> ü"]


def test_fetch_owner(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with_owner = root_s3.list_objects_v2(Bucket=bucket, FetchOwner=True)["Contents"][0]
    assert with_owner["Owner"]["ID"]
    without = root_s3.list_objects_v2(Bucket=bucket)["Contents"][0]
    assert "Owner" not in without
    v1 = root_s3.list_objects(Bucket=bucket)["Contents"][0]
    assert v1["Owner"]["ID"] == with_owner["Owner"]["ID"]


def test_empty_prefix_and_delimiter_parameters_mean_none(raw: RawClient, root_s3, bucket):
    """warp sends `prefix=&delimiter=`: empty must not be a delimiter of ''."""
    keys = ["a/1", "a/2", "b", "c/d/e"]
    for key in keys:
        root_s3.put_object(Bucket=bucket, Key=key, Body=b"x")
    query = [
        ("list-type", "2"),
        ("encoding-type", "url"),
        ("fetch-owner", "true"),
        ("prefix", ""),
        ("delimiter", ""),
    ]
    response = raw.request("GET", bucket, query=query)
    assert response.status_code == 200, response.text
    listing = parse_listing(response.content)
    assert [urllib.parse.unquote_plus(k) for k in listing["keys"]] == keys
    assert listing["prefixes"] == []
    assert listing["fields"]["KeyCount"] == "4"
    assert listing["fields"]["IsTruncated"] == "false"
    assert all(owner and owner.get("ID") for owner in listing["owners"])

    v1 = raw.request("GET", bucket, query=[("prefix", ""), ("delimiter", ""), ("marker", "")])
    assert v1.status_code == 200, v1.text
    assert parse_listing(v1.content)["keys"] == keys


def test_empty_continuation_token_means_none(raw: RawClient, root_s3, bucket):
    root_s3.put_object(Bucket=bucket, Key="only", Body=b"x")
    response = raw.request("GET", bucket, query=[("list-type", "2"), ("continuation-token", "")])
    assert response.status_code == 200, response.text
    assert parse_listing(response.content)["keys"] == ["only"]


def test_list_empty_bucket(root_s3, bucket):
    page = root_s3.list_objects_v2(Bucket=bucket)
    assert page["KeyCount"] == 0
    assert page["IsTruncated"] is False
    assert "Contents" not in page

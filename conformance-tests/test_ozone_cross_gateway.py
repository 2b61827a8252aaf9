"""Objects written through s3-gateway read back through Ozone's own S3 gateway, and the reverse.

Both gateways sit on the same Ozone cluster (see ozone/README.md: block 1 MiB,
chunk 256 KiB), so each object must look the same through either one: bytes,
length, user metadata, Content-Type, tags, ETag, ranges across block and part
boundaries, and listings. Runs only when S3GW_OZONE_OM names the cluster; Ozone's
S3 gateway is at OZONE_S3G_ENDPOINT (default http://127.0.0.1:29878).
"""

import hashlib
import os
from dataclasses import dataclass

import pytest
import requests
from botocore.exceptions import BotoCoreError, ClientError

import ozone_cluster
from conftest import OZONE_OM, empty_and_delete_bucket, make_s3_client, unique_bucket_name

if not OZONE_OM:
    pytest.skip("needs a running Ozone cluster (S3GW_OZONE_OM)", allow_module_level=True)
if ozone_cluster.TLS:
    pytest.skip("Ozone's own S3 gateway cannot run on the loopback-only TLS profile (ozone/README.md)",
                allow_module_level=True)

OZONE_S3G_ENDPOINT = os.environ.get("OZONE_S3G_ENDPOINT", "http://127.0.0.1:29878").rstrip("/")
KIB = 1024
MIB = 1024 * KIB
BLOCK = MIB  # the dev cluster's ozone.scm.block.size
CHUNK = 256 * KIB  # the dev cluster's chunk (and Java client buffer) size
PART = 5 * MIB

# Ozone's S3G keeps a name's case, ours lower-cases it as AWS does; header names
# carry no case, so names compare lower-cased. A user entry `etag` must stay user
# metadata, apart from the object's ETag (Ozone stores it as `etag-custom`).
USER_METADATA = {"Mixed-Case-Name": "Value With Spaces", "lower": "v2", "etag": "not-the-real-etag"}
EXPECTED_USER_METADATA = {name.lower(): value for name, value in USER_METADATA.items()}
CONTENT_TYPE = "application/vnd.s3gw-cross+json"
# Ozone's S3G 2.2.0 stores no Content-Type and answers a fixed one, not even the same for HEAD and GET.
OZONE_S3G_CONTENT_TYPE = {"head_object": "binary/octet-stream", "get_object": "application/octet-stream"}
# What s3-gateway answers for an object stored without a Content-Type (S3's default).
DEFAULT_CONTENT_TYPE = "binary/octet-stream"
# Key metadata entries s3-gateway writes besides `ETag` (system headers and its checksum).
OURS_SYSTEM_METADATA = {"content-type", "s3gw-checksum"}
TAGGING = "Project=Blue&team=a%20b&empty="
TAGS = {("Project", "Blue"), ("team", "a b"), ("empty", "")}


@dataclass(frozen=True)
class Case:
    name: str
    part_sizes: tuple[int, ...]  # one entry: a single PUT; several: a multipart upload
    ranges: tuple[tuple[int, int], ...]  # inclusive byte ranges that cross the boundaries that matter

    @property
    def multipart(self) -> bool:
        return len(self.part_sizes) > 1

    @property
    def size(self) -> int:
        return sum(self.part_sizes)


CASES = [
    Case("single-chunk", (100_000,), ((1_000, 50_999),)),
    Case("multi-chunk", (700_000,), ((CHUNK - 100, CHUNK + 99), (2 * CHUNK - 1, 2 * CHUNK))),
    # 3.5 MB is 4 blocks of 1 MiB.
    Case("multi-block", (3_500_000,), ((BLOCK - 100, BLOCK + 99), (3 * BLOCK - 1, 3_499_999))),
    Case("multipart", (PART, PART, PART, 100_000),
         ((BLOCK - 100, BLOCK + 99), (PART - 100, PART + 99), (3 * PART - 10, 3 * PART + 9))),
]
DIRECTIONS = [("ours", "ozone"), ("ozone", "ours")]


def payload(case: Case, writer: str) -> bytes:
    """Deterministic, non-repeating bytes per case and writer, so a misplaced block shows."""
    seed = f"{case.name}/{writer}".encode()
    out = bytearray()
    counter = 0
    while len(out) < case.size:
        out += hashlib.sha256(seed + counter.to_bytes(8, "big")).digest()
        counter += 1
    return bytes(out[: case.size])


def expected_etag(case: Case, data: bytes) -> str:
    """The ETag Ozone keeps: the body's MD5, or for multipart the one the OM computes itself.

    Ozone's OM (S3MultipartUploadCompleteRequest.multipartUploadedKeyHash) hashes
    the part ETags as hex text, concatenated, not AWS's concatenated binary MD5s;
    the form ("<32 hex>-<part count>") is the same, the digits are not. Whichever
    gateway completes the upload, the OM's value is what both report.
    """
    if not case.multipart:
        return f'"{hashlib.md5(data).hexdigest()}"'
    part_etags = ""
    offset = 0
    for size in case.part_sizes:
        part_etags += hashlib.md5(data[offset: offset + size]).hexdigest()
        offset += size
    return f'"{hashlib.md5(part_etags.encode()).hexdigest()}-{len(case.part_sizes)}"'


def write(client, bucket: str, key: str, case: Case, data: bytes) -> str:
    """Writes the object with metadata, Content-Type and tags; returns the ETag the write answered."""
    if not case.multipart:
        return client.put_object(Bucket=bucket, Key=key, Body=data, Metadata=USER_METADATA,
                                 ContentType=CONTENT_TYPE, Tagging=TAGGING)["ETag"]
    upload_id = client.create_multipart_upload(Bucket=bucket, Key=key, Metadata=USER_METADATA,
                                               ContentType=CONTENT_TYPE, Tagging=TAGGING)["UploadId"]
    parts = []
    offset = 0
    for number, size in enumerate(case.part_sizes, start=1):
        answer = client.upload_part(Bucket=bucket, Key=key, UploadId=upload_id, PartNumber=number,
                                    Body=data[offset: offset + size])
        parts.append({"PartNumber": number, "ETag": answer["ETag"]})
        offset += size
    return client.complete_multipart_upload(Bucket=bucket, Key=key, UploadId=upload_id,
                                            MultipartUpload={"Parts": parts})["ETag"]


@pytest.fixture(scope="module")
def clients(target):
    """Our gateway and Ozone's, as the same access key and secret: Ozone's S3G with security
    off takes any secret, with security on it checks the OM's, which the suite gave the key."""
    # when_required: Ozone's S3G is not asked to handle boto3's default aws-chunked CRC trailers.
    ozone = make_s3_client(OZONE_S3G_ENDPOINT, target.creds, checksum_mode="when_required")
    try:
        ozone.list_buckets()
    except (BotoCoreError, ClientError) as err:
        pytest.fail(f"Ozone's S3 gateway at {OZONE_S3G_ENDPOINT} does not answer "
                    f"(ozone-dev start --with-s3g): {err}")
    return {"ours": make_s3_client(target.endpoint, target.creds), "ozone": ozone}


@pytest.fixture(scope="module")
def buckets(clients):
    """One bucket per writer, created through that writer's gateway."""
    names = {}
    try:
        for writer in ("ours", "ozone"):
            name = unique_bucket_name(f"cross-{writer}")
            clients[writer].create_bucket(Bucket=name)
            names[writer] = name
        yield names
    finally:
        for name in names.values():
            empty_and_delete_bucket(clients["ours"], name)
            empty_and_delete_bucket(clients["ozone"], name)


@dataclass(frozen=True)
class Written:
    bucket: str
    key: str
    data: bytes
    case: Case
    write_etag: str  # the ETag the PUT or CompleteMultipartUpload answered


@pytest.fixture(scope="module")
def objects(clients, buckets):
    """Writes each (case, writer) object once, on first use, and hands it to every test that needs it."""
    cache = {}

    def get(case: Case, writer: str) -> Written:
        if (case.name, writer) not in cache:
            key = f"dir/{case.name}-{writer}.bin"
            data = payload(case, writer)
            etag = write(clients[writer], buckets[writer], key, case, data)
            cache[(case.name, writer)] = Written(buckets[writer], key, data, case, etag)
        return cache[(case.name, writer)]

    return get


def parametrized(test):
    test = pytest.mark.parametrize("writer,reader", DIRECTIONS, ids=[f"{w}-to-{r}" for w, r in DIRECTIONS])(test)
    test = pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])(test)
    return pytest.mark.timeout(300)(test)


@parametrized
def test_bytes_and_length(clients, objects, case, writer, reader):
    obj = objects(case, writer)
    answer = clients[reader].get_object(Bucket=obj.bucket, Key=obj.key)
    body = answer["Body"].read()
    assert answer["ContentLength"] == case.size
    assert len(body) == case.size
    assert hashlib.sha256(body).hexdigest() == hashlib.sha256(obj.data).hexdigest()


@parametrized
def test_metadata_and_content_type(clients, objects, case, writer, reader):
    obj = objects(case, writer)
    for method in ("head_object", "get_object"):
        answer = getattr(clients[reader], method)(Bucket=obj.bucket, Key=obj.key)
        if method == "get_object":
            answer["Body"].close()
        metadata = {name.lower(): value for name, value in answer["Metadata"].items()}
        if reader == "ours":
            assert metadata == EXPECTED_USER_METADATA, method
            # Ozone's S3G 2.2.0 stores no Content-Type, so ours has none to give back.
            assert answer["ContentType"] == (CONTENT_TYPE if writer == "ours" else DEFAULT_CONTENT_TYPE), method
        else:
            # Ozone's S3G 2.2.0 answers a fixed Content-Type, sends x-amz-meta-* on
            # HEAD only (its GET has none), and there shows every key metadata entry
            # but `ETag`: the user's entries and also what s3-gateway keeps there for
            # itself (storage-client/src/ozone/object_mapping.rs).
            assert answer["ContentType"] == OZONE_S3G_CONTENT_TYPE[method], method
            if method == "get_object":
                continue
            user = {name: value for name, value in metadata.items() if name not in OURS_SYSTEM_METADATA}
            assert user == EXPECTED_USER_METADATA, method
            assert metadata.get("content-type") == CONTENT_TYPE, method


@parametrized
def test_tags(clients, objects, case, writer, reader):
    obj = objects(case, writer)
    tag_set = clients[reader].get_object_tagging(Bucket=obj.bucket, Key=obj.key)["TagSet"]
    assert {(tag["Key"], tag["Value"]) for tag in tag_set} == TAGS
    assert len(tag_set) == len(TAGS)


@parametrized
def test_etag_is_the_same_through_both(clients, objects, case, writer, reader):
    # Both gateways keep the ETag as key metadata `ETag`; the write's answer, the
    # writer's HEAD and the reader's HEAD must all be the very same string.
    obj = objects(case, writer)
    expected = expected_etag(case, obj.data)
    assert obj.write_etag == expected
    assert clients[writer].head_object(Bucket=obj.bucket, Key=obj.key)["ETag"] == expected
    assert clients[reader].head_object(Bucket=obj.bucket, Key=obj.key)["ETag"] == expected


@parametrized
def test_ranged_get_across_boundaries(clients, objects, case, writer, reader):
    obj = objects(case, writer)
    for side in (writer, reader):
        for first, last in case.ranges:
            answer = clients[side].get_object(Bucket=obj.bucket, Key=obj.key, Range=f"bytes={first}-{last}")
            body = answer["Body"].read()
            assert answer["ResponseMetadata"]["HTTPStatusCode"] == 206, side
            assert answer["ContentRange"] == f"bytes {first}-{last}/{case.size}", side
            assert answer["ContentLength"] == last - first + 1, side
            assert body == obj.data[first: last + 1], f"{side} bytes={first}-{last}"


@parametrized
def test_listing_shows_the_same_size(clients, objects, case, writer, reader):
    obj = objects(case, writer)
    listed = {}
    for side in (writer, reader):
        contents = clients[side].list_objects_v2(Bucket=obj.bucket, Prefix=obj.key).get("Contents", [])
        entries = [entry for entry in contents if entry["Key"] == obj.key]
        assert len(entries) == 1, f"{side} lists {contents}"
        listed[side] = entries[0]
        assert entries[0]["Size"] == case.size, side
    assert listed[writer]["ETag"] == listed[reader]["ETag"] == expected_etag(case, obj.data)


def test_a_changed_object_acl_holds_through_tagging_by_ozone_and_not_past_its_overwrite(target, clients, buckets):
    """PutObjectAcl here is a record of the object as written: Ozone's gateway tagging it keeps it,
    Ozone's gateway writing over it makes another object, with no such ACL."""
    ours, ozone = clients["ours"], clients["ozone"]
    bucket, key = buckets["ours"], "acl/changed"

    def anonymous_get():
        return requests.get(f"{target.endpoint}/{bucket}/{key}", timeout=30)

    ours.put_object(Bucket=bucket, Key=key, Body=b"first")
    ours.put_object_acl(Bucket=bucket, Key=key, ACL="public-read")
    ozone.put_object_tagging(Bucket=bucket, Key=key, Tagging={"TagSet": [{"Key": "t", "Value": "v"}]})
    assert anonymous_get().content == b"first"
    ozone.put_object(Bucket=bucket, Key=key, Body=b"second")
    assert anonymous_get().status_code == 403
    assert ours.get_object(Bucket=bucket, Key=key)["Body"].read() == b"second"

"""Buckets Ozone made outside S3, served as Ozone's own S3 gateway serves them.

An operator's cluster holds buckets made with `ozone sh bucket create` (whose
default layout is FILE_SYSTEM_OPTIMIZED), LEGACY buckets, files written through
`ofs://`, and bucket links (`ozone sh bucket link /vol/b /s3v/b`, Ozone's
documented way to show another volume's bucket through S3). Each is read,
listed (in S3's byte order, with directories as folder objects) and written
through the gateway; a write the file system's paths forbid is a clear 400, a
delete of a directory that still has files is a 204 that deletes nothing (as
Ozone's S3 gateway answers both). A file Ozone wrote has no ETag: it is
answered without one, as Ozone's S3 gateway does, not with an empty one.
Runs only when S3GW_OZONE_OM names the cluster (the default profile: the
buckets are given to the test's key with `ozone sh bucket update --user`).
"""

import hashlib
import os
import uuid
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
from botocore.exceptions import ClientError

import ozone_cluster
from conftest import OZONE_OM, make_s3_client

if not OZONE_OM:
    pytest.skip("needs a running Ozone cluster (S3GW_OZONE_OM)", allow_module_level=True)
if ozone_cluster.PROFILE != "default":
    pytest.skip("the shell runs as the default profile's user", allow_module_level=True)

OZONE_S3G_ENDPOINT = os.environ.get("OZONE_S3G_ENDPOINT", "http://127.0.0.1:29878").rstrip("/")
OM_RPC = "127.0.0.1:9862"  # ozone-dev's OM Hadoop RPC address, which ofs:// names
OFS_BYTES = b"written through ofs://\n" * 100
# Paths Ozone's own tools write into every file-system bucket: `a-b` sorts
# before the directory `a/` in S3's byte order, though not by name.
SHELL_FILES = ["a-b", "a/x", "a/y/z.txt", "top.txt"]
SHELL_DIRECTORIES = ["a/", "a/y/"]


def sh(*args: str) -> str:
    return ozone_cluster.ozone_dev("sh", *args, timeout=180)


def sh_batch(*commands: list[str]) -> str:
    return ozone_cluster.ozone_sh_batch(*commands, timeout=180)


def fs(*args: str) -> str:
    return ozone_cluster.ozone_dev("fs", *args, timeout=180)


@pytest.fixture(scope="module")
def cluster(target, tmp_path_factory):
    """An FSO and a LEGACY bucket in s3v, and a link in s3v to an FSO bucket
    of another volume, each with SHELL_FILES written by Ozone's shell and a
    directory with one file written through ofs://; all owned by the test's
    access key."""
    owner = target.creds.access_key
    tag = uuid.uuid4().hex[:8]
    names = {"fso": f"ct-{tag}-fso", "legacy": f"ct-{tag}-legacy", "link": f"ct-{tag}-link"}
    volume, source = f"ct-{tag}-vol", "source"
    # Each client JVM start costs seconds of CPU: the shell's commands run as
    # batches in one JVM each (the setup took ~55 s in CI as 26 JVMs).
    sh_batch(["bucket", "create", f"/s3v/{names['fso']}", "--layout", "FILE_SYSTEM_OPTIMIZED", "--user", owner],
             ["bucket", "create", f"/s3v/{names['legacy']}", "--layout", "LEGACY", "--user", owner],
             ["volume", "create", f"/{volume}"],
             ["bucket", "create", f"/{volume}/{source}", "--layout", "FILE_SYSTEM_OPTIMIZED"],
             ["bucket", "link", f"/{volume}/{source}", f"/s3v/{names['link']}"],
             ["bucket", "update", f"/s3v/{names['link']}", "--user", owner])
    paths = {"fso": f"s3v/{names['fso']}", "legacy": f"s3v/{names['legacy']}", "link": f"{volume}/{source}"}
    local = tmp_path_factory.mktemp("foreign")
    for n, key in enumerate(SHELL_FILES):
        (local / f"file-{n}").write_bytes(shell_bytes(key))
    # `fs -put` of a directory makes its directories through the file system.
    (local / "ofs" / "dir").mkdir(parents=True)
    (local / "ofs" / "dir" / "file.bin").write_bytes(OFS_BYTES)
    in_parallel(
        [lambda: sh_batch(*[["key", "put", f"/{path}/{key}", str(local / f"file-{n}")]
                            for path in paths.values() for n, key in enumerate(SHELL_FILES)])]
        + [lambda kind=kind: fs("-put", str(local / "ofs"), f"ofs://{OM_RPC}/{paths[kind]}/")
           for kind in ("fso", "link")])
    yield names, paths
    sh_batch(["bucket", "delete", f"/s3v/{names['link']}"],
             *[["bucket", "delete", "-r", "-y", f"/{path}"] for path in (paths["fso"], paths["legacy"])],
             ["volume", "delete", "-r", "-y", f"/{volume}"])


def in_parallel(steps) -> None:
    """Runs the steps on a thread each; the first failure is raised."""
    with ThreadPoolExecutor(max_workers=len(steps)) as pool:
        for done in [pool.submit(step) for step in steps]:
            done.result()


def shell_bytes(key: str) -> bytes:
    return hashlib.sha256(key.encode()).hexdigest().encode() * 3


def keys(client, bucket: str, **args) -> list[str]:
    out = []
    for page in client.get_paginator("list_objects_v2").paginate(Bucket=bucket, **args):
        out += [o["Key"] for o in page.get("Contents", [])]
    return out


@pytest.mark.parametrize("kind", ["fso", "legacy", "link"])
def test_files_ozone_wrote_read_back(root_s3, cluster, kind):
    names, _ = cluster
    for key in SHELL_FILES:
        got = root_s3.get_object(Bucket=names[kind], Key=key)
        assert got["Body"].read() == shell_bytes(key)
        # Written without an ETag: none is made up (S3G answers the same).
        assert "ETag" not in got
        assert "ETag" not in root_s3.head_object(Bucket=names[kind], Key=key)
    if kind != "legacy":
        got = root_s3.get_object(Bucket=names[kind], Key="ofs/dir/file.bin")
        assert got["Body"].read() == OFS_BYTES
        assert got["ContentLength"] == len(OFS_BYTES)


@pytest.mark.parametrize("kind", ["fso", "link"])
def test_file_system_bucket_lists_in_byte_order_with_folders(root_s3, cluster, kind):
    names, _ = cluster
    bucket = names[kind]
    everything = sorted(SHELL_FILES + SHELL_DIRECTORIES + ["ofs/", "ofs/dir/", "ofs/dir/file.bin"])
    listed = keys(root_s3, bucket)
    assert listed == everything
    # The same walk, a page at a time, resumes where it stopped.
    assert keys(root_s3, bucket, PaginationConfig={"PageSize": 2}) == everything
    page = root_s3.list_objects_v2(Bucket=bucket, StartAfter="a/")
    assert [o["Key"] for o in page["Contents"]] == [k for k in everything if k > "a/"]
    top = root_s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [p["Prefix"] for p in top["CommonPrefixes"]] == ["a/", "ofs/"]
    assert [o["Key"] for o in top["Contents"]] == ["a-b", "top.txt"]
    inside = root_s3.list_objects_v2(Bucket=bucket, Prefix="a/", Delimiter="/")
    assert [o["Key"] for o in inside["Contents"]] == ["a/", "a/x"]
    assert [p["Prefix"] for p in inside["CommonPrefixes"]] == ["a/y/"]
    assert keys(root_s3, bucket, Prefix="a/y") == ["a/y/", "a/y/z.txt"]
    assert keys(root_s3, bucket, Prefix="nothing/") == []
    sizes = {o["Key"]: o for o in root_s3.list_objects_v2(Bucket=bucket, Prefix="a")["Contents"]}
    assert sizes["a/"]["Size"] == 0 and "ETag" not in sizes["a/"]
    assert sizes["a/x"]["Size"] == len(shell_bytes("a/x"))


def test_legacy_bucket_lists_keys(root_s3, cluster):
    names, _ = cluster
    assert keys(root_s3, names["legacy"]) == sorted(SHELL_FILES)


@pytest.mark.parametrize("kind", ["fso", "legacy", "link"])
def test_writes_land_where_ozone_reads_them(root_s3, cluster, kind, tmp_path):
    names, paths = cluster
    bucket, body = names[kind], b"from s3 " + kind.encode()
    put = root_s3.put_object(Bucket=bucket, Key=f"s3/{kind}/new.txt", Body=body)
    assert put["ETag"] == f'"{hashlib.md5(body).hexdigest()}"'
    out = tmp_path / "out"
    sh("key", "get", f"/{paths[kind]}/s3/{kind}/new.txt", str(out))
    assert out.read_bytes() == body
    got = root_s3.get_object(Bucket=bucket, Key=f"s3/{kind}/new.txt")
    assert got["ETag"] == put["ETag"] and got["Body"].read() == body
    # A multipart upload, and a copy, into the same bucket.
    part = os.urandom(5 * 1024 * 1024)
    upload = root_s3.create_multipart_upload(Bucket=bucket, Key="s3/mp.bin")["UploadId"]
    etags = [root_s3.upload_part(Bucket=bucket, Key="s3/mp.bin", UploadId=upload, PartNumber=n, Body=part)["ETag"]
             for n in (1, 2)]
    root_s3.complete_multipart_upload(Bucket=bucket, Key="s3/mp.bin", UploadId=upload, MultipartUpload={
        "Parts": [{"PartNumber": n, "ETag": e} for n, e in zip((1, 2), etags)]})
    assert root_s3.get_object(Bucket=bucket, Key="s3/mp.bin")["Body"].read() == part + part
    root_s3.copy_object(Bucket=bucket, Key="s3/copy.txt", CopySource={"Bucket": bucket, "Key": "top.txt"})
    assert root_s3.get_object(Bucket=bucket, Key="s3/copy.txt")["Body"].read() == shell_bytes("top.txt")
    root_s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "s3/mp.bin"}, {"Key": "s3/copy.txt"}]})
    with pytest.raises(ClientError) as gone:
        root_s3.head_object(Bucket=bucket, Key="s3/copy.txt")
    assert gone.value.response["Error"]["Code"] == "404"


@pytest.mark.parametrize("kind", ["fso", "link"])
def test_file_system_paths_refuse_clearly(root_s3, cluster, kind):
    names, _ = cluster
    bucket = names[kind]
    # Below a file, and over a directory: the path cannot exist.
    for key in ("top.txt/below", "a"):
        with pytest.raises(ClientError) as refused:
            root_s3.put_object(Bucket=bucket, Key=key, Body=b"x")
        assert refused.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
        assert refused.value.response["Error"]["Code"] == "InvalidArgument"
        assert "FILE_SYSTEM_OPTIMIZED" in refused.value.response["Error"]["Message"]
    # A directory with files below it stays, as its files do, whether it is
    # deleted alone or among others (one DeleteKeys for all of them).
    assert root_s3.delete_object(Bucket=bucket, Key="a/")["ResponseMetadata"]["HTTPStatusCode"] == 204
    answer = root_s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a/"}, {"Key": "a/y/"}]})
    assert sorted(d["Key"] for d in answer["Deleted"]) == ["a/", "a/y/"] and not answer.get("Errors")
    assert "a/x" in keys(root_s3, bucket, Prefix="a/")
    assert "a/y/z.txt" in keys(root_s3, bucket, Prefix="a/")
    assert root_s3.get_object(Bucket=bucket, Key="a/x")["Body"].read() == shell_bytes("a/x")


def test_ozone_s3_gateway_reads_the_same(target, cluster):
    """Ozone's own S3 gateway, on the same cluster: the ofs:// file's bytes and
    its missing ETag, and the same keys in an FSO bucket (S3G may list them in
    another order)."""
    names, _ = cluster
    try:
        requests.get(OZONE_S3G_ENDPOINT, timeout=5)
    except requests.RequestException:
        pytest.skip(f"Ozone's S3 gateway is not running at {OZONE_S3G_ENDPOINT} (ozone-dev start --with-s3g)")
    theirs = make_s3_client(OZONE_S3G_ENDPOINT, target.creds, checksum_mode="when_required")
    got = theirs.get_object(Bucket=names["fso"], Key="ofs/dir/file.bin")
    assert got["Body"].read() == OFS_BYTES
    assert "ETag" not in got
    listed = set()
    for page in theirs.get_paginator("list_objects_v2").paginate(Bucket=names["fso"]):
        listed |= {o["Key"] for o in page.get("Contents", [])}
    assert set(SHELL_FILES) | {"ofs/dir/file.bin"} <= listed


"""The AWS CLI (v1 from PyPI) against the gateway: `aws s3` and `aws s3api`."""

import filecmp
import hashlib
import json
import os

MIB = 1024 * 1024


def file_sha256(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_mb_ls_rb(aws, bucket_names):
    name = bucket_names()
    aws("s3", "mb", f"s3://{name}")
    assert name in aws("s3", "ls").stdout.split()
    aws("s3", "rb", f"s3://{name}")
    assert name not in aws("s3", "ls").stdout.split()


def test_cp_small_and_20mib_up_and_down(aws, bucket, tmp_path):
    small = tmp_path / "small.txt"
    small.write_bytes(b"hello from the aws cli\n")
    large = tmp_path / "large.bin"
    large.write_bytes(os.urandom(20 * MIB))
    for source in (small, large):
        aws("s3", "cp", str(source), f"s3://{bucket}/up/{source.name}")
        target = tmp_path / f"down-{source.name}"
        aws("s3", "cp", f"s3://{bucket}/up/{source.name}", str(target))
        assert file_sha256(target) == file_sha256(source)

    listing = aws("s3", "ls", f"s3://{bucket}/up/").stdout
    sizes = {line.split()[-1]: int(line.split()[-2]) for line in listing.splitlines() if line.strip()}
    assert sizes == {"small.txt": small.stat().st_size, "large.bin": 20 * MIB}
    top = aws("s3", "ls", f"s3://{bucket}/").stdout
    assert "PRE up/" in top


def make_tree(root):
    files = {
        "a.txt": b"alpha",
        "sub/b.bin": os.urandom(3000),
        "sub/deeper/c with space.txt": b"gamma",
        "unicodé/ключ.txt": b"delta",
        "empty": b"",
    }
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return files


def assert_same_tree(left, right):
    comparison = filecmp.dircmp(left, right)

    def walk(cmp):
        assert not cmp.left_only and not cmp.right_only, (cmp.left_only, cmp.right_only)
        _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
        assert not mismatch and not errors, (mismatch, errors)
        for sub in cmp.subdirs.values():
            walk(sub)

    walk(comparison)


def test_sync_both_ways_and_rm_recursive(aws, bucket, tmp_path):
    source = tmp_path / "source"
    files = make_tree(source)
    aws("s3", "sync", str(source), f"s3://{bucket}/tree")
    again = aws("s3", "sync", str(source), f"s3://{bucket}/tree")
    assert "upload:" not in again.stdout, f"second sync re-uploaded:\n{again.stdout}"

    listing = aws("s3", "ls", "--recursive", f"s3://{bucket}/tree/").stdout
    assert len([line for line in listing.splitlines() if line.strip()]) == len(files)

    back = tmp_path / "back"
    aws("s3", "sync", f"s3://{bucket}/tree", str(back))
    assert_same_tree(source, back)

    aws("s3", "rm", "--recursive", f"s3://{bucket}/tree")
    assert aws("s3", "ls", "--recursive", f"s3://{bucket}/", check=False).stdout.strip() == ""


def test_s3api_object_calls(aws, bucket, tmp_path):
    body = tmp_path / "body.json"
    body.write_bytes(b'{"hello": "world"}')
    put = json.loads(
        aws(
            "s3api", "put-object", "--bucket", bucket, "--key", "docs/hello.json",
            "--body", str(body), "--content-type", "application/json",
            "--metadata", "Owner=ci,Purpose=conformance",
        ).stdout
    )
    assert put["ETag"] == '"' + hashlib.md5(body.read_bytes()).hexdigest() + '"'

    head = json.loads(aws("s3api", "head-object", "--bucket", bucket, "--key", "docs/hello.json").stdout)
    assert head["ContentLength"] == body.stat().st_size
    assert head["ContentType"] == "application/json"
    assert head["Metadata"] == {"owner": "ci", "purpose": "conformance"}
    assert head["ETag"] == put["ETag"]

    out = tmp_path / "out.json"
    got = json.loads(
        aws("s3api", "get-object", "--bucket", bucket, "--key", "docs/hello.json", str(out)).stdout
    )
    assert out.read_bytes() == body.read_bytes()
    assert got["ETag"] == put["ETag"]

    listed = json.loads(
        aws("s3api", "list-objects-v2", "--bucket", bucket, "--prefix", "docs/").stdout
    )
    assert [o["Key"] for o in listed["Contents"]] == ["docs/hello.json"]


def test_s3api_missing_key_error_is_reported(aws, bucket, tmp_path):
    result = aws("s3api", "head-object", "--bucket", bucket, "--key", "missing", check=False)
    assert result.returncode != 0
    assert "404" in result.stderr
    result = aws("s3api", "get-object", "--bucket", bucket, "--key", "missing", str(tmp_path / "x"),
                 check=False)
    assert result.returncode != 0
    assert "NoSuchKey" in result.stderr

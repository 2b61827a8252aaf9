"""What an S3 request costs the Ozone Manager, counted in its audit log.

The OM audits every command it serves, reads as well as writes, one line
each naming the bucket and key. UploadPart sends it CreateKey for the part
(ALLOCATE_KEY), which the OM refuses for an upload that is not in progress,
AllocateBlock for each block of the part (ALLOCATE_BLOCK: the OM allocates
none at CreateKey for a part, see OMKeyCreateRequest) and
CommitMultipartUploadPart (COMMIT_MULTIPART_UPLOAD_PARTKEY). Ozone's own S3
gateway sends the same three after looking up the volume and the bucket
(READ_VOLUME, READ_BUCKET), measured on this cluster; before, this gateway
sent five too, having looked up the upload (LIST_MULTIPART_UPLOADS) and its
checksum record (READ_KEY). The upload's checksum settings, kept in
`s3gw-records/s3gw-checksums`, are read at most once per gateway. Runs on the
default profile, whose one OM audits every command (on the ha profile a
read is audited only by the OM that served it).
"""

import time

import pytest

import ozone_cluster
from conftest import OZONE_OM, make_s3_client, payload, unique_bucket_name

if not OZONE_OM:
    pytest.skip("needs a running Ozone cluster (S3GW_OZONE_OM)", allow_module_level=True)
if ozone_cluster.PROFILE != "default":
    pytest.skip("counts in the audit log of the default profile's one OM", allow_module_level=True)

# The OM writes an entry as it answers; a few seconds bound a loaded machine.
AUDIT_SETTLE_SECONDS = 10


def commands_since(start: int, *names: str, last: str) -> list[str]:
    """The operations audited after the first `start` entries whose
    parameters mention one of `names`, once one of them is `last`."""
    deadline = time.monotonic() + AUDIT_SETTLE_SECONDS
    while True:
        ops = [op for op, params, _ in ozone_cluster.om_audit_entries()[start:]
               if any(name in params for name in names)]
        if last in ops or time.monotonic() > deadline:
            return ops
        time.sleep(0.2)


# A part of one block.
PART_COMMANDS = ["ALLOCATE_KEY", "ALLOCATE_BLOCK", "COMMIT_MULTIPART_UPLOAD_PARTKEY"]
# A part of an upload with a checksum algorithm has its checksum recorded:
# an empty key in s3gw-checksums, CreateKey and CommitKey.
PART_CHECKSUM_RECORD = ["ALLOCATE_KEY", "COMMIT_KEY"]


@pytest.mark.parametrize("algorithm", [None, "SHA256"])
def test_upload_part_sends_the_om_only_the_parts_own_commands(target, algorithm):
    # The client sends no checksum; the gateway computes the upload's own.
    s3 = make_s3_client(target.endpoint, target.creds, "when_required")
    bucket = unique_bucket_name("om-requests")
    s3.create_bucket(Bucket=bucket)
    extra = {"ChecksumAlgorithm": algorithm} if algorithm else {}
    upload = s3.create_multipart_upload(Bucket=bucket, Key="k", **extra)["UploadId"]
    expected = PART_COMMANDS + (PART_CHECKSUM_RECORD if algorithm else [])
    try:
        for number in (1, 2):
            start = len(ozone_cluster.om_audit_entries())
            body = payload(1000, f"{bucket}/{number}")
            s3.upload_part(Bucket=bucket, Key="k", UploadId=upload, PartNumber=number, Body=body)
            assert commands_since(start, bucket, upload, last=expected[-1]) == expected, f"part {number}"
    finally:
        s3.abort_multipart_upload(Bucket=bucket, Key="k", UploadId=upload)
        s3.delete_bucket(Bucket=bucket)

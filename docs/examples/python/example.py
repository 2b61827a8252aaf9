"""boto3 against s3-gateway: upload, download, list, presign, multipart.

    AWS_ENDPOINT_URL=http://127.0.0.1:9878 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... python example.py
"""

import os
import urllib.request
import uuid

import boto3
from botocore.config import Config

endpoint = os.environ.get("AWS_ENDPOINT_URL", "http://127.0.0.1:9878")
s3 = boto3.client(
    "s3",
    endpoint_url=endpoint,
    region_name=os.environ.get("AWS_REGION", "us-east-1"),
    # Path style: http://host/bucket/key works without wildcard DNS.
    config=Config(s3={"addressing_style": "path"}),
)
bucket = f"example-boto3-{uuid.uuid4().hex[:8]}"
s3.create_bucket(Bucket=bucket)

# Upload and download.
s3.put_object(Bucket=bucket, Key="hello.txt", Body=b"hello, s3-gateway")
assert s3.get_object(Bucket=bucket, Key="hello.txt")["Body"].read() == b"hello, s3-gateway"

# List.
keys = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket).get("Contents", [])]
assert keys == ["hello.txt"], keys

# A presigned URL: anyone holding it may GET the object for an hour.
url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "hello.txt"}, ExpiresIn=3600)
with urllib.request.urlopen(url) as answer:
    assert answer.read() == b"hello, s3-gateway"

# Multipart: parts of at least 5 MiB, but the last.
parts = [b"a" * (5 * 1024 * 1024), b"b" * 1024]
upload = s3.create_multipart_upload(Bucket=bucket, Key="big.bin")["UploadId"]
done = []
for number, body in enumerate(parts, start=1):
    part = s3.upload_part(Bucket=bucket, Key="big.bin", UploadId=upload, PartNumber=number, Body=body)
    done.append({"PartNumber": number, "ETag": part["ETag"]})
s3.complete_multipart_upload(Bucket=bucket, Key="big.bin", UploadId=upload, MultipartUpload={"Parts": done})
assert s3.head_object(Bucket=bucket, Key="big.bin")["ContentLength"] == sum(map(len, parts))

# Clean up.
for key in ("hello.txt", "big.bin"):
    s3.delete_object(Bucket=bucket, Key=key)
s3.delete_bucket(Bucket=bucket)
print("ok")

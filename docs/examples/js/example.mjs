// JS SDK v3 against s3-gateway: upload, download, list, presign, multipart.
//   npm install   (this directory's package.json)
//   AWS_ENDPOINT_URL=http://127.0.0.1:9878 AWS_ACCESS_KEY_ID=... AWS_SECRET_ACCESS_KEY=... node example.mjs
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";
import {
  S3Client, CreateBucketCommand, PutObjectCommand, GetObjectCommand, ListObjectsV2Command,
  CreateMultipartUploadCommand, UploadPartCommand, CompleteMultipartUploadCommand,
  HeadObjectCommand, DeleteObjectCommand, DeleteBucketCommand,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";

const s3 = new S3Client({
  endpoint: process.env.AWS_ENDPOINT_URL ?? "http://127.0.0.1:9878",
  region: process.env.AWS_REGION ?? "us-east-1",
  forcePathStyle: true, // http://host/bucket/key works without wildcard DNS
});
const Bucket = `example-js-${randomUUID().slice(0, 8)}`;
await s3.send(new CreateBucketCommand({ Bucket }));

// Upload and download.
await s3.send(new PutObjectCommand({ Bucket, Key: "hello.txt", Body: "hello, s3-gateway" }));
const got = await s3.send(new GetObjectCommand({ Bucket, Key: "hello.txt" }));
assert.equal(await got.Body.transformToString(), "hello, s3-gateway");

// List.
const listed = await s3.send(new ListObjectsV2Command({ Bucket }));
assert.deepEqual(listed.Contents.map((o) => o.Key), ["hello.txt"]);

// A presigned URL: anyone holding it may GET the object for an hour.
const url = await getSignedUrl(s3, new GetObjectCommand({ Bucket, Key: "hello.txt" }), { expiresIn: 3600 });
assert.equal(await (await fetch(url)).text(), "hello, s3-gateway");

// Multipart: parts of at least 5 MiB, but the last.
const parts = [Buffer.alloc(5 * 1024 * 1024, "a"), Buffer.alloc(1024, "b")];
const { UploadId } = await s3.send(new CreateMultipartUploadCommand({ Bucket, Key: "big.bin" }));
const done = [];
for (const [index, Body] of parts.entries()) {
  const PartNumber = index + 1;
  const { ETag } = await s3.send(new UploadPartCommand({ Bucket, Key: "big.bin", UploadId, PartNumber, Body }));
  done.push({ PartNumber, ETag });
}
await s3.send(new CompleteMultipartUploadCommand({ Bucket, Key: "big.bin", UploadId, MultipartUpload: { Parts: done } }));
const head = await s3.send(new HeadObjectCommand({ Bucket, Key: "big.bin" }));
assert.equal(head.ContentLength, 5 * 1024 * 1024 + 1024);

// Clean up.
for (const Key of ["hello.txt", "big.bin"]) await s3.send(new DeleteObjectCommand({ Bucket, Key }));
await s3.send(new DeleteBucketCommand({ Bucket }));
console.log("ok");

// Bucket lifecycle through the AWS SDK for JavaScript v3, against a gateway
// whose lifecycle day and pass interval are one second
// (conformance-tests/test_lifecycle.py starts it): PutBucketLifecycleConfiguration,
// GetBucketLifecycleConfiguration, the worker expiring an object under the
// rule's prefix and keeping the others, DeleteBucketLifecycle, then
// NoSuchLifecycleConfiguration. Prints one JSON line: {"ok": bool, "detail": ...}.

import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketLifecycleCommand,
  DeleteObjectCommand,
  GetBucketLifecycleConfigurationCommand,
  ListObjectsV2Command,
  PutBucketLifecycleConfigurationCommand,
  PutObjectCommand,
  S3Client,
} from "@aws-sdk/client-s3";

const PATIENCE_MS = 10_000;

const client = new S3Client({
  endpoint: process.env.S3_ENDPOINT,
  region: process.env.S3_REGION ?? "us-east-1",
  forcePathStyle: true,
  credentials: {
    accessKeyId: process.env.S3_ACCESS_KEY,
    secretAccessKey: process.env.S3_SECRET_KEY,
  },
  maxAttempts: 1,
});

const bucket = `js-lc-${randomBytes(6).toString("hex")}`;
const rules = [
  {
    ID: "expire-tmp",
    Filter: { Prefix: "tmp/" },
    Status: "Enabled",
    Expiration: { Days: 1 },
  },
];

function check(condition, detail) {
  if (!condition) {
    throw new Error(detail);
  }
}

async function keys() {
  const listed = await client.send(new ListObjectsV2Command({ Bucket: bucket }));
  return (listed.Contents ?? []).map((item) => item.Key).sort();
}

async function scenario() {
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  await client.send(
    new PutBucketLifecycleConfigurationCommand({
      Bucket: bucket,
      LifecycleConfiguration: { Rules: rules },
    }),
  );
  const got = await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
  check(isDeepStrictEqual(got.Rules, rules), `rules read back: ${JSON.stringify(got.Rules)}`);

  for (const key of ["tmp/a", "tmp/b", "keep/a"]) {
    await client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: "x" }));
  }
  const deadline = Date.now() + PATIENCE_MS;
  let left = await keys();
  while (!isDeepStrictEqual(left, ["keep/a"])) {
    check(Date.now() < deadline, `after ${PATIENCE_MS} ms the bucket still holds ${JSON.stringify(left)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = await keys();
  }

  await client.send(new DeleteBucketLifecycleCommand({ Bucket: bucket }));
  try {
    await client.send(new GetBucketLifecycleConfigurationCommand({ Bucket: bucket }));
    check(false, "GetBucketLifecycleConfiguration after the delete succeeded");
  } catch (err) {
    check(err.name === "NoSuchLifecycleConfiguration", `after the delete: ${err.name} ${err.message}`);
    check(err.$metadata?.httpStatusCode === 404, `after the delete: status ${err.$metadata?.httpStatusCode}`);
  }
}

async function cleanup() {
  for (const key of await keys().catch(() => [])) {
    await client.send(new DeleteObjectCommand({ Bucket: bucket, Key: key })).catch(() => {});
  }
  await client.send(new DeleteBucketCommand({ Bucket: bucket })).catch((err) => {
    console.error(`cleanup of ${bucket}: ${err}`);
  });
}

let result;
try {
  await scenario();
  result = { ok: true };
} catch (err) {
  result = { ok: false, detail: String(err?.stack ?? err) };
}
await cleanup();
console.log(JSON.stringify(result));

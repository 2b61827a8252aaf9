// Bucket tagging and CORS configuration through the AWS SDK for JavaScript
// v3 (conformance-tests/test_bucket_config_js.py runs it): PutBucketTagging,
// GetBucketTagging, DeleteBucketTagging then NoSuchTagSet; PutBucketCors,
// GetBucketCors, a preflight answered from the rules, DeleteBucketCors then
// NoSuchCORSConfiguration. Prints one JSON line: {"ok": bool, "detail": ...}.

import { randomBytes } from "node:crypto";
import { isDeepStrictEqual } from "node:util";
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketCorsCommand,
  DeleteBucketTaggingCommand,
  GetBucketCorsCommand,
  GetBucketTaggingCommand,
  PutBucketCorsCommand,
  PutBucketTaggingCommand,
  S3Client,
} from "@aws-sdk/client-s3";

const endpoint = process.env.S3_ENDPOINT;
const client = new S3Client({
  endpoint,
  region: process.env.S3_REGION ?? "us-east-1",
  forcePathStyle: true,
  credentials: {
    accessKeyId: process.env.S3_ACCESS_KEY,
    secretAccessKey: process.env.S3_SECRET_KEY,
  },
  maxAttempts: 1,
});

const bucket = `js-cfg-${randomBytes(6).toString("hex")}`;
const ORIGIN = "https://app.example.com";

function check(condition, detail) {
  if (!condition) {
    throw new Error(detail);
  }
}

async function expectError(command, name, status) {
  try {
    await client.send(command);
  } catch (err) {
    check(err.name === name, `${command.constructor.name}: ${err.name} ${err.message}, not ${name}`);
    check(err.$metadata?.httpStatusCode === status, `${command.constructor.name}: status ${err.$metadata?.httpStatusCode}`);
    return;
  }
  check(false, `${command.constructor.name} succeeded, ${name} expected`);
}

async function tagging() {
  const tags = [
    { Key: "team", Value: "storage" },
    { Key: "cost-centre", Value: "42" },
  ];
  await client.send(new PutBucketTaggingCommand({ Bucket: bucket, Tagging: { TagSet: tags } }));
  const got = await client.send(new GetBucketTaggingCommand({ Bucket: bucket }));
  const byKey = (a, b) => a.Key.localeCompare(b.Key);
  check(isDeepStrictEqual([...got.TagSet].sort(byKey), [...tags].sort(byKey)), `tags read back: ${JSON.stringify(got.TagSet)}`);
  await client.send(new DeleteBucketTaggingCommand({ Bucket: bucket }));
  await expectError(new GetBucketTaggingCommand({ Bucket: bucket }), "NoSuchTagSet", 404);
}

async function cors() {
  const rules = [
    {
      ID: "app",
      AllowedOrigins: [ORIGIN],
      AllowedMethods: ["GET", "PUT"],
      AllowedHeaders: ["*"],
      ExposeHeaders: ["ETag"],
      MaxAgeSeconds: 600,
    },
  ];
  await client.send(new PutBucketCorsCommand({ Bucket: bucket, CORSConfiguration: { CORSRules: rules } }));
  const got = await client.send(new GetBucketCorsCommand({ Bucket: bucket }));
  check(isDeepStrictEqual(got.CORSRules, rules), `rules read back: ${JSON.stringify(got.CORSRules)}`);

  const preflight = (origin) =>
    fetch(`${endpoint}/${bucket}/some/key`, {
      method: "OPTIONS",
      headers: { Origin: origin, "Access-Control-Request-Method": "PUT" },
    });
  const allowed = await preflight(ORIGIN);
  check(allowed.status === 200, `preflight from the allowed origin: ${allowed.status}`);
  check(allowed.headers.get("access-control-allow-origin") === ORIGIN, "preflight names the origin");
  const refused = await preflight("https://elsewhere.example.com");
  check(refused.status === 403, `preflight from another origin: ${refused.status}`);

  await client.send(new DeleteBucketCorsCommand({ Bucket: bucket }));
  await expectError(new GetBucketCorsCommand({ Bucket: bucket }), "NoSuchCORSConfiguration", 404);
}

let result;
try {
  await client.send(new CreateBucketCommand({ Bucket: bucket }));
  await tagging();
  await cors();
  result = { ok: true };
} catch (err) {
  result = { ok: false, detail: String(err?.stack ?? err) };
}
await client.send(new DeleteBucketCommand({ Bucket: bucket })).catch((err) => {
  console.error(`cleanup of ${bucket}: ${err}`);
});
console.log(JSON.stringify(result));

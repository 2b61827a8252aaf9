// The SDK matrix scenarios driven by the AWS SDK for JavaScript v3: one JSON line
// per scenario on stdout (see ../README.md). Arguments select scenarios; none runs all.

import { createHash, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { isDeepStrictEqual } from "node:util";
import { crc32 } from "node:zlib";
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CopyObjectCommand,
  CreateBucketCommand,
  CreateMultipartUploadCommand,
  DeleteBucketCommand,
  DeleteObjectCommand,
  DeleteBucketPolicyCommand,
  DeleteObjectTaggingCommand,
  DeletePublicAccessBlockCommand,
  GetBucketPolicyStatusCommand,
  GetObjectAclCommand,
  GetObjectCommand,
  GetBucketVersioningCommand,
  GetObjectTaggingCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListBucketsCommand,
  ListMultipartUploadsCommand,
  ListObjectVersionsCommand,
  ListObjectsV2Command,
  PutBucketPolicyCommand,
  PutBucketVersioningCommand,
  PutObjectCommand,
  PutPublicAccessBlockCommand,
  PutObjectTaggingCommand,
  S3Client,
  UploadPartCommand,
  paginateListObjectsV2,
} from "@aws-sdk/client-s3";
import { getSignedUrl } from "@aws-sdk/s3-request-presigner";
import { Failure, SECURITY_SCENARIOS, SecurityScenarios } from "./security.mjs";

const SCENARIOS = [
  "bucket",
  "object",
  "range",
  "list-v2-delimiter",
  "multipart",
  "copy",
  "tagging",
  "presigned",
  "checksum-default",
  "checksum-off",
];
// Scenarios only this client runs (see ../run-matrix).
const EXTRA_SCENARIOS = ["access", "versioning", ...SECURITY_SCENARIOS];
const ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers";
const PART_SIZE = 5 * 1024 * 1024;
// Larger than one aws-chunked chunk, so streaming uploads span several chunks and a trailer.
const CHECKSUM_BODY_SIZE = 256 * 1024 + 123;
const TREE_KEYS = [
  "tree/a.txt",
  "tree/b.txt",
  "tree/c.txt",
  "tree/dir1/x.txt",
  "tree/dir1/y.txt",
  "tree/dir2/z.txt",
  "tree/dir3/w.txt",
];
// ListObjectsV2 with prefix tree/, delimiter / and max-keys 2: [keys, common prefixes] per page.
const EXPECTED_TREE_PAGES = [
  [["tree/a.txt", "tree/b.txt"], []],
  [["tree/c.txt"], ["tree/dir1/"]],
  [[], ["tree/dir2/", "tree/dir3/"]],
];
const TAGS = { project: "s3gw", tier: "gold" };

function check(condition, message) {
  if (!condition) throw new Failure(message);
}

function endpointFromEnv() {
  const missing = ["S3_ENDPOINT", "S3_ACCESS_KEY", "S3_SECRET_KEY"].filter((n) => !process.env[n]);
  if (missing.length > 0) {
    console.error(`missing environment: ${missing.join(", ")}`);
    process.exit(2);
  }
  return {
    url: process.env.S3_ENDPOINT.replace(/\/+$/, ""),
    accessKey: process.env.S3_ACCESS_KEY,
    secretKey: process.env.S3_SECRET_KEY,
    region: process.env.S3_REGION || "us-east-1",
  };
}

function makeClient(endpoint, checksumsByDefault) {
  return new S3Client({
    region: endpoint.region,
    endpoint: endpoint.url,
    forcePathStyle: true,
    credentials: { accessKeyId: endpoint.accessKey, secretAccessKey: endpoint.secretKey },
    ...(checksumsByDefault
      ? {}
      : { requestChecksumCalculation: "WHEN_REQUIRED", responseChecksumValidation: "WHEN_REQUIRED" }),
  });
}

const quotedMd5 = (data) => `"${createHash("md5").update(data).digest("hex")}"`;

// The S3 multipart ETag: md5 of the concatenated binary part md5s, then -N.
// S3's multipart ETag; with S3_MULTIPART_ETAG=ozone, Ozone's (md5 of the parts' hex md5s as text).
function multipartEtag(parts) {
  const ozone = process.env.S3_MULTIPART_ETAG === "ozone";
  const joined = createHash("md5");
  for (const part of parts) {
    const sum = createHash("md5").update(part).digest();
    joined.update(ozone ? sum.toString("hex") : sum);
  }
  return `"${joined.digest("hex")}-${parts.length}"`;
}

function crc32Base64(data) {
  const sum = Buffer.alloc(4);
  sum.writeUInt32BE(crc32(data));
  return sum.toString("base64");
}

function checkSameBytes(got, expected, what) {
  check(
    Buffer.compare(Buffer.from(got), expected) === 0,
    `${what}: got ${got.length} bytes, expected ${expected.length} bytes with other content`,
  );
}

async function expectNotFound(promise, what) {
  try {
    await promise;
  } catch (error) {
    const status = error.$metadata?.httpStatusCode;
    check(status === 404, `${what}: expected 404, got ${status}: ${error.name}: ${error.message}`);
    return;
  }
  throw new Failure(`${what}: still exists`);
}

const bodyBytes = async (answer) => Buffer.from(await answer.Body.transformToByteArray());

function describeError(error) {
  if (error instanceof Failure) return error.message;
  const status = error.$metadata?.httpStatusCode;
  return `${error.name}${status ? ` (HTTP ${status})` : ""}: ${error.message}`;
}

class Scenarios {
  constructor(endpoint, s3, prefix) {
    this.endpoint = endpoint;
    this.s3 = s3;
    this.prefix = prefix;
    this.bucket = prefix;
  }

  // us-east-1 is the one region where CreateBucket takes no LocationConstraint.
  async createBucket(Bucket) {
    const region = this.endpoint.region;
    const config = region === "us-east-1" ? {} : { CreateBucketConfiguration: { LocationConstraint: region } };
    await this.s3.send(new CreateBucketCommand({ Bucket, ...config }));
  }

  async bucketScenario() {
    const Bucket = `${this.prefix}-b`;
    await this.createBucket(Bucket);
    try {
      await this.s3.send(new HeadBucketCommand({ Bucket }));
      const names = ((await this.s3.send(new ListBucketsCommand({}))).Buckets ?? []).map((b) => b.Name);
      check(names.includes(Bucket), `ListBuckets does not list ${Bucket}: ${names}`);
    } finally {
      await this.s3.send(new DeleteBucketCommand({ Bucket }));
    }
    await expectNotFound(this.s3.send(new HeadBucketCommand({ Bucket })), "HeadBucket after DeleteBucket");
  }

  async objectScenario() {
    const target = { Bucket: this.bucket, Key: "object/hello world.txt" };
    const body = randomBytes(64 * 1024 + 7);
    const blue = { color: "blue" };
    const put = await this.s3.send(
      new PutObjectCommand({ ...target, Body: body, ContentType: "text/plain", Metadata: blue }),
    );
    check(put.ETag === quotedMd5(body), `PutObject ETag ${put.ETag}, expected ${quotedMd5(body)}`);
    const got = await this.s3.send(new GetObjectCommand(target));
    checkSameBytes(await bodyBytes(got), body, "GetObject body");
    check(got.ContentType === "text/plain", `GetObject Content-Type ${got.ContentType}`);
    check(isDeepStrictEqual(got.Metadata, blue), `GetObject metadata ${JSON.stringify(got.Metadata)}`);
    check(got.ETag === put.ETag, `GetObject ETag ${got.ETag}`);
    const head = await this.s3.send(new HeadObjectCommand(target));
    check(head.ContentLength === body.length, `HeadObject Content-Length ${head.ContentLength}`);
    check(head.ETag === put.ETag, `HeadObject ETag ${head.ETag}`);
    check(isDeepStrictEqual(head.Metadata, blue), `HeadObject metadata ${JSON.stringify(head.Metadata)}`);
    await this.s3.send(new DeleteObjectCommand(target));
    await expectNotFound(this.s3.send(new HeadObjectCommand(target)), "HeadObject after DeleteObject");
  }

  async rangeScenario() {
    const target = { Bucket: this.bucket, Key: "range/data.bin" };
    const body = randomBytes(10_000);
    await this.s3.send(new PutObjectCommand({ ...target, Body: body }));
    const cases = [
      ["bytes=100-199", body.subarray(100, 200), "bytes 100-199/10000"],
      ["bytes=9950-", body.subarray(9950), "bytes 9950-9999/10000"],
      ["bytes=-50", body.subarray(9950), "bytes 9950-9999/10000"],
    ];
    for (const [Range, expected, contentRange] of cases) {
      const got = await this.s3.send(new GetObjectCommand({ ...target, Range }));
      checkSameBytes(await bodyBytes(got), expected, `Range ${Range}`);
      check(got.ContentRange === contentRange, `Range ${Range}: Content-Range ${got.ContentRange}`);
    }
  }

  async listScenario() {
    for (const Key of TREE_KEYS) {
      await this.s3.send(new PutObjectCommand({ Bucket: this.bucket, Key, Body: Key }));
    }
    const pages = [];
    let ContinuationToken;
    while (pages.length <= EXPECTED_TREE_PAGES.length) {
      const page = await this.s3.send(
        new ListObjectsV2Command({
          Bucket: this.bucket,
          Prefix: "tree/",
          Delimiter: "/",
          MaxKeys: 2,
          ContinuationToken,
        }),
      );
      const keys = (page.Contents ?? []).map((o) => o.Key);
      const prefixes = (page.CommonPrefixes ?? []).map((p) => p.Prefix);
      pages.push([keys, prefixes]);
      check(page.KeyCount === keys.length + prefixes.length, `page ${pages.length}: KeyCount ${page.KeyCount}`);
      if (!page.IsTruncated) break;
      ContinuationToken = page.NextContinuationToken;
      check(ContinuationToken, `page ${pages.length} is truncated but has no NextContinuationToken`);
    }
    check(
      isDeepStrictEqual(pages, EXPECTED_TREE_PAGES),
      `pages ${JSON.stringify(pages)}, expected ${JSON.stringify(EXPECTED_TREE_PAGES)}`,
    );
  }

  async multipartScenario() {
    const target = { Bucket: this.bucket, Key: "multipart/big.bin" };
    const parts = [randomBytes(PART_SIZE), randomBytes(PART_SIZE), randomBytes(PART_SIZE)];
    const { UploadId } = await this.s3.send(new CreateMultipartUploadCommand(target));
    let etag;
    try {
      const completed = [];
      for (const [index, part] of parts.entries()) {
        const PartNumber = index + 1;
        const answer = await this.s3.send(new UploadPartCommand({ ...target, UploadId, PartNumber, Body: part }));
        check(answer.ETag === quotedMd5(part), `UploadPart ${PartNumber} ETag ${answer.ETag}`);
        completed.push({ PartNumber, ETag: answer.ETag });
      }
      const done = await this.s3.send(
        new CompleteMultipartUploadCommand({ ...target, UploadId, MultipartUpload: { Parts: completed } }),
      );
      etag = done.ETag;
    } catch (error) {
      await this.s3
        .send(new AbortMultipartUploadCommand({ ...target, UploadId }))
        .catch((abortError) => console.error(`js-v3: abort of upload ${UploadId} failed: ${abortError}`));
      throw error;
    }
    check(etag.replaceAll('"', "").endsWith("-3"), `CompleteMultipartUpload ETag ${etag} does not end in -3`);
    check(etag === multipartEtag(parts), `CompleteMultipartUpload ETag ${etag}, expected ${multipartEtag(parts)}`);
    const got = await this.s3.send(new GetObjectCommand(target));
    checkSameBytes(await bodyBytes(got), Buffer.concat(parts), "GetObject of the completed upload");
    check(got.ETag === etag, `GetObject ETag ${got.ETag}, expected ${etag}`);
  }

  async copyScenario() {
    const source = "copy/source.bin";
    const body = randomBytes(32 * 1024);
    const origin = { origin: "copy-test" };
    const put = await this.s3.send(
      new PutObjectCommand({ Bucket: this.bucket, Key: source, Body: body, Metadata: origin }),
    );
    const target = { Bucket: this.bucket, Key: "copy/target.bin" };
    const copied = await this.s3.send(new CopyObjectCommand({ ...target, CopySource: `${this.bucket}/${source}` }));
    check(copied.CopyObjectResult?.ETag === put.ETag, `CopyObject ETag ${copied.CopyObjectResult?.ETag}`);
    const got = await this.s3.send(new GetObjectCommand(target));
    checkSameBytes(await bodyBytes(got), body, "GetObject of the copy");
    check(isDeepStrictEqual(got.Metadata, origin), `copy metadata ${JSON.stringify(got.Metadata)}`);
  }

  async taggingScenario() {
    const target = { Bucket: this.bucket, Key: "tagging/object.txt" };
    await this.s3.send(new PutObjectCommand({ ...target, Body: "tagged" }));
    const TagSet = Object.entries(TAGS).map(([Key, Value]) => ({ Key, Value }));
    await this.s3.send(new PutObjectTaggingCommand({ ...target, Tagging: { TagSet } }));
    const got = await this.s3.send(new GetObjectTaggingCommand(target));
    const seen = Object.fromEntries((got.TagSet ?? []).map((t) => [t.Key, t.Value]));
    check(isDeepStrictEqual(seen, TAGS), `GetObjectTagging ${JSON.stringify(seen)}, expected ${JSON.stringify(TAGS)}`);
    await this.s3.send(new DeleteObjectTaggingCommand(target));
    const left = (await this.s3.send(new GetObjectTaggingCommand(target))).TagSet ?? [];
    check(left.length === 0, `GetObjectTagging after DeleteObjectTagging: ${JSON.stringify(left)}`);
  }

  async presignedScenario() {
    const target = { Bucket: this.bucket, Key: "presigned/file.bin" };
    const body = randomBytes(20 * 1024);
    const putUrl = await getSignedUrl(this.s3, new PutObjectCommand(target), { expiresIn: 600 });
    const put = await fetch(putUrl, { method: "PUT", body });
    check(put.status === 200, `presigned PUT: HTTP ${put.status}: ${(await put.text()).slice(0, 300)}`);
    const getUrl = await getSignedUrl(this.s3, new GetObjectCommand(target), { expiresIn: 600 });
    const got = await fetch(getUrl);
    const data = Buffer.from(await got.arrayBuffer());
    check(got.status === 200, `presigned GET: HTTP ${got.status}: ${data.toString().slice(0, 300)}`);
    checkSameBytes(data, body, "presigned GET body");
  }

  async checksumDefaultScenario() {
    const target = { Bucket: this.bucket, Key: "checksum/default.bin" };
    const body = randomBytes(CHECKSUM_BODY_SIZE);
    const expected = crc32Base64(body);
    const put = await this.s3.send(new PutObjectCommand({ ...target, Body: body }));
    check([undefined, expected].includes(put.ChecksumCRC32), `PutObject ChecksumCRC32 ${put.ChecksumCRC32}, expected ${expected}`);
    const got = await this.s3.send(new GetObjectCommand({ ...target, ChecksumMode: "ENABLED" }));
    checkSameBytes(await bodyBytes(got), body, "GetObject body");
    check([undefined, expected].includes(got.ChecksumCRC32), `GetObject ChecksumCRC32 ${got.ChecksumCRC32}, expected ${expected}`);
  }

  // Canned ACL, GetObjectAcl, a public-read policy and its status, a Deny
  // beating the ACL, IgnorePublicAcls; anonymous reads by plain fetch.
  async accessScenario() {
    const Bucket = this.bucket;
    const url = (key) => `${this.endpoint.url}/${Bucket}/${key}`;
    const anonymousStatus = async (key) => (await fetch(url(key))).status;
    await this.s3.send(new PutObjectCommand({ Bucket, Key: "access/public.txt", Body: "for all", ACL: "public-read" }));
    await this.s3.send(new PutObjectCommand({ Bucket, Key: "access/private.txt", Body: "mine" }));
    const got = await fetch(url("access/public.txt"));
    check(got.status === 200, `anonymous GET of a public-read object: HTTP ${got.status}`);
    check((await got.text()) === "for all", "anonymous GET body");
    check((await anonymousStatus("access/private.txt")) === 403, "anonymous GET of a private object not 403");
    const acl = await this.s3.send(new GetObjectAclCommand({ Bucket, Key: "access/public.txt" }));
    check(
      (acl.Grants ?? []).some((g) => g.Grantee?.URI === ALL_USERS && g.Permission === "READ"),
      `GetObjectAcl grants ${JSON.stringify(acl.Grants)}`,
    );
    const statement = (Effect, Key) => ({ Effect, Principal: "*", Action: "s3:GetObject", Resource: `arn:aws:s3:::${Bucket}/${Key}` });
    const putPolicy = (...Statement) =>
      this.s3.send(new PutBucketPolicyCommand({ Bucket, Policy: JSON.stringify({ Version: "2012-10-17", Statement }) }));
    await putPolicy(statement("Allow", "access/*"));
    const status = await this.s3.send(new GetBucketPolicyStatusCommand({ Bucket }));
    check(status.PolicyStatus?.IsPublic === true, `GetBucketPolicyStatus ${JSON.stringify(status.PolicyStatus)}`);
    check((await anonymousStatus("access/private.txt")) === 200, "a public-read policy did not open the object");
    await putPolicy(statement("Deny", "access/public.txt"));
    check((await anonymousStatus("access/public.txt")) === 403, "a Deny statement did not beat the public-read ACL");
    await this.s3.send(new DeleteBucketPolicyCommand({ Bucket }));
    await this.s3.send(
      new PutPublicAccessBlockCommand({ Bucket, PublicAccessBlockConfiguration: { IgnorePublicAcls: true } }),
    );
    check((await anonymousStatus("access/public.txt")) === 403, "IgnorePublicAcls did not hide the public ACL");
    await this.s3.send(new DeletePublicAccessBlockCommand({ Bucket }));
    check((await anonymousStatus("access/public.txt")) === 200, "the ACL did not count again");
  }

  async checksumOffScenario() {
    const s3 = makeClient(this.endpoint, false);
    const target = { Bucket: this.bucket, Key: "checksum/off.bin" };
    const body = randomBytes(CHECKSUM_BODY_SIZE);
    const put = await s3.send(new PutObjectCommand({ ...target, Body: body }));
    check(put.ETag === quotedMd5(body), `PutObject ETag ${put.ETag}, expected ${quotedMd5(body)}`);
    const got = await s3.send(new GetObjectCommand(target));
    checkSameBytes(await bodyBytes(got), body, "GetObject body");
  }
}

// The entries of a ListObjectVersions page (the SDK splits Version and
// DeleteMarker elements, so their order across the two is lost).
function pageVersions(page) {
  return [
    ...(page.Versions ?? []).map((v) => ({ ...v, marker: false })),
    ...(page.DeleteMarkers ?? []).map((m) => ({ ...m, marker: true })),
  ];
}

class VersioningScenario {
  constructor(s3, bucket) {
    this.s3 = s3;
    this.bucket = bucket;
  }

  async run() {
    const { s3, bucket: Bucket } = this;
    const enable = new PutBucketVersioningCommand({ Bucket, VersioningConfiguration: { Status: "Enabled" } });
    if (process.env.S3_VERSIONING === "none") {
      try {
        await s3.send(enable);
      } catch (error) {
        const status = error.$metadata?.httpStatusCode;
        check(status === 501, `PutBucketVersioning on a back end without versions: HTTP ${status}, expected 501`);
        return;
      }
      throw new Failure("PutBucketVersioning succeeded on a back end that keeps no versions");
    }
    await s3.send(enable);
    const state = await s3.send(new GetBucketVersioningCommand({ Bucket }));
    check(state.Status === "Enabled", `GetBucketVersioning Status ${state.Status}`);
    const Key = "versioned.txt";
    const v1 = (await s3.send(new PutObjectCommand({ Bucket, Key, Body: "one" }))).VersionId;
    const v2 = (await s3.send(new PutObjectCommand({ Bucket, Key, Body: "two" }))).VersionId;
    check(v1 && v2 && v1 !== v2 && v1 !== "null", `PutObject version ids ${v1}, ${v2}`);
    const old = await s3.send(new GetObjectCommand({ Bucket, Key, VersionId: v1 }));
    check(Buffer.from(await bodyBytes(old)).toString() === "one", "GetObject of the first version");
    check((await s3.send(new HeadObjectCommand({ Bucket, Key }))).VersionId === v2, "HEAD names the latest version");

    const deleted = await s3.send(new DeleteObjectCommand({ Bucket, Key }));
    check(deleted.DeleteMarker === true && deleted.VersionId, `DeleteObject ${JSON.stringify(deleted)}`);
    const marker = deleted.VersionId;
    await expectNotFound(s3.send(new GetObjectCommand({ Bucket, Key })), "GetObject behind a delete marker");

    const expected = [
      [marker, true, true],
      [v2, false, false],
      [v1, false, false],
    ];
    const whole = pageVersions(await s3.send(new ListObjectVersionsCommand({ Bucket })));
    const seen = whole.map((v) => [v.VersionId, v.IsLatest, v.marker]).sort();
    check(isDeepStrictEqual(seen, [...expected].sort()), `ListObjectVersions ${JSON.stringify(seen)}`);
    // One entry per page shows the order: newest first.
    const paged = [];
    let markers = {};
    for (;;) {
      const page = await s3.send(new ListObjectVersionsCommand({ Bucket, MaxKeys: 1, ...markers }));
      paged.push(...pageVersions(page).map((v) => v.VersionId));
      if (!page.IsTruncated) break;
      check(paged.length < 10, "ListObjectVersions pages do not end");
      markers = { KeyMarker: page.NextKeyMarker, VersionIdMarker: page.NextVersionIdMarker };
    }
    check(isDeepStrictEqual(paged, expected.map((e) => e[0])), `ListObjectVersions pages ${JSON.stringify(paged)}`);

    await s3.send(new DeleteObjectCommand({ Bucket, Key, VersionId: marker }));
    const back = await s3.send(new GetObjectCommand({ Bucket, Key }));
    check(Buffer.from(await bodyBytes(back)).toString() === "two", "GetObject after the marker is deleted");
    const copied = await s3.send(
      new CopyObjectCommand({ Bucket, Key: "copy.txt", CopySource: `${Bucket}/${Key}?versionId=${v1}` }),
    );
    check(copied.CopySourceVersionId === v1, `CopyObject CopySourceVersionId ${copied.CopySourceVersionId}`);
    const copy = await s3.send(new GetObjectCommand({ Bucket, Key: "copy.txt" }));
    check(Buffer.from(await bodyBytes(copy)).toString() === "one", "GetObject of the copy of the first version");
  }

  // Best-effort cleanup: every version and delete marker, then the bucket.
  async remove() {
    const { s3, bucket: Bucket } = this;
    try {
      const page = await s3.send(new ListObjectVersionsCommand({ Bucket }));
      for (const { Key, VersionId } of [...(page.Versions ?? []), ...(page.DeleteMarkers ?? [])]) {
        await s3.send(new DeleteObjectCommand({ Bucket, Key, VersionId }));
      }
    } catch (error) {
      console.error(`js-v3: cleanup of versions in ${Bucket} failed: ${describeError(error)}`);
    }
    await removeBucket(s3, Bucket);
  }
}

// Best-effort cleanup: every object and pending upload, then the bucket.
async function removeBucket(s3, Bucket) {
  const warn = (what) => (error) => console.error(`js-v3: cleanup ${what} failed: ${describeError(error)}`);
  try {
    await s3.send(new HeadBucketCommand({ Bucket }));
  } catch {
    return;
  }
  try {
    for await (const page of paginateListObjectsV2({ client: s3 }, { Bucket })) {
      for (const { Key } of page.Contents ?? []) {
        await s3.send(new DeleteObjectCommand({ Bucket, Key })).catch(warn(`delete of ${Bucket}/${Key}`));
      }
    }
  } catch (error) {
    warn(`listing of ${Bucket}`)(error);
  }
  try {
    const { Uploads } = await s3.send(new ListMultipartUploadsCommand({ Bucket }));
    for (const { Key, UploadId } of Uploads ?? []) {
      await s3.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId })).catch(warn(`abort of ${UploadId}`));
    }
  } catch (error) {
    warn(`of uploads in ${Bucket}`)(error);
  }
  await s3.send(new DeleteBucketCommand({ Bucket })).catch(warn(`delete of bucket ${Bucket}`));
}

function emit(version, scenario, ok, detail) {
  const shortened = detail.length > 600 ? `${detail.slice(0, 600)}...` : detail;
  console.log(JSON.stringify({ sdk: "js-v3", version, scenario, ok, detail: shortened }));
}

async function main() {
  const requested = process.argv.slice(2);
  const known = [...SCENARIOS, ...EXTRA_SCENARIOS];
  const unknown = requested.filter((name) => !known.includes(name));
  if (unknown.length > 0) {
    console.error(`unknown scenario(s) ${unknown.join(", ")}; known: ${known.join(", ")}`);
    process.exit(2);
  }
  const wanted = requested.length > 0 ? known.filter((s) => requested.includes(s)) : known;
  const endpoint = endpointFromEnv();
  const version = JSON.parse(
    readFileSync(new URL("./node_modules/@aws-sdk/client-s3/package.json", import.meta.url)),
  ).version;
  const s3 = makeClient(endpoint, true);
  const scenarios = new Scenarios(endpoint, s3, `js-v3-${randomBytes(4).toString("hex")}`);
  const security = new SecurityScenarios(scenarios);
  const bodies = {
    bucket: () => scenarios.bucketScenario(),
    object: () => scenarios.objectScenario(),
    range: () => scenarios.rangeScenario(),
    "list-v2-delimiter": () => scenarios.listScenario(),
    multipart: () => scenarios.multipartScenario(),
    copy: () => scenarios.copyScenario(),
    tagging: () => scenarios.taggingScenario(),
    presigned: () => scenarios.presignedScenario(),
    "checksum-default": () => scenarios.checksumDefaultScenario(),
    "checksum-off": () => scenarios.checksumOffScenario(),
    access: () => scenarios.accessScenario(),
    "sse-s3": () => security.sseS3(),
    "sse-c": () => security.sseC(),
    "object-lock": () => security.objectLock(),
    "policy-condition": () => security.policyCondition(),
    versioning: async () => {
      const versioned = new VersioningScenario(s3, `${scenarios.prefix}-v`);
      await scenarios.createBucket(versioned.bucket);
      try {
        await versioned.run();
      } finally {
        await versioned.remove();
      }
    },
  };
  let setupError;
  if (wanted.some((name) => name !== "bucket")) {
    await scenarios.createBucket(scenarios.bucket).catch((error) => {
      setupError = `CreateBucket ${scenarios.bucket}: ${describeError(error)}`;
    });
  }
  try {
    for (const name of wanted) {
      if (setupError && name !== "bucket") {
        emit(version, name, false, `setup failed: ${setupError}`);
        continue;
      }
      try {
        const note = await bodies[name]();
        emit(version, name, true, note ?? "");
      } catch (error) {
        emit(version, name, false, describeError(error));
      }
    }
  } finally {
    await removeBucket(s3, scenarios.bucket);
    await removeBucket(s3, `${scenarios.prefix}-b`);
    await removeBucket(s3, `${scenarios.prefix}-e`);
    await removeBucket(s3, `${scenarios.prefix}-p`);
    await security.removeLockedBucket((what) => (error) => console.error(`js-v3: cleanup ${what} failed: ${describeError(error)}`));
  }
}

await main();

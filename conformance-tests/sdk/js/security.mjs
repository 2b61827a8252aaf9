// Encryption, object lock and a conditioned bucket policy (issue 22) for the JS SDK v3 matrix:
// the sse-s3, sse-c, object-lock and policy-condition scenarios, each but sse-c in a bucket of
// its own (prefix -e, -l, -p) so that the shared bucket stays plain. See ../README.md.

import { createHash, randomBytes } from "node:crypto";
import {
  CreateBucketCommand,
  DeleteBucketCommand,
  DeleteBucketPolicyCommand,
  DeleteObjectCommand,
  GetBucketEncryptionCommand,
  GetBucketPolicyCommand,
  GetObjectCommand,
  GetObjectLegalHoldCommand,
  GetObjectLockConfigurationCommand,
  GetObjectRetentionCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectVersionsCommand,
  PutBucketEncryptionCommand,
  PutBucketPolicyCommand,
  PutObjectCommand,
  PutObjectLegalHoldCommand,
  PutObjectLockConfigurationCommand,
  PutObjectRetentionCommand,
} from "@aws-sdk/client-s3";

export const SECURITY_SCENARIOS = ["sse-s3", "sse-c", "object-lock", "policy-condition"];

export class Failure extends Error {}

function check(condition, message) {
  if (!condition) throw new Failure(message);
}

const quotedMd5 = (data) => `"${createHash("md5").update(data).digest("hex")}"`;
const bodyBytes = async (answer) => Buffer.from(await answer.Body.transformToByteArray());

function checkSameBytes(got, expected, what) {
  check(
    Buffer.compare(Buffer.from(got), expected) === 0,
    `${what}: got ${got.length} bytes, expected ${expected.length} bytes with other content`,
  );
}

// The call must fail with this HTTP status (and S3 error code, unless null).
async function expectRefused(promise, status, code, what) {
  try {
    await promise;
  } catch (error) {
    const got = error.$metadata?.httpStatusCode;
    check(
      got === status && (code === null || error.name === code || error.Code === code),
      `${what}: expected HTTP ${status} ${code ?? ""}, got ${got}: ${error.name}: ${error.message}`,
    );
    return;
  }
  throw new Failure(`${what}: succeeded, expected HTTP ${status} ${code ?? ""}`);
}

export class SecurityScenarios {
  // scenarios: the matrix's Scenarios (its client, endpoint, prefix, bucket and createBucket).
  constructor(scenarios) {
    this.base = scenarios;
    this.s3 = scenarios.s3;
  }

  async getEncrypted(Bucket, Key, body) {
    const got = await this.s3.send(new GetObjectCommand({ Bucket, Key }));
    checkSameBytes(await bodyBytes(got), body, "GetObject of an SSE-S3 object");
    check(got.ServerSideEncryption === "AES256", `GetObject ServerSideEncryption ${got.ServerSideEncryption}`);
  }

  async sseS3() {
    const target = { Bucket: this.base.bucket, Key: "sse-s3/object.bin" };
    const body = randomBytes(32 * 1024 + 5);
    const put = await this.s3.send(new PutObjectCommand({ ...target, Body: body, ServerSideEncryption: "AES256" }));
    check(put.ServerSideEncryption === "AES256", `PutObject ServerSideEncryption ${put.ServerSideEncryption}`);
    check(put.ETag === quotedMd5(body), `PutObject ETag ${put.ETag}, expected the plaintext's MD5 ${quotedMd5(body)}`);
    const head = await this.s3.send(new HeadObjectCommand(target));
    check(
      head.ServerSideEncryption === "AES256" && head.ContentLength === body.length,
      `HeadObject ServerSideEncryption ${head.ServerSideEncryption}, Content-Length ${head.ContentLength}`,
    );
    await this.getEncrypted(target.Bucket, target.Key, body);

    // Bucket default encryption: a plain PUT comes back encrypted.
    const Bucket = `${this.base.prefix}-e`;
    await this.base.createBucket(Bucket);
    await this.s3.send(
      new PutBucketEncryptionCommand({
        Bucket,
        ServerSideEncryptionConfiguration: {
          Rules: [{ ApplyServerSideEncryptionByDefault: { SSEAlgorithm: "AES256" } }],
        },
      }),
    );
    const config = await this.s3.send(new GetBucketEncryptionCommand({ Bucket }));
    const rules = config.ServerSideEncryptionConfiguration?.Rules ?? [];
    check(
      rules.length === 1 && rules[0].ApplyServerSideEncryptionByDefault?.SSEAlgorithm === "AES256",
      `GetBucketEncryption rules ${JSON.stringify(rules)}`,
    );
    const plain = randomBytes(10_000);
    const defaulted = await this.s3.send(new PutObjectCommand({ Bucket, Key: target.Key, Body: plain }));
    check(
      defaulted.ServerSideEncryption === "AES256",
      `plain PutObject into a bucket with default encryption: ServerSideEncryption ${defaulted.ServerSideEncryption}`,
    );
    const defaultedHead = await this.s3.send(new HeadObjectCommand({ Bucket, Key: target.Key }));
    check(
      defaultedHead.ServerSideEncryption === "AES256",
      `HeadObject of a default-encrypted object: ServerSideEncryption ${defaultedHead.ServerSideEncryption}`,
    );
    await this.getEncrypted(Bucket, target.Key, plain);
  }

  // The key as users hand it to the SDK: raw bytes; the SDK base64-encodes it and adds its MD5.
  async sseC() {
    const target = { Bucket: this.base.bucket, Key: "sse-c/object.bin" };
    const body = randomBytes(20 * 1024 + 3);
    const key = randomBytes(32);
    const keyMd5 = createHash("md5").update(key).digest("base64");
    const withKey = { SSECustomerAlgorithm: "AES256", SSECustomerKey: key };
    const put = await this.s3.send(new PutObjectCommand({ ...target, Body: body, ...withKey }));
    check(
      put.SSECustomerAlgorithm === "AES256" && put.SSECustomerKeyMD5 === keyMd5,
      `PutObject echoed algorithm ${put.SSECustomerAlgorithm}, key MD5 ${put.SSECustomerKeyMD5}`,
    );
    const head = await this.s3.send(new HeadObjectCommand({ ...target, ...withKey }));
    check(
      head.ContentLength === body.length && head.SSECustomerKeyMD5 === keyMd5,
      `HeadObject Content-Length ${head.ContentLength}, key MD5 ${head.SSECustomerKeyMD5}`,
    );
    const got = await this.s3.send(new GetObjectCommand({ ...target, ...withKey }));
    checkSameBytes(await bodyBytes(got), body, "GetObject with the key");
    check(
      got.SSECustomerAlgorithm === "AES256" && got.SSECustomerKeyMD5 === keyMd5,
      `GetObject echoed algorithm ${got.SSECustomerAlgorithm}, key MD5 ${got.SSECustomerKeyMD5}`,
    );
    const ranged = await this.s3.send(new GetObjectCommand({ ...target, ...withKey, Range: "bytes=100-199" }));
    checkSameBytes(await bodyBytes(ranged), body.subarray(100, 200), "GetObject bytes=100-199 with the key");
    await expectRefused(this.s3.send(new GetObjectCommand(target)), 400, "InvalidRequest", "GetObject without the key");
    await expectRefused(this.s3.send(new HeadObjectCommand(target)), 400, null, "HeadObject without the key");
    await expectRefused(
      this.s3.send(new GetObjectCommand({ ...target, SSECustomerAlgorithm: "AES256", SSECustomerKey: randomBytes(32) })),
      403,
      "AccessDenied",
      "GetObject with another key",
    );
  }

  async objectLock() {
    const Bucket = `${this.base.prefix}-l`;
    const create = this.s3.send(new CreateBucketCommand({ Bucket, ObjectLockEnabledForBucket: true }));
    if (process.env.S3_VERSIONING === "none") {
      await expectRefused(create, 501, "NotImplemented", "CreateBucket with object lock on a back end without versions");
      return "S3_VERSIONING=none: CreateBucket with object lock answers 501 NotImplemented, as expected";
    }
    await create;
    await this.s3.send(
      new PutObjectLockConfigurationCommand({
        Bucket,
        ObjectLockConfiguration: {
          ObjectLockEnabled: "Enabled",
          Rule: { DefaultRetention: { Mode: "GOVERNANCE", Days: 1 } },
        },
      }),
    );
    const config = (await this.s3.send(new GetObjectLockConfigurationCommand({ Bucket }))).ObjectLockConfiguration;
    check(
      config?.Rule?.DefaultRetention?.Mode === "GOVERNANCE" && config.Rule.DefaultRetention.Days === 1,
      `GetObjectLockConfiguration ${JSON.stringify(config)}`,
    );

    const Key = "locked.txt";
    const { VersionId } = await this.s3.send(new PutObjectCommand({ Bucket, Key, Body: "kept" }));
    const version = { Bucket, Key, VersionId };
    const head = await this.s3.send(new HeadObjectCommand(version));
    check(
      head.ObjectLockMode === "GOVERNANCE" && head.ObjectLockRetainUntilDate,
      `HeadObject of a version under the default retention: mode ${head.ObjectLockMode}, until ${head.ObjectLockRetainUntilDate}`,
    );
    const until = new Date(Math.floor(Date.now() / 1000) * 1000 + 48 * 3600 * 1000);
    await this.s3.send(
      new PutObjectRetentionCommand({ ...version, Retention: { Mode: "GOVERNANCE", RetainUntilDate: until } }),
    );
    const { Retention } = await this.s3.send(new GetObjectRetentionCommand(version));
    check(
      Retention?.Mode === "GOVERNANCE" && Retention.RetainUntilDate?.getTime() === until.getTime(),
      `GetObjectRetention ${JSON.stringify(Retention)}, expected GOVERNANCE until ${until.toISOString()}`,
    );
    await expectRefused(
      this.s3.send(new DeleteObjectCommand(version)),
      403,
      "AccessDenied",
      "DeleteObject of a version under GOVERNANCE",
    );
    await this.s3.send(new DeleteObjectCommand({ ...version, BypassGovernanceRetention: true }));
    await expectRefused(this.s3.send(new HeadObjectCommand(version)), 404, null, "HeadObject of the version deleted with bypass");

    // A legal hold binds even a caller that may bypass GOVERNANCE.
    const held = { Bucket, Key: "held.txt" };
    held.VersionId = (await this.s3.send(new PutObjectCommand({ ...held, Body: "held" }))).VersionId;
    await this.s3.send(new PutObjectLegalHoldCommand({ ...held, LegalHold: { Status: "ON" } }));
    const hold = await this.s3.send(new GetObjectLegalHoldCommand(held));
    check(hold.LegalHold?.Status === "ON", `GetObjectLegalHold ${JSON.stringify(hold.LegalHold)}`);
    await expectRefused(
      this.s3.send(new DeleteObjectCommand({ ...held, BypassGovernanceRetention: true })),
      403,
      "AccessDenied",
      "DeleteObject (with bypass) of a version under legal hold",
    );
    await this.s3.send(new PutObjectLegalHoldCommand({ ...held, LegalHold: { Status: "OFF" } }));
    await this.s3.send(new DeleteObjectCommand({ ...held, BypassGovernanceRetention: true }));
  }

  // The AWS S3 user guide's "require SSE-S3 on every upload" (two Deny statements,
  // StringNotEquals and Null on s3:x-amz-server-side-encryption), plus anonymous reads of
  // public/ and an anonymous listing allowed only with s3:prefix = public/.
  async policyCondition() {
    const Bucket = `${this.base.prefix}-p`;
    await this.base.createBucket(Bucket);
    const objects = `arn:aws:s3:::${Bucket}/*`;
    const Policy = JSON.stringify({
      Version: "2012-10-17",
      Statement: [
        {
          Sid: "DenyIncorrectEncryptionHeader", Effect: "Deny", Principal: "*", Action: "s3:PutObject", Resource: objects,
          Condition: { StringNotEquals: { "s3:x-amz-server-side-encryption": "AES256" } },
        },
        {
          Sid: "DenyUnencryptedObjectUploads", Effect: "Deny", Principal: "*", Action: "s3:PutObject", Resource: objects,
          Condition: { Null: { "s3:x-amz-server-side-encryption": "true" } },
        },
        {
          Sid: "PublicListOfPublic", Effect: "Allow", Principal: "*", Action: "s3:ListBucket",
          Resource: `arn:aws:s3:::${Bucket}`, Condition: { StringEquals: { "s3:prefix": "public/" } },
        },
        { Sid: "PublicRead", Effect: "Allow", Principal: "*", Action: "s3:GetObject", Resource: `arn:aws:s3:::${Bucket}/public/*` },
      ],
    });
    await this.s3.send(new PutBucketPolicyCommand({ Bucket, Policy }));
    const stored = JSON.parse((await this.s3.send(new GetBucketPolicyCommand({ Bucket }))).Policy);
    check(stored.Statement?.length === 4, `GetBucketPolicy ${JSON.stringify(stored).slice(0, 300)}`);
    const putObject = (Key, sse) =>
      this.s3.send(new PutObjectCommand({ Bucket, Key, Body: `body of ${Key}`, ...(sse ? { ServerSideEncryption: sse } : {}) }));
    await expectRefused(putObject("public/plain.txt"), 403, "AccessDenied", "PutObject without x-amz-server-side-encryption");
    for (const Key of ["public/encrypted.txt", "private/encrypted.txt"]) {
      const put = await putObject(Key, "AES256");
      check(put.ServerSideEncryption === "AES256", `PutObject ${Key} ServerSideEncryption ${put.ServerSideEncryption}`);
    }
    // Anonymous requests: plain fetch, no signature.
    const url = (path) => `${this.base.endpoint.url}/${Bucket}${path}`;
    const checks = [
      ["GET", "/public/encrypted.txt", 200],
      ["GET", "/private/encrypted.txt", 403],
      ["GET", "?list-type=2&prefix=public%2F", 200],
      ["GET", "?list-type=2", 403],
      ["GET", "?list-type=2&prefix=private%2F", 403],
      ["PUT", "/public/anonymous.txt", 403],
    ];
    for (const [method, path, status] of checks) {
      const init = method === "PUT" ? { method, body: "anon", headers: { "x-amz-server-side-encryption": "AES256" } } : {};
      const answer = await fetch(url(path), init);
      const text = await answer.text();
      check(answer.status === status, `anonymous ${method} ${path}: HTTP ${answer.status}, expected ${status}: ${text.slice(0, 300)}`);
      if (path === "/public/encrypted.txt") {
        check(text === "body of public/encrypted.txt", `anonymous GET of an SSE-S3 object: ${text.slice(0, 100)}`);
      }
      if (path.startsWith("?list-type=2&prefix=public")) {
        check(text.includes("<Key>public/encrypted.txt</Key>"), `anonymous listing of public/: ${text.slice(0, 300)}`);
      }
    }
    await this.s3.send(new DeleteBucketPolicyCommand({ Bucket }));
    await putObject("public/plain.txt");
    const after = await fetch(url("/public/encrypted.txt"));
    check(after.status === 403, `anonymous GET after DeleteBucketPolicy: HTTP ${after.status}, expected 403`);
  }

  // Best-effort cleanup of the lock bucket: every legal hold lifted, every version deleted with
  // the GOVERNANCE bypass (the scenario never sets COMPLIANCE), then the bucket.
  async removeLockedBucket(warn) {
    const Bucket = `${this.base.prefix}-l`;
    try {
      await this.s3.send(new HeadBucketCommand({ Bucket }));
    } catch {
      return;
    }
    try {
      const page = await this.s3.send(new ListObjectVersionsCommand({ Bucket }));
      for (const { Key, VersionId } of page.Versions ?? []) {
        await this.s3.send(new PutObjectLegalHoldCommand({ Bucket, Key, VersionId, LegalHold: { Status: "OFF" } })).catch(() => {});
        await this.s3
          .send(new DeleteObjectCommand({ Bucket, Key, VersionId, BypassGovernanceRetention: true }))
          .catch(warn(`delete of ${Bucket}/${Key} version ${VersionId}`));
      }
      for (const { Key, VersionId } of page.DeleteMarkers ?? []) {
        await this.s3.send(new DeleteObjectCommand({ Bucket, Key, VersionId })).catch(warn(`delete of marker ${VersionId}`));
      }
    } catch (error) {
      warn(`listing of versions in ${Bucket}`)(error);
    }
    await this.s3.send(new DeleteBucketCommand({ Bucket })).catch(warn(`delete of bucket ${Bucket}`));
  }
}

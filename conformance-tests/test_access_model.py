"""A model-based test of access control (issue 19): seeded random sequences
of operations by the bucket owner, a second key and anonymous callers, each
answer compared with `access_model.Model`, a small reference model of the
bucket and of AWS's access decision written from the AWS documentation (see
its docstring for the rules and where each comes from).

Operations: PutObject (private or `x-amz-acl: public-read`), GetObject and
HeadObject with and without versionId (and `response-content-type`),
Get/PutObjectAcl, Get/Put/DeleteObjectTagging and DeleteObject with and
without versionId, DeleteObjects with and without VersionIds,
PutBucketVersioning (Enabled, Suspended), Put/DeleteBucketPolicy with Allow
and Deny statements for the second key or "*" on the object actions and
their *Version* forms. Status codes, error codes, the bytes served (the
version authorised must be the version served), ACL grants, tag sets and
per-key DeleteObjects results are compared.

Environment:
  S3GW_MODEL_SEED     an integer, or `random` (a fresh seed, printed); default 19
  S3GW_MODEL_STEPS    operations per run (default 1000; with S3GW_MODEL_SECONDS, a cap)
  S3GW_MODEL_SECONDS  run for this long instead (the 10-minute run: 600)
  S3GW_MODEL_KEEP_GOING=1  on a mismatch, record it, start a fresh bucket and
                      go on; the end lists every kind of mismatch found

A mismatch prints the seed, the step and the operation log; the same seed
replays the same sequence (the version ids differ, the choices do not).
The Ozone back end keeps no versions, so this runs on the embedded one only.
"""

import base64
import hashlib
import json
import os
import random
import time
import xml.etree.ElementTree as ET

import pytest

from access_model import ALL_USERS, ANONYMOUS, GRANTEE, OWNER, Expected, Model, Statement, canonical_id
from conftest import OZONE_OM
from raw_client import RawClient

pytestmark = pytest.mark.skipif(bool(OZONE_OM), reason="the Ozone back end keeps no versions")

DEFAULT_SEED = 19
DEFAULT_STEPS = 1000
KEYS = ["a", "b", "c/d"]
NS = "{http://s3.amazonaws.com/doc/2006-03-01/}"
XSI_TYPE = "{http://www.w3.org/2001/XMLSchema-instance}type"
OVERRIDE_TYPE = "text/x-model"

# The policy actions statements are drawn from: the object actions and their
# *Version* forms, listing, and a few wildcards.
ACTIONS = [
    "s3:GetObject", "s3:GetObjectVersion", "s3:DeleteObject", "s3:DeleteObjectVersion",
    "s3:PutObject", "s3:PutObjectAcl", "s3:PutObjectVersionAcl", "s3:GetObjectAcl", "s3:GetObjectVersionAcl",
    "s3:GetObjectTagging", "s3:GetObjectVersionTagging", "s3:PutObjectTagging", "s3:PutObjectVersionTagging",
    "s3:DeleteObjectTagging", "s3:DeleteObjectVersionTagging", "s3:ListBucket",
    "s3:*", "s3:GetObject*", "s3:*VersionTagging", "s3:*Version", "s3:*Acl",
]


def seed_from_env() -> int:
    value = os.environ.get("S3GW_MODEL_SEED", "")
    if value == "random":
        return random.SystemRandom().randrange(1, 2**31)
    return int(value) if value else DEFAULT_SEED


class Mismatch(Exception):
    pass


class Run:
    """One sequence against one bucket (a fresh one after a mismatch in keep-going mode)."""

    def __init__(self, endpoint, owner_creds, grantee_creds, bucket_names, seed):
        self.clients = {OWNER: RawClient(endpoint, owner_creds), GRANTEE: RawClient(endpoint, grantee_creds),
                        ANONYMOUS: RawClient(endpoint, owner_creds)}
        self.grantee_key = grantee_creds.access_key
        self.owner_id = canonical_id(owner_creds.access_key)
        self.bucket_names = bucket_names
        self.rng = random.Random(seed)
        self.seed = seed
        self.log: list[str] = []
        self.gone: dict[str, list[str]] = {}  # key -> version ids deleted for good
        self.buckets: list[str] = []
        self.new_bucket()

    def new_bucket(self):
        self.bucket = self.bucket_names("access-model")
        self.buckets.append(self.bucket)
        response = self.clients[OWNER].request("PUT", self.bucket)
        assert response.status_code == 200, response.text
        self.model = Model(self.owner_id)
        self.gone = {}
        self.log.append(f"-- new bucket {self.bucket}")

    def cleanup(self):
        # A Deny statement may bind the owner: drop the policies first.
        for bucket in self.buckets:
            self.clients[OWNER].request("DELETE", bucket, query=[("policy", "")])

    # ---- sending ----

    def send(self, who, method, key=None, query=(), headers=None, body=b""):
        client = self.clients[who]
        headers = dict(headers or {})
        if body:
            headers["Content-MD5"] = base64.b64encode(hashlib.md5(body).digest()).decode()
        if who == ANONYMOUS:
            return client.unsigned(method, self.bucket, key, query=query, headers=headers, body=body)
        return client.request(method, self.bucket, key, query=query, headers=headers, body=body)

    # ---- choosing ----

    def pick_principal(self, owner_weight=35):
        return self.rng.choices([OWNER, GRANTEE, ANONYMOUS], [owner_weight, 40, 25])[0]

    def pick_vid(self, key, *, markers=True, gone=False, existing_only=False):
        """None (no versionId) or one of the key's version ids, in the
        model's order (so the choice depends on the seed only)."""
        if self.model.versioning is None:
            return None
        versions = [v for v in self.model.keys.get(key, []) if markers or not v.marker]
        candidates = [v.vid for v in versions]
        if gone and self.gone.get(key):
            candidates += self.gone[key][-2:]
        if existing_only:
            return self.rng.choice(candidates) if candidates else None
        if not candidates or self.rng.random() < 0.4:
            return None
        return self.rng.choice(candidates)

    def object_target(self, key):
        """(key, vid) of an existing object version for the ACL and tagging
        operations, or None when the key has none."""
        latest = self.model.latest(key)
        use_vid = self.model.versioning is not None and self.rng.random() < 0.6
        if use_vid:
            vid = self.pick_vid(key, markers=False, existing_only=True)
            if vid is not None:
                return key, vid
        if latest is not None and not latest.marker:
            return key, None
        return None

    def policy_statements(self):
        statements = []
        for _ in range(self.rng.randint(1, 3)):
            statements.append(Statement(
                effect=self.rng.choices(["Allow", "Deny"], [70, 30])[0],
                principal=self.rng.choices([GRANTEE, "*"], [60, 40])[0],
                actions=self.rng.sample(ACTIONS, self.rng.randint(1, 3)),
            ))
        return statements

    # ---- one step ----

    def step(self, n):
        op = self.rng.choices(
            ["put", "get", "head", "get_override", "get_acl", "put_acl", "get_tagging", "put_tagging",
             "delete_tagging", "delete", "delete_objects", "versioning", "policy", "delete_policy"],
            [18, 14, 5, 4, 6, 6, 5, 5, 3, 8, 6, 3, 6, 1])[0]
        key = self.rng.choice(KEYS)
        if op in ("get_acl", "put_acl", "get_tagging", "put_tagging", "delete_tagging"):
            # These act on an existing object version only.
            target = self.object_target(key)
            if target is None:
                self.op_get(n, key)
            else:
                getattr(self, "op_" + op)(n, *target)
            return
        getattr(self, "op_" + op)(n, key)

    def record(self, n, who, what, expected: Expected, response, problems):
        line = f"{n:5d} {who:9s} {what} -> {response.status_code}"
        code = error_code(response)
        if code:
            line += f" {code}"
        self.log.append(line)
        if problems:
            self.log.append(f"      MISMATCH: {'; '.join(problems)}")
            raise Mismatch(f"step {n}: {who} {what}: {'; '.join(problems)}")

    def check(self, n, who, what, expected: Expected, response, head=False):
        problems = compare(expected, response, head)
        self.record(n, who, what, expected, response, problems)

    def op_put(self, n, key):
        who = self.pick_principal()
        acl = "public-read" if self.rng.random() < 0.4 else None
        body = f"seed {self.seed} step {n} key {key}".encode()
        expected = self.model.expect_put(who, acl)
        response = self.send(who, "PUT", key, headers={"x-amz-acl": acl} if acl else {}, body=body)
        self.check(n, who, f"PutObject {key}" + (" acl=public-read" if acl else ""), expected, response)
        if response.status_code == 200:
            self.model.apply_put(key, body, acl, response.headers.get("x-amz-version-id"))

    def op_get(self, n, key, head=False, override=False):
        who = self.pick_principal()
        vid = self.pick_vid(key, gone=True)
        query = [("versionId", vid)] if vid is not None else []
        if override:
            query.append(("response-content-type", OVERRIDE_TYPE))
        expected = self.model.expect_get(who, key, vid, head=head, override=OVERRIDE_TYPE if override else None)
        response = self.send(who, "HEAD" if head else "GET", key, query=query)
        name = ("HeadObject" if head else "GetObject") + f" {key}" + (f" versionId={vid}" if vid else "") + \
            (" response-content-type" if override else "")
        self.check(n, who, name, expected, response, head=head)

    def op_head(self, n, key):
        self.op_get(n, key, head=True)

    def op_get_override(self, n, key):
        self.op_get(n, key, override=True)

    def op_get_acl(self, n, key, vid):
        who = self.pick_principal()
        expected = self.model.expect_get_acl(who, key, vid)
        response = self.send(who, "GET", key, query=[("acl", "")] + version_query(vid))
        self.check(n, who, f"GetObjectAcl {key}" + (f" versionId={vid}" if vid else ""), expected, response)

    def op_put_acl(self, n, key, vid):
        who = self.pick_principal()
        acl = self.rng.choice(["private", "public-read"])
        expected = self.model.expect_put_acl(who, key, vid, acl)
        response = self.send(who, "PUT", key, query=[("acl", "")] + version_query(vid), headers={"x-amz-acl": acl})
        self.check(n, who, f"PutObjectAcl {key} {acl}" + (f" versionId={vid}" if vid else ""), expected, response)
        if response.status_code == 200:
            self.model.apply_put_acl(key, vid, acl)
            self.verify(n, key, "acl")

    def op_get_tagging(self, n, key, vid):
        who = self.pick_principal()
        expected = self.model.expect_get_tagging(who, key, vid)
        response = self.send(who, "GET", key, query=[("tagging", "")] + version_query(vid))
        self.check(n, who, f"GetObjectTagging {key}" + (f" versionId={vid}" if vid else ""), expected, response)

    def op_put_tagging(self, n, key, vid):
        who = self.pick_principal()
        tags = {"step": str(n)}
        body = ("<Tagging><TagSet>" + "".join(f"<Tag><Key>{k}</Key><Value>{v}</Value></Tag>" for k, v in tags.items())
                + "</TagSet></Tagging>").encode()
        expected = self.model.expect_put_tagging(who, key, vid)
        response = self.send(who, "PUT", key, query=[("tagging", "")] + version_query(vid), body=body)
        self.check(n, who, f"PutObjectTagging {key} step={n}" + (f" versionId={vid}" if vid else ""),
                   expected, response)
        if response.status_code == 200:
            self.model.apply_put_tagging(key, vid, tags)
            self.verify(n, key, "tagging")

    def op_delete_tagging(self, n, key, vid):
        who = self.pick_principal()
        expected = self.model.expect_delete_tagging(who, key, vid)
        response = self.send(who, "DELETE", key, query=[("tagging", "")] + version_query(vid))
        self.check(n, who, f"DeleteObjectTagging {key}" + (f" versionId={vid}" if vid else ""), expected, response)
        if response.status_code == 204:
            self.model.apply_delete_tagging(key, vid)
            self.verify(n, key, "tagging")

    def verify(self, n, key, what):
        """After an ACL or tag change, the owner reads that of every version
        of the key: a change made to another version than the one named
        shows here, at the step that made it."""
        versioned = self.model.versioning is not None
        for version in [v for v in self.model.keys.get(key, []) if not v.marker][-4:]:
            vid = version.vid if versioned else None
            if what == "acl":
                expected = self.model.expect_get_acl(OWNER, key, vid)
                name = "GetObjectAcl"
            else:
                expected = self.model.expect_get_tagging(OWNER, key, vid)
                name = "GetObjectTagging"
            response = self.send(OWNER, "GET", key, query=[(what, "")] + version_query(vid))
            self.check(n, OWNER, f"{name} {key}" + (f" versionId={vid}" if vid else "") + " (verify)",
                       expected, response)

    def op_delete(self, n, key):
        who = self.pick_principal()
        vid = self.pick_vid(key)
        expected = self.model.expect_delete(who, key, vid)
        response = self.send(who, "DELETE", key, query=version_query(vid))
        self.check(n, who, f"DeleteObject {key}" + (f" versionId={vid}" if vid else ""), expected, response)
        if response.status_code == 204:
            self.forget(key, vid)
            self.model.apply_delete(key, vid, response.headers.get("x-amz-version-id"))

    def forget(self, key, vid):
        if vid is not None and vid != "null":
            self.gone.setdefault(key, []).append(vid)

    def op_delete_objects(self, n, key):
        who = self.pick_principal()
        entries = []
        for chosen in self.rng.sample(KEYS, self.rng.randint(1, len(KEYS))):
            vid = self.pick_vid(chosen)
            if (chosen, vid) not in entries:
                entries.append((chosen, vid))
        body = ("<Delete>" + "".join(
            f"<Object><Key>{k}</Key>" + (f"<VersionId>{v}</VersionId>" if v else "") + "</Object>"
            for k, v in entries) + "</Delete>").encode()
        expected = self.model.expect_delete_objects(who, entries)
        response = self.send(who, "POST", query=[("delete", "")], body=body)
        what = "DeleteObjects " + ", ".join(k + (f"@{v}" if v else "") for k, v in entries)
        problems = compare(expected, response, False)
        outcomes = {}
        if response.status_code == 200 and not problems:
            outcomes = delete_results(response.content)
            if set(outcomes) != set(expected.per_key) or any(
                    outcomes[e][0] != expected.per_key[e] for e in expected.per_key):
                problems.append(f"per key: expected {fmt_keys(expected.per_key)}, "
                                f"got {fmt_keys({e: o[0] for e, o in outcomes.items()})}")
        self.record(n, who, what, expected, response, problems)
        for (k, v), (outcome, marker_vid) in outcomes.items():
            if outcome == "Deleted":
                self.forget(k, v)
                self.model.apply_delete(k, v, marker_vid)

    def op_versioning(self, n, key):
        who = self.pick_principal(owner_weight=85)
        state = "Enabled" if self.model.versioning != "Enabled" or self.rng.random() < 0.2 else "Suspended"
        body = (f'<VersioningConfiguration xmlns="{NS[1:-1]}"><Status>{state}</Status>'
                "</VersioningConfiguration>").encode()
        expected = self.model.expect_owner_only(who, "s3:PutBucketVersioning", 200)
        response = self.send(who, "PUT", query=[("versioning", "")], body=body)
        self.check(n, who, f"PutBucketVersioning {state}", expected, response)
        if response.status_code == 200:
            self.model.versioning = state

    def op_policy(self, n, key):
        who = self.pick_principal(owner_weight=85)
        statements = self.policy_statements()
        document = {"Version": "2012-10-17", "Statement": [{
            "Effect": s.effect,
            "Principal": "*" if s.principal == "*" else {"AWS": [self.grantee_key]},
            "Action": s.actions,
            "Resource": [f"arn:aws:s3:::{self.bucket}", f"arn:aws:s3:::{self.bucket}/*"],
        } for s in statements]}
        expected = self.model.expect_owner_only(who, "s3:PutBucketPolicy", 204)
        response = self.send(who, "PUT", query=[("policy", "")], body=json.dumps(document).encode())
        described = "; ".join(f"{s.effect} {s.principal} {','.join(s.actions)}" for s in statements)
        self.check(n, who, f"PutBucketPolicy [{described}]", expected, response)
        if response.status_code in (200, 204):
            self.model.policy = statements

    def op_delete_policy(self, n, key):
        who = self.pick_principal(owner_weight=85)
        expected = self.model.expect_owner_only(who, "s3:DeleteBucketPolicy", 204)
        response = self.send(who, "DELETE", query=[("policy", "")])
        self.check(n, who, "DeleteBucketPolicy", expected, response)
        if response.status_code == 204:
            self.model.policy = []


def version_query(vid):
    return [("versionId", vid)] if vid is not None else []


def error_code(response) -> str | None:
    if response.status_code < 300 or not response.content:
        return None
    try:
        root = ET.fromstring(response.content)
    except ET.ParseError:
        return "(no XML)"
    return root.findtext("Code") or root.findtext(NS + "Code")


def acl_grants(content: bytes) -> set:
    grants = set()
    for grant in ET.fromstring(content).iter(NS + "Grant"):
        grantee = grant.find(NS + "Grantee")
        kind = grantee.get(XSI_TYPE)
        who = grantee.findtext(NS + "ID") if kind == "CanonicalUser" else grantee.findtext(NS + "URI")
        grants.add((kind, who, grant.findtext(NS + "Permission")))
    return grants


def tag_set(content: bytes) -> dict:
    return {tag.findtext(NS + "Key"): tag.findtext(NS + "Value") for tag in ET.fromstring(content).iter(NS + "Tag")}


def delete_results(content: bytes) -> dict:
    """(key, vid or None) -> (Deleted or the error code, the marker's version id)."""
    out = {}
    for element in ET.fromstring(content):
        tag = element.tag.replace(NS, "")
        key, vid = element.findtext(NS + "Key"), element.findtext(NS + "VersionId")
        if tag == "Deleted":
            out[(key, vid)] = ("Deleted", element.findtext(NS + "DeleteMarkerVersionId"))
        elif tag == "Error":
            out[(key, vid)] = (element.findtext(NS + "Code"), None)
    return out


def fmt_keys(outcomes: dict) -> str:
    return ", ".join(f"{k}{'@' + v if v else ''}={o}" for (k, v), o in sorted(outcomes.items(), key=str))


def compare(expected: Expected, response, head: bool) -> list[str]:
    got = (response.status_code, None if head else error_code(response))
    wanted = [(expected.status, None if head else expected.code)] + [
        (status, None if head else code) for status, code in expected.also]
    if got not in wanted:
        described = " or ".join(f"{status} {code or ''}".strip() for status, code in wanted)
        return [f"expected {described}, got {got[0]} {got[1] or ''}".rstrip()]
    if response.status_code >= 300:
        return []
    problems = []
    if expected.body is not None and not head and response.content != expected.body:
        problems.append(f"served {response.content[:60]!r}, expected {expected.body[:60]!r}")
    served = response.headers.get("x-amz-version-id")
    if expected.version_id not in (None, "null") and served != expected.version_id:
        problems.append(f"x-amz-version-id {served}, expected {expected.version_id}")
    if expected.content_type is not None and response.headers.get("Content-Type") != expected.content_type:
        problems.append(f"Content-Type {response.headers.get('Content-Type')}, expected {expected.content_type}")
    if expected.grants is not None:
        grants = acl_grants(response.content)
        if grants != expected.grants:
            problems.append(f"grants {sorted(grants)}, expected {sorted(expected.grants)}")
    if expected.tags is not None:
        tags = tag_set(response.content)
        if tags != expected.tags:
            problems.append(f"tags {tags}, expected {expected.tags}")
    return problems


# A hang guard, not a timing claim: 1000 operations take 20-60 s on a loaded
# 2-core machine; the long run adds its own duration.
HANG_GUARD_SECONDS = 900 + int(float(os.environ.get("S3GW_MODEL_SECONDS", "0") or 0))


@pytest.mark.timeout(HANG_GUARD_SECONDS)
def test_access_decisions_match_the_model(target, second_key, bucket_names):
    seed = seed_from_env()
    seconds = float(os.environ.get("S3GW_MODEL_SECONDS", "0"))
    steps = int(os.environ.get("S3GW_MODEL_STEPS", "0")) or (None if seconds else DEFAULT_STEPS)
    keep_going = os.environ.get("S3GW_MODEL_KEEP_GOING") == "1"
    print(f"access model: S3GW_MODEL_SEED={seed} steps={steps} seconds={seconds or None} keep_going={keep_going}")
    run = Run(target.endpoint, target.creds, second_key, bucket_names, seed)
    found: dict[str, int] = {}
    first: dict[str, str] = {}
    started = time.monotonic()
    n = 0
    try:
        while (steps is None or n < steps) and (not seconds or time.monotonic() - started < seconds):
            n += 1
            try:
                run.step(n)
            except Mismatch as mismatch:
                if not keep_going:
                    raise AssertionError(
                        f"the gateway differs from the access model (replay: S3GW_MODEL_SEED={seed} "
                        f"S3GW_MODEL_STEPS={n}):\n{mismatch}\noperation log:\n" + "\n".join(run.log[-400:])
                    ) from None
                kind = mismatch_kind(run.log)
                found[kind] = found.get(kind, 0) + 1
                if kind not in first:
                    # The policy in force and the steps before, for the report.
                    since = len(run.log) - 1 - next(i for i, line in enumerate(reversed(run.log))
                                                    if line.startswith("-- new bucket"))
                    policy = next((line for line in reversed(run.log[since:])
                                   if "BucketPolicy" in line and line.endswith("-> 204")), "no policy")
                    first[kind] = f"{mismatch}\n           policy: {policy.strip()}\n" + "\n".join(
                        "           " + line for line in run.log[-6:-1])
                run.new_bucket()
    finally:
        run.cleanup()
    elapsed = time.monotonic() - started
    print(f"access model: seed {seed}, {n} operations in {elapsed:.0f} s, {len(run.buckets)} buckets"
          + (" (replay one: S3GW_MODEL_KEEP_GOING=1 S3GW_MODEL_SEED=SEED S3GW_MODEL_STEPS=STEP)" if found else ""))
    for kind, count in sorted(found.items()):
        print(f"  {count:4d} x {kind}\n         first: {first[kind]}")
    assert not found, f"{sum(found.values())} mismatches of {len(found)} kinds (seed {seed}): {sorted(found)}"


def mismatch_kind(log: list[str]) -> str:
    """The operation and principal of the last logged step, without keys
    and ids: what kind of mismatch it was."""
    line = next(entry for entry in reversed(log) if not entry.startswith("      MISMATCH"))
    parts = line.split()
    who, op = parts[1], parts[2]
    versioned = "versionId" in line or "@" in line
    detail = log[-1].split("MISMATCH: ", 1)[-1]
    detail = detail.split(",")[0] if detail.startswith("expected") else detail.split(":")[0]
    return f"{op}{' by version' if versioned else ''} by {who}: {detail}"

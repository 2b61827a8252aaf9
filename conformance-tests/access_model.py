"""A small reference model of one S3 bucket and of AWS's access decision,
for test_access_model.py. Pure Python, no I/O: the test sends each request
to the gateway and compares the answer with `Model.expect(...)`.

The decision is AWS's, as the S3 user guide states it ("How Amazon S3
authorizes a request", "Access control list (ACL) overview", "Bucket policy
examples") and the Service Authorization Reference's "Actions, resources,
and condition keys for Amazon S3" names the actions:

1. an explicit Deny in the bucket policy that matches the caller, one of the
   request's actions and its resource refuses it, even the bucket owner's;
2. the bucket owner may (the gateway's objects are all the bucket owner's,
   docs/security.md "How the back end acts on it": as S3's bucket owner
   enforced ownership, so object owner == bucket owner here);
3. a policy Allow, or for reading an object (GET, HEAD) the ACL of the very
   version read ("Configuring versioned object permissions": each version
   has its own ACL), grants it; AllUsers includes every signed caller;
4. anything else is 403 AccessDenied.

Which action a request is: with a `versionId` the *Version* action
(s3:GetObjectVersion, s3:DeleteObjectVersion, s3:GetObjectVersionAcl,
s3:PutObjectVersionAcl, s3:Get/Put/DeleteObjectVersionTagging), without it
the plain one; a PutObject with `x-amz-acl` also needs s3:PutObjectAcl
(PutObject API reference, "Permissions"); DeleteObjects decides every key
on its own as that key's DeleteObject or DeleteObjectVersion (DeleteObjects
API reference: "For each key, Amazon S3 performs a delete operation").

A missing key (or version) is told apart (404) only to a caller that may
s3:ListBucket; anyone else gets 403 (GetObject API reference,
"Permissions"; docs/security.md step 5).
"""

from __future__ import annotations

import fnmatch
import hashlib
from dataclasses import dataclass, field

OWNER, GRANTEE, ANONYMOUS = "owner", "grantee", "anonymous"
PRINCIPALS = (OWNER, GRANTEE, ANONYMOUS)
ALL_USERS = "http://acs.amazonaws.com/groups/global/AllUsers"


def canonical_id(access_key: str) -> str:
    """docs/security.md "Owners and principals": the SHA-256 of the access key, in hex."""
    return hashlib.sha256(access_key.encode()).hexdigest()


@dataclass
class Version:
    vid: str  # "null" for the null version
    marker: bool = False
    body: bytes = b""
    acl: str = "private"  # canned ACL: private or public-read
    tags: dict = field(default_factory=dict)


@dataclass
class Statement:
    effect: str  # Allow or Deny
    principal: str  # GRANTEE or "*"
    actions: list  # "s3:GetObject", wildcards allowed

    def matches(self, who: str, action: str) -> bool:
        if self.principal == GRANTEE and who != GRANTEE:
            return False  # "*" is everyone: the owner, any key and anonymous callers
        return any(fnmatch.fnmatchcase(action.lower(), pattern.lower()) for pattern in self.actions)


@dataclass
class Expected:
    """What AWS answers: a status, an error code (None on success), and
    for a DeleteObjects the per-key outcomes. `also` lists other answers
    the model accepts where AWS's documentation leaves the choice open."""
    status: int
    code: str | None = None
    body: bytes | None = None
    version_id: str | None = None  # the version served / acted on, when the answer names one
    grants: set | None = None
    tags: dict | None = None
    content_type: str | None = None
    per_key: dict | None = None  # (key, vid or None) -> "Deleted" or an error code
    also: list = field(default_factory=list)  # [(status, code)]


class Model:
    def __init__(self, owner_id: str):
        self.owner_id = owner_id
        self.versioning: str | None = None  # None (never set), Enabled, Suspended
        self.keys: dict[str, list[Version]] = {}  # oldest first
        self.policy: list[Statement] = []

    # ---- the decision ----

    def verdict(self, who: str, action: str) -> str | None:
        """The policy's word on one action: Deny, Allow or None."""
        matching = {s.effect for s in self.policy if s.matches(who, action)}
        if "Deny" in matching:
            return "Deny"
        return "Allow" if "Allow" in matching else None

    def allowed(self, who: str, actions: list[str], acl_read: Version | None = None) -> bool:
        """All of `actions` allowed to `who`; `acl_read`: the version whose
        ACL may grant READ (object reads only)."""
        for action in actions:
            verdict = self.verdict(who, action)
            if verdict == "Deny":
                return False
            if who == OWNER or verdict == "Allow":
                continue
            if acl_read is not None and not acl_read.marker and acl_read.acl == "public-read":
                continue  # AllUsers READ: anonymous and every signed caller
            return False
        return True

    def may_list(self, who: str) -> bool:
        return self.allowed(who, ["s3:ListBucket"])

    # ---- lookups ----

    def latest(self, key: str) -> Version | None:
        versions = self.keys.get(key) or []
        return versions[-1] if versions else None

    def version(self, key: str, vid: str) -> Version | None:
        return next((v for v in self.keys.get(key, []) if v.vid == vid), None)

    def grants_of(self, version: Version) -> set:
        grants = {("CanonicalUser", self.owner_id, "FULL_CONTROL")}
        if version.acl == "public-read":
            grants.add(("Group", ALL_USERS, "READ"))
        return grants

    def named(self, version: Version) -> str | None:
        """The version id an answer names: none in a bucket never versioned."""
        return version.vid if self.versioning is not None else None

    def missing(self, who: str, code: str) -> Expected:
        return Expected(404, code) if self.may_list(who) else Expected(403, "AccessDenied")

    # ---- expectations (no state change) ----

    def expect_get(self, who: str, key: str, vid: str | None, head: bool = False,
                   override: str | None = None) -> Expected:
        action = "s3:GetObjectVersion" if vid is not None else "s3:GetObject"
        target = self.version(key, vid) if vid is not None else self.latest(key)
        if target is not None and not target.marker:
            if self.allowed(who, [action], acl_read=target):
                plain = Expected(200, body=b"" if head else target.body, version_id=self.named(target),
                                 content_type=override)
            else:
                plain = Expected(403, "AccessDenied")
        elif self.verdict(who, action) == "Deny":
            plain = Expected(403, "AccessDenied")
        elif target is not None and vid is not None:
            # A delete marker asked for by id: 405 to a caller allowed to
            # read versions, or (as for any absence) one that may list.
            allowed = self.allowed(who, [action]) or self.may_list(who)
            plain = Expected(405, "MethodNotAllowed") if allowed else Expected(403, "AccessDenied")
        else:
            # Nothing there (no such key or version, or the latest is a
            # delete marker), so no ACL grants anything: told apart (404)
            # only to a caller that may list the bucket, whether or not it
            # may read (docs/security.md rule 5; the GetObject reference's
            # ListBucket rule).
            plain = self.missing(who, "NoSuchVersion" if vid is not None else "NoSuchKey")
        if override is not None and who == ANONYMOUS:
            # GetObject API reference: the response-* overrides need a signed
            # request (or a presigned URL); an anonymous one is 400 InvalidRequest.
            if plain.status == 200:
                return Expected(400, "InvalidRequest")
            plain.also.append((400, "InvalidRequest"))  # which check comes first is not documented
        return plain

    def object_target(self, key: str, vid: str | None) -> Version:
        target = self.version(key, vid) if vid is not None else self.latest(key)
        assert target is not None and not target.marker, "the generator names only existing versions here"
        return target

    def expect_get_acl(self, who: str, key: str, vid: str | None) -> Expected:
        target = self.object_target(key, vid)
        action = "s3:GetObjectVersionAcl" if vid is not None else "s3:GetObjectAcl"
        if not self.allowed(who, [action]):
            return Expected(403, "AccessDenied")
        return Expected(200, grants=self.grants_of(target))

    def expect_get_tagging(self, who: str, key: str, vid: str | None) -> Expected:
        target = self.object_target(key, vid)
        action = "s3:GetObjectVersionTagging" if vid is not None else "s3:GetObjectTagging"
        if not self.allowed(who, [action]):
            return Expected(403, "AccessDenied")
        return Expected(200, tags=dict(target.tags))

    # ---- writes: the expectation, and `apply` once the gateway answered as expected ----

    def expect_put_acl(self, who: str, key: str, vid: str | None, acl: str) -> Expected:
        self.object_target(key, vid)
        action = "s3:PutObjectVersionAcl" if vid is not None else "s3:PutObjectAcl"
        return Expected(200) if self.allowed(who, [action]) else Expected(403, "AccessDenied")

    def apply_put_acl(self, key: str, vid: str | None, acl: str) -> None:
        self.object_target(key, vid).acl = acl

    def expect_put_tagging(self, who: str, key: str, vid: str | None) -> Expected:
        self.object_target(key, vid)
        action = "s3:PutObjectVersionTagging" if vid is not None else "s3:PutObjectTagging"
        return Expected(200) if self.allowed(who, [action]) else Expected(403, "AccessDenied")

    def apply_put_tagging(self, key: str, vid: str | None, tags: dict) -> None:
        self.object_target(key, vid).tags = dict(tags)

    def expect_delete_tagging(self, who: str, key: str, vid: str | None) -> Expected:
        self.object_target(key, vid)
        action = "s3:DeleteObjectVersionTagging" if vid is not None else "s3:DeleteObjectTagging"
        return Expected(204) if self.allowed(who, [action]) else Expected(403, "AccessDenied")

    def apply_delete_tagging(self, key: str, vid: str | None) -> None:
        self.object_target(key, vid).tags = {}

    def expect_put(self, who: str, acl: str | None) -> Expected:
        actions = ["s3:PutObject"] + (["s3:PutObjectAcl"] if acl is not None else [])
        return Expected(200) if self.allowed(who, actions) else Expected(403, "AccessDenied")

    def apply_put(self, key: str, body: bytes, acl: str | None, vid: str | None) -> Version:
        """`vid`: the id the gateway named (Enabled); a new version has no tags."""
        versions = self.keys.setdefault(key, [])
        if self.versioning == "Enabled":
            assert vid and vid != "null", f"a PUT in an Enabled bucket named version {vid!r}"
            new = Version(vid, body=body, acl=acl or "private")
        else:
            versions[:] = [v for v in versions if v.vid != "null"]
            new = Version("null", body=body, acl=acl or "private")
        versions.append(new)
        return new

    def delete_action(self, vid: str | None) -> str:
        return "s3:DeleteObjectVersion" if vid is not None else "s3:DeleteObject"

    def expect_delete(self, who: str, key: str, vid: str | None) -> Expected:
        if not self.allowed(who, [self.delete_action(vid)]):
            return Expected(403, "AccessDenied")
        return Expected(204)

    def apply_delete(self, key: str, vid: str | None, marker_vid: str | None) -> None:
        """`marker_vid`: the id of the delete marker the gateway made (Enabled)."""
        versions = self.keys.setdefault(key, [])
        if vid is not None:
            versions[:] = [v for v in versions if v.vid != vid]
        elif self.versioning is None:
            versions.clear()
        elif self.versioning == "Enabled":
            assert marker_vid and marker_vid != "null", f"a DELETE in an Enabled bucket named {marker_vid!r}"
            versions.append(Version(marker_vid, marker=True))
        else:  # Suspended: the null version goes, a null marker becomes the latest
            versions[:] = [v for v in versions if v.vid != "null"]
            versions.append(Version("null", marker=True))
        if not versions:
            del self.keys[key]

    def expect_delete_objects(self, who: str, entries: list[tuple[str, str | None]]) -> Expected:
        per_key = {}
        for key, vid in entries:
            per_key[(key, vid)] = "Deleted" if self.allowed(who, [self.delete_action(vid)]) else "AccessDenied"
        expected = Expected(200, per_key=per_key)
        if all(outcome == "AccessDenied" for outcome in per_key.values()):
            # AWS answers per key; refusing the whole request when no key may
            # be deleted changes nothing else and is accepted.
            expected.also.append((403, "AccessDenied"))
        return expected

    def expect_owner_only(self, who: str, action: str, success: int) -> Expected:
        """Bucket configuration (versioning, the policy): the owner's alone
        (docs/security.md step 1), and a Deny binds the owner except on the
        policy itself, which the owner can always manage."""
        if who != OWNER:
            return Expected(403, "AccessDenied")
        if action not in ("s3:PutBucketPolicy", "s3:DeleteBucketPolicy") and self.verdict(who, action) == "Deny":
            return Expected(403, "AccessDenied")
        return Expected(success)

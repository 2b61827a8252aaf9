//! The action table: for every operation the router knows, the IAM
//! action(s) a request needs (with and without a `versionId`), what they
//! act on and which ACL permission can grant them instead. It is data, so
//! one look at a row says what a policy must allow, and the tests below
//! check every row against AWS's "Actions, resources, and condition keys
//! for Amazon S3" and the operations' "Permissions" sections.
//!
//! An operation that needs several actions (GetObjectAttributes: the
//! attributes action and the read action) needs each of them: a Deny of
//! any refuses it, and a policy lets a caller in only by allowing all.

use std::sync::LazyLock;

use super::acl::Permission;
use crate::router::OPERATION_NAMES;

/// What the actions of a row act on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum On {
    /// The bucket (`arn:aws:s3:::bucket`).
    Bucket,
    /// The object the request names (`arn:aws:s3:::bucket/key`).
    Object,
    /// Each entry of the request's body, decided one by one on its own
    /// key by the operation (DeleteObjects); the request itself needs only
    /// the bucket to exist.
    Entries,
    /// Nothing that exists yet, or nothing at all: ListBuckets and
    /// CreateBucket (the caller's own), a CORS preflight (answered from
    /// the bucket's CORS rules), a browser form upload (decided as a
    /// PutObject once its handler knows the form's signer and key).
    Nothing,
}

/// Which ACL permission can grant a row's actions when no policy does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grant {
    /// Only the policy can grant it (or ownership).
    PolicyOnly,
    /// The bucket ACL can grant it.
    Bucket(Permission),
    /// The object's ACL (of the version acted on) can grant it.
    Object(Permission),
    /// Only the bucket owner may (configuring the bucket), and a Deny
    /// still binds it, except for managing the policy itself.
    OwnerOnly,
}

/// One operation's row.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Row {
    /// The AWS operation name ([`crate::router::Endpoint::name`]).
    pub operation: &'static str,
    /// The actions (without `s3:`) it needs without a `versionId`.
    pub latest: &'static [&'static str],
    /// The actions it needs with a `versionId` (the same as `latest` for
    /// operations that take none).
    pub version: &'static [&'static str],
    pub on: On,
    pub grant: Grant,
    /// The actions it needs instead when the request also sets the new
    /// object's ACL (`x-amz-acl`, `x-amz-grant-*`); empty where those
    /// headers ask for no more.
    pub setting_acl: &'static [&'static str],
}

impl Row {
    /// The actions a request with (`true`) or without a version id needs.
    pub fn actions(&self, has_version_id: bool) -> &'static [&'static str] {
        if has_version_id {
            self.version
        } else {
            self.latest
        }
    }
}

/// A row whose operation takes no `versionId`.
const fn row(
    operation: &'static str,
    actions: &'static [&'static str],
    on: On,
    grant: Grant,
) -> Row {
    Row {
        operation,
        latest: actions,
        version: actions,
        on,
        grant,
        setting_acl: &[],
    }
}

/// A row whose operation takes a `versionId`, which changes its actions.
const fn versioned(
    operation: &'static str,
    latest: &'static [&'static str],
    version: &'static [&'static str],
    grant: Grant,
) -> Row {
    Row {
        operation,
        latest,
        version,
        on: On::Object,
        grant,
        setting_acl: &[],
    }
}

/// The owner's configuration of its bucket.
const fn config(operation: &'static str, action: &'static [&'static str]) -> Row {
    row(operation, action, On::Bucket, Grant::OwnerOnly)
}

use Grant::{Bucket, Object, PolicyOnly};
use Permission::{Read, ReadAcp, Write, WriteAcp};

/// Every operation of [`OPERATION_NAMES`], once.
pub const TABLE: &[Row] = &[
    // ---- service ----
    row(
        "ListBuckets",
        &["ListAllMyBuckets"],
        On::Nothing,
        PolicyOnly,
    ),
    // ---- buckets ----
    row("CreateBucket", &["CreateBucket"], On::Nothing, PolicyOnly),
    row("HeadBucket", &["ListBucket"], On::Bucket, Bucket(Read)),
    config("DeleteBucket", &["DeleteBucket"]),
    row(
        "GetBucketLocation",
        &["GetBucketLocation"],
        On::Bucket,
        PolicyOnly,
    ),
    row("ListObjects", &["ListBucket"], On::Bucket, Bucket(Read)),
    row("ListObjectsV2", &["ListBucket"], On::Bucket, Bucket(Read)),
    row(
        "ListObjectVersions",
        &["ListBucketVersions"],
        On::Bucket,
        Bucket(Read),
    ),
    row(
        "ListMultipartUploads",
        &["ListBucketMultipartUploads"],
        On::Bucket,
        Bucket(Read),
    ),
    Row {
        operation: "DeleteObjects",
        latest: &["DeleteObject"],
        version: &["DeleteObjectVersion"],
        on: On::Entries,
        grant: Bucket(Write),
        setting_acl: &[],
    },
    row("PostObject", &["PutObject"], On::Nothing, Bucket(Write)),
    config("GetBucketVersioning", &["GetBucketVersioning"]),
    config("PutBucketVersioning", &["PutBucketVersioning"]),
    config(
        "GetObjectLockConfiguration",
        &["GetBucketObjectLockConfiguration"],
    ),
    config(
        "PutObjectLockConfiguration",
        &["PutBucketObjectLockConfiguration"],
    ),
    row(
        "GetBucketAcl",
        &["GetBucketAcl"],
        On::Bucket,
        Bucket(ReadAcp),
    ),
    row(
        "PutBucketAcl",
        &["PutBucketAcl"],
        On::Bucket,
        Bucket(WriteAcp),
    ),
    config("GetBucketPolicy", &["GetBucketPolicy"]),
    config("PutBucketPolicy", &["PutBucketPolicy"]),
    config("DeleteBucketPolicy", &["DeleteBucketPolicy"]),
    config("GetBucketPolicyStatus", &["GetBucketPolicyStatus"]),
    config("GetBucketCors", &["GetBucketCORS"]),
    config("PutBucketCors", &["PutBucketCORS"]),
    config("DeleteBucketCors", &["PutBucketCORS"]),
    config(
        "GetBucketLifecycleConfiguration",
        &["GetLifecycleConfiguration"],
    ),
    config(
        "PutBucketLifecycleConfiguration",
        &["PutLifecycleConfiguration"],
    ),
    config("DeleteBucketLifecycle", &["PutLifecycleConfiguration"]),
    config("GetBucketTagging", &["GetBucketTagging"]),
    config("PutBucketTagging", &["PutBucketTagging"]),
    config("DeleteBucketTagging", &["PutBucketTagging"]),
    config("GetBucketWebsite", &["GetBucketWebsite"]),
    config("PutBucketWebsite", &["PutBucketWebsite"]),
    config("DeleteBucketWebsite", &["DeleteBucketWebsite"]),
    config("GetBucketEncryption", &["GetEncryptionConfiguration"]),
    config("PutBucketEncryption", &["PutEncryptionConfiguration"]),
    config("DeleteBucketEncryption", &["PutEncryptionConfiguration"]),
    config("GetBucketLogging", &["GetBucketLogging"]),
    config("PutBucketLogging", &["PutBucketLogging"]),
    config(
        "GetBucketNotificationConfiguration",
        &["GetBucketNotification"],
    ),
    config(
        "PutBucketNotificationConfiguration",
        &["PutBucketNotification"],
    ),
    config("GetBucketReplication", &["GetReplicationConfiguration"]),
    config("PutBucketReplication", &["PutReplicationConfiguration"]),
    config("DeleteBucketReplication", &["PutReplicationConfiguration"]),
    config("GetBucketRequestPayment", &["GetBucketRequestPayment"]),
    config("PutBucketRequestPayment", &["PutBucketRequestPayment"]),
    config(
        "GetBucketAccelerateConfiguration",
        &["GetAccelerateConfiguration"],
    ),
    config(
        "PutBucketAccelerateConfiguration",
        &["PutAccelerateConfiguration"],
    ),
    config(
        "GetBucketOwnershipControls",
        &["GetBucketOwnershipControls"],
    ),
    config(
        "PutBucketOwnershipControls",
        &["PutBucketOwnershipControls"],
    ),
    config(
        "DeleteBucketOwnershipControls",
        &["PutBucketOwnershipControls"],
    ),
    config("GetPublicAccessBlock", &["GetBucketPublicAccessBlock"]),
    config("PutPublicAccessBlock", &["PutBucketPublicAccessBlock"]),
    config("DeletePublicAccessBlock", &["PutBucketPublicAccessBlock"]),
    config(
        "GetBucketAnalyticsConfiguration",
        &["GetAnalyticsConfiguration"],
    ),
    config(
        "PutBucketAnalyticsConfiguration",
        &["PutAnalyticsConfiguration"],
    ),
    config(
        "DeleteBucketAnalyticsConfiguration",
        &["PutAnalyticsConfiguration"],
    ),
    config(
        "ListBucketAnalyticsConfigurations",
        &["GetAnalyticsConfiguration"],
    ),
    config(
        "GetBucketInventoryConfiguration",
        &["GetInventoryConfiguration"],
    ),
    config(
        "PutBucketInventoryConfiguration",
        &["PutInventoryConfiguration"],
    ),
    config(
        "DeleteBucketInventoryConfiguration",
        &["PutInventoryConfiguration"],
    ),
    config(
        "ListBucketInventoryConfigurations",
        &["GetInventoryConfiguration"],
    ),
    config(
        "GetBucketMetricsConfiguration",
        &["GetMetricsConfiguration"],
    ),
    config(
        "PutBucketMetricsConfiguration",
        &["PutMetricsConfiguration"],
    ),
    config(
        "DeleteBucketMetricsConfiguration",
        &["PutMetricsConfiguration"],
    ),
    config(
        "ListBucketMetricsConfigurations",
        &["GetMetricsConfiguration"],
    ),
    config(
        "GetBucketIntelligentTieringConfiguration",
        &["GetIntelligentTieringConfiguration"],
    ),
    config(
        "PutBucketIntelligentTieringConfiguration",
        &["PutIntelligentTieringConfiguration"],
    ),
    config(
        "DeleteBucketIntelligentTieringConfiguration",
        &["PutIntelligentTieringConfiguration"],
    ),
    config(
        "ListBucketIntelligentTieringConfigurations",
        &["GetIntelligentTieringConfiguration"],
    ),
    // ---- objects ----
    versioned(
        "GetObject",
        &["GetObject"],
        &["GetObjectVersion"],
        Object(Read),
    ),
    versioned(
        "HeadObject",
        &["GetObject"],
        &["GetObjectVersion"],
        Object(Read),
    ),
    // PutObject API reference, "Permissions": changing the object's ACL
    // in the same request needs s3:PutObjectAcl as well.
    Row {
        setting_acl: &["PutObject", "PutObjectAcl"],
        ..row("PutObject", &["PutObject"], On::Object, Bucket(Write))
    },
    // The copy's source is read under `COPY_SOURCE`.
    row("CopyObject", &["PutObject"], On::Object, Bucket(Write)),
    versioned(
        "DeleteObject",
        &["DeleteObject"],
        &["DeleteObjectVersion"],
        Bucket(Write),
    ),
    versioned(
        "GetObjectAttributes",
        &["GetObjectAttributes", "GetObject"],
        &["GetObjectVersionAttributes", "GetObjectVersion"],
        Object(Read),
    ),
    versioned(
        "GetObjectAcl",
        &["GetObjectAcl"],
        &["GetObjectVersionAcl"],
        Object(ReadAcp),
    ),
    versioned(
        "PutObjectAcl",
        &["PutObjectAcl"],
        &["PutObjectVersionAcl"],
        Object(WriteAcp),
    ),
    versioned(
        "GetObjectTagging",
        &["GetObjectTagging"],
        &["GetObjectVersionTagging"],
        PolicyOnly,
    ),
    versioned(
        "PutObjectTagging",
        &["PutObjectTagging"],
        &["PutObjectVersionTagging"],
        PolicyOnly,
    ),
    versioned(
        "DeleteObjectTagging",
        &["DeleteObjectTagging"],
        &["DeleteObjectVersionTagging"],
        PolicyOnly,
    ),
    GET_OBJECT_LEGAL_HOLD,
    row(
        "PutObjectLegalHold",
        &["PutObjectLegalHold"],
        On::Object,
        PolicyOnly,
    ),
    GET_OBJECT_RETENTION,
    row(
        "PutObjectRetention",
        &["PutObjectRetention"],
        On::Object,
        PolicyOnly,
    ),
    row(
        "GetObjectTorrent",
        &["GetObjectTorrent"],
        On::Object,
        Object(Read),
    ),
    row("RestoreObject", &["RestoreObject"], On::Object, PolicyOnly),
    row(
        "SelectObjectContent",
        &["GetObject"],
        On::Object,
        Object(Read),
    ),
    row("PreflightRequest", &[], On::Nothing, PolicyOnly),
    // ---- multipart ----
    row(
        "CreateMultipartUpload",
        &["PutObject"],
        On::Object,
        Bucket(Write),
    ),
    row("UploadPart", &["PutObject"], On::Object, Bucket(Write)),
    row("UploadPartCopy", &["PutObject"], On::Object, Bucket(Write)),
    row(
        "CompleteMultipartUpload",
        &["PutObject"],
        On::Object,
        Bucket(Write),
    ),
    row(
        "AbortMultipartUpload",
        &["AbortMultipartUpload"],
        On::Object,
        Bucket(Write),
    ),
    row(
        "ListParts",
        &["ListMultipartUploadParts"],
        On::Object,
        Bucket(Write),
    ),
];

/// What reading a copy's source (CopyObject, UploadPartCopy) needs, on
/// the source object: a read, of the version its `versionId` names.
pub const COPY_SOURCE: Row = versioned(
    "CopySource",
    &["GetObject"],
    &["GetObjectVersion"],
    Object(Read),
);

/// What telling a missing key apart from a forbidden one needs: listing
/// the bucket (S3 answers `404 NoSuchKey` only to a caller that may).
pub const LIST_BUCKET: Row = row("ListBucket", &["ListBucket"], On::Bucket, Bucket(Read));

/// Reading a version's legal hold; also what seeing it among GET and
/// HEAD's headers needs, as AWS shows it only to callers allowed this.
pub const GET_OBJECT_LEGAL_HOLD: Row = row(
    "GetObjectLegalHold",
    &["GetObjectLegalHold"],
    On::Object,
    PolicyOnly,
);

/// Reading a version's retention; also what seeing it among GET and
/// HEAD's headers needs.
pub const GET_OBJECT_RETENTION: Row = row(
    "GetObjectRetention",
    &["GetObjectRetention"],
    On::Object,
    PolicyOnly,
);

/// What a request asking to bypass GOVERNANCE retention (a version's
/// delete, PutObjectRetention) needs besides its own actions, on the
/// object.
pub const BYPASS_GOVERNANCE_RETENTION: Row = row(
    "BypassGovernanceRetention",
    &["BypassGovernanceRetention"],
    On::Object,
    PolicyOnly,
);

/// The table's rows in [`OPERATION_NAMES`] order, so that an endpoint's
/// row is one index away ([`crate::router::Endpoint::index`]).
static BY_INDEX: LazyLock<Vec<&'static Row>> = LazyLock::new(|| {
    OPERATION_NAMES
        .iter()
        .map(|name| {
            TABLE
                .iter()
                .find(|row| row.operation == *name)
                .unwrap_or_else(|| panic!("the action table has no row for {name}"))
        })
        .collect()
});

/// The row of the operation at `index` in [`OPERATION_NAMES`].
pub fn row_of(index: usize) -> &'static Row {
    BY_INDEX[index]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What AWS's "Actions, resources, and condition keys for Amazon S3"
    /// (and each operation's "Permissions" section) says each operation
    /// needs: (operation, actions without a version id, actions with one,
    /// resource type). Written out here apart from the table, from the
    /// reference, so a slip in the table fails a test.
    #[rustfmt::skip]
    const AWS_REFERENCE: &[(&str, &[&str], &[&str], &str)] = &[
        ("ListBuckets", &["s3:ListAllMyBuckets"], &[], "-"),
        ("CreateBucket", &["s3:CreateBucket"], &[], "bucket"),
        ("HeadBucket", &["s3:ListBucket"], &[], "bucket"),
        ("DeleteBucket", &["s3:DeleteBucket"], &[], "bucket"),
        ("GetBucketLocation", &["s3:GetBucketLocation"], &[], "bucket"),
        ("ListObjects", &["s3:ListBucket"], &[], "bucket"),
        ("ListObjectsV2", &["s3:ListBucket"], &[], "bucket"),
        ("ListObjectVersions", &["s3:ListBucketVersions"], &[], "bucket"),
        ("ListMultipartUploads", &["s3:ListBucketMultipartUploads"], &[], "bucket"),
        ("DeleteObjects", &["s3:DeleteObject"], &["s3:DeleteObjectVersion"], "object"),
        ("PostObject", &["s3:PutObject"], &[], "object"),
        ("GetBucketVersioning", &["s3:GetBucketVersioning"], &[], "bucket"),
        ("PutBucketVersioning", &["s3:PutBucketVersioning"], &[], "bucket"),
        ("GetObjectLockConfiguration", &["s3:GetBucketObjectLockConfiguration"], &[], "bucket"),
        ("PutObjectLockConfiguration", &["s3:PutBucketObjectLockConfiguration"], &[], "bucket"),
        ("GetBucketAcl", &["s3:GetBucketAcl"], &[], "bucket"),
        ("PutBucketAcl", &["s3:PutBucketAcl"], &[], "bucket"),
        ("GetBucketPolicy", &["s3:GetBucketPolicy"], &[], "bucket"),
        ("PutBucketPolicy", &["s3:PutBucketPolicy"], &[], "bucket"),
        ("DeleteBucketPolicy", &["s3:DeleteBucketPolicy"], &[], "bucket"),
        ("GetBucketPolicyStatus", &["s3:GetBucketPolicyStatus"], &[], "bucket"),
        ("GetBucketCors", &["s3:GetBucketCORS"], &[], "bucket"),
        ("PutBucketCors", &["s3:PutBucketCORS"], &[], "bucket"),
        ("DeleteBucketCors", &["s3:PutBucketCORS"], &[], "bucket"),
        ("GetBucketLifecycleConfiguration", &["s3:GetLifecycleConfiguration"], &[], "bucket"),
        ("PutBucketLifecycleConfiguration", &["s3:PutLifecycleConfiguration"], &[], "bucket"),
        ("DeleteBucketLifecycle", &["s3:PutLifecycleConfiguration"], &[], "bucket"),
        ("GetBucketTagging", &["s3:GetBucketTagging"], &[], "bucket"),
        ("PutBucketTagging", &["s3:PutBucketTagging"], &[], "bucket"),
        ("DeleteBucketTagging", &["s3:PutBucketTagging"], &[], "bucket"),
        ("GetBucketWebsite", &["s3:GetBucketWebsite"], &[], "bucket"),
        ("PutBucketWebsite", &["s3:PutBucketWebsite"], &[], "bucket"),
        ("DeleteBucketWebsite", &["s3:DeleteBucketWebsite"], &[], "bucket"),
        ("GetBucketEncryption", &["s3:GetEncryptionConfiguration"], &[], "bucket"),
        ("PutBucketEncryption", &["s3:PutEncryptionConfiguration"], &[], "bucket"),
        ("DeleteBucketEncryption", &["s3:PutEncryptionConfiguration"], &[], "bucket"),
        ("GetBucketLogging", &["s3:GetBucketLogging"], &[], "bucket"),
        ("PutBucketLogging", &["s3:PutBucketLogging"], &[], "bucket"),
        ("GetBucketNotificationConfiguration", &["s3:GetBucketNotification"], &[], "bucket"),
        ("PutBucketNotificationConfiguration", &["s3:PutBucketNotification"], &[], "bucket"),
        ("GetBucketReplication", &["s3:GetReplicationConfiguration"], &[], "bucket"),
        ("PutBucketReplication", &["s3:PutReplicationConfiguration"], &[], "bucket"),
        ("DeleteBucketReplication", &["s3:PutReplicationConfiguration"], &[], "bucket"),
        ("GetBucketRequestPayment", &["s3:GetBucketRequestPayment"], &[], "bucket"),
        ("PutBucketRequestPayment", &["s3:PutBucketRequestPayment"], &[], "bucket"),
        ("GetBucketAccelerateConfiguration", &["s3:GetAccelerateConfiguration"], &[], "bucket"),
        ("PutBucketAccelerateConfiguration", &["s3:PutAccelerateConfiguration"], &[], "bucket"),
        ("GetBucketOwnershipControls", &["s3:GetBucketOwnershipControls"], &[], "bucket"),
        ("PutBucketOwnershipControls", &["s3:PutBucketOwnershipControls"], &[], "bucket"),
        ("DeleteBucketOwnershipControls", &["s3:PutBucketOwnershipControls"], &[], "bucket"),
        ("GetPublicAccessBlock", &["s3:GetBucketPublicAccessBlock"], &[], "bucket"),
        ("PutPublicAccessBlock", &["s3:PutBucketPublicAccessBlock"], &[], "bucket"),
        ("DeletePublicAccessBlock", &["s3:PutBucketPublicAccessBlock"], &[], "bucket"),
        ("GetBucketAnalyticsConfiguration", &["s3:GetAnalyticsConfiguration"], &[], "bucket"),
        ("PutBucketAnalyticsConfiguration", &["s3:PutAnalyticsConfiguration"], &[], "bucket"),
        ("DeleteBucketAnalyticsConfiguration", &["s3:PutAnalyticsConfiguration"], &[], "bucket"),
        ("ListBucketAnalyticsConfigurations", &["s3:GetAnalyticsConfiguration"], &[], "bucket"),
        ("GetBucketInventoryConfiguration", &["s3:GetInventoryConfiguration"], &[], "bucket"),
        ("PutBucketInventoryConfiguration", &["s3:PutInventoryConfiguration"], &[], "bucket"),
        ("DeleteBucketInventoryConfiguration", &["s3:PutInventoryConfiguration"], &[], "bucket"),
        ("ListBucketInventoryConfigurations", &["s3:GetInventoryConfiguration"], &[], "bucket"),
        ("GetBucketMetricsConfiguration", &["s3:GetMetricsConfiguration"], &[], "bucket"),
        ("PutBucketMetricsConfiguration", &["s3:PutMetricsConfiguration"], &[], "bucket"),
        ("DeleteBucketMetricsConfiguration", &["s3:PutMetricsConfiguration"], &[], "bucket"),
        ("ListBucketMetricsConfigurations", &["s3:GetMetricsConfiguration"], &[], "bucket"),
        ("GetBucketIntelligentTieringConfiguration", &["s3:GetIntelligentTieringConfiguration"], &[], "bucket"),
        ("PutBucketIntelligentTieringConfiguration", &["s3:PutIntelligentTieringConfiguration"], &[], "bucket"),
        ("DeleteBucketIntelligentTieringConfiguration", &["s3:PutIntelligentTieringConfiguration"], &[], "bucket"),
        ("ListBucketIntelligentTieringConfigurations", &["s3:GetIntelligentTieringConfiguration"], &[], "bucket"),
        ("GetObject", &["s3:GetObject"], &["s3:GetObjectVersion"], "object"),
        ("HeadObject", &["s3:GetObject"], &["s3:GetObjectVersion"], "object"),
        ("PutObject", &["s3:PutObject"], &[], "object"),
        ("CopyObject", &["s3:PutObject"], &[], "object"),
        ("DeleteObject", &["s3:DeleteObject"], &["s3:DeleteObjectVersion"], "object"),
        ("GetObjectAttributes", &["s3:GetObjectAttributes", "s3:GetObject"],
            &["s3:GetObjectVersionAttributes", "s3:GetObjectVersion"], "object"),
        ("GetObjectAcl", &["s3:GetObjectAcl"], &["s3:GetObjectVersionAcl"], "object"),
        ("PutObjectAcl", &["s3:PutObjectAcl"], &["s3:PutObjectVersionAcl"], "object"),
        ("GetObjectTagging", &["s3:GetObjectTagging"], &["s3:GetObjectVersionTagging"], "object"),
        ("PutObjectTagging", &["s3:PutObjectTagging"], &["s3:PutObjectVersionTagging"], "object"),
        ("DeleteObjectTagging", &["s3:DeleteObjectTagging"], &["s3:DeleteObjectVersionTagging"], "object"),
        ("GetObjectLegalHold", &["s3:GetObjectLegalHold"], &[], "object"),
        ("PutObjectLegalHold", &["s3:PutObjectLegalHold"], &[], "object"),
        ("GetObjectRetention", &["s3:GetObjectRetention"], &[], "object"),
        ("PutObjectRetention", &["s3:PutObjectRetention"], &[], "object"),
        ("GetObjectTorrent", &["s3:GetObjectTorrent"], &[], "object"),
        ("RestoreObject", &["s3:RestoreObject"], &[], "object"),
        ("SelectObjectContent", &["s3:GetObject"], &[], "object"),
        ("PreflightRequest", &[], &[], "-"),
        ("CreateMultipartUpload", &["s3:PutObject"], &[], "object"),
        ("UploadPart", &["s3:PutObject"], &[], "object"),
        ("UploadPartCopy", &["s3:PutObject"], &[], "object"),
        ("CompleteMultipartUpload", &["s3:PutObject"], &[], "object"),
        ("AbortMultipartUpload", &["s3:AbortMultipartUpload"], &[], "object"),
        ("ListParts", &["s3:ListMultipartUploadParts"], &[], "object"),
    ];

    fn prefixed(actions: &[&str]) -> Vec<String> {
        actions
            .iter()
            .map(|action| format!("s3:{action}"))
            .collect()
    }

    #[test]
    fn every_operation_the_router_knows_has_exactly_one_row() {
        for name in OPERATION_NAMES {
            let rows = TABLE.iter().filter(|row| row.operation == *name).count();
            assert_eq!(rows, 1, "{name}");
        }
        assert_eq!(TABLE.len(), OPERATION_NAMES.len(), "a row for no operation");
        for (index, name) in OPERATION_NAMES.iter().enumerate() {
            assert_eq!(row_of(index).operation, *name);
        }
    }

    #[test]
    fn every_row_is_what_the_aws_reference_says() {
        assert_eq!(AWS_REFERENCE.len(), OPERATION_NAMES.len());
        for &(operation, latest, version, resource) in AWS_REFERENCE {
            let row = TABLE
                .iter()
                .find(|row| row.operation == operation)
                .unwrap_or_else(|| panic!("no row for {operation}"));
            assert_eq!(
                prefixed(row.latest),
                latest,
                "{operation} without a versionId"
            );
            let version = if version.is_empty() { latest } else { version };
            assert_eq!(
                prefixed(row.version),
                version,
                "{operation} with a versionId"
            );
            let on = match row.on {
                On::Bucket => "bucket",
                On::Object | On::Entries => "object",
                // CreateBucket's resource is the bucket it makes, PostObject's the key it writes.
                On::Nothing if operation == "CreateBucket" => "bucket",
                On::Nothing if operation == "PostObject" => "object",
                On::Nothing => "-",
            };
            assert_eq!(on, resource, "{operation}'s resource");
        }
    }

    #[test]
    fn version_ids_have_their_own_actions() {
        for operation in [
            "GetObject",
            "HeadObject",
            "DeleteObject",
            "DeleteObjects",
            "GetObjectAttributes",
            "GetObjectAcl",
            "PutObjectAcl",
            "GetObjectTagging",
            "PutObjectTagging",
            "DeleteObjectTagging",
        ] {
            let row = TABLE.iter().find(|row| row.operation == operation).unwrap();
            assert_ne!(row.latest, row.version, "{operation}");
            assert!(
                row.version.iter().all(|action| action.contains("Version")),
                "{operation}: {:?}",
                row.version
            );
        }
        assert_eq!(COPY_SOURCE.actions(true), ["GetObjectVersion"]);
        assert_eq!(COPY_SOURCE.actions(false), ["GetObject"]);
    }

    #[test]
    fn a_put_object_that_sets_an_acl_needs_put_object_acl_too() {
        let asking_more: Vec<_> = TABLE
            .iter()
            .filter(|row| !row.setting_acl.is_empty())
            .map(|row| (row.operation, row.setting_acl))
            .collect();
        assert_eq!(
            asking_more,
            [("PutObject", &["PutObject", "PutObjectAcl"][..])]
        );
    }

    #[test]
    fn only_object_reads_and_acl_calls_can_be_granted_by_an_object_acl() {
        let by_object_acl: Vec<_> = TABLE
            .iter()
            .filter(|row| matches!(row.grant, Grant::Object(_)))
            .map(|row| row.operation)
            .collect();
        assert_eq!(
            by_object_acl,
            [
                "GetObject",
                "HeadObject",
                "GetObjectAttributes",
                "GetObjectAcl",
                "PutObjectAcl",
                "GetObjectTorrent",
                "SelectObjectContent"
            ]
        );
    }
}

//! Every S3 operation a client may send, as one flat enum with the names
//! and fields the router fills in (`super::route`), and the listing
//! parameters some of them carry.

use storage_client::PartNumber;

/// AWS caps a listing page at 1000 entries whatever the client asks.
pub const MAX_LIST_KEYS: usize = 1000;

/// `Some(value)` for the field named `bucket`, `None` for any other.
macro_rules! bucket_field {
    (bucket, $value:ident) => {
        Some($value.as_str())
    };
    ($other:ident, $value:ident) => {{
        let _ = $value;
        None
    }};
}

/// `Some(value)` for the field named `key`, `None` for any other.
macro_rules! key_field {
    (key, $value:ident) => {
        Some($value.as_str())
    };
    ($other:ident, $value:ident) => {{
        let _ = $value;
        None
    }};
}

/// `Some(value)` for a `versionId` given to the field named `version_id`.
macro_rules! version_field {
    (version_id, $value:ident) => {
        $value.as_deref()
    };
    ($other:ident, $value:ident) => {{
        let _ = $value;
        None
    }};
}

/// Declares the enum and its `name()` (the AWS operation name) together,
/// so a new operation cannot be added without a name.
macro_rules! endpoints {
    ($( $(#[$doc:meta])* $name:ident { $($field:ident : $ty:ty),* $(,)? } ),* $(,)?) => {
        #[derive(Debug, Clone, PartialEq, Eq)]
        pub enum Endpoint {
            $( $(#[$doc])* $name { $($field: $ty),* } ),*
        }

        impl Endpoint {
            /// The AWS API operation name, e.g. `GetObject`.
            pub fn name(&self) -> &'static str {
                OPERATION_NAMES[self.index()]
            }

            /// The operation's place in [`OPERATION_NAMES`], so that
            /// per-operation counters can live in a plain array.
            pub fn index(&self) -> usize {
                #[allow(clippy::enum_variant_names)]
                enum Index { $($name),* }
                match self {
                    $( Self::$name { .. } => Index::$name as usize ),*
                }
            }

            /// The bucket the request names, if any.
            pub fn bucket(&self) -> Option<&str> {
                match self {
                    $( Self::$name { $($field),* } => {
                        None $( .or(bucket_field!($field, $field)) )*
                    } ),*
                }
            }

            /// The object key the request names, if any.
            pub fn key(&self) -> Option<&str> {
                match self {
                    $( Self::$name { $($field),* } => {
                        None $( .or(key_field!($field, $field)) )*
                    } ),*
                }
            }

            /// The object version the request names (`versionId`), if any.
            pub fn version_id(&self) -> Option<&str> {
                match self {
                    $( Self::$name { $($field),* } => {
                        None $( .or(version_field!($field, $field)) )*
                    } ),*
                }
            }
        }

        /// Every operation name, in declaration order.
        pub const OPERATION_NAMES: &[&str] = &[$( stringify!($name) ),*];
    };
}

endpoints! {
    // ---- service ----
    ListBuckets { query: ListBucketsParams },

    // ---- buckets ----
    CreateBucket { bucket: String },
    HeadBucket { bucket: String },
    DeleteBucket { bucket: String },
    GetBucketLocation { bucket: String },
    ListObjects { bucket: String, query: ListParams },
    ListObjectsV2 { bucket: String, query: ListParams },
    ListObjectVersions { bucket: String, query: ListParams },
    ListMultipartUploads { bucket: String },
    DeleteObjects { bucket: String },
    /// Browser form upload (POST to the bucket with multipart/form-data).
    PostObject { bucket: String },
    GetBucketVersioning { bucket: String },
    PutBucketVersioning { bucket: String },
    GetObjectLockConfiguration { bucket: String },
    PutObjectLockConfiguration { bucket: String },
    GetBucketAcl { bucket: String },
    PutBucketAcl { bucket: String },
    GetBucketPolicy { bucket: String },
    PutBucketPolicy { bucket: String },
    DeleteBucketPolicy { bucket: String },
    GetBucketPolicyStatus { bucket: String },
    GetBucketCors { bucket: String },
    PutBucketCors { bucket: String },
    DeleteBucketCors { bucket: String },
    GetBucketLifecycleConfiguration { bucket: String },
    PutBucketLifecycleConfiguration { bucket: String },
    DeleteBucketLifecycle { bucket: String },
    GetBucketTagging { bucket: String },
    PutBucketTagging { bucket: String },
    DeleteBucketTagging { bucket: String },
    GetBucketWebsite { bucket: String },
    PutBucketWebsite { bucket: String },
    DeleteBucketWebsite { bucket: String },
    GetBucketEncryption { bucket: String },
    PutBucketEncryption { bucket: String },
    DeleteBucketEncryption { bucket: String },
    GetBucketLogging { bucket: String },
    PutBucketLogging { bucket: String },
    GetBucketNotificationConfiguration { bucket: String },
    PutBucketNotificationConfiguration { bucket: String },
    GetBucketReplication { bucket: String },
    PutBucketReplication { bucket: String },
    DeleteBucketReplication { bucket: String },
    GetBucketRequestPayment { bucket: String },
    PutBucketRequestPayment { bucket: String },
    GetBucketAccelerateConfiguration { bucket: String },
    PutBucketAccelerateConfiguration { bucket: String },
    GetBucketOwnershipControls { bucket: String },
    PutBucketOwnershipControls { bucket: String },
    DeleteBucketOwnershipControls { bucket: String },
    GetPublicAccessBlock { bucket: String },
    PutPublicAccessBlock { bucket: String },
    DeletePublicAccessBlock { bucket: String },
    GetBucketAnalyticsConfiguration { bucket: String, id: String },
    PutBucketAnalyticsConfiguration { bucket: String, id: String },
    DeleteBucketAnalyticsConfiguration { bucket: String, id: String },
    ListBucketAnalyticsConfigurations { bucket: String },
    GetBucketInventoryConfiguration { bucket: String, id: String },
    PutBucketInventoryConfiguration { bucket: String, id: String },
    DeleteBucketInventoryConfiguration { bucket: String, id: String },
    ListBucketInventoryConfigurations { bucket: String },
    GetBucketMetricsConfiguration { bucket: String, id: String },
    PutBucketMetricsConfiguration { bucket: String, id: String },
    DeleteBucketMetricsConfiguration { bucket: String, id: String },
    ListBucketMetricsConfigurations { bucket: String },
    GetBucketIntelligentTieringConfiguration { bucket: String, id: String },
    PutBucketIntelligentTieringConfiguration { bucket: String, id: String },
    DeleteBucketIntelligentTieringConfiguration { bucket: String, id: String },
    ListBucketIntelligentTieringConfigurations { bucket: String },

    // ---- objects ----
    GetObject { bucket: String, key: String, part_number: Option<PartNumber>, version_id: Option<String> },
    HeadObject { bucket: String, key: String, part_number: Option<PartNumber>, version_id: Option<String> },
    PutObject { bucket: String, key: String },
    CopyObject { bucket: String, key: String },
    DeleteObject { bucket: String, key: String, version_id: Option<String> },
    GetObjectAttributes { bucket: String, key: String, version_id: Option<String> },
    GetObjectAcl { bucket: String, key: String, version_id: Option<String> },
    PutObjectAcl { bucket: String, key: String, version_id: Option<String> },
    GetObjectTagging { bucket: String, key: String, version_id: Option<String> },
    PutObjectTagging { bucket: String, key: String, version_id: Option<String> },
    DeleteObjectTagging { bucket: String, key: String, version_id: Option<String> },
    GetObjectLegalHold {
        bucket: String,
        key: String,
        version_id: Option<String>,
    },
    PutObjectLegalHold {
        bucket: String,
        key: String,
        version_id: Option<String>,
    },
    GetObjectRetention {
        bucket: String,
        key: String,
        version_id: Option<String>,
    },
    PutObjectRetention {
        bucket: String,
        key: String,
        version_id: Option<String>,
    },
    GetObjectTorrent { bucket: String, key: String },
    RestoreObject { bucket: String, key: String },
    SelectObjectContent { bucket: String, key: String },
    /// A CORS preflight (`OPTIONS`) on a bucket or object.
    PreflightRequest { bucket: String, key: String },

    // ---- multipart ----
    CreateMultipartUpload { bucket: String, key: String },
    UploadPart { bucket: String, key: String, part_number: PartNumber, upload_id: String },
    UploadPartCopy { bucket: String, key: String, part_number: PartNumber, upload_id: String },
    CompleteMultipartUpload { bucket: String, key: String, upload_id: String },
    AbortMultipartUpload { bucket: String, key: String, upload_id: String },
    ListParts { bucket: String, key: String, upload_id: String },
}

/// The most buckets one ListBuckets page may be asked for.
pub const MAX_LIST_BUCKETS: usize = 10_000;

/// ListBuckets query parameters; without `max-buckets` every bucket is
/// listed in one answer, as before paging existed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListBucketsParams {
    pub max_buckets: Option<usize>,
    /// Opaque, as handed out in a previous page.
    pub continuation_token: Option<String>,
    pub prefix: Option<String>,
}

/// Listing parameters shared by ListObjects, ListObjectsV2 and
/// ListObjectVersions. Empty query values mean "not given", as AWS treats
/// them (warp sends `prefix=&delimiter=`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ListParams {
    pub prefix: String,
    pub delimiter: Option<String>,
    /// Already capped at [`MAX_LIST_KEYS`].
    pub max_keys: usize,
    /// `encoding-type=url`.
    pub url_encoding: bool,
    /// v2 `fetch-owner=true`.
    pub fetch_owner: bool,
    /// v2 `continuation-token`, still opaque; `Some("")` when sent empty,
    /// which S3 echoes but treats as "from the start".
    pub continuation_token: Option<String>,
    /// v2 `start-after`, v1 `marker`, versions `key-marker`.
    pub start_after: Option<String>,
    /// Versions `version-id-marker`.
    pub version_id_marker: Option<String>,
}

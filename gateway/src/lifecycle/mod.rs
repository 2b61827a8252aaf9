//! Bucket lifecycle: the rules a bucket's owner sets
//! (PutBucketLifecycleConfiguration) and the background worker that applies
//! them, expiring objects and aborting forgotten multipart uploads.

pub mod rules;
pub mod versions;
pub mod worker;

use std::time::SystemTime;

use storage_client::BucketRef;

/// One rule applied to one bucket at one moment.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    /// The bucket, acting as its owner.
    pub bucket: BucketRef<'a>,
    pub rule: &'a rules::Rule,
    pub now: SystemTime,
}

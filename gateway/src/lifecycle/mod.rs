//! Bucket lifecycle: the rules a bucket's owner sets
//! (PutBucketLifecycleConfiguration) and the background worker that applies
//! them, expiring objects and aborting forgotten multipart uploads.

pub mod rules;
pub mod document;
pub mod versions;
pub mod worker;

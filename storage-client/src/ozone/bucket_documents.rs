//! Bucket documents on Ozone, which has no place for S3 bucket
//! configuration: each is an empty key in a system bucket, named
//! `<bucket>/<kind>`, its text in the key's metadata.
//!
//! A record names the creation time of the bucket it was written for, so
//! a bucket deleted and created again (by this gateway, another replica
//! or any Ozone client) never shows its predecessor's documents, even if
//! the sweep that follows a deletion did not finish.
//!
//! Records are sealed ([`Sealer`](super::records::Sealer)): a document whose record fails its MAC
//! (forged, altered, or copied from another bucket's or kind's record) is
//! treated as absent.

use std::time::UNIX_EPOCH;

use crate::{BucketDocument, BucketInfo, Result, StorageError};

use super::model::KeyExpectation;
use super::record_bucket::RecordBucket;

const DOCUMENT_KEY: &str = "s3gw-document";
const BUCKET_CREATED_KEY: &str = "s3gw-bucket-created";
/// Records listed per ListKeys call (the OM's own cap).
const LIST_BATCH: usize = 1000;

pub(super) struct BucketDocuments {
    records: RecordBucket,
}

fn record_name(bucket: &str, kind: BucketDocument) -> String {
    format!("{bucket}/{}", kind.stored_name())
}

/// The bucket's creation time as recorded: milliseconds since the epoch,
/// as precise as Ozone keeps it.
fn generation(bucket: &BucketInfo) -> String {
    let since_epoch = bucket
        .created
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    since_epoch.as_millis().to_string()
}

impl BucketDocuments {
    pub fn new(records: RecordBucket) -> Self {
        Self { records }
    }

    /// The system bucket the records live in.
    pub fn bucket(&self) -> &str {
        &self.records.path
    }

    /// The document of `kind` written for `bucket`, if any.
    pub async fn get(&self, bucket: &BucketInfo, kind: BucketDocument) -> Result<Option<String>> {
        let name = record_name(&bucket.name, kind);
        let Some((fields, _)) = self.records.read(&name).await? else {
            return Ok(None);
        };
        if fields.get(BUCKET_CREATED_KEY) != Some(&generation(bucket)) {
            return Ok(None);
        }
        Ok(fields.get(DOCUMENT_KEY).cloned())
    }

    /// Writes (`Some`) or removes (`None`) the document of `kind`.
    pub async fn put(
        &self,
        bucket: &BucketInfo,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()> {
        let name = record_name(&bucket.name, kind);
        let Some(text) = document else {
            return self.records.delete(&name).await;
        };
        let fields = [
            (DOCUMENT_KEY.to_owned(), text),
            (BUCKET_CREATED_KEY.to_owned(), generation(bucket)),
        ];
        self.records
            .write(&name, &fields, &KeyExpectation::Anything)
            .await
    }

    /// Removes every record of the deleted bucket `bucket`.
    pub async fn sweep(&self, bucket: &str) -> Result<()> {
        let (om, owner, path) = (&self.records.om, self.records.owner, &self.records.path);
        let prefix = format!("{bucket}/");
        loop {
            let (page, truncated) = om.list_keys(owner, path, &prefix, "", LIST_BATCH).await?;
            if page.is_empty() {
                return Ok(());
            }
            let names: Vec<String> = page.into_iter().map(|entry| entry.key).collect();
            let failed = om.delete_keys(owner, path, &names).await?;
            if let Some((name, reason)) = failed.first() {
                return Err(StorageError::Internal(format!(
                    "deleting the bucket document {name}: {reason}"
                )));
            }
            if !truncated {
                return Ok(());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, SystemTime};

    #[test]
    fn records_are_named_by_bucket_and_kind_and_dated_by_the_bucket() {
        assert_eq!(record_name("photos", BucketDocument::Cors), "photos/cors");
        let bucket = BucketInfo {
            name: "photos".into(),
            owner: "AK".into(),
            created: SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
            region: String::new(),
        };
        assert_eq!(generation(&bucket), "1700000000123");
    }
}

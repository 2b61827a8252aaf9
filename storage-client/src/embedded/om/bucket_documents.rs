//! The embedded OM's bucket documents: one `BUCKET_DOCUMENTS` row each,
//! written in a transaction that checks the bucket and its owner, and
//! dropped in the transaction that deletes the bucket.

use std::sync::Arc;

use async_trait::async_trait;
use redb::WriteTransaction;

use super::{EmbeddedOm, Inner, owned_bucket};
use crate::embedded::DbResult;
use crate::embedded::schema::{BUCKET_DOCUMENTS, BUCKETS};
use crate::metadata::{BucketDocumentStore, BucketStore};
use crate::{BucketDocument, BucketInfo, Owner, Result, StorageError};

impl Inner {
    pub(super) fn bucket_document(
        &self,
        bucket: &str,
        kind: BucketDocument,
    ) -> Result<Option<Arc<str>>> {
        let txn = self.db.begin_read()?;
        if txn.open_table(BUCKETS).db()?.get(bucket).db()?.is_none() {
            return Err(StorageError::NoSuchBucket);
        }
        let documents = txn.open_table(BUCKET_DOCUMENTS).db()?;
        let row = documents.get((bucket, kind.stored_name())).db()?;
        Ok(row.map(|text| Arc::from(text.value())))
    }

    pub(super) fn put_bucket_document(
        &self,
        owner: &Owner,
        bucket: &str,
        kind: BucketDocument,
        document: Option<&str>,
    ) -> Result<()> {
        let txn = self.write()?;
        owned_bucket(&txn.open_table(BUCKETS).db()?, bucket, owner)?;
        {
            let mut documents = txn.open_table(BUCKET_DOCUMENTS).db()?;
            let row = (bucket, kind.stored_name());
            match document {
                Some(text) => documents.insert(row, text).db()?,
                None => documents.remove(row).db()?,
            };
        }
        txn.commit().db()
    }
}

/// Drops every document of `bucket`, in the transaction deleting it.
pub(super) fn drop_bucket_documents(txn: &WriteTransaction, bucket: &str) -> Result<()> {
    let mut documents = txn.open_table(BUCKET_DOCUMENTS).db()?;
    for kind in BucketDocument::ALL {
        documents.remove((bucket, kind.stored_name())).db()?;
    }
    Ok(())
}

#[async_trait]
impl BucketDocumentStore for EmbeddedOm {
    /// The transaction checks the bucket itself: the facts are not needed.
    async fn bucket_document(
        &self,
        bucket: &str,
        kind: BucketDocument,
        _facts: &dyn BucketStore,
    ) -> Result<Option<Arc<str>>> {
        let bucket = bucket.to_owned();
        self.run(move |om| om.bucket_document(&bucket, kind)).await
    }

    async fn put_bucket_document(
        &self,
        owner: &Owner,
        bucket: &BucketInfo,
        kind: BucketDocument,
        document: Option<String>,
    ) -> Result<()> {
        let (owner, bucket) = (owner.clone(), bucket.name.clone());
        self.run(move |om| om.put_bucket_document(&owner, &bucket, kind, document.as_deref()))
            .await
    }
}

//! Where a bucket's lifecycle configuration is kept: the bucket document
//! store of storage-client.
//!
//! PLACEHOLDER until the bucket documents land on main: an in-process map,
//! so the handlers and the worker can be built and tested meanwhile. It is
//! replaced by `Storage::bucket_document` / `put_bucket_document` before
//! this branch is reported.

use std::collections::HashMap;
use std::sync::{Mutex, OnceLock};

use bytes::Bytes;
use storage_client::{Identity, Storage, StorageError};

fn placeholder() -> &'static Mutex<HashMap<String, Bytes>> {
    static DOCUMENTS: OnceLock<Mutex<HashMap<String, Bytes>>> = OnceLock::new();
    DOCUMENTS.get_or_init(Mutex::default)
}

/// The stored configuration of `bucket`, if it has one.
pub async fn load(_storage: &Storage, bucket: &str) -> Result<Option<Bytes>, StorageError> {
    Ok(placeholder().lock().expect("lock").get(bucket).cloned())
}

/// Stores (or with `None` deletes) the configuration; refused unless `who`
/// may configure the bucket.
pub async fn store(
    storage: &Storage,
    who: &Identity,
    bucket: &str,
    document: Option<Vec<u8>>,
) -> Result<(), StorageError> {
    storage.bucket(who, bucket).await?;
    let mut documents = placeholder().lock().expect("lock");
    match document {
        Some(document) => documents.insert(bucket.to_owned(), Bytes::from(document)),
        None => documents.remove(bucket),
    };
    Ok(())
}

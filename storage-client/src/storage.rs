//! The facade: one struct the gateway holds, whatever the back end.

use std::ops::Range;
use std::path::PathBuf;
use std::pin::Pin;

use bytes::Bytes;
use futures::Stream;

use crate::{
    BucketInfo, Credential, Identity, KeyInfo, ListPage, ListQuery, ObjectWriter, Result,
};

/// Object bytes as they stream out of the block role, already verified.
pub type ByteStream = Pin<Box<dyn Stream<Item = Result<Bytes>> + Send>>;

/// Back-end selection and its tunables.
#[derive(Clone, Debug)]
pub struct StorageConfig {
    pub data_dir: PathBuf,
    pub block_size: u64,
    pub chunk_size: usize,
}

pub struct Storage {}

impl Storage {
    /// Opens (creating if needed) the embedded back end under `config.data_dir`.
    pub async fn open_embedded(_config: StorageConfig) -> Result<Self> {
        todo!()
    }

    // ---- credentials (cached by access key; writes invalidate at once) ----

    pub async fn credential(&self, _access_key: &str) -> Result<Option<Credential>> {
        todo!()
    }
    pub async fn put_credential(&self, _cred: Credential) -> Result<()> {
        todo!()
    }
    pub async fn list_credentials(&self) -> Result<Vec<Credential>> {
        todo!()
    }
    /// Returns false if no such key existed.
    pub async fn delete_credential(&self, _access_key: &str) -> Result<bool> {
        todo!()
    }

    // ---- buckets ----

    pub async fn create_bucket(&self, _who: &Identity, _name: &str, _region: &str) -> Result<()> {
        todo!()
    }
    pub async fn bucket(&self, _who: &Identity, _name: &str) -> Result<BucketInfo> {
        todo!()
    }
    /// Buckets owned by `who`, sorted by name.
    pub async fn list_buckets(&self, _who: &Identity) -> Result<Vec<BucketInfo>> {
        todo!()
    }
    pub async fn delete_bucket(&self, _who: &Identity, _name: &str) -> Result<()> {
        todo!()
    }

    // ---- objects ----

    pub async fn lookup(&self, _who: &Identity, _bucket: &str, _key: &str) -> Result<KeyInfo> {
        todo!()
    }
    pub async fn read(
        &self,
        _who: &Identity,
        _info: &KeyInfo,
        _range: Range<u64>,
    ) -> Result<ByteStream> {
        todo!()
    }
    pub async fn create_object(
        &self,
        _who: &Identity,
        _bucket: &str,
        _key: &str,
    ) -> Result<ObjectWriter> {
        todo!()
    }
    /// Idempotent: deleting a missing key succeeds.
    pub async fn delete_object(&self, _who: &Identity, _bucket: &str, _key: &str) -> Result<()> {
        todo!()
    }
    pub async fn list_objects(
        &self,
        _who: &Identity,
        _bucket: &str,
        _query: &ListQuery,
    ) -> Result<ListPage> {
        todo!()
    }
}

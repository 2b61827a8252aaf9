//! A system bucket of sealed records (see [`records`](super::records)):
//! empty keys whose metadata holds a record's fields and MAC, written and
//! read as the gateway's own identity. What the bucket documents, checksum
//! records and metadata entry records share.

use std::collections::BTreeMap;
use std::sync::Arc;

use crate::{Result, StorageError};

use super::model::KeyExpectation;
use super::om_client::OmClient;
use super::records::{RecordId, Sealer};

pub(super) struct RecordBucket {
    pub om: Arc<OmClient>,
    sealer: Arc<Sealer>,
    /// The access id the records are written as (the bucket's owner).
    pub owner: &'static str,
    /// The bucket's path in the records volume.
    pub path: String,
}

impl RecordBucket {
    pub fn new(om: Arc<OmClient>, sealer: Arc<Sealer>, owner: &'static str, path: String) -> Self {
        Self {
            om,
            sealer,
            owner,
            path,
        }
    }

    fn id<'a>(&'a self, name: &'a str) -> RecordId<'a> {
        RecordId::in_bucket(&self.path, name)
    }

    /// Record `name`'s fields, as listed with `metadata`, if its MAC holds.
    pub fn verify(
        &self,
        name: &str,
        metadata: &BTreeMap<String, String>,
    ) -> Option<BTreeMap<String, String>> {
        self.sealer.verify(self.id(name), metadata)
    }

    /// Writes `fields`, sealed, as record `name`, if the OM finds what
    /// `expect` says under the name (checked at CreateKey and again,
    /// atomically, at CommitKey).
    pub async fn write(
        &self,
        name: &str,
        fields: &[(String, String)],
        expect: &KeyExpectation,
    ) -> Result<()> {
        let fields = self.sealer.sign(self.id(name), fields)?;
        let open = self
            .om
            .create_key(self.owner, &self.path, name, 0, &[], expect)
            .await?;
        self.om
            .commit_key(self.owner, &open, &[], "", &fields)
            .await
    }

    /// Record `name`'s fields and the generation (`updateID`) of its key;
    /// `None` where there is none, or where its MAC fails.
    pub async fn read(&self, name: &str) -> Result<Option<(BTreeMap<String, String>, u64)>> {
        match self
            .om
            .get_key_info(self.owner, &self.path, name, true)
            .await
        {
            Ok(record) => Ok(self
                .verify(name, &record.metadata)
                .map(|fields| (fields, record.update_id))),
            Err(StorageError::NoSuchKey) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Deletes record `name`; one already gone is no error.
    pub async fn delete(&self, name: &str) -> Result<()> {
        match self.om.delete_key(self.owner, &self.path, name).await {
            Ok(()) | Err(StorageError::NoSuchKey) => Ok(()),
            Err(e) => Err(e),
        }
    }
}

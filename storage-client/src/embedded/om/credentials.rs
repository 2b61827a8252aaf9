//! The embedded OM's access keys: one `CREDENTIALS` row each.

use async_trait::async_trait;
use redb::ReadableTable;

use super::{EmbeddedOm, Inner};
use crate::embedded::DbResult;
use crate::embedded::schema::{CREDENTIALS, CredentialRecord, decode, encode};
use crate::metadata::CredentialStore;
use crate::{Credential, Namespace, Result};

impl Inner {
    pub(super) fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(CREDENTIALS).db()?;
        table
            .get(access_key)
            .db()?
            .map(|v| decode::<CredentialRecord>(v.value()).map(|record| record.0))
            .transpose()
    }

    pub(super) fn put_credential(&self, cred: &Credential) -> Result<()> {
        let txn = self.write()?;
        let record = encode(&CredentialRecord(cred.clone()))?;
        txn.open_table(CREDENTIALS)
            .db()?
            .insert(cred.access_key.as_str(), record.as_slice())
            .db()?;
        txn.commit().db()
    }

    pub(super) fn list_credentials(&self) -> Result<Vec<Credential>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(CREDENTIALS).db()?;
        let mut out = Vec::new();
        for row in table.iter().db()? {
            let (_, value) = row.db()?;
            out.push(decode::<CredentialRecord>(value.value())?.0);
        }
        Ok(out)
    }

    pub(super) fn access_keys(&self) -> Result<Vec<String>> {
        let txn = self.db.begin_read()?;
        let table = txn.open_table(CREDENTIALS).db()?;
        let mut out = Vec::new();
        for row in table.iter().db()? {
            let (access_key, _) = row.db()?;
            out.push(access_key.value().to_owned());
        }
        Ok(out)
    }

    /// One read transaction on the credentials table, as every request's
    /// credential check makes.
    pub(super) fn ready(&self) -> Result<()> {
        let txn = self.db.begin_read()?;
        txn.open_table(CREDENTIALS).db()?;
        Ok(())
    }

    pub(super) fn delete_credential(&self, access_key: &str) -> Result<bool> {
        let txn = self.write()?;
        let existed = txn
            .open_table(CREDENTIALS)
            .db()?
            .remove(access_key)
            .db()?
            .is_some();
        txn.commit().db()?;
        Ok(existed)
    }
}

#[async_trait]
impl CredentialStore for EmbeddedOm {
    async fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        let access_key = access_key.to_owned();
        self.run(move |om| om.credential(&access_key)).await
    }

    async fn access_keys(&self) -> Result<Vec<String>> {
        self.run(Inner::access_keys).await
    }

    /// The embedded back end has no secret store of its own.
    async fn issue_secret(&self, _access_key: &str) -> Result<Option<String>> {
        Ok(None)
    }

    async fn put_credential(&self, cred: Credential) -> Result<()> {
        self.run(move |om| om.put_credential(&cred)).await
    }

    /// The embedded back end has no other secret store to agree with.
    async fn check_secret(&self, _access_key: &str, _secret: &str) -> Result<()> {
        Ok(())
    }

    /// Nothing but the gateway's own credentials signs here.
    async fn vouch(
        &self,
        _access_key: &str,
        _string_to_sign: &str,
        _signature: &str,
    ) -> Result<Option<Namespace>> {
        Ok(None)
    }

    async fn list_credentials(&self) -> Result<Vec<Credential>> {
        self.run(Inner::list_credentials).await
    }

    async fn delete_credential(&self, access_key: &str) -> Result<bool> {
        let access_key = access_key.to_owned();
        self.run(move |om| om.delete_credential(&access_key)).await
    }

    async fn ready(&self) -> Result<()> {
        self.run(Inner::ready).await
    }
}

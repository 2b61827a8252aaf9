//! The credentials role on Ozone: one sealed record per access key in the
//! system bucket `s3gw-credentials` (see the parent module), and the OM's
//! own S3 secret store where security is on.

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt, stream};

use super::{LIST_BATCH, OzoneMetadata, PARALLEL_LOOKUPS};
use crate::metadata::{CredentialStore, validate_key};
use crate::ozone::keyring::SYSTEM_OWNER;
use crate::ozone::model::KeyExpectation;
use crate::{Credential, Namespace, Result, StorageError};

#[async_trait]
impl CredentialStore for OzoneMetadata {
    async fn credential(&self, access_key: &str) -> Result<Option<Credential>> {
        if validate_key(access_key).is_err() {
            return Ok(None);
        }
        self.credential_at(access_key).await
    }

    /// Every record's name, those that fail their seal included (a
    /// credential lookup refuses them).
    async fn access_keys(&self) -> Result<Vec<String>> {
        let bucket = self.credentials_bucket();
        let mut names: Vec<String> = Vec::new();
        loop {
            let start = names.last().cloned().unwrap_or_default();
            let (page, truncated) = self
                .list_ozone_keys(SYSTEM_OWNER, bucket, "", &start, LIST_BATCH)
                .await?;
            let done = !truncated || page.is_empty();
            names.extend(page.into_iter().map(|e| e.key));
            if done {
                return Ok(names);
            }
        }
    }

    /// The OM makes the secret, so Ozone's own S3 gateway accepts the key
    /// too (with security on it verifies signatures against it).
    async fn issue_secret(&self, access_key: &str) -> Result<Option<String>> {
        validate_key(access_key)?;
        self.om.issue_s3_secret(access_key).await.map(Some)
    }

    async fn put_credential(&self, cred: Credential) -> Result<()> {
        validate_key(&cred.access_key)?;
        let fields = self.credentials.fields(&cred)?;
        let bucket = self.credentials_bucket();
        let open = self
            .om
            .create_key(
                SYSTEM_OWNER,
                bucket,
                &cred.access_key,
                0,
                &[],
                &KeyExpectation::Anything,
            )
            .await?;
        self.om
            .remember_secret(&cred.access_key, &cred.secret_key)
            .await;
        self.om
            .commit_key(SYSTEM_OWNER, &open, &[], "", &fields)
            .await
    }

    /// On a security-on cluster the OM must hold the same secret: every
    /// request by the key is signed with it.
    async fn check_secret(&self, access_key: &str, secret: &str) -> Result<()> {
        if !self.om.signs() {
            return Ok(());
        }
        match self.om.check_secret(access_key, secret).await {
            Err(StorageError::AccessDenied) => Err(StorageError::InvalidArgument(format!(
                "the Ozone cluster has security on and its OM does not hold this secret for \
                 access key {access_key}: as an Ozone administrator, give the key a secret \
                 there if it has none (`ozone s3 getsecret -u {access_key}`), then set this one \
                 (`ozone s3 setsecret -u {access_key} -s <its secret>`)"
            ))),
            other => other,
        }
    }

    /// Only on a cluster that checks signatures: with security off the OM
    /// would take any signature. Never for the system identity's name,
    /// which no S3 client signs as.
    async fn vouch(
        &self,
        access_key: &str,
        string_to_sign: &str,
        signature: &str,
    ) -> Result<Option<Namespace>> {
        if !self.vouches_for_users || !self.om.signs() || access_key.starts_with('.') {
            return Ok(None);
        }
        self.om.vouch(access_key, string_to_sign, signature).await
    }

    async fn list_credentials(&self) -> Result<Vec<Credential>> {
        let found: Vec<Option<Credential>> = stream::iter(self.access_keys().await?)
            .map(|name| async move { self.credential_at(&name).await })
            .buffered(PARALLEL_LOOKUPS)
            .try_collect()
            .await?;
        Ok(found.into_iter().flatten().collect())
    }

    async fn delete_credential(&self, access_key: &str) -> Result<bool> {
        if validate_key(access_key).is_err() {
            return Ok(false);
        }
        // Keys the OM issued a secret for must stop working there too; keys
        // from the environment or a credentials file have none. First, while
        // the credential still holds the secret the revocation is signed with.
        if let Err(e) = self.om.revoke_s3_secret(access_key).await {
            tracing::warn!(error = %e, access_key, "cannot revoke the Ozone S3 secret");
        }
        let deleted = match self
            .om
            .delete_key(SYSTEM_OWNER, self.credentials_bucket(), access_key)
            .await
        {
            Ok(()) => true,
            Err(StorageError::NoSuchKey) => false,
            Err(e) => return Err(e),
        };
        Ok(deleted)
    }

    /// One InfoBucket of the credentials bucket: the OM (its leader, after
    /// any failover) answers and the gateway's credentials are there.
    async fn ready(&self) -> Result<()> {
        self.om
            .info_bucket(SYSTEM_OWNER, self.credentials_bucket())
            .await
            .map(drop)
    }
}

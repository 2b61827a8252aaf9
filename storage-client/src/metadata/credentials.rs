//! The credentials role: S3 access keys and their secrets. Credentials
//! are cached by access key; this replica's writes take effect at once.

use super::role::metadata_role;
use crate::{Credential, Namespace, Result};

metadata_role! {
    pub(crate) trait CredentialStore {
        /// The credential of `access_key`, `None` if there is none.
        async fn credential(&self, access_key: &str) -> Result<Option<Credential>>
            => facade, custom(cached_credential);
        /// Every access key id, without secrets: what the unknown-key check
        /// of [`crate::cache`] loads, cheaper than every credential.
        async fn access_keys(&self) -> Result<Vec<String>>
            => internal, pass;
        /// A secret for the new access key `access_key` from the back end's
        /// own S3 secret store, which then knows the key too (Ozone:
        /// GetS3Secret); `None` where there is no such store and the caller
        /// makes up the secret.
        async fn issue_secret(&self, access_key: &str) -> Result<Option<String>>
            => facade, pass;
        /// Adds the credential or replaces the one with its access key.
        async fn put_credential(&self, cred: Credential) -> Result<()>
            => facade, custom(cached_put_credential);
        /// Refuses a secret the back end's own S3 secret store holds otherwise
        /// for `access_key` where that store must agree (Ozone with security
        /// on); `InvalidArgument` saying what to do.
        async fn check_secret(&self, access_key: &str, secret: &str) -> Result<()>
            => facade, pass;
        /// Whether the back end's own S3 secret store vouches for `signature`
        /// of `string_to_sign` (SigV4) by `access_key`, a key the gateway
        /// holds no credential for: Ozone with security on asks its OM (for
        /// every request: a revoked secret stops the key at once), which
        /// from then on acts as that user for the key's requests. Vouched, the
        /// namespace the key's buckets live in (a tenant's, for an Ozone
        /// tenant's access id); `None` where no store vouches, or it refuses
        /// (a wrong signature, an unknown key: it does not say which).
        async fn vouch(&self, access_key: &str, string_to_sign: &str, signature: &str)
            -> Result<Option<Namespace>>
            => facade, custom(cached_vouch);
        /// Every credential, with its secret.
        async fn list_credentials(&self) -> Result<Vec<Credential>>
            => facade, pass;
        /// Returns false if no such key existed.
        async fn delete_credential(&self, access_key: &str) -> Result<bool>
            => facade, custom(cached_delete_credential);
        /// Whether the store answers, at the cost of one small read: what a
        /// load balancer's readiness probe asks many times a minute.
        async fn ready(&self) -> Result<()>
            => facade, pass;
    }
}

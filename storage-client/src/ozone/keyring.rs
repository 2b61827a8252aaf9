//! The S3 secrets the OM client signs with on a security-on cluster, where
//! the OM checks every request's signature against its own secret store:
//! the system identity's from configuration (it must be known before the
//! credential store can be read), every other access key's from the
//! gateway's credential store in Ozone, read as the system identity.
//! The gateway keeps a secret only as long as it caches credentials.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use crate::SystemSecret;

/// The gateway's own identity: the owner of its system buckets; not an
/// access key any S3 client can sign with (access keys have no dot).
pub(super) const SYSTEM_OWNER: &str = ".s3gw";

/// Where the credential store keeps an access key's secret: the metadata
/// entry `field` of the key named by the access key in `bucket`.
#[derive(Clone, Debug)]
pub(super) struct SecretPlace {
    pub(super) bucket: String,
    pub(super) field: &'static str,
}

pub(super) struct Keyring {
    system_id: &'static str,
    /// The system identity's secret, and with the `test-support` feature
    /// those of the identities tests act as without a stored credential.
    fixed: HashMap<String, Arc<str>>,
    place: SecretPlace,
    users: moka::future::Cache<String, Arc<str>>,
}

impl Keyring {
    /// User secrets are kept `ttl` (the credentials' staleness bound), at
    /// most `capacity` of them; those of `fixed` always.
    pub(super) fn new(
        (system_id, system_secret): (&'static str, SystemSecret),
        fixed: Vec<(String, SystemSecret)>,
        place: SecretPlace,
        ttl: Duration,
        capacity: u64,
    ) -> Self {
        let fixed = fixed
            .into_iter()
            .chain([(system_id.to_owned(), system_secret)])
            .map(|(id, secret)| (id, Arc::from(secret.expose())))
            .collect();
        Self {
            system_id,
            fixed,
            place,
            users: moka::future::Cache::builder()
                .time_to_live(ttl)
                .max_capacity(capacity)
                .build(),
        }
    }

    pub(super) fn system_id(&self) -> &'static str {
        self.system_id
    }

    pub(super) fn place(&self) -> &SecretPlace {
        &self.place
    }

    /// The secret of `access_id` if it is known without a lookup.
    pub(super) async fn known(&self, access_id: &str) -> Option<Arc<str>> {
        if let Some(secret) = self.fixed.get(access_id) {
            return Some(Arc::clone(secret));
        }
        self.users.get(access_id).await
    }

    pub(super) async fn remember(&self, access_id: &str, secret: &str) {
        if !self.fixed.contains_key(access_id) {
            self.users
                .insert(access_id.to_owned(), Arc::from(secret))
                .await;
        }
    }

    pub(super) async fn forget(&self, access_id: &str) {
        self.users.invalidate(access_id).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keyring(ttl: Duration) -> Keyring {
        let place = SecretPlace {
            bucket: "s3gw-credentials".into(),
            field: "s3gw-secret",
        };
        let system = (".s3gw", SystemSecret::new("sys".into()));
        let fixed = vec![("tester".into(), SystemSecret::new("t".into()))];
        Keyring::new(system, fixed, place, ttl, 10)
    }

    #[tokio::test]
    async fn knows_the_system_secret_and_remembered_ones() {
        let keys = keyring(Duration::from_secs(60));
        assert_eq!(keys.known(".s3gw").await.as_deref(), Some("sys"));
        assert_eq!(keys.known("alice").await, None);
        keys.remember("alice", "a-secret").await;
        assert_eq!(keys.known("alice").await.as_deref(), Some("a-secret"));
        keys.forget("alice").await;
        assert_eq!(keys.known("alice").await, None);
        // Configured secrets are not replaced by stored ones.
        for (id, secret) in [(".s3gw", "sys"), ("tester", "t")] {
            keys.remember(id, "other").await;
            keys.forget(id).await;
            assert_eq!(keys.known(id).await.as_deref(), Some(secret));
        }
    }

    #[tokio::test]
    async fn a_zero_ttl_keeps_no_user_secret() {
        let keys = keyring(Duration::ZERO);
        keys.remember("alice", "a-secret").await;
        assert_eq!(keys.known("alice").await, None);
    }

    #[test]
    fn debug_output_shows_no_secret() {
        let shown = format!("{:?}", SystemSecret::new("hunter2-secret".into()));
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}

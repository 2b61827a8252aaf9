//! The S3 secrets the OM client signs with on a security-on cluster, where
//! the OM checks every request's signature against its own secret store:
//! the system identity's from configuration (it must be known before the
//! credential store can be read), every other access key's from the
//! gateway's credential store in Ozone, read as the system identity.
//! The gateway keeps a secret only as long as it caches credentials.

use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use std::time::Duration;

use crate::{Credential, Result, SystemSecret};

use super::proto::hadoop::ozone::S3Authentication;

use super::records::{RecordId, Sealer};

/// The gateway's own identity: the owner of its system buckets; not an
/// access key any S3 client can sign with (access keys have no dot).
pub(super) const SYSTEM_OWNER: &str = ".s3gw";

/// A credential record's metadata entries.
const NAME_FIELD: &str = "s3gw-name";
/// The secret, wrapped under the records key ([`Sealer::seal`]).
const SECRET_FIELD: &str = "s3gw-sealed-secret";
const ROOT_FIELD: &str = "s3gw-root";

/// The credential store: one empty key per access key in `bucket` (a path
/// in the records volume), the credential in its metadata, the secret
/// wrapped and the whole record MACed under the records key.
#[derive(Clone, Debug)]
pub(super) struct CredentialRecords {
    pub(super) bucket: String,
    pub(super) sealer: Arc<Sealer>,
}

impl CredentialRecords {
    fn id<'a>(&'a self, access_key: &'a str) -> RecordId<'a> {
        RecordId::in_bucket(&self.bucket, access_key)
    }

    /// The metadata of `cred`'s record.
    pub(super) fn fields(&self, cred: &Credential) -> Result<Vec<(String, String)>> {
        let id = self.id(&cred.access_key);
        let fields = [
            (NAME_FIELD.to_owned(), cred.name.clone()),
            (
                SECRET_FIELD.to_owned(),
                self.sealer.seal(id, SECRET_FIELD, &cred.secret_key)?,
            ),
            (ROOT_FIELD.to_owned(), cred.is_root.to_string()),
        ];
        self.sealer.sign(id, &fields)
    }

    /// The credential the record of `access_key` holds; `None` (logged)
    /// for a record the gateway did not write there as it is.
    pub(super) fn read(
        &self,
        access_key: &str,
        metadata: &BTreeMap<String, String>,
    ) -> Option<Credential> {
        let id = self.id(access_key);
        let fields = self.sealer.verify(id, metadata)?;
        let field = |name: &str| fields.get(name).cloned().unwrap_or_default();
        let Some(secret) = self.sealer.open(id, SECRET_FIELD, &field(SECRET_FIELD)) else {
            tracing::warn!(
                access_key,
                "refused a credential record whose secret does not open under the records key"
            );
            return None;
        };
        Some(Credential {
            name: field(NAME_FIELD),
            access_key: access_key.to_owned(),
            secret_key: secret,
            is_root: field(ROOT_FIELD) == "true",
        })
    }
}

/// How the OM client signs for one access id.
#[derive(Clone)]
pub(super) enum Signer {
    /// With its S3 secret.
    Secret(Arc<str>),
    /// With a signature the OM vouched for: a request the id's own client
    /// signed under the secret only the OM holds (an Ozone user's key,
    /// see [`crate::metadata::CredentialStore::vouch`]). The OM checks the
    /// signature of its string to sign and nothing else, so it stands for
    /// the id in any command, as it does for Ozone's own S3 gateway.
    Vouched(Arc<S3Authentication>),
    /// As the gateway's own identity: the id has neither a credential in
    /// the gateway nor a vouched signature (an Ozone user's key whose
    /// holder signed nothing lately, its bucket read through another key's
    /// grant or by the lifecycle worker; a deleted key's buckets). The
    /// gateway has decided the request; it acts on that as itself.
    System,
}

pub(super) struct Keyring {
    system_id: &'static str,
    /// The system identity's secret, and with the `test-support` feature
    /// those of the identities tests act as without a stored credential.
    fixed: HashMap<String, Arc<str>>,
    place: CredentialRecords,
    users: moka::future::Cache<String, Signer>,
}

impl Keyring {
    /// User secrets and vouched signatures are kept `ttl` (the
    /// credentials' staleness bound), at most `capacity` of them; those of
    /// `fixed` always.
    pub(super) fn new(
        (system_id, system_secret): (&'static str, SystemSecret),
        fixed: Vec<(String, SystemSecret)>,
        place: CredentialRecords,
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

    /// The system identity's secret.
    pub(super) fn system_secret(&self) -> Arc<str> {
        Arc::clone(&self.fixed[self.system_id])
    }

    pub(super) fn place(&self) -> &CredentialRecords {
        &self.place
    }

    /// How to sign for `access_id`, if that is known without a lookup.
    pub(super) async fn known(&self, access_id: &str) -> Option<Signer> {
        if let Some(secret) = self.fixed.get(access_id) {
            return Some(Signer::Secret(Arc::clone(secret)));
        }
        self.users.get(access_id).await
    }

    pub(super) async fn remember(&self, access_id: &str, secret: &str) {
        if !self.fixed.contains_key(access_id) {
            self.users
                .insert(access_id.to_owned(), Signer::Secret(Arc::from(secret)))
                .await;
        }
    }

    /// Signs for `access_id` as the system identity until its credential
    /// or a vouched signature turns up, or `ttl` passes.
    pub(super) async fn remember_as_system(&self, access_id: &str) {
        if !self.fixed.contains_key(access_id) {
            self.users
                .insert(access_id.to_owned(), Signer::System)
                .await;
        }
    }

    /// Keeps the newest signature the OM vouched for `access_id`, unless
    /// the gateway holds a secret for it.
    pub(super) async fn remember_vouched(&self, access_id: &str, proof: S3Authentication) {
        if self.fixed.contains_key(access_id) {
            return;
        }
        let proof = Signer::Vouched(Arc::new(proof));
        self.users
            .entry_by_ref(access_id)
            .and_upsert_with(|held| async move {
                match held.map(moka::Entry::into_value) {
                    Some(secret @ Signer::Secret(_)) => secret,
                    _ => proof,
                }
            })
            .await;
    }

    pub(super) async fn forget(&self, access_id: &str) {
        self.users.invalidate(access_id).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn records(key: &[u8]) -> CredentialRecords {
        CredentialRecords {
            bucket: format!("{}/s3gw-credentials", crate::ozone::records::RECORDS_VOLUME),
            sealer: Arc::new(Sealer::new(&crate::RecordsKey::new(key.to_vec()))),
        }
    }

    fn credential(access_key: &str, is_root: bool) -> Credential {
        Credential {
            name: "n".into(),
            access_key: access_key.into(),
            secret_key: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY".into(),
            is_root,
        }
    }

    #[test]
    fn a_credential_record_keeps_no_secret_in_the_clear_and_reads_back() {
        let store = records(&[7; 32]);
        let cred = credential("AKIAEXAMPLE000000001", true);
        let fields = store.fields(&cred).unwrap();
        assert!(fields.iter().all(|(_, v)| !v.contains("wJalrXUtnFEMI")));
        let metadata: BTreeMap<_, _> = fields.into_iter().collect();
        assert_eq!(store.read(&cred.access_key, &metadata), Some(cred));
    }

    #[test]
    fn forged_moved_or_foreign_credential_records_are_refused() {
        let store = records(&[7; 32]);
        let root = credential("AKIAEXAMPLE000000001", true);
        let good: BTreeMap<_, _> = store.fields(&root).unwrap().into_iter().collect();
        // Moved to another access key.
        assert_eq!(store.read("alice", &good), None);
        // Made root, or given a clear secret.
        let mut promoted: BTreeMap<_, _> = store
            .fields(&credential("AKIAEXAMPLE000000002", false))
            .unwrap()
            .into_iter()
            .collect();
        promoted.insert(ROOT_FIELD.into(), "true".into());
        assert_eq!(store.read("AKIAEXAMPLE000000002", &promoted), None);
        // What earlier releases wrote (and an Ozone user can): a clear secret.
        let old: BTreeMap<String, String> = [
            ("s3gw-name", "alice"),
            ("s3gw-secret", "her-own-secret"),
            ("s3gw-root", "true"),
        ]
        .into_iter()
        .map(|(n, v)| (n.to_owned(), v.to_owned()))
        .collect();
        assert_eq!(store.read("alice", &old), None);
        // Written under another records key.
        assert_eq!(records(&[8; 32]).read(&root.access_key, &good), None);
    }

    fn keyring(ttl: Duration) -> Keyring {
        let place = records(&[7; 32]);
        let system = (".s3gw", SystemSecret::new("sys".into()));
        let fixed = vec![("tester".into(), SystemSecret::new("t".into()))];
        Keyring::new(system, fixed, place, ttl, 10)
    }

    /// What `signer` signs with, as text: the secret, the vouched
    /// signature, or `system`.
    fn shown(signer: Option<Signer>) -> Option<String> {
        signer.map(|signer| match signer {
            Signer::Secret(secret) => secret.to_string(),
            Signer::Vouched(proof) => proof.signature.clone().unwrap_or_default(),
            Signer::System => "system".to_owned(),
        })
    }

    fn proof(signature: &str) -> S3Authentication {
        S3Authentication {
            string_to_sign: Some("AWS4-HMAC-SHA256\n...".into()),
            signature: Some(signature.into()),
            access_id: Some("bob".into()),
        }
    }

    #[tokio::test]
    async fn knows_the_system_secret_and_remembered_ones() {
        let keys = keyring(Duration::from_secs(60));
        assert_eq!(shown(keys.known(".s3gw").await).as_deref(), Some("sys"));
        assert_eq!(shown(keys.known("alice").await), None);
        keys.remember("alice", "a-secret").await;
        assert_eq!(
            shown(keys.known("alice").await).as_deref(),
            Some("a-secret")
        );
        keys.forget("alice").await;
        assert_eq!(shown(keys.known("alice").await), None);
        // Configured secrets are not replaced by stored ones.
        for (id, secret) in [(".s3gw", "sys"), ("tester", "t")] {
            keys.remember(id, "other").await;
            keys.remember_vouched(id, proof("v")).await;
            keys.remember_as_system(id).await;
            keys.forget(id).await;
            assert_eq!(shown(keys.known(id).await).as_deref(), Some(secret));
        }
    }

    #[tokio::test]
    async fn a_vouched_signature_is_replaced_by_a_newer_one_but_never_replaces_a_secret() {
        let keys = keyring(Duration::from_secs(60));
        keys.remember_as_system("bob").await;
        assert_eq!(shown(keys.known("bob").await).as_deref(), Some("system"));
        keys.remember_vouched("bob", proof("first")).await;
        keys.remember_vouched("bob", proof("second")).await;
        assert_eq!(shown(keys.known("bob").await).as_deref(), Some("second"));
        keys.remember("bob", "b-secret").await;
        keys.remember_vouched("bob", proof("third")).await;
        assert_eq!(shown(keys.known("bob").await).as_deref(), Some("b-secret"));
    }

    #[tokio::test]
    async fn a_zero_ttl_keeps_no_user_secret() {
        let keys = keyring(Duration::ZERO);
        keys.remember("alice", "a-secret").await;
        keys.remember_vouched("bob", proof("v")).await;
        assert_eq!(shown(keys.known("alice").await), None);
        assert_eq!(shown(keys.known("bob").await), None);
    }

    #[test]
    fn debug_output_shows_no_secret() {
        let shown = format!("{:?}", SystemSecret::new("hunter2-secret".into()));
        assert!(!shown.contains("hunter2"), "{shown}");
    }
}

//! What every request handler can reach.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use storage_client::{Credential, Namespace, Storage};

use crate::auth::{CredentialSource, Verifier};
use crate::client_address::TrustedProxies;
use crate::config::{Config, Limits};
use crate::error::S3Error;
use crate::parsed_documents::ParsedDocuments;
use crate::sse::keyring::Keyring;
use crate::sse::kms::Kms;

pub struct AppState {
    pub storage: Arc<Storage>,
    pub verifier: Arc<Verifier>,
    /// The region this gateway answers for (GetBucketLocation, SigV4 scope).
    pub region: String,
    /// Base domain for virtual-host style requests (`bucket.<domain>`), if any.
    pub domain: Option<String>,
    /// What one request may take: head sizes, body timeouts, chunk buffers.
    pub limits: Limits,
    /// Whether each request is logged.
    pub access_log: bool,
    /// Whose `X-Forwarded-For` names a request's client.
    pub trusted_proxies: TrustedProxies,
    /// Bucket policies, ACLs, public access blocks and CORS rules, parsed.
    pub parsed_documents: ParsedDocuments,
    /// The length of a lifecycle day (24 h but in tests), by which
    /// `x-amz-expiration` counts as the lifecycle worker does.
    pub lifecycle_day: Duration,
    /// Whether a request may carry an SSE-C key: over TLS, or over plain
    /// HTTP when `sse_c_over_http` allows it.
    pub sse_c_allowed: bool,
    /// SSE-S3's master keys; `None` refuses SSE-S3 writes (and reads of
    /// SSE-S3 objects cannot open).
    pub sse_keyring: Option<Arc<Keyring>>,
    /// SSE-KMS's key service; `None` refuses SSE-KMS.
    pub sse_kms: Option<Arc<Kms>>,
}

impl AppState {
    /// Wires the verifier to look secrets up in `storage`, with the
    /// region, domain and signature settings of `config`, and SSE-S3's
    /// master keys.
    pub fn new(
        storage: Arc<Storage>,
        config: &Config,
        sse_keyring: Option<Keyring>,
        sse_kms: Option<Kms>,
    ) -> Self {
        let source = Arc::new(StorageCredentials(Arc::clone(&storage)));
        let verifier = Verifier::new(source, config.settings.region.clone())
            .with_domain(config.settings.domain.clone())
            .with_sigv2(config.settings.sigv2)
            .with_body_limits(&config.limits);
        Self {
            storage,
            verifier: Arc::new(verifier),
            region: config.settings.region.clone(),
            domain: config.settings.domain.clone(),
            limits: config.limits.clone(),
            access_log: config.settings.access_log,
            trusted_proxies: config.trusted_proxies.clone(),
            parsed_documents: ParsedDocuments::default(),
            lifecycle_day: config.lifecycle.day,
            sse_c_allowed: config.tls.is_some() || config.settings.sse_c_over_http,
            sse_keyring: sse_keyring.map(Arc::new),
            sse_kms: sse_kms.map(Arc::new),
        }
    }
}

/// Serves the verifier's secret lookups from storage, whose credential cache
/// is keyed by access key.
pub struct StorageCredentials(pub Arc<Storage>);

impl CredentialSource for StorageCredentials {
    fn credential<'a>(
        &'a self,
        access_key: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Credential>, S3Error>> + Send + 'a>> {
        // StorageError -> S3Error maps an unavailable back end to 503 and any
        // other fault to 500, so a storage hiccup never reads as a bad key.
        Box::pin(async move { Ok(self.0.credential(access_key).await?) })
    }

    fn vouch<'a>(
        &'a self,
        access_key: &'a str,
        string_to_sign: &'a str,
        signature: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Namespace>, S3Error>> + Send + 'a>> {
        Box::pin(async move { Ok(self.0.vouch(access_key, string_to_sign, signature).await?) })
    }
}

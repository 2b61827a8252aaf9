//! SSE-KMS's key service: an Apache Hadoop KMS (the KMS Ozone's own
//! transparent encryption uses, so an Ozone site already runs one), over
//! its REST API. The gateway never sees a KMS key: for each object it asks
//! the KMS for a fresh data key (`_eek?eek_op=generate`), which comes back
//! in the clear and encrypted under the named KMS key; the object key is
//! sealed under the clear one, and only the encrypted one is stored. A
//! read hands the encrypted data key back to the KMS (`eek_op=decrypt`).
//! So reading an SSE-KMS object needs the KMS to still grant the gateway
//! DECRYPT_EEK on that key: revoking it (or deleting the key) makes the
//! objects unreadable, as on AWS.
//!
//! The gateway authenticates to the KMS with Hadoop's simple (pseudo)
//! authentication as `sse_kms_user`; the KMS's ACLs should grant that user
//! GENERATE_EEK and DECRYPT_EEK only, never the key material. No data key
//! appears in a log line, an error or `Debug`.

use std::fmt;
use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use reqwest::{StatusCode, Url};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::error::{Code, S3Error};

/// Opened data keys kept, by their encrypted form: a GET of a hot object
/// then costs no KMS round trip. Bounded in time (`sse_kms_key_cache_ttl`)
/// so that a key the KMS stops granting stops opening objects, and in
/// count so that the cache holds at most ~1 MiB of keys.
const OPENED_KEYS_MAX: u64 = 10_000;
/// A KMS that does not answer within this is unavailable (`503`), so a
/// request never hangs on it; Hadoop KMS answers in milliseconds.
const KMS_TIMEOUT: Duration = Duration::from_secs(10);

/// A data key the KMS made under a KMS key: what is stored (the key's
/// name and version, the IV and the encrypted key) and the key in the
/// clear, which never is.
pub struct DataKey {
    pub sealed: SealedDataKey,
    /// The key that seals the object key: derived from the data key, so
    /// that a 128-bit KMS key serves as well as a 256-bit one.
    pub wrapping_key: [u8; 32],
}

/// A data key as the KMS encrypted it: what an object's record keeps.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SealedDataKey {
    /// The KMS key's name, as the client named it.
    pub key_id: String,
    /// The KMS key version that encrypted it (`testkey-1@0`).
    pub version: String,
    /// Hadoop's base64url IV and encrypted key.
    pub iv: String,
    pub material: String,
}

impl fmt::Debug for DataKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataKey")
            .field("sealed", &self.sealed)
            .finish_non_exhaustive()
    }
}

/// Why the KMS could not serve a key.
#[derive(Debug, thiserror::Error)]
pub enum KmsError {
    #[error("the KMS has no key {0}")]
    NoSuchKey(String),
    #[error("the KMS does not let the gateway use key {0}")]
    Denied(String),
    #[error("the KMS is unavailable: {0}")]
    Unavailable(String),
    #[error("the KMS answered something the gateway cannot read: {0}")]
    Unreadable(String),
}

impl From<KmsError> for S3Error {
    /// AWS's answers: an unknown key is the client's mistake (`400
    /// KMS.NotFoundException`), a key the gateway may not use `403`, a KMS
    /// that does not answer a retryable `503`.
    fn from(err: KmsError) -> Self {
        match &err {
            KmsError::NoSuchKey(key_id) => {
                let mut refused = S3Error::invalid_argument(format!("Invalid keyId {key_id}"));
                refused.code = "KMS.NotFoundException";
                refused
            }
            KmsError::Denied(_) => {
                tracing::warn!("{err}");
                let mut refused = S3Error::new(Code::AccessDenied, err.to_string());
                refused.code = "KMS.AccessDeniedException";
                refused
            }
            KmsError::Unavailable(_) | KmsError::Unreadable(_) => {
                tracing::error!("{err}");
                S3Error::new(
                    Code::ServiceUnavailable,
                    "The key management service is unavailable; nothing was stored or read. \
                     Please retry.",
                )
            }
        }
    }
}

/// A Hadoop KMS, as `sse_kms_url` names it.
pub struct Kms {
    http: reqwest::Client,
    /// `.../kms/v1/`, ending with a slash.
    api: Url,
    user: String,
    /// The key `aws:kms` without a key id uses (`sse_kms_default_key`).
    pub default_key: Option<String>,
    opened: moka::future::Cache<SealedDataKey, [u8; 32]>,
}

impl fmt::Debug for Kms {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Kms")
            .field("api", &self.api.as_str())
            .field("user", &self.user)
            .finish_non_exhaustive()
    }
}

#[derive(Deserialize)]
struct GeneratedKey {
    #[serde(rename = "versionName")]
    version_name: String,
    iv: String,
    #[serde(rename = "encryptedKeyVersion")]
    encrypted: KeyMaterial,
}

#[derive(Deserialize)]
struct KeyMaterial {
    material: String,
}

#[derive(Serialize)]
struct DecryptRequest<'a> {
    name: &'a str,
    iv: &'a str,
    material: &'a str,
}

#[derive(Deserialize)]
struct RemoteException {
    #[serde(rename = "RemoteException")]
    exception: RemoteExceptionBody,
}

#[derive(Deserialize)]
struct RemoteExceptionBody {
    #[serde(default)]
    message: String,
}

impl Kms {
    /// Whether `url` can name a KMS; `Err` is a one-line reason.
    pub fn check_url(url: &str) -> Result<Url, String> {
        Url::parse(url)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
            .ok_or_else(|| {
                format!("{url} is not an http(s) URL of a Hadoop KMS (e.g. http://kms:9600/kms)")
            })
    }

    /// The KMS at `url` (`http[s]://host:port/kms`), whose opened data
    /// keys are reused for `opened_keys_ttl`; `Err` is a one-line reason.
    pub fn new(
        url: &str,
        user: &str,
        default_key: Option<String>,
        opened_keys_ttl: Duration,
    ) -> Result<Self, String> {
        let mut api = Self::check_url(url)?;
        let path = format!("{}/v1/", api.path().trim_end_matches('/'));
        api.set_path(&path);
        let http = reqwest::Client::builder()
            .timeout(KMS_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot make the KMS client: {e}"))?;
        Ok(Self {
            http,
            api,
            user: user.to_owned(),
            default_key,
            opened: moka::future::Cache::builder()
                .max_capacity(OPENED_KEYS_MAX)
                .time_to_live(opened_keys_ttl)
                .build(),
        })
    }

    /// A fresh data key under KMS key `key_id`.
    pub async fn generate(&self, key_id: &str) -> Result<DataKey, KmsError> {
        let url = self.endpoint(
            &["key", key_id, "_eek"],
            &[("eek_op", "generate"), ("num_keys", "1")],
        )?;
        let answer = self.send(self.http.get(url), key_id).await?;
        let generated: Vec<GeneratedKey> = serde_json::from_slice(&answer)
            .map_err(|e| KmsError::Unreadable(format!("generated key: {e}")))?;
        let Some(generated) = generated.into_iter().next() else {
            return Err(KmsError::Unreadable("no generated key".into()));
        };
        let sealed = SealedDataKey {
            key_id: key_id.to_owned(),
            version: generated.version_name,
            iv: generated.iv,
            material: generated.encrypted.material,
        };
        if !sealed.is_storable() {
            return Err(KmsError::Unreadable(
                "a generated key's version, IV or material is not base64url".into(),
            ));
        }
        let wrapping_key = self.decrypt_uncached(&sealed).await?;
        self.opened.insert(sealed.clone(), wrapping_key).await;
        Ok(DataKey {
            sealed,
            wrapping_key,
        })
    }

    /// The wrapping key of a stored data key.
    pub async fn open(&self, sealed: &SealedDataKey) -> Result<[u8; 32], KmsError> {
        if let Some(key) = self.opened.get(sealed).await {
            return Ok(key);
        }
        let key = self.decrypt_uncached(sealed).await?;
        self.opened.insert(sealed.clone(), key).await;
        Ok(key)
    }

    async fn decrypt_uncached(&self, sealed: &SealedDataKey) -> Result<[u8; 32], KmsError> {
        let url = self.endpoint(
            &["keyversion", &sealed.version, "_eek"],
            &[("eek_op", "decrypt")],
        )?;
        let body = serde_json::to_vec(&DecryptRequest {
            name: &sealed.key_id,
            iv: &sealed.iv,
            material: &sealed.material,
        })
        .map_err(|e| KmsError::Unreadable(e.to_string()))?;
        let request = self
            .http
            .post(url)
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .body(body);
        let answer = self.send(request, &sealed.key_id).await?;
        let opened: KeyMaterial = serde_json::from_slice(&answer)
            .map_err(|e| KmsError::Unreadable(format!("decrypted key: {e}")))?;
        let data_key = URL_SAFE_NO_PAD
            .decode(opened.material.trim_end_matches('='))
            .map_err(|_| KmsError::Unreadable("a data key is not base64url".into()))?;
        if data_key.len() < 16 {
            return Err(KmsError::Unreadable(
                "a data key is shorter than 128 bits".into(),
            ));
        }
        Ok(wrapping_key(&data_key))
    }

    fn endpoint(&self, segments: &[&str], query: &[(&str, &str)]) -> Result<Url, KmsError> {
        let mut url = self.api.clone();
        url.path_segments_mut()
            .map_err(|()| KmsError::Unavailable("the KMS URL cannot take a path".into()))?
            .pop_if_empty()
            .extend(segments);
        url.query_pairs_mut()
            .extend_pairs(query)
            .append_pair("user.name", &self.user);
        Ok(url)
    }

    /// Sends `request`, about KMS key `key_id`, and returns the answer's
    /// body; a refusal is told apart by Hadoop's `RemoteException`.
    async fn send(
        &self,
        request: reqwest::RequestBuilder,
        key_id: &str,
    ) -> Result<bytes::Bytes, KmsError> {
        let answer = request
            .send()
            .await
            .map_err(|e| KmsError::Unavailable(e.without_url().to_string()))?;
        let status = answer.status();
        let body = answer
            .bytes()
            .await
            .map_err(|e| KmsError::Unavailable(e.without_url().to_string()))?;
        if status.is_success() {
            return Ok(body);
        }
        let message = serde_json::from_slice::<RemoteException>(&body)
            .map(|remote| remote.exception.message)
            .unwrap_or_default();
        // Hadoop KMS answers an unknown key with a 500 (or, for some
        // versions and operations, a 404) whose message says so.
        if status == StatusCode::NOT_FOUND
            || message.contains("No KeyVersion exists")
            || message.contains("not found")
        {
            return Err(KmsError::NoSuchKey(key_id.to_owned()));
        }
        if matches!(status, StatusCode::FORBIDDEN | StatusCode::UNAUTHORIZED) {
            return Err(KmsError::Denied(key_id.to_owned()));
        }
        Err(KmsError::Unavailable(format!("{status}: {message}")))
    }
}

impl SealedDataKey {
    /// Whether every field can stand in an object's record, which
    /// separates fields with spaces and these with dots.
    pub fn is_storable(&self) -> bool {
        let base64url = |text: &str| {
            !text.is_empty()
                && text
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'='))
        };
        !self.key_id.is_empty() && base64url(&self.iv) && base64url(&self.material)
    }

    /// The record's field: key id and version (base64url, as they may
    /// hold any character), IV and encrypted key, dot-separated.
    pub fn to_field(&self) -> String {
        format!(
            "{}.{}.{}.{}",
            URL_SAFE_NO_PAD.encode(&self.key_id),
            URL_SAFE_NO_PAD.encode(&self.version),
            self.iv,
            self.material
        )
    }

    pub fn from_field(field: &str) -> Option<Self> {
        let mut parts = field.split('.');
        let (Some(key_id), Some(version), Some(iv), Some(material), None) = (
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
            parts.next(),
        ) else {
            return None;
        };
        let text = |encoded: &str| String::from_utf8(URL_SAFE_NO_PAD.decode(encoded).ok()?).ok();
        let sealed = Self {
            key_id: text(key_id)?,
            version: text(version)?,
            iv: iv.to_owned(),
            material: material.to_owned(),
        };
        sealed.is_storable().then_some(sealed)
    }
}

/// The key that seals object keys, from a KMS data key of any length.
fn wrapping_key(data_key: &[u8]) -> [u8; 32] {
    let mut mac =
        <Hmac<Sha256> as Mac>::new_from_slice(data_key).expect("HMAC takes any key length");
    mac.update(b"s3gw sse kms wrapping key v1");
    mac.finalize().into_bytes().into()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealed() -> SealedDataKey {
        SealedDataKey {
            key_id: "arn:aws:kms:r:1:key/k 1".into(),
            version: "k 1@0".into(),
            iv: "8Q-ByKryhEFIYBwH1_4cBg".into(),
            material: "liNfwSai00KqhWi16N0YYy1mU_MI9aN78D_2BeB6JkU".into(),
        }
    }

    #[test]
    fn a_sealed_data_key_reads_back_from_its_field() {
        let field = sealed().to_field();
        assert!(!field.contains(' '), "{field}");
        assert_eq!(SealedDataKey::from_field(&field), Some(sealed()));
        for broken in ["", "a.b.c", "a.b.c.d.e", "!.b.c.d", "YQ.Yg.c d.e"] {
            assert_eq!(SealedDataKey::from_field(broken), None, "{broken}");
        }
    }

    #[test]
    fn wrapping_keys_differ_by_data_key_and_show_in_no_debug() {
        assert_ne!(wrapping_key(&[1; 16]), wrapping_key(&[1; 32]));
        assert_eq!(wrapping_key(&[1; 32]), wrapping_key(&[1; 32]));
        let key = DataKey {
            sealed: sealed(),
            wrapping_key: [7; 32],
        };
        assert!(!format!("{key:?}").contains("7, 7"));
    }

    #[test]
    fn the_api_lies_under_the_url_given() {
        let kms = Kms::new("http://127.0.0.1:9600/kms/", "s3gw", None, Duration::ZERO).unwrap();
        let url = kms
            .endpoint(&["key", "a/b", "_eek"], &[("eek_op", "generate")])
            .unwrap();
        assert_eq!(
            url.as_str(),
            "http://127.0.0.1:9600/kms/v1/key/a%2Fb/_eek?eek_op=generate&user.name=s3gw"
        );
        assert!(Kms::new("ftp://x/kms", "s3gw", None, Duration::ZERO).is_err());
        assert!(Kms::new("not a url", "s3gw", None, Duration::ZERO).is_err());
    }
}

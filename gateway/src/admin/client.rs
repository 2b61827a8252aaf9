//! The client side of the admin API, used by `s3-gateway admin keys ...`
//! (and by `admin check` for its S3 round trip): plain HTTP requests signed
//! with SigV4 by the `aws-sigv4` crate, exactly as an AWS SDK would sign
//! them, so the server checks them like any other.

use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SignatureLocation,
    SigningSettings, UriPathNormalizationMode, sign,
};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, StatusCode, Url};
use tokio_rustls::rustls::pki_types::CertificateDer;
use tokio_rustls::rustls::pki_types::pem::PemObject;

use super::api::{CreatedKey, KeySummary};
use super::buckets::BucketSummary;

/// Characters SigV4 leaves unencoded; everything else is percent-encoded.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    #[error("invalid endpoint {0:?}: expected a URL such as http://127.0.0.1:9878")]
    Endpoint(String),
    #[error("cannot sign the request: {0}")]
    Signing(String),
    #[error("cannot read CA certificates from {file}: {why}")]
    CaCert { file: String, why: String },
    /// The message names every cause (a refused certificate, a refused
    /// connection), not only reqwest's "error sending request".
    #[error("cannot reach the gateway: {}", causes(.0))]
    Transport(#[from] reqwest::Error),
    #[error("the gateway answered {status}: {code}: {message}")]
    Refused {
        status: StatusCode,
        code: String,
        message: String,
    },
    #[error("unexpected answer from the gateway: {0}")]
    Decode(String),
}

/// An error and its sources, outermost first, repeated wording left out.
fn causes(error: &(dyn std::error::Error + 'static)) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next = Some(error);
    while let Some(e) = next {
        let text = e.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = e.source();
    }
    parts.join(": ")
}

/// Which TLS certificates the client accepts from an HTTPS gateway.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Trust {
    /// Those issued under the built-in (Mozilla) roots.
    BuiltIn,
    /// Those, and those issued under the CA certificates in this PEM file
    /// (`--ca-cert`, `SSL_CERT_FILE`).
    AlsoCa(std::path::PathBuf),
    /// Any: for a check through a name the certificate does not carry (a
    /// Kubernetes Service), where the question is whether S3 answers, not
    /// who holds the certificate.
    AnyCertificate,
}

/// Signs and sends admin requests for one root key.
pub struct AdminClient {
    http: reqwest::Client,
    endpoint: Url,
    region: String,
    credentials: Credentials,
}

impl AdminClient {
    pub fn new(
        endpoint: &str,
        region: &str,
        access_key: &str,
        secret_key: &str,
        trust: &Trust,
    ) -> Result<Self, ClientError> {
        let mut http = reqwest::Client::builder();
        match trust {
            Trust::BuiltIn => {}
            Trust::AlsoCa(file) => {
                let refused = |why: String| ClientError::CaCert {
                    file: file.display().to_string(),
                    why,
                };
                let pem = std::fs::read(file).map_err(|e| refused(e.to_string()))?;
                let certificates = CertificateDer::pem_slice_iter(&pem)
                    .collect::<Result<Vec<_>, _>>()
                    .map_err(|e| refused(e.to_string()))?;
                if certificates.is_empty() {
                    return Err(refused("no PEM certificate in it".into()));
                }
                http = http.use_preconfigured_tls(
                    super::trust::client_config(certificates).map_err(refused)?,
                );
            }
            Trust::AnyCertificate => http = http.danger_accept_invalid_certs(true),
        }
        Self::with_http(endpoint, region, access_key, secret_key, http.build()?)
    }

    fn with_http(
        endpoint: &str,
        region: &str,
        access_key: &str,
        secret_key: &str,
        http: reqwest::Client,
    ) -> Result<Self, ClientError> {
        let endpoint = Url::parse(endpoint)
            .ok()
            .filter(|url| matches!(url.scheme(), "http" | "https") && url.host_str().is_some())
            .ok_or_else(|| ClientError::Endpoint(endpoint.to_string()))?;
        Ok(Self {
            http,
            endpoint,
            region: region.to_string(),
            credentials: Credentials::new(access_key, secret_key, None, None, "s3-gateway-admin"),
        })
    }

    pub async fn create_key(&self, name: &str) -> Result<CreatedKey, ClientError> {
        let query = format!("name={}", utf8_percent_encode(name, UNRESERVED));
        let body = self
            .send(Method::POST, "/_s3gw/admin/keys", Some(&query), &[])
            .await?;
        serde_json::from_slice(&body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    pub async fn list_keys(&self) -> Result<Vec<KeySummary>, ClientError> {
        let body = self
            .send(Method::GET, "/_s3gw/admin/keys", None, &[])
            .await?;
        serde_json::from_slice(&body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// Returns false if the gateway has no such key.
    pub async fn delete_key(&self, access_key: &str) -> Result<bool, ClientError> {
        let path = format!(
            "/_s3gw/admin/keys/{}",
            utf8_percent_encode(access_key, UNRESERVED)
        );
        match self.send(Method::DELETE, &path, None, &[]).await {
            Ok(_) => Ok(true),
            Err(ClientError::Refused { status, .. }) if status == StatusCode::NOT_FOUND => {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    pub async fn list_buckets(&self) -> Result<Vec<BucketSummary>, ClientError> {
        let body = self
            .send(Method::GET, "/_s3gw/admin/buckets", None, &[])
            .await?;
        serde_json::from_slice(&body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    pub async fn set_bucket_owner(
        &self,
        bucket: &str,
        access_key: &str,
    ) -> Result<BucketSummary, ClientError> {
        let path = format!(
            "/_s3gw/admin/buckets/{}/owner",
            utf8_percent_encode(bucket, UNRESERVED)
        );
        let query = format!("access_key={}", utf8_percent_encode(access_key, UNRESERVED));
        let body = self.send(Method::PUT, &path, Some(&query), &[]).await?;
        serde_json::from_slice(&body).map_err(|e| ClientError::Decode(e.to_string()))
    }

    /// Deletes the bucket; with `force`, everything in it first.
    pub async fn delete_bucket(&self, bucket: &str, force: bool) -> Result<(), ClientError> {
        let path = format!(
            "/_s3gw/admin/buckets/{}",
            utf8_percent_encode(bucket, UNRESERVED)
        );
        let query = force.then_some("force=true");
        self.send(Method::DELETE, &path, query, &[]).await?;
        Ok(())
    }

    /// Sends one signed request (`path` already percent-encoded) and returns
    /// the body of a 2xx answer.
    pub(crate) async fn send(
        &self,
        method: Method,
        path: &str,
        query: Option<&str>,
        body: &[u8],
    ) -> Result<bytes::Bytes, ClientError> {
        let mut url = self.endpoint.clone();
        url.set_path(path);
        url.set_query(query);
        let host = match (url.host_str(), url.port()) {
            (Some(host), Some(port)) => format!("{host}:{port}"),
            (Some(host), None) => host.to_string(),
            (None, _) => return Err(ClientError::Endpoint(self.endpoint.to_string())),
        };

        let identity: Identity = self.credentials.clone().into();
        let params = signing_params(&identity, &self.region, None).map_err(ClientError::Signing)?;
        let signable = SignableRequest::new(
            method.as_str(),
            url.as_str(),
            std::iter::once(("host", host.as_str())),
            SignableBody::Bytes(body),
        )
        .map_err(|e| ClientError::Signing(e.to_string()))?;
        let (instructions, _signature) = sign(signable, &params)
            .map_err(|e| ClientError::Signing(e.to_string()))?
            .into_parts();

        let mut request = self
            .http
            .request(method, url)
            .header("host", host)
            .body(body.to_vec());
        for (name, value) in instructions.headers() {
            request = request.header(name, value);
        }
        let response = request.send().await?;
        let status = response.status();
        let body = response.bytes().await?;
        if status.is_success() {
            Ok(body)
        } else {
            Err(refusal(status, &body))
        }
    }
}

/// Reads Code and Message out of an S3 XML error body, unescaped.
fn refusal(status: StatusCode, body: &[u8]) -> ClientError {
    let text = String::from_utf8_lossy(body);
    let element = |name: &str| {
        let open = format!("<{name}>");
        let close = format!("</{name}>");
        let start = text.find(&open)? + open.len();
        let end = text[start..].find(&close)? + start;
        let raw = &text[start..end];
        Some(quick_xml::escape::unescape(raw).map_or_else(|_| raw.to_owned(), |t| t.into_owned()))
    };
    ClientError::Refused {
        status,
        code: element("Code").unwrap_or_else(|| "Unknown".into()),
        message: element("Message").unwrap_or_else(|| text.trim().chars().take(200).collect()),
    }
}

/// SigV4 parameters as S3 signs (and the gateway verifies): a payload hash
/// header, single URI encoding, no path normalisation; with `expires_in`,
/// a presigned URL instead (the signature in the query).
pub(crate) fn signing_params<'a>(
    identity: &'a Identity,
    region: &'a str,
    expires_in: Option<Duration>,
) -> Result<aws_sigv4::http_request::SigningParams<'a>, String> {
    let mut settings = SigningSettings::default();
    settings.percent_encoding_mode = PercentEncodingMode::Single;
    settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
    match expires_in {
        Some(expiry) => {
            settings.signature_location = SignatureLocation::QueryParams;
            settings.expires_in = Some(expiry);
        }
        None => settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256,
    }
    Ok(v4::SigningParams::builder()
        .identity(identity)
        .region(region)
        .name("s3")
        .time(SystemTime::now())
        .settings(settings)
        .build()
        .map_err(|e| e.to_string())?
        .into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn endpoints_must_be_http_urls() {
        for bad in ["127.0.0.1:9878", "ftp://host", "http://", "nonsense"] {
            assert!(
                matches!(
                    AdminClient::new(bad, "us-east-1", "AK", "SK", &Trust::BuiltIn),
                    Err(ClientError::Endpoint(_))
                ),
                "{bad}"
            );
        }
        assert!(
            AdminClient::new(
                "https://s3.example.com",
                "us-east-1",
                "AK",
                "SK",
                &Trust::BuiltIn
            )
            .is_ok()
        );
    }

    #[test]
    fn error_bodies_yield_code_and_message() {
        let body = b"<?xml version=\"1.0\"?><Error><Code>AccessDenied</Code><Message>The key name &apos;a/b&apos; is not &lt;valid&gt;.</Message></Error>";
        match refusal(StatusCode::FORBIDDEN, body) {
            ClientError::Refused { code, message, .. } => {
                assert_eq!(code, "AccessDenied");
                assert_eq!(message, "The key name 'a/b' is not <valid>.");
            }
            other => panic!("unexpected {other:?}"),
        }
    }
}

//! SigV4 headers for a request, signed the way an AWS SDK signs them;
//! shared by the integration tests and the benches that drive the real
//! server (`#[path]`-included, so it is no test of its own).

use std::time::SystemTime;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, SignableBody, SignableRequest, SigningSettings, sign,
};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;

/// The headers to add to `method url` (`x-amz-date`,
/// `x-amz-content-sha256`, `authorization`), signed now with the key
/// `access_key`/`secret_key` for us-east-1.
pub fn signed_headers(
    (access_key, secret_key): (&str, &str),
    method: &str,
    url: &str,
    payload: SignableBody<'_>,
) -> Vec<(String, String)> {
    let identity: Identity = Credentials::new(access_key, secret_key, None, None, "test").into();
    let mut settings = SigningSettings::default();
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    let params = v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("s3")
        .time(SystemTime::now())
        .settings(settings)
        .build()
        .expect("signing params")
        .into();
    let signable =
        SignableRequest::new(method, url, std::iter::empty(), payload).expect("signable");
    let (instructions, _) = sign(signable, &params).expect("signed").into_parts();
    instructions
        .headers()
        .map(|(name, value)| (name.to_string(), value.to_string()))
        .collect()
}

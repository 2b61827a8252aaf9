//! Signs the console's requests as the session's key with SigV4, as an AWS
//! SDK would (payload unsigned so bodies stream), so that the S3 handler
//! checks and authorises them like any other request.

use std::borrow::Cow;
use std::time::Duration;

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{SignableBody, SignableRequest, sign};
use aws_smithy_runtime_api::client::identity::Identity;
use http::{HeaderName, HeaderValue};

use super::session::Session;
use crate::admin::client::signing_params;
use crate::auth::encoding;

/// One component, percent-encoded as SigV4 canonicalises it.
pub fn encode(text: &str) -> String {
    encoding::uri_encode(text.as_bytes(), false)
}

fn identity(session: &Session) -> Identity {
    Credentials::new(
        &session.access_key,
        &session.secret_key,
        None,
        None,
        "s3-gateway-console",
    )
    .into()
}

/// The headers that sign a request for `host` + `path_and_query` (both
/// canonical) with the given headers, its body unsigned.
pub fn headers(
    session: &Session,
    region: &str,
    method: &str,
    host: &str,
    path_and_query: &str,
    signed: &[(&str, &str)],
) -> Result<Vec<(HeaderName, HeaderValue)>, String> {
    let identity = identity(session);
    let params = signing_params(&identity, region, None)?;
    let url = format!("http://{host}{path_and_query}");
    let headers = std::iter::once(("host", host)).chain(signed.iter().copied());
    let signable = SignableRequest::new(method, &url, headers, SignableBody::UnsignedPayload)
        .map_err(|e| e.to_string())?;
    let (instructions, _) = sign(signable, &params)
        .map_err(|e| e.to_string())?
        .into_parts();
    instructions
        .headers()
        .map(|(name, value)| {
            Ok((
                HeaderName::from_bytes(name.as_bytes()).map_err(|e| e.to_string())?,
                HeaderValue::from_str(value).map_err(|e| e.to_string())?,
            ))
        })
        .collect()
}

/// A presigned GET URL's path and query for `host` + `path` (canonical)
/// with `query` (canonical, may be empty), valid for `expires_in`.
pub fn presigned(
    session: &Session,
    region: &str,
    host: &str,
    path: &str,
    query: &str,
    expires_in: Duration,
) -> Result<String, String> {
    let identity = identity(session);
    let params = signing_params(&identity, region, Some(expires_in))?;
    let path_and_query = if query.is_empty() {
        path.to_owned()
    } else {
        format!("{path}?{query}")
    };
    let url = format!("http://{host}{path_and_query}");
    let signable = SignableRequest::new(
        "GET",
        &url,
        std::iter::once(("host", host)),
        SignableBody::UnsignedPayload,
    )
    .map_err(|e| e.to_string())?;
    let (instructions, _) = sign(signable, &params)
        .map_err(|e| e.to_string())?
        .into_parts();
    let mut out = path_and_query;
    let mut separator = if query.is_empty() { '?' } else { '&' };
    for (name, value) in instructions.params() {
        let value: &Cow<'static, str> = value;
        out.push(separator);
        out.push_str(&encode(name));
        out.push('=');
        out.push_str(&encode(value));
        separator = '&';
    }
    Ok(out)
}

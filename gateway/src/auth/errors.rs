//! The S3 errors authentication produces, with the codes, statuses and
//! messages AWS uses, so that clients and SDKs react to them as they do to S3.

use std::time::SystemTime;

use crate::error::{Code, S3Error};

pub(crate) fn anonymous() -> S3Error {
    S3Error::new(Code::AccessDenied, "Anonymous access is not allowed")
}

pub(crate) fn unknown_access_key(access_key: &str) -> S3Error {
    S3Error::new(
        Code::InvalidAccessKeyId,
        "The AWS Access Key Id you provided does not exist in our records.",
    )
    .with("AWSAccessKeyId", access_key)
}

/// The signature did not verify. `details` carries what AWS returns to
/// help a client author find the difference (never anything secret).
pub(crate) fn signature_mismatch(details: Option<MismatchDetails>) -> S3Error {
    let error = S3Error::new(
        Code::SignatureDoesNotMatch,
        "The request signature we calculated does not match the signature you provided. \
         Check your key and signing method.",
    );
    let Some(details) = details else {
        return error;
    };
    let error = error
        .with("AWSAccessKeyId", details.access_key)
        .with("StringToSign", details.string_to_sign)
        .with("SignatureProvided", details.signature_provided);
    match details.canonical_request {
        Some(canonical_request) => error.with("CanonicalRequest", canonical_request),
        None => error,
    }
}

pub(crate) struct MismatchDetails {
    pub access_key: String,
    pub string_to_sign: String,
    pub signature_provided: String,
    /// SigV4 only; SigV2 has no canonical request.
    pub canonical_request: Option<String>,
}

pub(crate) fn chunk_signature_mismatch() -> S3Error {
    signature_mismatch(None)
}

pub(crate) fn time_too_skewed(request_time: &str, server_time: SystemTime) -> S3Error {
    S3Error::new(
        Code::RequestTimeTooSkewed,
        "The difference between the request time and the current time is too large.",
    )
    .with("RequestTime", request_time)
    .with("ServerTime", httpdate::fmt_http_date(server_time))
    .with("MaxAllowedSkewMilliseconds", "900000")
}

pub(crate) fn access_denied(message: impl Into<String>) -> S3Error {
    S3Error::new(Code::AccessDenied, message)
}

pub(crate) fn unsigned_headers() -> S3Error {
    access_denied("There were headers present in the request which were not signed")
}

pub(crate) fn header_malformed(reason: &str) -> S3Error {
    S3Error::new(
        Code::AuthorizationHeaderMalformed,
        format!("The authorization header is malformed; {reason}"),
    )
}

pub(crate) fn query_malformed(message: impl Into<String>) -> S3Error {
    S3Error::new(Code::AuthorizationQueryParametersError, message)
}

pub(crate) fn invalid_request(message: impl Into<String>) -> S3Error {
    S3Error::new(Code::InvalidRequest, message)
}

pub(crate) fn invalid_argument(message: impl Into<String>, name: &str, value: &str) -> S3Error {
    S3Error::new(Code::InvalidArgument, message)
        .with("ArgumentName", name)
        .with("ArgumentValue", value)
}

pub(crate) fn missing_header(name: &str) -> S3Error {
    S3Error::new(
        Code::MissingSecurityHeader,
        "Your request was missing a required header",
    )
    .with("MissingHeaderName", name)
}

pub(crate) fn incomplete_body(message: impl Into<String>) -> S3Error {
    S3Error::new(Code::IncompleteBody, message)
}

pub(crate) fn body_too_short() -> S3Error {
    incomplete_body(
        "You did not provide the number of bytes specified by the Content-Length HTTP header",
    )
}

pub(crate) fn malformed_chunk(reason: &str) -> S3Error {
    invalid_request(format!("Malformed aws-chunked body: {reason}"))
}

pub(crate) fn sha256_mismatch(client: &str, computed: &str) -> S3Error {
    S3Error::new(
        Code::XAmzContentSHA256Mismatch,
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
    )
    .with("ClientComputedContentSHA256", client)
    .with("S3ComputedContentSHA256", computed)
}

//! Request authentication: AWS SigV4 (header and presigned), verified by the
//! gateway itself, and the request body wrapped so that every byte it yields
//! has been checked (aws-chunked chunk signatures, trailers, payload hash).
//!
//! Public contract used by `server` and `ops`:
//! - [`Verifier::authenticate`] turns request parts + body into an
//!   [`Authenticated`] caller with a verified [`Payload`], or an `S3Error`.
//! - [`Verifier::forget`] drops everything cached for an access key.
//!
//! Layout: `header` and `presigned` parse the two ways a SigV4 signature
//! arrives; `sigv4` and `encoding` rebuild what the client signed;
//! `signing_key_cache` holds derived keys; `sigv2` is the legacy scheme;
//! `payload`, `chunked` and `trailer` verify the body.

mod chunk_budget;
mod chunked;
pub(crate) mod encoding;
mod errors;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod header;
mod payload;
mod post_policy;
mod presigned;
mod signing_key_cache;
mod sigv2;
mod sigv4;
#[cfg(test)]
mod tests;
mod trailer;

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use axum::body::Body;
use http::header::{AUTHORIZATION, CONTENT_LENGTH, DATE, HOST};
use http::request::Parts;
use storage_client::{Credential, Namespace};

use crate::access_control::Identity;

use self::chunked::{ChunkedDecoder, SignatureChain};
pub(crate) use self::errors::anonymous as anonymous_refused;

/// Whether a request is signed in its query string (a presigned URL,
/// SigV4 or SigV2), as [`Verifier::authenticate`] tells.
pub(crate) fn signed_in_query(raw_query: &str) -> bool {
    presigned::is_presigned(raw_query) || sigv2::is_presigned(raw_query)
}
use self::errors::{
    MismatchDetails, access_denied, anonymous, header_malformed, invalid_argument, invalid_request,
    missing_header, query_malformed, signature_mismatch, time_too_skewed, unknown_access_key,
    unsigned_headers,
};
pub use self::payload::Payload;
use self::payload::{BodyLimits, PayloadMode, Vouching};
use self::signing_key_cache::SigningKeyCache;
use self::sigv4::{
    CanonicalInput, ScopeProblem, SigningContext, canonical_request, format_amz_date,
    parse_amz_date, parse_http_time, sign, signatures_match, string_to_sign,
};
use crate::config::Limits;
use crate::error::S3Error;
use crate::host;

/// The clock skew AWS tolerates between a signed request and the server.
const MAX_SKEW: Duration = Duration::from_secs(15 * 60);

const X_AMZ_DATE: &str = "x-amz-date";
const X_AMZ_CONTENT_SHA256: &str = "x-amz-content-sha256";
const X_AMZ_DECODED_CONTENT_LENGTH: &str = "x-amz-decoded-content-length";
const X_AMZ_TRAILER: &str = "x-amz-trailer";

/// Where the verifier finds secrets. The server implements it over
/// `storage_client::Storage` (whose credential cache is keyed by access key);
/// unit tests implement it over a map.
pub trait CredentialSource: Send + Sync {
    fn credential<'a>(
        &'a self,
        access_key: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Credential>, S3Error>> + Send + 'a>>;

    /// Whether the back end's own secret store vouches for `signature` of
    /// `string_to_sign` by `access_key`, a key [`Self::credential`] does
    /// not know (Ozone's users' keys): the namespace of the key's buckets
    /// if it does, `None` where none does.
    fn vouch<'a>(
        &'a self,
        _access_key: &'a str,
        _string_to_sign: &'a str,
        _signature: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Namespace>, S3Error>> + Send + 'a>> {
        Box::pin(async { Ok(None) })
    }
}

/// Verifies signatures; caches signing keys per (access key, secret, date,
/// region, service).
pub struct Verifier {
    source: Arc<dyn CredentialSource>,
    region: String,
    /// Base domain of virtual-host requests; SigV2 signs the bucket named
    /// in the Host header, so it needs to know where the bucket label ends.
    domain: Option<String>,
    /// Whether SigV2 requests are verified, or refused as AWS's newer
    /// regions refuse them.
    sigv2: bool,
    body_limits: BodyLimits,
    keys: SigningKeyCache,
}

/// A caller whose signature checked out.
pub struct Authenticated {
    pub identity: Identity,
    /// Whether the key is a root key (may use the admin API).
    pub is_root: bool,
    pub payload: Payload,
}

/// The signature-bearing parts of a request, whichever way they arrived.
struct SignedRequest<'a> {
    access_key: &'a str,
    scope: String,
    date: &'a str,
    stamp: &'a str,
    signed_headers: &'a [&'a str],
    signature: &'a str,
    /// Set for presigned URLs: the query parameter the signature travels in.
    signature_param: Option<&'a str>,
    payload_hash: &'a str,
}

impl Verifier {
    pub fn new(source: Arc<dyn CredentialSource>, region: impl Into<String>) -> Self {
        Self {
            source,
            region: region.into(),
            domain: None,
            sigv2: true,
            body_limits: BodyLimits::new(&Limits::default()),
            keys: SigningKeyCache::default(),
        }
    }

    /// Sets the virtual-host base domain (`bucket.<domain>`), as the router
    /// uses it; without it SigV2 requests are verified as path style.
    #[must_use]
    pub fn with_domain(mut self, domain: Option<String>) -> Self {
        self.domain = domain;
        self
    }

    /// Sets how bodies are read: idle timeout, signed chunk cap and the
    /// buffer budget all requests share; [`Limits::default`] otherwise.
    #[must_use]
    pub fn with_body_limits(mut self, limits: &Limits) -> Self {
        self.body_limits = BodyLimits::new(limits);
        self
    }

    /// Turns SigV2 (header and presigned) on or off; on by default.
    #[must_use]
    pub fn with_sigv2(mut self, enabled: bool) -> Self {
        self.sigv2 = enabled;
        self
    }

    pub async fn authenticate(&self, parts: &Parts, body: Body) -> Result<Authenticated, S3Error> {
        self.authenticate_at(parts, body, SystemTime::now()).await
    }

    /// [`Self::authenticate`] with the server's clock given, so tests can
    /// replay requests signed at a fixed time.
    pub async fn authenticate_at(
        &self,
        parts: &Parts,
        body: Body,
        now: SystemTime,
    ) -> Result<Authenticated, S3Error> {
        let raw_query = parts.uri.query().unwrap_or("");
        let presigned = presigned::is_presigned(raw_query);
        let sigv2_query = sigv2::is_presigned(raw_query);
        // An empty Authorization header carries no credentials: S3 answers it as
        // an anonymous request (AccessDenied), not as an unknown scheme.
        let authorization = parts
            .headers
            .get(AUTHORIZATION)
            .filter(|value| !value.as_bytes().trim_ascii().is_empty());
        match (authorization, presigned || sigv2_query) {
            (Some(_), true) => Err(invalid_argument(
                "Only one auth mechanism allowed; only the X-Amz-Algorithm query parameter, \
                 Signature query string parameter or the Authorization header should be specified",
                "Authorization",
                "",
            )),
            (None, false) => self.anonymous_auth(parts, body),
            (Some(value), false) => {
                let value = value
                    .to_str()
                    .map_err(|_| header_malformed("it is not ASCII."))?;
                if value.starts_with("AWS ") {
                    self.check_sigv2_enabled()?;
                    self.sigv2_header_auth(parts, value, body, now).await
                } else if value.starts_with("AWS4-HMAC-SHA256") {
                    self.header_auth(parts, value, body, now).await
                } else {
                    Err(invalid_argument(
                        "Unsupported Authorization Type",
                        "Authorization",
                        value.split(' ').next().unwrap_or_default(),
                    ))
                }
            }
            (None, true) if presigned => self.presigned_auth(parts, raw_query, body, now).await,
            (None, true) => {
                self.check_sigv2_enabled()?;
                self.sigv2_presigned_auth(parts, raw_query, body, now).await
            }
        }
    }

    /// A request without a signature: the anonymous identity, which may do
    /// only what an ACL or policy grants everyone (see [`crate::access_control`]).
    /// A stated payload hash is still checked; a chunked body needs a
    /// signature to be read and is refused.
    fn anonymous_auth(&self, parts: &Parts, body: Body) -> Result<Authenticated, S3Error> {
        let expected = match header_text(parts, X_AMZ_CONTENT_SHA256)? {
            None => None,
            Some(stated) => match PayloadMode::parse(stated)? {
                PayloadMode::Unsigned => None,
                PayloadMode::Sha256(hash) => Some(hash),
                PayloadMode::Chunked { .. } => return Err(anonymous()),
            },
        };
        let content_length = length_header(parts, CONTENT_LENGTH.as_str())?;
        Ok(Authenticated {
            identity: crate::access_control::anonymous(),
            is_root: false,
            payload: Payload::plain(body, content_length, expected, &self.body_limits),
        })
    }

    fn check_sigv2_enabled(&self) -> Result<(), S3Error> {
        if self.sigv2 {
            Ok(())
        } else {
            Err(invalid_request(
                "The authorization mechanism you have provided is not supported. Please use AWS4-HMAC-SHA256.",
            ))
        }
    }

    /// Drops every signing key cached for `access_key`; call it when the key
    /// is deleted or its secret changes.
    pub fn forget(&self, access_key: &str) {
        self.keys.forget(access_key);
    }

    async fn header_auth(
        &self,
        parts: &Parts,
        value: &str,
        body: Body,
        now: SystemTime,
    ) -> Result<Authenticated, S3Error> {
        let authorization = header::parse(value)?;
        let credential = &authorization.credential;
        let stamp = request_stamp(parts)?;
        if let Some(problem) = credential.problem(&self.region, &stamp) {
            let error = header_malformed(&problem.reason());
            return Err(with_region(error, &problem));
        }
        check_skew(&stamp, parse_amz_date(&stamp), now)?;
        let payload_hash = header_text(parts, X_AMZ_CONTENT_SHA256)?.ok_or_else(|| {
            invalid_request("Missing required header for this request: x-amz-content-sha256")
        })?;
        let mode = PayloadMode::parse(payload_hash)?;
        let request = SignedRequest {
            access_key: credential.access_key,
            scope: credential.scope(),
            date: credential.date,
            stamp: &stamp,
            signed_headers: &authorization.signed_headers,
            signature: authorization.signature,
            signature_param: None,
            payload_hash,
        };
        self.verify(parts, &request, mode, body).await
    }

    async fn presigned_auth(
        &self,
        parts: &Parts,
        raw_query: &str,
        body: Body,
        now: SystemTime,
    ) -> Result<Authenticated, S3Error> {
        let query = presigned::parse(raw_query)?;
        let credential = sigv4::Credential::parse(&query.credential).ok_or_else(|| {
            query_malformed(format!(
                "Error parsing the X-Amz-Credential parameter; {}",
                header::CREDENTIAL_FORMAT
            ))
        })?;
        if let Some(problem) = credential.problem(&self.region, &query.stamp) {
            let error = query_malformed(format!(
                "Error parsing the X-Amz-Credential parameter; {}",
                problem.reason()
            ));
            return Err(with_region(error, &problem));
        }
        query.check_validity(now, MAX_SKEW)?;
        let payload_hash = header_text(parts, X_AMZ_CONTENT_SHA256)?.unwrap_or("UNSIGNED-PAYLOAD");
        let mode = PayloadMode::parse(payload_hash)?;
        let signed_headers = query.signed_header_names()?;
        let request = SignedRequest {
            access_key: credential.access_key,
            scope: credential.scope(),
            date: credential.date,
            stamp: &query.stamp,
            signed_headers: &signed_headers,
            signature: &query.signature,
            signature_param: Some(presigned::SIGNATURE_PARAM),
            payload_hash,
        };
        self.verify(parts, &request, mode, body).await
    }

    /// The checks common to both ways of signing: signed-header coverage,
    /// the key's existence, the signature itself; then the body wrapper.
    async fn verify(
        &self,
        parts: &Parts,
        request: &SignedRequest<'_>,
        mode: PayloadMode,
        body: Body,
    ) -> Result<Authenticated, S3Error> {
        check_signed_header_coverage(parts, request.signed_headers)?;
        let Some(stored) = self.source.credential(request.access_key).await? else {
            return self.verify_vouched(parts, request, mode, body).await;
        };
        let key = self
            .keys
            .get(
                &stored.access_key,
                &stored.secret_key,
                request.date,
                &self.region,
                sigv4::SERVICE,
            )
            .ok_or_else(|| header_malformed(header::CREDENTIAL_FORMAT))?;
        let canonical = signed_canonical_request(parts, request);
        let string_to_sign = string_to_sign(request.stamp, &request.scope, &canonical);
        let computed = sign(&key, &string_to_sign);
        if !signatures_match(&computed, request.signature) {
            return Err(signature_mismatch(Some(MismatchDetails {
                access_key: request.access_key.to_owned(),
                string_to_sign,
                signature_provided: request.signature.to_owned(),
                canonical_request: Some(canonical),
            })));
        }
        let payload = self.payload(parts, request, mode, body, key, None)?;
        Ok(Authenticated {
            identity: Identity::new(stored.access_key),
            is_root: stored.is_root,
            payload,
        })
    }

    /// A key the gateway holds no credential for, whose signature the
    /// back end's own secret store may vouch for (Ozone's users' keys,
    /// `ozone_user_secrets`): the string to sign is rebuilt here from the
    /// request as for any key, so what is vouched for is what the router
    /// acts on. Without the secret, aws-chunked chunk signatures are
    /// vouched for the same way, each before its chunk is released
    /// ([`Vouching`]).
    async fn verify_vouched(
        &self,
        parts: &Parts,
        request: &SignedRequest<'_>,
        mode: PayloadMode,
        body: Body,
    ) -> Result<Authenticated, S3Error> {
        let canonical = signed_canonical_request(parts, request);
        let string_to_sign = string_to_sign(request.stamp, &request.scope, &canonical);
        let Some(namespace) = self
            .source
            .vouch(request.access_key, &string_to_sign, request.signature)
            .await?
        else {
            return Err(unknown_access_key(request.access_key));
        };
        // Chunk signatures are vouched for like the seed: the key is not
        // here, so the context carries none.
        let vouching = Vouching {
            source: Arc::clone(&self.source),
            access_key: request.access_key.to_owned(),
        };
        let payload = self.payload(parts, request, mode, body, [0; 32], Some(vouching))?;
        Ok(Authenticated {
            identity: Identity::in_namespace(request.access_key, namespace),
            is_root: false,
            payload,
        })
    }

    /// The verified body of a request whose seed signature checked out,
    /// its chunks signed under `key` (or vouched for by `vouching`).
    fn payload(
        &self,
        parts: &Parts,
        request: &SignedRequest<'_>,
        mode: PayloadMode,
        body: Body,
        key: [u8; 32],
        vouching: Option<Vouching>,
    ) -> Result<Payload, S3Error> {
        let context = SigningContext {
            key,
            stamp: request.stamp.to_owned(),
            scope: request.scope.clone(),
        };
        build_payload(
            parts,
            mode,
            body,
            context,
            request.signature,
            &self.body_limits,
            vouching,
        )
    }

    async fn sigv2_header_auth(
        &self,
        parts: &Parts,
        value: &str,
        body: Body,
        now: SystemTime,
    ) -> Result<Authenticated, S3Error> {
        let (access_key, signature) = sigv2::parse_header(value)?;
        let invalid =
            || access_denied("AWS authentication requires a valid Date or x-amz-date header");
        // With x-amz-date, the Date line is empty and x-amz-date is signed
        // among the x-amz-* headers.
        let (time_text, date_line) = match (
            header_text(parts, X_AMZ_DATE)?,
            header_text(parts, DATE.as_str())?,
        ) {
            (Some(amz_date), _) => (amz_date, ""),
            (None, Some(date)) => (date, date),
            (None, None) => return Err(invalid()),
        };
        // A date before the epoch is no valid date to S3 (AccessDenied, not
        // RequestTimeTooSkewed as for any other date out of the window).
        let signed_at = parse_http_time(time_text)
            .or_else(|| parse_amz_date(time_text))
            .filter(|at| *at >= SystemTime::UNIX_EPOCH)
            .ok_or_else(invalid)?;
        check_skew(time_text, Some(signed_at), now)?;
        self.verify_sigv2(parts, access_key, signature, date_line, body)
            .await
    }

    async fn sigv2_presigned_auth(
        &self,
        parts: &Parts,
        raw_query: &str,
        body: Body,
        now: SystemTime,
    ) -> Result<Authenticated, S3Error> {
        let query = sigv2::parse_query(raw_query)?;
        // An Expires too large to represent is in the far future.
        let expires_at = SystemTime::UNIX_EPOCH.checked_add(Duration::from_secs(query.expires_at));
        if expires_at.is_some_and(|expires_at| now > expires_at) {
            return Err(sigv2::expired());
        }
        // V2 URLs carry no signing time, so the week SigV4 allows is counted
        // from now: a URL made to last longer is refused from the start.
        let latest = now + Duration::from_secs(presigned::MAX_EXPIRES_SECS);
        if expires_at.is_none_or(|expires_at| expires_at > latest) {
            return Err(presigned::lifetime_out_of_range(
                "Expires must be less than a week (in seconds) from now, that is 604800",
            ));
        }
        self.verify_sigv2(
            parts,
            &query.access_key,
            &query.signature,
            &query.expires,
            body,
        )
        .await
    }

    async fn verify_sigv2(
        &self,
        parts: &Parts,
        access_key: &str,
        signature: &str,
        date_line: &str,
        body: Body,
    ) -> Result<Authenticated, S3Error> {
        let stored = self
            .source
            .credential(access_key)
            .await?
            .ok_or_else(|| unknown_access_key(access_key))?;
        // The router derives the bucket the same way, so what V2 signs is
        // the bucket the request acts on.
        let bucket = host::request_bucket(&parts.uri, &parts.headers, self.domain.as_deref())?;
        let bucket = bucket.as_deref();
        let string_to_sign = sigv2::string_to_sign(parts, date_line, bucket);
        let computed = sigv2::sign(&stored.secret_key, &string_to_sign);
        let matches_bucket_root = || {
            sigv2::bucket_root_string_to_sign(parts, date_line, bucket).is_some_and(|text| {
                signatures_match(&sigv2::sign(&stored.secret_key, &text), signature)
            })
        };
        if !signatures_match(&computed, signature) && !matches_bucket_root() {
            return Err(signature_mismatch(Some(MismatchDetails {
                access_key: access_key.to_owned(),
                string_to_sign,
                signature_provided: signature.to_owned(),
                canonical_request: None,
            })));
        }
        let content_length = length_header(parts, CONTENT_LENGTH.as_str())?;
        let claimed_hash = match header_text(parts, X_AMZ_CONTENT_SHA256)?
            .map(PayloadMode::parse)
            .transpose()?
        {
            Some(PayloadMode::Sha256(hash)) => Some(hash),
            Some(PayloadMode::Chunked { .. }) => {
                return Err(invalid_request(
                    "aws-chunked bodies require AWS Signature Version 4",
                ));
            }
            Some(PayloadMode::Unsigned) | None => None,
        };
        Ok(Authenticated {
            identity: Identity::new(stored.access_key),
            is_root: stored.is_root,
            payload: Payload::plain(body, content_length, claimed_hash, &self.body_limits),
        })
    }
}

/// Refuses a request signed more than [`MAX_SKEW`] away from `now`.
fn check_skew(stamp: &str, signed_at: Option<SystemTime>, now: SystemTime) -> Result<(), S3Error> {
    let signed_at = signed_at.unwrap_or(SystemTime::UNIX_EPOCH);
    let skew = now
        .duration_since(signed_at)
        .unwrap_or_else(|early| early.duration());
    if skew > MAX_SKEW {
        return Err(time_too_skewed(stamp, now));
    }
    Ok(())
}

/// The request time in ISO 8601 basic form: `x-amz-date`, or failing that
/// the HTTP `Date` header converted.
fn request_stamp(parts: &Parts) -> Result<String, S3Error> {
    let invalid = || access_denied("AWS authentication requires a valid Date or x-amz-date header");
    if let Some(stamp) = header_text(parts, X_AMZ_DATE)? {
        return parse_amz_date(stamp)
            .map(|_| stamp.to_owned())
            .ok_or_else(invalid);
    }
    let date = header_text(parts, DATE.as_str())?.ok_or_else(invalid)?;
    let at = parse_http_time(date).ok_or_else(invalid)?;
    Ok(format_amz_date(at))
}

fn header_text<'a>(parts: &'a Parts, name: &str) -> Result<Option<&'a str>, S3Error> {
    parts
        .headers
        .get(name)
        .map(|value| {
            value
                .to_str()
                .map_err(|_| invalid_request(format!("The {name} header is not ASCII")))
        })
        .transpose()
}

fn with_region(error: S3Error, problem: &ScopeProblem) -> S3Error {
    match problem {
        ScopeProblem::Region { expected, .. } => error.with("Region", expected.clone()),
        _ => error,
    }
}

/// `host` must be signed, and so must every `x-amz-*` header the request
/// carries: an unsigned one could be added by anyone holding a presigned
/// URL (an `x-amz-copy-source` would turn a PUT into a copy).
fn check_signed_header_coverage(parts: &Parts, signed: &[&str]) -> Result<(), S3Error> {
    let mut unsigned: Vec<&str> = parts
        .headers
        .keys()
        .map(|name| name.as_str())
        .filter(|name| name.starts_with("x-amz-") && !signed.contains(name))
        .collect();
    if !signed.contains(&HOST.as_str()) {
        unsigned.insert(0, HOST.as_str());
    }
    if unsigned.is_empty() {
        Ok(())
    } else {
        Err(unsigned_headers().with("HeadersNotSigned", unsigned.join(", ")))
    }
}

/// What a SigV4 signature covers of `parts`, as [`SignedRequest`] says
/// it was signed.
fn signed_canonical_request(parts: &Parts, request: &SignedRequest<'_>) -> String {
    canonical_request(&CanonicalInput {
        method: parts.method.as_str(),
        raw_path: parts.uri.path(),
        raw_query: parts.uri.query().unwrap_or(""),
        skip_param: request.signature_param,
        headers: &parts.headers,
        authority: parts.uri.authority().map(|authority| authority.as_str()),
        signed_headers: request.signed_headers,
        payload_hash: request.payload_hash,
    })
}

fn build_payload(
    parts: &Parts,
    mode: PayloadMode,
    body: Body,
    context: SigningContext,
    seed_signature: &str,
    limits: &BodyLimits,
    vouching: Option<Vouching>,
) -> Result<Payload, S3Error> {
    let content_length = length_header(parts, CONTENT_LENGTH.as_str())?;
    Ok(match mode {
        PayloadMode::Unsigned => Payload::plain(body, content_length, None, limits),
        PayloadMode::Sha256(hash) => Payload::plain(body, content_length, Some(hash), limits),
        PayloadMode::Chunked { signed, trailer } => {
            let decoded_length = length_header(parts, X_AMZ_DECODED_CONTENT_LENGTH)?
                .ok_or_else(|| missing_header(X_AMZ_DECODED_CONTENT_LENGTH))?;
            let declared_trailers = match (trailer, header_text(parts, X_AMZ_TRAILER)?) {
                (true, Some(names)) => trailer::declared_names(names),
                _ => Vec::new(),
            };
            let chain = signed.then(|| SignatureChain {
                context,
                previous: seed_signature.to_owned(),
                vouched: vouching.is_some().then(Vec::new),
            });
            let decoder = ChunkedDecoder::new(
                chain,
                declared_trailers,
                signed && trailer,
                decoded_length,
                limits.max_signed_chunk,
            );
            // Only a signed chain has anything to vouch for.
            Payload::chunked(
                body,
                decoder,
                decoded_length,
                limits,
                vouching.filter(|_| signed),
            )
        }
    })
}

fn length_header(parts: &Parts, name: &str) -> Result<Option<u64>, S3Error> {
    header_text(parts, name)?
        .map(|text| {
            text.parse::<u64>().map_err(|_| {
                invalid_argument(format!("The {name} header is not a number"), name, text)
            })
        })
        .transpose()
}

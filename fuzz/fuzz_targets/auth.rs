//! Request authentication end to end: SigV4 header and presigned (query),
//! SigV2 header and presigned, with a known key so a seed request signs
//! correctly and the fuzzer mutates from there; an accepted request's body
//! is read through (payload hash, aws-chunked, trailers).
#![no_main]

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, LazyLock};
use std::time::{Duration, UNIX_EPOCH};

use axum::body::Body;
use libfuzzer_sys::fuzz_target;
use s3_gateway::access_control::is_anonymous;
use s3_gateway::auth::{CredentialSource, Verifier};
use s3_gateway::error::S3Error;
use s3_gateway_fuzz::parse_request;
use storage_client::Credential;

/// The key of the AWS documentation's examples, which the seeds are signed with.
const ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
/// The seeds are signed at 2013-05-24T00:00:00Z.
const NOW: Duration = Duration::from_secs(1_369_353_600);

struct OneKey;

impl CredentialSource for OneKey {
    fn credential<'a>(
        &'a self,
        access_key: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Credential>, S3Error>> + Send + 'a>> {
        Box::pin(async move {
            Ok((access_key == ACCESS_KEY).then(|| Credential {
                name: "fuzz".to_owned(),
                access_key: ACCESS_KEY.to_owned(),
                secret_key: SECRET.to_owned(),
                is_root: false,
            }))
        })
    }
}

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a current-thread runtime")
});
static PATH_STYLE: LazyLock<Verifier> =
    LazyLock::new(|| Verifier::new(Arc::new(OneKey), "us-east-1"));
static VIRTUAL_HOST: LazyLock<Verifier> = LazyLock::new(|| {
    Verifier::new(Arc::new(OneKey), "us-east-1").with_domain(Some("s3.amazonaws.com".to_owned()))
});

fuzz_target!(|input: &[u8]| {
    let Some((parts, body)) = parse_request(input) else {
        return;
    };
    let now = UNIX_EPOCH + NOW;
    RUNTIME.block_on(async {
        for verifier in [&*PATH_STYLE, &*VIRTUAL_HOST] {
            let body = Body::from(body.to_vec());
            if let Ok(mut authenticated) = verifier.authenticate_at(&parts, body, now).await {
                while let Some(piece) = authenticated.payload.next_chunk().await {
                    if piece.is_err() {
                        break;
                    }
                }
            }
        }
    });
    // SigV4 bounds a signature's life (15 minutes of skew, presigned at
    // most 7 days): eight days on, nothing signed with it is accepted as
    // its signer (a request without a signature is anonymous, and may be).
    let sigv4 = parts
        .headers
        .get(http::header::AUTHORIZATION)
        .is_some_and(|v| v.as_bytes().starts_with(b"AWS4-"))
        || parts.uri.query().unwrap_or("").contains("X-Amz-Algorithm");
    if sigv4 {
        let late = now + Duration::from_secs(8 * 24 * 3600);
        let accepted = RUNTIME.block_on(PATH_STYLE.authenticate_at(&parts, Body::empty(), late));
        assert!(
            !accepted.is_ok_and(|signed| !is_anonymous(&signed.identity)),
            "a SigV4 request was accepted 8 days after it was signed"
        );
    }
});

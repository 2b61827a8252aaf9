//! The verifier end to end: the requests of the AWS SigV4 documentation,
//! requests signed by `aws-sigv4` (the SDKs' signer) as an oracle, and the
//! refusals AWS gives.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SignatureLocation,
    SigningSettings, UriPathNormalizationMode, sign,
};
use aws_smithy_runtime_api::client::identity::Identity as SdkIdentity;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::chunked::Encoder;
use super::encoding::uri_encode;
use super::sigv4::{SigningContext, hmac_sha256, parse_amz_date};
use super::*;

const ACCESS_KEY: &str = "AKIAIOSFODNN7EXAMPLE";
const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
const EMPTY_SHA256: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

/// Credentials in a map, changeable while a verifier uses them.
#[derive(Default)]
struct MapSource(Mutex<HashMap<String, Credential>>);

impl MapSource {
    fn with(access_key: &str, secret: &str) -> Arc<Self> {
        let source = Self::default();
        source.set(access_key, secret);
        Arc::new(source)
    }

    fn set(&self, access_key: &str, secret: &str) {
        let credential = Credential {
            name: "test".to_owned(),
            access_key: access_key.to_owned(),
            secret_key: secret.to_owned(),
            is_root: false,
        };
        let mut map = self.0.lock().unwrap();
        map.insert(access_key.to_owned(), credential);
    }
}

impl CredentialSource for MapSource {
    fn credential<'a>(
        &'a self,
        access_key: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Credential>, S3Error>> + Send + 'a>> {
        let found = self.0.lock().unwrap().get(access_key).cloned();
        Box::pin(async move { Ok(found) })
    }
}

/// Secrets the gateway never sees, held by a store that vouches for
/// signatures as Ozone's OM does: the signing key from the string to
/// sign's third line (the scope) and the secret, compared by HMAC.
struct VouchingSource(HashMap<String, String>);

impl CredentialSource for VouchingSource {
    fn credential<'a>(
        &'a self,
        _access_key: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Credential>, S3Error>> + Send + 'a>> {
        Box::pin(async { Ok(None) })
    }

    fn vouch<'a>(
        &'a self,
        access_key: &'a str,
        string_to_sign: &'a str,
        signature: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Option<Namespace>, S3Error>> + Send + 'a>> {
        let vouched = self.0.get(access_key).is_some_and(|secret| {
            let scope: Vec<&str> = string_to_sign
                .split('\n')
                .nth(2)
                .unwrap()
                .split('/')
                .collect();
            let mut key = hmac_sha256(format!("AWS4{secret}").as_bytes(), scope[0].as_bytes());
            for part in &scope[1..4] {
                key = hmac_sha256(&key, part.as_bytes());
            }
            super::sigv4::sign(&key, string_to_sign) == signature
        });
        // A tenant's access id (`tenant$user`) is vouched in its tenant's volume.
        let namespace = match access_key.split_once('$') {
            Some((tenant, _)) => Namespace::Tenant(tenant.into()),
            None => Namespace::Shared,
        };
        Box::pin(async move { Ok(vouched.then_some(namespace)) })
    }
}

fn example_time() -> SystemTime {
    parse_amz_date("20130524T000000Z").unwrap()
}

fn example_verifier() -> Verifier {
    Verifier::new(MapSource::with(ACCESS_KEY, SECRET), "us-east-1")
}

fn parts(method: &str, target: &str, headers: &[(&str, &str)]) -> Parts {
    let mut builder = http::Request::builder().method(method).uri(target);
    for (name, value) in headers {
        builder = builder.header(*name, *value);
    }
    builder.body(()).unwrap().into_parts().0
}

fn authorization(signed_headers: &str, signature: &str) -> String {
    format!(
        "AWS4-HMAC-SHA256 Credential={ACCESS_KEY}/20130524/us-east-1/s3/aws4_request,\
         SignedHeaders={signed_headers},Signature={signature}"
    )
}

async fn read_all(payload: &mut Payload) -> Result<Vec<u8>, S3Error> {
    let mut data = Vec::new();
    while let Some(piece) = payload.next_chunk().await {
        data.extend_from_slice(&piece?);
    }
    Ok(data)
}

async fn check(
    verifier: &Verifier,
    parts: &Parts,
    body: &[u8],
    now: SystemTime,
) -> Result<Vec<u8>, S3Error> {
    let mut authenticated = verifier
        .authenticate_at(parts, Body::from(body.to_vec()), now)
        .await?;
    // An unsigned request is let through as anonymous for the access
    // decision to refuse; for these tests no signature verified.
    if crate::access_control::is_anonymous(&authenticated.identity) {
        return Err(super::anonymous_refused());
    }
    read_all(&mut authenticated.payload).await
}

#[tokio::test]
async fn unsigned_requests_are_anonymous_and_their_stated_hash_still_checked() {
    let verifier = example_verifier();
    let body = b"open to all";
    let plain = parts("PUT", "/bucket/key", &[("host", "h")]);
    let mut anonymous = verifier
        .authenticate_at(&plain, Body::from(body.to_vec()), example_time())
        .await
        .unwrap();
    assert!(crate::access_control::is_anonymous(&anonymous.identity));
    assert!(!anonymous.is_root);
    assert_eq!(read_all(&mut anonymous.payload).await.unwrap(), body);

    let wrong_hash = parts(
        "PUT",
        "/bucket/key",
        &[("host", "h"), ("x-amz-content-sha256", EMPTY_SHA256)],
    );
    let mut stated = verifier
        .authenticate_at(&wrong_hash, Body::from(body.to_vec()), example_time())
        .await
        .unwrap();
    assert!(read_all(&mut stated.payload).await.is_err());

    let chunked = parts(
        "PUT",
        "/bucket/key",
        &[
            ("host", "h"),
            ("x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"),
        ],
    );
    let refused = verifier
        .authenticate_at(&chunked, Body::empty(), example_time())
        .await
        .err()
        .unwrap();
    assert_eq!(refused.code, "AccessDenied");
}

// The examples of "Signature Calculations for the Authorization Header:
// Transferring Payload in a Single Chunk" and "Query String Authentication".

#[tokio::test]
async fn aws_example_get_object() {
    let auth = authorization(
        "host;range;x-amz-content-sha256;x-amz-date",
        "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
    );
    let request = parts(
        "GET",
        "/test.txt",
        &[
            ("host", "examplebucket.s3.amazonaws.com"),
            ("range", "bytes=0-9"),
            ("x-amz-content-sha256", EMPTY_SHA256),
            ("x-amz-date", "20130524T000000Z"),
            ("authorization", &auth),
        ],
    );
    let verifier = example_verifier();
    let authenticated = verifier
        .authenticate_at(&request, Body::empty(), example_time())
        .await
        .unwrap();
    assert_eq!(authenticated.identity, Identity::new(ACCESS_KEY));
    assert!(!authenticated.is_root);

    // The same request with the range changed by one byte.
    let tampered = parts(
        "GET",
        "/test.txt",
        &[
            ("host", "examplebucket.s3.amazonaws.com"),
            ("range", "bytes=0-8"),
            ("x-amz-content-sha256", EMPTY_SHA256),
            ("x-amz-date", "20130524T000000Z"),
            ("authorization", &auth),
        ],
    );
    let error = check(&verifier, &tampered, b"", example_time())
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.status.as_u16()),
        ("SignatureDoesNotMatch", 403)
    );
    let canonical = error
        .extra
        .iter()
        .find(|(name, _)| *name == "CanonicalRequest")
        .unwrap();
    assert!(canonical.1.contains("range:bytes=0-8"));
}

#[tokio::test]
async fn aws_example_put_object_with_date_and_dollar_in_the_path() {
    let auth = authorization(
        "date;host;x-amz-content-sha256;x-amz-date;x-amz-storage-class",
        "98ad721746da40c64f1a55b78f14c238d841ea1380cd77a1b5971af0ece108bd",
    );
    let request = parts(
        "PUT",
        "/test$file.text",
        &[
            ("host", "examplebucket.s3.amazonaws.com"),
            ("date", "Fri, 24 May 2013 00:00:00 GMT"),
            ("x-amz-date", "20130524T000000Z"),
            ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
            (
                "x-amz-content-sha256",
                "44ce7dd67c959e0d3524ffac1771dfbba87d2b6b4b4e99e42034a8b803f8b072",
            ),
            ("content-length", "21"),
            ("authorization", &auth),
        ],
    );
    let verifier = example_verifier();
    let body = check(
        &verifier,
        &request,
        b"Welcome to Amazon S3.",
        example_time(),
    )
    .await;
    assert_eq!(body.unwrap(), b"Welcome to Amazon S3.");

    // Same signature, different body: the hash check fails at the end.
    let error = check(
        &verifier,
        &request,
        b"Welcome to Amazon S4.",
        example_time(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code, "XAmzContentSHA256Mismatch");
}

#[tokio::test]
async fn aws_example_get_bucket_lifecycle() {
    let auth = authorization(
        "host;x-amz-content-sha256;x-amz-date",
        "fea454ca298b7da1c68078a5d1bdbfbbe0d65c699e0f91ac7a200a0136783543",
    );
    let request = parts(
        "GET",
        "/?lifecycle",
        &[
            ("host", "examplebucket.s3.amazonaws.com"),
            ("x-amz-content-sha256", EMPTY_SHA256),
            ("x-amz-date", "20130524T000000Z"),
            ("authorization", &auth),
        ],
    );
    assert!(
        check(&example_verifier(), &request, b"", example_time())
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn aws_example_list_objects() {
    let auth = authorization(
        "host;x-amz-content-sha256;x-amz-date",
        "34b48302e7b5fa45bde8084f4b7868a86f0a534bc59db6670ed5711ef69dc6f7",
    );
    let headers = [
        ("host", "examplebucket.s3.amazonaws.com"),
        ("x-amz-content-sha256", EMPTY_SHA256),
        ("x-amz-date", "20130524T000000Z"),
        ("authorization", auth.as_str()),
    ];
    let verifier = example_verifier();
    // Parameter order on the wire does not matter; the canonical form sorts.
    for target in ["/?max-keys=2&prefix=J", "/?prefix=J&max-keys=2"] {
        assert!(
            check(
                &verifier,
                &parts("GET", target, &headers),
                b"",
                example_time()
            )
            .await
            .is_ok()
        );
    }
    let error = check(
        &verifier,
        &parts("GET", "/?max-keys=3&prefix=J", &headers),
        b"",
        example_time(),
    )
    .await
    .unwrap_err();
    assert_eq!(error.code, "SignatureDoesNotMatch");
}

const PRESIGNED_EXAMPLE: &str = "/test.txt?X-Amz-Algorithm=AWS4-HMAC-SHA256\
    &X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request\
    &X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host\
    &X-Amz-Signature=aeeed9bbccd4d02ee5c0109b86d86835f995330da4c265957d157751f604d404";

#[tokio::test]
async fn aws_example_presigned_get() {
    let verifier = example_verifier();
    let host = [("host", "examplebucket.s3.amazonaws.com")];
    let request = parts("GET", PRESIGNED_EXAMPLE, &host);
    assert!(
        check(&verifier, &request, b"", example_time())
            .await
            .is_ok()
    );
    let almost_expired = example_time() + Duration::from_secs(86_400);
    assert!(
        check(&verifier, &request, b"", almost_expired)
            .await
            .is_ok()
    );

    let expired = check(
        &verifier,
        &request,
        b"",
        almost_expired + Duration::from_secs(1),
    )
    .await
    .unwrap_err();
    assert_eq!(
        (
            expired.code,
            expired.status.as_u16(),
            expired.message.as_str()
        ),
        ("AccessDenied", 403, "Request has expired")
    );

    // Anyone holding the URL must not be able to add an x-amz-* header.
    let with_copy = parts(
        "GET",
        PRESIGNED_EXAMPLE,
        &[host[0], ("x-amz-copy-source", "other/key")],
    );
    let error = check(&verifier, &with_copy, b"", example_time())
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.message.as_str()),
        (
            "AccessDenied",
            "There were headers present in the request which were not signed"
        )
    );

    let other_path = parts(
        "GET",
        &PRESIGNED_EXAMPLE.replace("test.txt", "test.txu"),
        &host,
    );
    let error = check(&verifier, &other_path, b"", example_time())
        .await
        .unwrap_err();
    assert_eq!(error.code, "SignatureDoesNotMatch");
}

/// The chunked upload of AWS's SigV4 streaming example: the request and
/// its body, two chunks of `a` (64 KiB and 1 KiB) signed with its key.
fn aws_chunked_example() -> (Parts, Vec<u8>) {
    let auth = authorization(
        "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class",
        "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9",
    );
    let request = parts(
        "PUT",
        "/examplebucket/chunkObject.txt",
        &[
            ("host", "s3.amazonaws.com"),
            ("x-amz-date", "20130524T000000Z"),
            ("x-amz-storage-class", "REDUCED_REDUNDANCY"),
            ("x-amz-content-sha256", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"),
            ("content-encoding", "aws-chunked"),
            ("x-amz-decoded-content-length", "66560"),
            ("content-length", "66824"),
            ("authorization", &auth),
        ],
    );
    let encoder = Encoder {
        context: Some(example_context()),
        seed: "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9".to_owned(),
    };
    let wire = encoder.encode(&[&[b'a'; 65_536], &[b'a'; 1024]], &[], false);
    (request, wire)
}

#[tokio::test]
async fn a_key_held_elsewhere_is_vouched_for_there_and_acts_as_itself() {
    let held = HashMap::from([(ACCESS_KEY.to_owned(), SECRET.to_owned())]);
    let verifier = Verifier::new(Arc::new(VouchingSource(held)), "us-east-1");
    let get = |range: &str| {
        let auth = authorization(
            "host;range;x-amz-content-sha256;x-amz-date",
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41",
        );
        parts(
            "GET",
            "/test.txt",
            &[
                ("host", "examplebucket.s3.amazonaws.com"),
                ("range", range),
                ("x-amz-content-sha256", EMPTY_SHA256),
                ("x-amz-date", "20130524T000000Z"),
                ("authorization", &auth),
            ],
        )
    };
    let authenticated = verifier
        .authenticate_at(&get("bytes=0-9"), Body::empty(), example_time())
        .await
        .unwrap();
    assert_eq!(authenticated.identity, Identity::new(ACCESS_KEY));
    assert!(!authenticated.is_root);
    // What is vouched for is the request rebuilt here: one byte changed
    // and the store refuses it.
    let error = check(&verifier, &get("bytes=0-8"), b"", example_time())
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.status.as_u16()),
        ("InvalidAccessKeyId", 403)
    );
    // Each chunk signature (and the final chunk's) is vouched for too,
    // before its chunk is released.
    let (chunked, wire) = aws_chunked_example();
    let data = check(&verifier, &chunked, &wire, example_time())
        .await
        .unwrap();
    assert_eq!(data, vec![b'a'; 66_560]);
    let mut tampered = wire.clone();
    tampered[66_000] = b'b';
    let error = check(&verifier, &chunked, &tampered, example_time())
        .await
        .unwrap_err();
    assert_eq!(error.code, "SignatureDoesNotMatch");
    // The final chunk's signature is vouched for before the body ends.
    let mut last_changed = wire;
    let at = last_changed.len() - 10;
    last_changed[at] = if last_changed[at] == b'0' { b'1' } else { b'0' };
    let error = check(&verifier, &chunked, &last_changed, example_time())
        .await
        .unwrap_err();
    assert_eq!(error.code, "SignatureDoesNotMatch");
    // A key neither here nor there.
    let other = Verifier::new(Arc::new(VouchingSource(HashMap::new())), "us-east-1");
    let error = check(&other, &get("bytes=0-9"), b"", example_time())
        .await
        .unwrap_err();
    assert_eq!(error.code, "InvalidAccessKeyId");
}

#[tokio::test]
async fn aws_example_chunked_upload() {
    let (request, wire) = aws_chunked_example();
    let verifier = example_verifier();
    let mut authenticated = verifier
        .authenticate_at(&request, Body::from(wire.clone()), example_time())
        .await
        .unwrap();
    assert_eq!(authenticated.payload.declared_length(), Some(66_560));
    let data = read_all(&mut authenticated.payload).await.unwrap();
    assert_eq!(data, vec![b'a'; 66_560]);

    let mut tampered = wire;
    tampered[66_000] = b'b';
    let error = check(&verifier, &request, &tampered, example_time())
        .await
        .unwrap_err();
    assert_eq!(error.code, "SignatureDoesNotMatch");
}

fn example_context() -> SigningContext {
    let key = SigningKeyCache::default()
        .get(ACCESS_KEY, SECRET, "20130524", "us-east-1", "s3")
        .unwrap();
    SigningContext {
        key,
        stamp: "20130524T000000Z".to_owned(),
        scope: "20130524/us-east-1/s3/aws4_request".to_owned(),
    }
}

// Requests signed by aws-sigv4, the signer of the Rust SDK.

const ORACLE_KEY: &str = "AK+odd/key";
const ORACLE_SECRET: &str = "s3cr3t/with+odd=chars";

fn oracle_time() -> SystemTime {
    parse_amz_date("20250101T120000Z").unwrap()
}

fn oracle_verifier() -> Verifier {
    Verifier::new(MapSource::with(ORACLE_KEY, ORACLE_SECRET), "us-east-1")
}

struct Unsigned {
    method: &'static str,
    /// Path and query as the client puts them on the wire.
    target: String,
    headers: Vec<(String, String)>,
    payload_hash: String,
}

/// Signs `request` for host `bucket.example.com:9878` the way an SDK does,
/// and returns the request as the server sees it (origin-form target plus
/// a Host header).
fn sign_with_sdk(request: &Unsigned, presign: Option<Duration>) -> Parts {
    let identity: SdkIdentity =
        Credentials::new(ORACLE_KEY, ORACLE_SECRET, None, None, "test").into();
    let mut settings = SigningSettings::default();
    settings.percent_encoding_mode = PercentEncodingMode::Single;
    settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    if let Some(expires) = presign {
        settings.signature_location = SignatureLocation::QueryParams;
        settings.expires_in = Some(expires);
    }
    let params = aws_sigv4::sign::v4::SigningParams::builder()
        .identity(&identity)
        .region("us-east-1")
        .name("s3")
        .time(oracle_time())
        .settings(settings)
        .build()
        .unwrap()
        .into();
    let url = format!("http://bucket.example.com:9878{}", request.target);
    let body = if presign.is_some() {
        SignableBody::UnsignedPayload
    } else {
        SignableBody::Precomputed(request.payload_hash.clone())
    };
    let signable = SignableRequest::new(
        request.method,
        url.as_str(),
        request
            .headers
            .iter()
            .map(|(name, value)| (name.as_str(), value.as_str())),
        body,
    )
    .unwrap();
    let (instructions, _) = sign(signable, &params).unwrap().into_parts();
    let mut builder = http::Request::builder().method(request.method).uri(&url);
    for (name, value) in &request.headers {
        builder = builder.header(name, value);
    }
    let mut signed = builder.body(()).unwrap();
    instructions.apply_to_request_http1x(&mut signed);
    let (mut parts, ()) = signed.into_parts();
    let origin_form = parts
        .uri
        .path_and_query()
        .map(|target| target.as_str().to_owned())
        .unwrap();
    parts.uri = origin_form.parse().unwrap();
    parts
        .headers
        .insert(HOST, "bucket.example.com:9878".parse().unwrap());
    parts
}

/// Characters keys and query values are drawn from: the ones clients
/// encode differently, unicode, and plain ones.
const ALPHABET: &[&str] = &[
    "a", "Z", "0", "9", "-", "_", ".", "~", " ", "+", "%", "=", "&", "?", "#", "/", "$", "@", ":",
    ",", ";", "!", "*", "'", "(", ")", "é", "日本", "😀", "\u{7f}",
];

fn random_text(rng: &mut StdRng, max: usize) -> String {
    let len = rng.random_range(1..=max);
    (0..len)
        .map(|_| ALPHABET[rng.random_range(0..ALPHABET.len())])
        .collect()
}

fn random_request(rng: &mut StdRng) -> Unsigned {
    let key = random_text(rng, 12);
    let target_path = format!("/bucket/{}", uri_encode(key.as_bytes(), true));
    let mut query = Vec::new();
    for _ in 0..rng.random_range(0..4) {
        let name = if rng.random_bool(0.3) {
            "prefix".to_owned()
        } else {
            random_text(rng, 4)
        };
        let value = if rng.random_bool(0.2) {
            String::new()
        } else {
            random_text(rng, 6)
        };
        query.push(format!(
            "{}={}",
            uri_encode(name.as_bytes(), false),
            uri_encode(value.as_bytes(), false)
        ));
    }
    if rng.random_bool(0.3) {
        query.push("uploads".to_owned());
    }
    let target = if query.is_empty() {
        target_path
    } else {
        format!("{target_path}?{}", query.join("&"))
    };
    let mut headers = vec![(
        "x-amz-meta-note".to_owned(),
        "  two   spaces  here ".to_owned(),
    )];
    if rng.random_bool(0.5) {
        headers.push((
            "content-type".to_owned(),
            "text/plain; charset=utf-8".to_owned(),
        ));
    }
    Unsigned {
        method: ["GET", "PUT", "HEAD", "DELETE", "POST"][rng.random_range(0..5)],
        target,
        headers,
        payload_hash: "UNSIGNED-PAYLOAD".to_owned(),
    }
}

/// Every way to change one alphanumeric byte of the target or of a signed
/// header value so that its meaning changes.
fn one_byte_changes(parts: &Parts) -> Vec<Parts> {
    fn bump(byte: u8) -> u8 {
        match byte {
            b'9' => b'0',
            b'z' => b'a',
            b'Z' => b'A',
            other => other + 1,
        }
    }
    let mut changed = Vec::new();
    let target = parts
        .uri
        .path_and_query()
        .unwrap()
        .as_str()
        .as_bytes()
        .to_vec();
    for (i, byte) in target.iter().enumerate() {
        if byte.is_ascii_alphanumeric() {
            let mut modified = target.clone();
            modified[i] = bump(*byte);
            let mut copy = clone_parts(parts);
            copy.uri = String::from_utf8(modified).unwrap().parse().unwrap();
            changed.push(copy);
        }
    }
    for (name, value) in &parts.headers {
        if name == AUTHORIZATION {
            continue;
        }
        let bytes = value.as_bytes();
        for (i, byte) in bytes.iter().enumerate() {
            if byte.is_ascii_alphanumeric() {
                let mut modified = bytes.to_vec();
                modified[i] = bump(*byte);
                let mut copy = clone_parts(parts);
                copy.headers.insert(
                    name.clone(),
                    http::HeaderValue::from_bytes(&modified).unwrap(),
                );
                changed.push(copy);
            }
        }
    }
    if let Some(value) = parts.headers.get(AUTHORIZATION) {
        let text = value.to_str().unwrap();
        let signature_at = text.rfind('=').unwrap() + 1;
        for i in signature_at..text.len() {
            let mut modified = text.as_bytes().to_vec();
            modified[i] = if modified[i] == b'0' { b'1' } else { b'0' };
            let mut copy = clone_parts(parts);
            copy.headers.insert(
                AUTHORIZATION,
                http::HeaderValue::from_bytes(&modified).unwrap(),
            );
            changed.push(copy);
        }
    }
    let mut other_method = clone_parts(parts);
    other_method.method = if parts.method == http::Method::GET {
        http::Method::HEAD
    } else {
        http::Method::GET
    };
    changed.push(other_method);
    changed
}

fn clone_parts(parts: &Parts) -> Parts {
    let mut builder = http::Request::builder()
        .method(parts.method.clone())
        .uri(parts.uri.clone());
    for (name, value) in &parts.headers {
        builder = builder.header(name, value);
    }
    builder.body(()).unwrap().into_parts().0
}

#[tokio::test]
async fn accepts_what_the_sdk_signs_and_refuses_any_one_byte_change() {
    let verifier = oracle_verifier();
    let mut rng = StdRng::seed_from_u64(0x0053_4947_5634);
    for round in 0..40 {
        let request = random_request(&mut rng);
        let presign = (round % 2 == 1).then(|| Duration::from_secs(rng.random_range(1..=604_800)));
        let signed = sign_with_sdk(&request, presign);
        let target = signed.uri.to_string();
        if let Err(error) = check(&verifier, &signed, b"", oracle_time()).await {
            panic!("{target} refused: {error:?}");
        }
        for changed in one_byte_changes(&signed) {
            let result = check(&verifier, &changed, b"", oracle_time()).await;
            assert!(
                result.is_err(),
                "{target} accepted after a change: {:?} {:?}",
                changed.uri,
                changed.headers
            );
        }
    }
}

#[tokio::test]
async fn accepts_sdk_signed_sha256_payloads_and_repeated_headers() {
    let verifier = oracle_verifier();
    let body = b"payload \xe2\x82\xac";
    let request = Unsigned {
        method: "PUT",
        target: "/bucket/a%20b/c%2Bd?tagging=&x-id=PutObject".to_owned(),
        headers: vec![
            ("x-amz-meta-list".to_owned(), "one".to_owned()),
            ("x-amz-meta-list".to_owned(), "two".to_owned()),
            ("content-length".to_owned(), body.len().to_string()),
        ],
        payload_hash: super::sigv4::sha256_hex(body),
    };
    let signed = sign_with_sdk(&request, None);
    assert_eq!(
        check(&verifier, &signed, body, oracle_time())
            .await
            .unwrap(),
        body
    );
}

// Refusals, with the codes AWS uses.

fn oracle_get() -> Parts {
    sign_with_sdk(
        &Unsigned {
            method: "GET",
            target: "/bucket/key".to_owned(),
            headers: Vec::new(),
            payload_hash: EMPTY_SHA256.to_owned(),
        },
        None,
    )
}

async fn refusal(
    verifier: &Verifier,
    parts: &Parts,
    now: SystemTime,
) -> (&'static str, u16, String) {
    let error = check(verifier, parts, b"", now).await.unwrap_err();
    (error.code, error.status.as_u16(), error.message)
}

#[tokio::test]
async fn refuses_anonymous_ambiguous_and_unknown_schemes() {
    let verifier = example_verifier();
    let none = parts("GET", "/bucket/key", &[("host", "h")]);
    assert_eq!(
        refusal(&verifier, &none, example_time()).await,
        (
            "AccessDenied",
            403,
            "Anonymous access is not allowed".to_owned()
        )
    );
    let empty = parts(
        "PUT",
        "/bucket/key",
        &[("host", "h"), ("authorization", "")],
    );
    assert_eq!(
        refusal(&verifier, &empty, example_time()).await.0,
        "AccessDenied"
    );
    let both = parts(
        "GET",
        PRESIGNED_EXAMPLE,
        &[("host", "h"), ("authorization", "AWS4-HMAC-SHA256 x")],
    );
    assert_eq!(
        refusal(&verifier, &both, example_time()).await.0,
        "InvalidArgument"
    );
    let bearer = parts(
        "GET",
        "/",
        &[("host", "h"), ("authorization", "Bearer token")],
    );
    assert_eq!(
        refusal(&verifier, &bearer, example_time()).await.0,
        "InvalidArgument"
    );
    let malformed = parts(
        "GET",
        "/",
        &[
            ("host", "h"),
            ("authorization", "AWS4-HMAC-SHA256 Credential=x"),
        ],
    );
    assert_eq!(refusal(&verifier, &malformed, example_time()).await.1, 400);
}

// SigV2, with the examples of "Signing and authenticating REST requests".

fn sigv2_verifier() -> Verifier {
    example_verifier().with_domain(Some("s3.us-west-1.amazonaws.com".to_owned()))
}

fn sigv2_time(text: &str) -> SystemTime {
    super::sigv4::parse_http_time(text).unwrap()
}

#[tokio::test]
async fn sigv2_aws_example_get_object() {
    let date = "Tue, 27 Mar 2007 19:36:42 +0000";
    let signed = |signature: &str| {
        parts(
            "GET",
            "/photos/puppy.jpg",
            &[
                ("host", "awsexamplebucket1.s3.us-west-1.amazonaws.com"),
                ("date", date),
                ("authorization", &format!("AWS {ACCESS_KEY}:{signature}")),
            ],
        )
    };
    let verifier = sigv2_verifier();
    let request = signed("qgk2+6Sv9/oM7G3qLEjTH1a1l1g=");
    let authenticated = verifier
        .authenticate_at(&request, Body::empty(), sigv2_time(date))
        .await
        .unwrap();
    assert_eq!(authenticated.identity, Identity::new(ACCESS_KEY));

    let forged = signed("qgk2+6Sv9/oM7G3qLEjTH1a1l1h=");
    assert_eq!(
        refusal(&verifier, &forged, sigv2_time(date)).await.0,
        "SignatureDoesNotMatch"
    );
    let late = sigv2_time(date) + Duration::from_secs(16 * 60);
    assert_eq!(
        refusal(&verifier, &request, late).await.0,
        "RequestTimeTooSkewed"
    );
    // Without the domain the bucket is not part of the resource: refused.
    assert_eq!(
        refusal(&example_verifier(), &request, sigv2_time(date))
            .await
            .0,
        "SignatureDoesNotMatch"
    );
    let unknown = Verifier::new(MapSource::with("other", SECRET), "us-east-1");
    assert_eq!(
        refusal(&unknown, &request, sigv2_time(date)).await.0,
        "InvalidAccessKeyId"
    );
    let undated = parts(
        "GET",
        "/photos/puppy.jpg",
        &[("host", "h"), ("authorization", "AWS AK:c2ln")],
    );
    assert_eq!(
        refusal(&verifier, &undated, sigv2_time(date)).await.0,
        "AccessDenied"
    );
}

#[tokio::test]
async fn sigv2_aws_example_presigned_url() {
    let verifier = example_verifier().with_domain(Some("s3.amazonaws.com".to_owned()));
    let target = "/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620\
                  &Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D";
    let request = parts("GET", target, &[("host", "johnsmith.s3.amazonaws.com")]);
    let expires = SystemTime::UNIX_EPOCH + Duration::from_secs(1_175_139_620);
    assert!(check(&verifier, &request, b"", expires).await.is_ok());
    let expired = refusal(&verifier, &request, expires + Duration::from_secs(1)).await;
    assert_eq!(
        (expired.0, expired.2.as_str()),
        ("AccessDenied", "Request has expired")
    );
    // At most a week ahead, as SigV4 allows: a URL made to last longer is
    // refused from the start, not honoured for years.
    let week = Duration::from_secs(7 * 24 * 60 * 60);
    assert!(
        check(&verifier, &request, b"", expires - week)
            .await
            .is_ok()
    );
    let too_long = refusal(&verifier, &request, expires - week - Duration::from_secs(1)).await;
    assert_eq!(
        (too_long.0, too_long.1),
        ("AuthorizationQueryParametersError", 403)
    );
    let far = parts(
        "GET",
        "/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=99999999999999999999&Signature=x",
        &[("host", "johnsmith.s3.amazonaws.com")],
    );
    assert_eq!(
        refusal(&verifier, &far, expires).await.0,
        "AuthorizationQueryParametersError"
    );
    let other = parts(
        "GET",
        &target.replace("puppy", "kitty"),
        &[("host", "johnsmith.s3.amazonaws.com")],
    );
    assert_eq!(
        refusal(&verifier, &other, expires).await.0,
        "SignatureDoesNotMatch"
    );
    // An x-amz-* header is always part of a V2 signature: adding one breaks it.
    let added = parts(
        "GET",
        target,
        &[
            ("host", "johnsmith.s3.amazonaws.com"),
            ("x-amz-copy-source", "b/k"),
        ],
    );
    assert_eq!(
        refusal(&verifier, &added, expires).await.0,
        "SignatureDoesNotMatch"
    );
}

#[tokio::test]
async fn sigv2_can_be_turned_off() {
    let verifier = example_verifier()
        .with_domain(Some("s3.amazonaws.com".to_owned()))
        .with_sigv2(false);
    let presigned = parts(
        "GET",
        "/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620\
         &Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D",
        &[("host", "johnsmith.s3.amazonaws.com")],
    );
    let header = parts(
        "GET",
        "/photos/puppy.jpg",
        &[
            ("host", "johnsmith.s3.amazonaws.com"),
            ("date", "Tue, 27 Mar 2007 19:36:42 +0000"),
            (
                "authorization",
                "AWS AKIAIOSFODNN7EXAMPLE:qgk2+6Sv9/oM7G3qLEjTH1a1l1g=",
            ),
        ],
    );
    let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_175_139_620);
    for request in [presigned, header] {
        let (code, status, message) = refusal(&verifier, &request, at).await;
        assert_eq!((code, status), ("InvalidRequest", 400));
        assert!(message.contains("AWS4-HMAC-SHA256"), "{message}");
    }
}

#[tokio::test]
async fn refuses_unknown_keys_and_wrong_secrets() {
    let signed = oracle_get();
    let unknown = Verifier::new(MapSource::with("someone-else", ORACLE_SECRET), "us-east-1");
    assert_eq!(
        refusal(&unknown, &signed, oracle_time()).await.0,
        "InvalidAccessKeyId"
    );
    let wrong = Verifier::new(MapSource::with(ORACLE_KEY, "another secret"), "us-east-1");
    assert_eq!(
        refusal(&wrong, &signed, oracle_time()).await.0,
        "SignatureDoesNotMatch"
    );
}

#[tokio::test]
async fn a_rotated_secret_stops_the_old_one_at_once() {
    let source = MapSource::with(ORACLE_KEY, ORACLE_SECRET);
    let verifier = Verifier::new(source.clone(), "us-east-1");
    let signed = oracle_get();
    assert!(check(&verifier, &signed, b"", oracle_time()).await.is_ok());
    source.set(ORACLE_KEY, "rotated");
    assert_eq!(
        refusal(&verifier, &signed, oracle_time()).await.0,
        "SignatureDoesNotMatch"
    );
    source.set(ORACLE_KEY, ORACLE_SECRET);
    verifier.forget(ORACLE_KEY);
    assert!(check(&verifier, &signed, b"", oracle_time()).await.is_ok());
}

#[tokio::test]
async fn refuses_a_wrong_region_with_the_aws_message() {
    let verifier = Verifier::new(MapSource::with(ORACLE_KEY, ORACLE_SECRET), "eu-west-1");
    let (code, status, message) = refusal(&verifier, &oracle_get(), oracle_time()).await;
    assert_eq!((code, status), ("AuthorizationHeaderMalformed", 400));
    assert!(
        message.ends_with("the region 'us-east-1' is wrong; expecting 'eu-west-1'"),
        "{message}"
    );
    let presigned = sign_with_sdk(
        &Unsigned {
            method: "GET",
            target: "/b/k".to_owned(),
            headers: Vec::new(),
            payload_hash: String::new(),
        },
        Some(Duration::from_secs(60)),
    );
    assert_eq!(
        refusal(&verifier, &presigned, oracle_time()).await.0,
        "AuthorizationQueryParametersError"
    );
}

#[tokio::test]
async fn refuses_requests_outside_the_clock_skew() {
    let verifier = oracle_verifier();
    let signed = oracle_get();
    let minutes = |n: u64| Duration::from_secs(n * 60);
    assert!(
        check(&verifier, &signed, b"", oracle_time() + minutes(15))
            .await
            .is_ok()
    );
    assert!(
        check(&verifier, &signed, b"", oracle_time() - minutes(15))
            .await
            .is_ok()
    );
    for now in [oracle_time() + minutes(16), oracle_time() - minutes(16)] {
        assert_eq!(
            refusal(&verifier, &signed, now).await.0,
            "RequestTimeTooSkewed"
        );
    }
    let presigned = sign_with_sdk(
        &Unsigned {
            method: "GET",
            target: "/b/k".to_owned(),
            headers: Vec::new(),
            payload_hash: String::new(),
        },
        Some(Duration::from_secs(3600)),
    );
    assert_eq!(
        refusal(&verifier, &presigned, oracle_time() - minutes(16))
            .await
            .0,
        "AccessDenied"
    );
}

#[tokio::test]
async fn refuses_a_credential_date_other_than_the_request_day() {
    let verifier = oracle_verifier();
    let mut signed = oracle_get();
    let auth = signed.headers[AUTHORIZATION]
        .to_str()
        .unwrap()
        .replace("/20250101/", "/20250102/");
    signed.headers.insert(AUTHORIZATION, auth.parse().unwrap());
    let (code, _, message) = refusal(&verifier, &signed, oracle_time()).await;
    assert_eq!(code, "AuthorizationHeaderMalformed");
    assert!(
        message.contains("Date is not the same as X-Amz-Date"),
        "{message}"
    );
}

#[tokio::test]
async fn refuses_unsigned_amz_headers_and_a_missing_payload_hash() {
    let verifier = oracle_verifier();
    let mut signed = oracle_get();
    signed
        .headers
        .insert("x-amz-copy-source", "b/other".parse().unwrap());
    assert_eq!(
        refusal(&verifier, &signed, oracle_time()).await.0,
        "AccessDenied"
    );

    let mut signed = oracle_get();
    signed.headers.remove("x-amz-content-sha256");
    assert_eq!(
        refusal(&verifier, &signed, oracle_time()).await.0,
        "InvalidRequest"
    );
}

#[tokio::test]
async fn streaming_requires_the_decoded_length() {
    let verifier = oracle_verifier();
    let request = Unsigned {
        method: "PUT",
        target: "/bucket/key".to_owned(),
        headers: vec![(
            "x-amz-trailer".to_owned(),
            "x-amz-checksum-crc32".to_owned(),
        )],
        payload_hash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER".to_owned(),
    };
    let signed = sign_with_sdk(&request, None);
    let error = check(&verifier, &signed, b"", oracle_time())
        .await
        .unwrap_err();
    assert_eq!(
        (error.code, error.status.as_u16()),
        ("MissingSecurityHeader", 400)
    );
}

#[tokio::test]
async fn unsigned_trailer_uploads_as_botocore_sends_them() {
    let verifier = oracle_verifier();
    let wire = b"5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n";
    let request = Unsigned {
        method: "PUT",
        target: "/bucket/key".to_owned(),
        headers: vec![
            ("content-encoding".to_owned(), "aws-chunked".to_owned()),
            ("x-amz-decoded-content-length".to_owned(), "5".to_owned()),
            (
                "x-amz-trailer".to_owned(),
                "x-amz-checksum-crc32".to_owned(),
            ),
            ("content-length".to_owned(), wire.len().to_string()),
        ],
        payload_hash: "STREAMING-UNSIGNED-PAYLOAD-TRAILER".to_owned(),
    };
    let signed = sign_with_sdk(&request, None);
    let mut authenticated = verifier
        .authenticate_at(&signed, Body::from(wire.to_vec()), oracle_time())
        .await
        .unwrap();
    assert_eq!(
        read_all(&mut authenticated.payload).await.unwrap(),
        b"hello"
    );
    assert_eq!(
        authenticated.payload.trailers()["x-amz-checksum-crc32"],
        "NhCmhg=="
    );
}

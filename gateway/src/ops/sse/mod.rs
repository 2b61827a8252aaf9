//! Server-side encryption at the request's door: what is built passes,
//! what is not is refused here, in this one place.
//!
//! Built ([`write`], [`read`], the format in `crate::sse`):
//! - SSE-C (a customer-provided key) on PutObject, GetObject, HeadObject,
//!   GetObjectAttributes, CopyObject (the destination's key, and the source's in the
//!   `x-amz-copy-source-` SSE-C headers, `copy_source_key`) and multipart
//!   uploads (CreateMultipartUpload, every UploadPart and UploadPartCopy,
//!   whose source key is taken as CopyObject's);
//! - SSE-S3 (`x-amz-server-side-encryption: AES256`, the object key sealed
//!   by the gateway's master key, `crate::sse::keyring`) on PutObject,
//!   CopyObject (an encrypted source is opened and copied as its plaintext),
//!   PostObject (its form field) and CreateMultipartUpload (its parts are
//!   then sealed with no header); its objects read back by GetObject,
//!   HeadObject and GetObjectAttributes with no key from the client;
//! - SSE-KMS (`x-amz-server-side-encryption: aws:kms` and its
//!   `-aws-kms-key-id`, the object key sealed under a data key a Hadoop KMS
//!   makes, `crate::sse::kms`) where SSE-S3 is, when `sse_kms_url` names a
//!   KMS; its parts and completion may repeat the upload's `aws:kms`;
//! - a bucket's default encryption (`ops::bucket_encryption`): SSE-S3 or
//!   SSE-KMS for a PutObject, CopyObject, PostObject or
//!   CreateMultipartUpload that asks nothing.
//!
//! - SSE-C, SSE-S3 and SSE-KMS on PostObject, from its form fields
//!   ([`form_encryption`]).
//!
//! Not built: `aws:kms:dsse`, SSE-KMS's encryption context and bucket key
//! (a Hadoop KMS has neither). Storing plaintext
//! while answering 200
//! would let a client believe its object is encrypted, so a request
//! carrying any of those headers, as a header or as a presigned URL's
//! query parameter, is answered `501 NotImplemented` naming it: on writes
//! nothing is stored, on reads nothing is read. SSE-S3 without a keyring
//! (the Ozone back end with no `sse_master_key_file`) and SSE-KMS without a
//! KMS are refused the same way, naming the setting. PostObject's form fields are checked the same
//! way. An encrypted object is never described from its ciphertext: the
//! operations that describe one open it as a read does (`read::Opened`),
//! listings work out its plaintext size (`crate::sse::size`).

pub mod read;
pub mod write;

use http::request::Parts;

use crate::error::{Code, S3Error};
use crate::router::{Endpoint, Query};
use crate::sse::customer_key::{self, CustomerKey};
use crate::sse::keyring::Keyring;
use crate::sse::kms::Kms;
use crate::state::AppState;
use write::Encryption;

/// SSE-S3's (and SSE-KMS's) header: the algorithm to encrypt with.
pub const SSE_HEADER: &str = "x-amz-server-side-encryption";
/// SSE-KMS's KMS key.
pub const KMS_KEY_ID_HEADER: &str = "x-amz-server-side-encryption-aws-kms-key-id";
/// SSE-KMS's algorithm name.
pub const AWS_KMS: &str = "aws:kms";

/// What the gateway opens stored object keys with, besides a request's
/// SSE-C key.
#[derive(Clone, Copy)]
pub struct Keys<'a> {
    pub keyring: Option<&'a Keyring>,
    pub kms: Option<&'a Kms>,
}

impl<'a> Keys<'a> {
    pub fn of(state: &'a AppState) -> Self {
        Self {
            keyring: state.sse_keyring.as_deref(),
            kms: state.sse_kms.as_deref(),
        }
    }
}

/// Every server-side encryption header starts with one of these:
/// `x-amz-server-side-encryption` (SSE-S3 and SSE-KMS),
/// `-aws-kms-key-id`, `-context`, `-bucket-key-enabled`,
/// `-customer-algorithm`, `-customer-key`, `-customer-key-MD5` (SSE-C), and
/// `x-amz-copy-source-server-side-encryption-customer-*` (the SSE-C key of a
/// copy's source).
const PREFIXES: [&str; 2] = [
    "x-amz-server-side-encryption",
    "x-amz-copy-source-server-side-encryption",
];

/// The SSE-C headers, accepted (as headers only) by the operations that
/// take them.
const CUSTOMER_HEADERS: [&str; 3] = [
    customer_key::ALGORITHM,
    customer_key::KEY,
    customer_key::KEY_MD5,
];

/// Refuses a request that names server-side encryption the gateway does
/// not implement for its operation, in a header or a query parameter.
pub fn refuse(endpoint: &Endpoint, parts: &Parts) -> Result<(), S3Error> {
    let takes_customer_key = matches!(
        endpoint,
        Endpoint::PutObject { .. }
            | Endpoint::GetObject { .. }
            | Endpoint::HeadObject { .. }
            | Endpoint::GetObjectAttributes { .. }
            | Endpoint::CopyObject { .. }
            | Endpoint::CreateMultipartUpload { .. }
            | Endpoint::UploadPart { .. }
            | Endpoint::UploadPartCopy { .. }
            | Endpoint::CompleteMultipartUpload { .. }
    );
    let takes_source_key = matches!(
        endpoint,
        Endpoint::CopyObject { .. } | Endpoint::UploadPartCopy { .. }
    );
    let takes_algorithm = matches!(
        endpoint,
        Endpoint::PutObject { .. }
            | Endpoint::CopyObject { .. }
            | Endpoint::CreateMultipartUpload { .. }
    );
    // A part or a completion may repeat its upload's `aws:kms` (SDKs and
    // tools built for RGW do); `upload_part` checks it is the upload's.
    let repeats_algorithm = matches!(
        endpoint,
        Endpoint::UploadPart { .. }
            | Endpoint::UploadPartCopy { .. }
            | Endpoint::CompleteMultipartUpload { .. }
    ) && parts
        .headers
        .get(SSE_HEADER)
        .is_some_and(|value| value.as_bytes() == AWS_KMS.as_bytes());
    let refused_header = parts.headers.keys().find(|name| {
        let name = name.as_str();
        is_sse(name)
            && !(takes_customer_key && CUSTOMER_HEADERS.contains(&name))
            && !(takes_source_key && customer_key::SOURCE_HEADERS.contains(&name))
            && !((takes_algorithm || repeats_algorithm)
                && (name == SSE_HEADER || name == KMS_KEY_ID_HEADER))
    });
    if let Some(name) = refused_header {
        return Err(refused(name.as_str()));
    }
    // A presigned URL may carry `x-amz-*` headers as query parameters.
    if let Some(raw) = parts.uri.query()
        && let Ok(query) = Query::parse(Some(raw))
        && let Some((name, _)) = query.pairs().iter().find(|(name, _)| is_sse(name))
    {
        return Err(not_implemented(name));
    }
    Ok(())
}

/// Refuses a form upload with a server-side encryption field (names
/// lower-cased) it does not implement: all but the algorithm, its KMS key
/// and an SSE-C key, which [`form_encryption`] judges.
pub fn refuse_fields<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), S3Error> {
    match names.into_iter().find(|name| {
        is_sse(name)
            && *name != SSE_HEADER
            && *name != KMS_KEY_ID_HEADER
            && !CUSTOMER_HEADERS.contains(name)
    }) {
        Some(name) => Err(refused(name)),
        None => Ok(()),
    }
}

/// How a form upload (PostObject) asks to be encrypted: its encryption
/// fields (names lower-cased) judged as a PutObject's headers are.
pub async fn form_encryption(
    state: &AppState,
    fields: &[(String, String)],
) -> Result<Option<Encryption>, S3Error> {
    let mut headers = http::HeaderMap::new();
    for (name, value) in fields.iter().filter(|(name, _)| is_sse(name)) {
        let name = http::HeaderName::from_bytes(name.as_bytes());
        let value = http::HeaderValue::from_str(value);
        if let (Ok(name), Ok(value)) = (name, value) {
            headers.insert(name, value);
        } else {
            return Err(S3Error::invalid_argument(
                "A server-side encryption form field is not valid",
            ));
        }
    }
    for_write(state, &headers).await
}

/// The SSE-C key a PutObject, GetObject, HeadObject, GetObjectAttributes or
/// CopyObject carries for its own object, once the connection may carry one.
pub fn customer_key(state: &AppState, parts: &Parts) -> Result<Option<CustomerKey>, S3Error> {
    allowed_over(state, CustomerKey::from_headers(&parts.headers)?)
}

/// The SSE-C key of a CopyObject's source (its `x-amz-copy-source-`
/// headers), by the same rule.
pub fn copy_source_key(state: &AppState, parts: &Parts) -> Result<Option<CustomerKey>, S3Error> {
    allowed_over(
        state,
        CustomerKey::from_copy_source_headers(&parts.headers)?,
    )
}

/// `key`, unless the connection may not carry one (plain HTTP without
/// `sse_c_over_http`), as AWS refuses it.
fn allowed_over(
    state: &AppState,
    key: Option<CustomerKey>,
) -> Result<Option<CustomerKey>, S3Error> {
    if key.is_some() && !state.sse_c_allowed {
        return Err(S3Error::invalid_request(
            "Requests specifying Server Side Encryption with Customer provided keys must be \
             made over a secure connection.",
        ));
    }
    Ok(key)
}

/// How a write with `headers` asks to be encrypted: by its SSE-C key or by
/// its `x-amz-server-side-encryption` header (and its KMS key); `None` when
/// it asks nothing (the bucket's default may still apply, see
/// `ops::bucket_encryption`).
pub async fn for_write(
    state: &AppState,
    headers: &http::HeaderMap,
) -> Result<Option<Encryption>, S3Error> {
    let customer = allowed_over(state, CustomerKey::from_headers(headers)?)?;
    let header = |name: &str| headers.get(name).map(|value| value.as_bytes());
    let kms_key = header(KMS_KEY_ID_HEADER)
        .map(|value| {
            std::str::from_utf8(value).map_err(|_| {
                S3Error::invalid_argument("The KMS key id is not valid UTF-8")
                    .with("ArgumentName", KMS_KEY_ID_HEADER)
            })
        })
        .transpose()?;
    match (customer, header(SSE_HEADER)) {
        (Some(_), Some(_)) => Err(S3Error::invalid_argument(
            "Server Side Encryption with Customer provided key is incompatible with the encryption method specified",
        )
        .with("ArgumentName", SSE_HEADER)),
        (Some(customer), None) if kms_key.is_none() => Ok(Some(Encryption::Customer(customer))),
        (None, Some(algorithm)) => self::algorithm(state, algorithm, kms_key).await.map(Some),
        (_, None) if kms_key.is_some() => Err(kms_key_without_kms()),
        (_, _) => Ok(None),
    }
}

/// The encryption `x-amz-server-side-encryption` (a header, or a form
/// field) names, with the KMS key `kms_key` names for `aws:kms`.
async fn algorithm(
    state: &AppState,
    value: &[u8],
    kms_key: Option<&str>,
) -> Result<Encryption, S3Error> {
    match value {
        b"AES256" if kms_key.is_some() => Err(kms_key_without_kms()),
        b"AES256" => master_key(state),
        b"aws:kms" => kms_data_key(state, kms_key).await,
        b"aws:kms:dsse" => Err(S3Error::new(
            Code::NotImplemented,
            "Dual-layer SSE-KMS (aws:kms:dsse) is not implemented; use aws:kms, AES256 \
             (SSE-S3) or SSE-C",
        )
        .with("Header", SSE_HEADER)),
        _ => Err(
            S3Error::invalid_argument("The encryption method specified is not supported")
                .with("ArgumentName", SSE_HEADER),
        ),
    }
}

/// A fresh data key under KMS key `key_id`, else under the gateway's
/// default KMS key (`sse_kms_default_key`, the part AWS's `aws/s3` key
/// plays).
pub async fn kms_data_key(state: &AppState, key_id: Option<&str>) -> Result<Encryption, S3Error> {
    let Some(kms) = state.sse_kms.as_deref() else {
        return Err(no_kms());
    };
    let Some(key_id) = key_id.or(kms.default_key.as_deref()) else {
        return Err(S3Error::invalid_argument(
            "aws:kms needs a KMS key id (x-amz-server-side-encryption-aws-kms-key-id): this \
             gateway has no default KMS key (sse_kms_default_key)",
        )
        .with("ArgumentName", KMS_KEY_ID_HEADER));
    };
    if key_id.is_empty() {
        return Err(S3Error::invalid_argument("The KMS key id is empty")
            .with("ArgumentName", KMS_KEY_ID_HEADER));
    }
    Ok(Encryption::Kms(kms.generate(key_id).await?))
}

/// A part or completion that repeats `aws:kms` (and its KMS key) must be
/// of an upload begun so (`upload` is what sealed its key): the part is
/// sealed under the upload's key, so a request naming another encryption
/// is refused rather than ignored.
pub fn check_repeated_kms(
    parts: &Parts,
    upload: Option<&crate::sse::record::Wrapping>,
) -> Result<(), S3Error> {
    if parts.headers.get(SSE_HEADER).is_none() {
        return Ok(());
    }
    let asked_key = parts.headers.get(KMS_KEY_ID_HEADER).map(|v| v.as_bytes());
    match upload {
        Some(crate::sse::record::Wrapping::Kms(sealed))
            if asked_key.is_none_or(|asked| asked == sealed.key_id.as_bytes()) =>
        {
            Ok(())
        }
        _ => Err(S3Error::invalid_argument(
            "The encryption parameters are not the ones the multipart upload was initiated \
             with; a part is encrypted as its upload is",
        )
        .with("ArgumentName", SSE_HEADER)),
    }
}

/// AWS's answer to a KMS key id with another algorithm, or with none.
fn kms_key_without_kms() -> S3Error {
    S3Error::invalid_argument(
        "Server Side Encryption with AWS KMS managed key requires \
         HTTP header x-amz-server-side-encryption : aws:kms",
    )
    .with("ArgumentName", KMS_KEY_ID_HEADER)
}

/// SSE-KMS on a gateway without a KMS.
pub fn no_kms() -> S3Error {
    S3Error::new(
        Code::NotImplemented,
        "SSE-KMS (x-amz-server-side-encryption: aws:kms) is not available: this gateway has \
         no KMS configured (sse_kms_url, S3GW_SSE_KMS_URL: a Hadoop KMS); nothing was stored \
         or read",
    )
    .with("Header", SSE_HEADER)
}

/// The keyring's active master key, or the refusal that names the setting
/// that would give one.
pub fn master_key(state: &AppState) -> Result<Encryption, S3Error> {
    match &state.sse_keyring {
        Some(ring) => Ok(Encryption::Master(ring.active().clone())),
        None => Err(no_master_key()),
    }
}

/// SSE-S3 on a gateway without a keyring.
pub fn no_master_key() -> S3Error {
    S3Error::new(
        Code::NotImplemented,
        "SSE-S3 is not available: this gateway has no master key configured (sse_master_key_file, S3GW_SSE_MASTER_KEY_FILE); nothing was stored",
    )
    .with("Header", SSE_HEADER)
}

fn is_sse(name: &str) -> bool {
    PREFIXES.iter().any(|prefix| {
        name.as_bytes()
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
    })
}

/// S3's answer to a header it does not implement: `NotImplemented` with
/// the header named; SSE-S3's and SSE-KMS's headers, built where AWS takes
/// them, are AWS's `400 InvalidArgument` anywhere else.
fn refused(name: &str) -> S3Error {
    let name = name.to_ascii_lowercase();
    if name == SSE_HEADER || name == KMS_KEY_ID_HEADER {
        return S3Error::invalid_argument(format!(
            "{name} header is not supported for this operation."
        ))
        .with("ArgumentName", name);
    }
    not_implemented(&name)
}

/// `NotImplemented` naming the header (or query parameter) refused.
fn not_implemented(name: &str) -> S3Error {
    let name = name.to_ascii_lowercase();
    S3Error::new(
        Code::NotImplemented,
        format!(
            "This server-side encryption is not implemented: the gateway encrypts with \
             customer keys (SSE-C) on PutObject, GetObject, HeadObject, GetObjectAttributes, \
             CopyObject and multipart uploads and with its own or a KMS's keys (SSE-S3, \
             SSE-KMS) on PutObject, CopyObject, PostObject and CreateMultipartUpload, and \
             refuses {name} here"
        ),
    )
    .with("Header", name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn put() -> Endpoint {
        Endpoint::PutObject {
            bucket: "b".into(),
            key: "k".into(),
        }
    }

    fn copy() -> Endpoint {
        Endpoint::CopyObject {
            bucket: "b".into(),
            key: "k".into(),
        }
    }

    fn create_upload() -> Endpoint {
        Endpoint::CreateMultipartUpload {
            bucket: "b".into(),
            key: "k".into(),
        }
    }

    fn upload_part(copy: bool) -> Endpoint {
        let (bucket, key, upload_id) = ("b".into(), "k".into(), "u".into());
        let part_number = storage_client::PartNumber::new(1).unwrap();
        if copy {
            Endpoint::UploadPartCopy {
                bucket,
                key,
                part_number,
                upload_id,
            }
        } else {
            Endpoint::UploadPart {
                bucket,
                key,
                part_number,
                upload_id,
            }
        }
    }

    fn attributes() -> Endpoint {
        Endpoint::GetObjectAttributes {
            bucket: "b".into(),
            key: "k".into(),
            version_id: None,
        }
    }

    fn tagging() -> Endpoint {
        Endpoint::GetObjectTagging {
            bucket: "b".into(),
            key: "k".into(),
            version_id: None,
        }
    }

    fn parts(uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut builder = http::Request::builder().uri(uri);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).expect("request").into_parts().0
    }

    #[test]
    fn every_unbuilt_encryption_header_is_refused_naming_it() {
        for name in [SSE_HEADER, KMS_KEY_ID_HEADER] {
            let err = refuse(&tagging(), &parts("/b/k", &[(name, "v")])).expect_err(name);
            assert_eq!((err.code, err.status.as_u16()), ("InvalidArgument", 400));
            assert!(err.message.contains(name), "{}", err.message);
            refuse_fields([name]).unwrap();
        }
        for name in [
            "x-amz-server-side-encryption-context",
            "x-amz-server-side-encryption-bucket-key-enabled",
            "x-amz-server-side-encryption-customer-algorithm",
            "x-amz-server-side-encryption-customer-key",
            "X-Amz-Server-Side-Encryption-Customer-Key-MD5",
            "x-amz-copy-source-server-side-encryption-customer-algorithm",
            "x-amz-copy-source-server-side-encryption-customer-key",
            "x-amz-copy-source-server-side-encryption-customer-key-md5",
        ] {
            let err = refuse(
                &tagging(),
                &parts("/b/k", &[("content-type", "a/b"), (name, "v")]),
            )
            .expect_err(name);
            assert_eq!((err.code, err.status.as_u16()), ("NotImplemented", 501));
            let lower = name.to_ascii_lowercase();
            assert!(err.message.contains(&lower), "{}", err.message);
            // A form takes an SSE-C key (`form_encryption`), never a
            // copy source's.
            if CUSTOMER_HEADERS.contains(&lower.as_str()) {
                refuse_fields([lower.as_str()]).unwrap();
            } else {
                assert_eq!(
                    refuse_fields([lower.as_str()]).unwrap_err().code,
                    "NotImplemented"
                );
            }
        }
    }

    #[test]
    fn customer_keys_pass_only_where_they_are_built() {
        for name in CUSTOMER_HEADERS {
            refuse(&put(), &parts("/b/k", &[(name, "v")])).unwrap();
            refuse(&copy(), &parts("/b/k", &[(name, "v")])).unwrap();
        }
        // The key of a copy's source: CopyObject's only.
        for name in customer_key::SOURCE_HEADERS {
            refuse(&copy(), &parts("/b/k", &[(name, "v")])).unwrap();
            let err = refuse(&put(), &parts("/b/k", &[(name, "v")])).unwrap_err();
            assert_eq!(err.code, "NotImplemented");
        }
        // GetObjectAttributes takes the key of the object it describes only.
        for name in CUSTOMER_HEADERS {
            refuse(&attributes(), &parts("/b/k", &[(name, "v")])).unwrap();
        }
        for name in customer_key::SOURCE_HEADERS {
            let err = refuse(&attributes(), &parts("/b/k", &[(name, "v")])).unwrap_err();
            assert_eq!(err.code, "NotImplemented");
        }
        // SSE-KMS's key id: where its algorithm is taken, or repeated.
        for endpoint in [put(), copy(), create_upload()] {
            refuse(&endpoint, &parts("/b/k", &[(KMS_KEY_ID_HEADER, "v")])).unwrap();
        }
        let repeated = [(SSE_HEADER, AWS_KMS), (KMS_KEY_ID_HEADER, "v")];
        refuse(&upload_part(false), &parts("/b/k", &repeated)).unwrap();
        let err = refuse(&upload_part(false), &parts("/b/k", &repeated[1..])).unwrap_err();
        assert_eq!(err.code, "InvalidArgument");
        let err = refuse(&tagging(), &parts("/b/k", &repeated)).unwrap_err();
        assert_eq!(err.code, "InvalidArgument");
        // Multipart uploads: the SSE-C key on each of their writes, SSE-S3
        // when the upload begins, the source's key on UploadPartCopy only.
        for name in CUSTOMER_HEADERS {
            refuse(&create_upload(), &parts("/b/k", &[(name, "v")])).unwrap();
            refuse(&upload_part(false), &parts("/b/k", &[(name, "v")])).unwrap();
            refuse(&upload_part(true), &parts("/b/k", &[(name, "v")])).unwrap();
        }
        for name in customer_key::SOURCE_HEADERS {
            refuse(&upload_part(true), &parts("/b/k", &[(name, "v")])).unwrap();
            for endpoint in [create_upload(), upload_part(false)] {
                let err = refuse(&endpoint, &parts("/b/k", &[(name, "v")])).unwrap_err();
                assert_eq!(err.code, "NotImplemented");
            }
        }
        refuse(&create_upload(), &parts("/b/k", &[(SSE_HEADER, "AES256")])).unwrap();
        for endpoint in [upload_part(false), upload_part(true), attributes()] {
            let err = refuse(&endpoint, &parts("/b/k", &[(SSE_HEADER, "AES256")])).unwrap_err();
            assert_eq!(err.code, "InvalidArgument");
        }
        // SSE-S3's algorithm is PutObject's and CopyObject's to judge
        // (`for_write`).
        refuse(&put(), &parts("/b/k", &[(SSE_HEADER, "AES256")])).unwrap();
        refuse(&copy(), &parts("/b/k", &[(SSE_HEADER, "AES256")])).unwrap();
        // Presigned: as headers only.
        let presigned = "/b/k?x-amz-server-side-encryption-customer-algorithm=AES256";
        assert!(refuse(&put(), &parts(presigned, &[])).is_err());
    }

    #[test]
    fn encryption_in_a_presigned_query_is_refused() {
        let err = refuse(
            &put(),
            &parts(
                "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&x-amz-server-side-encryption=AES256",
                &[],
            ),
        )
        .unwrap_err();
        assert!(err.message.contains("x-amz-server-side-encryption"));
    }

    #[test]
    fn other_requests_pass() {
        refuse(
            &copy(),
            &parts(
                "/b/k?uploads&prefix=server-side-encryption",
                &[
                    ("x-amz-meta-server-side-encryption", "AES256"),
                    ("x-amz-acl", "private"),
                ],
            ),
        )
        .unwrap();
        refuse_fields(["key", "x-amz-meta-x", "policy"]).unwrap();
    }
}

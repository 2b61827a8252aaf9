//! Server-side encryption: not built yet, so every request that asks for it
//! is refused, in this one place.
//!
//! The gateway stores objects as sent. A client answered 200 to a PUT with
//! `x-amz-server-side-encryption: aws:kms`, or with an SSE-C customer key,
//! would believe its object is encrypted, and that without the key nobody
//! can read it; neither would be true. So a request carrying any
//! server-side encryption header (SSE-S3, SSE-KMS and its key id, context
//! and bucket key, SSE-C and its copy-source variant), as a header or as a
//! presigned URL's query parameter, is answered `501 NotImplemented` naming
//! it, whatever the operation: on writes (PUT, CopyObject, multipart,
//! UploadPartCopy) nothing is stored, on reads (GET, HEAD, attributes)
//! nothing is read. PostObject's form fields are checked the same way.

use http::request::Parts;

use crate::error::{Code, S3Error};
use crate::router::Query;

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

/// Refuses a request that names server-side encryption in a header or a
/// query parameter.
pub fn refuse(parts: &Parts) -> Result<(), S3Error> {
    if let Some(name) = parts.headers.keys().find(|name| is_sse(name.as_str())) {
        return Err(refused(name.as_str()));
    }
    // A presigned URL may carry `x-amz-*` headers as query parameters.
    if let Some(raw) = parts.uri.query()
        && let Ok(query) = Query::parse(Some(raw))
        && let Some((name, _)) = query.pairs().iter().find(|(name, _)| is_sse(name))
    {
        return Err(refused(name));
    }
    Ok(())
}

/// Refuses a form upload with a server-side encryption field (names
/// lower-cased).
pub fn refuse_fields<'a>(names: impl IntoIterator<Item = &'a str>) -> Result<(), S3Error> {
    match names.into_iter().find(|name| is_sse(name)) {
        Some(name) => Err(refused(name)),
        None => Ok(()),
    }
}

fn is_sse(name: &str) -> bool {
    PREFIXES.iter().any(|prefix| {
        name.as_bytes()
            .get(..prefix.len())
            .is_some_and(|head| head.eq_ignore_ascii_case(prefix.as_bytes()))
    })
}

/// S3's answer to a header it does not implement: `NotImplemented` with
/// the header named.
fn refused(name: &str) -> S3Error {
    let name = name.to_ascii_lowercase();
    S3Error::new(
        Code::NotImplemented,
        format!(
            "Server-side encryption is not implemented: the gateway stores objects unencrypted \
             and refuses {name}"
        ),
    )
    .with("Header", name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut builder = http::Request::builder().uri(uri);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).expect("request").into_parts().0
    }

    #[test]
    fn every_encryption_header_is_refused_naming_it() {
        for name in [
            "x-amz-server-side-encryption",
            "x-amz-server-side-encryption-aws-kms-key-id",
            "x-amz-server-side-encryption-context",
            "x-amz-server-side-encryption-bucket-key-enabled",
            "x-amz-server-side-encryption-customer-algorithm",
            "x-amz-server-side-encryption-customer-key",
            "X-Amz-Server-Side-Encryption-Customer-Key-MD5",
            "x-amz-copy-source-server-side-encryption-customer-algorithm",
            "x-amz-copy-source-server-side-encryption-customer-key",
            "x-amz-copy-source-server-side-encryption-customer-key-md5",
        ] {
            let err =
                refuse(&parts("/b/k", &[("content-type", "a/b"), (name, "v")])).expect_err(name);
            assert_eq!((err.code, err.status.as_u16()), ("NotImplemented", 501));
            let lower = name.to_ascii_lowercase();
            assert!(err.message.contains(&lower), "{}", err.message);
            assert_eq!(
                refuse_fields([lower.as_str()]).unwrap_err().code,
                "NotImplemented"
            );
        }
    }

    #[test]
    fn encryption_in_a_presigned_query_is_refused() {
        let err = refuse(&parts(
            "/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&x-amz-server-side-encryption=AES256",
            &[],
        ))
        .unwrap_err();
        assert!(err.message.contains("x-amz-server-side-encryption"));
    }

    #[test]
    fn other_requests_pass() {
        refuse(&parts(
            "/b/k?uploads&prefix=server-side-encryption",
            &[
                ("x-amz-meta-server-side-encryption", "AES256"),
                ("x-amz-acl", "private"),
            ],
        ))
        .unwrap();
        refuse_fields(["key", "x-amz-meta-x", "policy"]).unwrap();
    }
}

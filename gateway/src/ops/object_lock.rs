//! Object lock is not built yet: no bucket here has it (CreateBucket
//! refuses `x-amz-bucket-object-lock-enabled`), so a write asking to lock
//! its object is refused as S3 refuses one to a bucket without object
//! lock, rather than stored unlocked: a client answered 200 would believe
//! the object cannot be deleted before its retain-until date, or while on
//! legal hold, and neither would be true.

use http::request::Parts;

use crate::error::S3Error;
use crate::router::{Endpoint, Query};

/// The headers that ask for a new object's lock.
const HEADERS: [&str; 3] = [
    "x-amz-object-lock-mode",
    "x-amz-object-lock-retain-until-date",
    "x-amz-object-lock-legal-hold",
];

/// Refuses a write (PutObject, CopyObject, CreateMultipartUpload) that
/// names a lock in a header or, presigned, a query parameter.
pub fn refuse(endpoint: &Endpoint, parts: &Parts) -> Result<(), S3Error> {
    let writes = matches!(
        endpoint,
        Endpoint::PutObject { .. }
            | Endpoint::CopyObject { .. }
            | Endpoint::CreateMultipartUpload { .. }
    );
    if writes && names_a_lock(parts) {
        return Err(S3Error::invalid_request(
            "Bucket is missing Object Lock Configuration",
        ));
    }
    Ok(())
}

fn names_a_lock(parts: &Parts) -> bool {
    let is_lock = |name: &str| HEADERS.iter().any(|h| name.eq_ignore_ascii_case(h));
    if parts.headers.keys().any(|name| is_lock(name.as_str())) {
        return true;
    }
    // A presigned URL may carry `x-amz-*` headers as query parameters.
    parts.uri.query().is_some_and(|raw| {
        Query::parse(Some(raw))
            .is_ok_and(|query| query.pairs().iter().any(|(name, _)| is_lock(name)))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str, headers: &[(&str, &str)]) -> Parts {
        let mut request = http::Request::builder().method("PUT").uri(uri);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        request.body(()).unwrap().into_parts().0
    }

    fn put() -> Endpoint {
        Endpoint::PutObject {
            bucket: "b".into(),
            key: "k".into(),
        }
    }

    #[test]
    fn a_write_naming_a_lock_is_refused_and_nothing_else() {
        for header in HEADERS {
            let err = refuse(&put(), &parts("/b/k", &[(header, "ON")])).unwrap_err();
            assert_eq!((err.code, err.status.as_u16()), ("InvalidRequest", 400));
        }
        let presigned = parts("/b/k?X-Amz-Object-Lock-Mode=GOVERNANCE", &[]);
        assert!(refuse(&put(), &presigned).is_err());
        assert!(refuse(&put(), &parts("/b/k", &[("x-amz-meta-lock", "x")])).is_ok());
        let read = Endpoint::HeadBucket { bucket: "b".into() };
        assert!(refuse(&read, &parts("/b", &[("x-amz-object-lock-mode", "x")])).is_ok());
    }
}

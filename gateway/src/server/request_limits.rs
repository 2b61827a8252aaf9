//! The size of a request head: header bytes, header count and target
//! length, checked before anything else reads the request, so an oversized
//! one costs no routing, no signature check and no storage call.

use http::{HeaderMap, Uri};

use crate::config::Limits;
use crate::error::S3Error;

/// Bytes a header costs in the section: name, `: `, value, CRLF.
const HEADER_OVERHEAD: usize = 4;

pub fn check(uri: &Uri, headers: &HeaderMap, limits: &Limits) -> Result<(), S3Error> {
    let target = uri
        .path_and_query()
        .map_or(0, |target| target.as_str().len());
    if target > limits.max_url_length {
        return Err(S3Error::uri_too_long(limits.max_url_length));
    }
    if headers.len() > limits.max_header_count {
        return Err(S3Error::header_section_too_large(
            &format!("more than {} header fields", limits.max_header_count),
            limits.max_header_bytes,
        ));
    }
    let bytes: usize = headers
        .iter()
        .map(|(name, value)| name.as_str().len() + value.len() + HEADER_OVERHEAD)
        .sum();
    if bytes > limits.max_header_bytes {
        return Err(S3Error::header_section_too_large(
            &format!("{bytes} bytes"),
            limits.max_header_bytes,
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(target: &str, headers: &[(&str, String)]) -> http::request::Parts {
        let mut builder = http::Request::builder().uri(target);
        for (name, value) in headers {
            builder = builder.header(*name, value);
        }
        builder.body(()).expect("request").into_parts().0
    }

    fn check_parts(parts: &http::request::Parts, limits: &Limits) -> Result<(), S3Error> {
        check(&parts.uri, &parts.headers, limits)
    }

    fn limits() -> Limits {
        Limits {
            max_header_bytes: 100,
            max_header_count: 3,
            max_url_length: 20,
            ..Limits::default()
        }
    }

    #[test]
    fn heads_within_the_limits_pass() {
        let head = parts(
            "/bucket/key?x=1",
            &[("host", "h".into()), ("x-amz-date", "d".repeat(70))],
        );
        assert!(check_parts(&head, &limits()).is_ok());
    }

    #[test]
    fn oversized_heads_get_s3_errors() {
        let long_url = parts(&format!("/b/{}", "k".repeat(20)), &[]);
        let error = check_parts(&long_url, &limits()).unwrap_err();
        assert_eq!(
            (error.code, error.status.as_u16()),
            ("RequestURITooLong", 414)
        );

        let big = parts("/b/k", &[("x-amz-meta-a", "v".repeat(90))]);
        let error = check_parts(&big, &limits()).unwrap_err();
        assert_eq!(
            (error.code, error.status.as_u16()),
            ("RequestHeaderSectionTooLarge", 400)
        );
        assert!(error.extra.contains(&("MaxSizeAllowed", "100".into())));

        let many = parts(
            "/b/k",
            &[
                ("a", String::new()),
                ("b", String::new()),
                ("c", String::new()),
                ("d", String::new()),
            ],
        );
        assert_eq!(
            check_parts(&many, &limits()).unwrap_err().code,
            "RequestHeaderSectionTooLarge"
        );
    }
}

//! The host a request is addressed to, and the bucket a virtual-host name
//! carries: read one way for the router, SigV2 and the admin API, so that
//! the bucket a request acts on is the one its signature covers.
//!
//! SigV4 signs the `Host` header (or, without one, the target's authority);
//! SigV2 signs the bucket derived from the host. A request can name a host
//! twice: an HTTP/1.1 absolute-form target (`GET http://b.example.com/k`)
//! beside a `Host` header, HTTP/2's `:authority` beside `host`, or two
//! `Host` headers. Were the router to read one and the signature the other,
//! a URL signed for bucket `a` could be replayed against bucket `b`, so such
//! a request is refused before routing.

use http::{HeaderMap, Uri, header};

use crate::error::S3Error;

/// The host a request names: its `Host` header, or without one the target's
/// authority (HTTP/2 `:authority`, an HTTP/1.1 absolute-form target), which
/// is exactly what SigV4 signs as `host`. `None` when the request names no
/// host at all (HTTP/1.0). A request naming two different hosts, or the
/// `Host` header twice, is refused (RFC 9112 §3.2, RFC 9113 §8.3.1).
pub fn request_host<'a>(uri: &'a Uri, headers: &'a HeaderMap) -> Result<Option<&'a str>, S3Error> {
    let mut values = headers.get_all(header::HOST).iter();
    let host = match (values.next(), values.next()) {
        (Some(_), Some(_)) => {
            return Err(S3Error::invalid_request(
                "The request has more than one Host header",
            ));
        }
        (Some(value), None) => Some(
            value
                .to_str()
                .map_err(|_| S3Error::invalid_request("The Host header is not ASCII"))?,
        ),
        (None, _) => None,
    };
    let authority = uri.authority().map(http::uri::Authority::as_str);
    match (host, authority) {
        // Host names compare without regard to case (RFC 9110 §4.2.3).
        (Some(host), Some(authority)) if !host.eq_ignore_ascii_case(authority) => {
            Err(S3Error::invalid_request(format!(
                "The request target names host {authority:?} but the Host header names {host:?}; \
                 a request must name one host"
            )))
        }
        (Some(host), _) => Ok(Some(host)),
        (None, authority) => Ok(authority),
    }
}

/// The bucket a virtual-host style host names: `<bucket>.<domain>`, with
/// any port and an optional trailing dot, case-insensitive; the bucket in
/// lower case. `None` for any other host (the domain itself, an IP address,
/// `localhost`), which means path style.
pub fn virtual_host_bucket(host: &str, domain: &str) -> Option<String> {
    let host = strip_port(host).trim_end_matches('.').to_ascii_lowercase();
    let domain = domain.trim_end_matches('.').to_ascii_lowercase();
    let bucket = host.strip_suffix(&domain)?.strip_suffix('.')?;
    (!bucket.is_empty()).then(|| bucket.to_owned())
}

/// The bucket a request names through its host, when `domain` enables
/// virtual-host style; refuses a request that names two hosts.
pub fn request_bucket(
    uri: &Uri,
    headers: &HeaderMap,
    domain: Option<&str>,
) -> Result<Option<String>, S3Error> {
    let host = request_host(uri, headers)?;
    Ok(domain
        .zip(host)
        .and_then(|(domain, host)| virtual_host_bucket(host, domain)))
}

/// `host[:port]` or `[v6]:port` without a numeric port.
fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        return host.split_once(']').map_or(host, |(v6, _)| v6);
    }
    match host.rsplit_once(':') {
        Some((name, port)) if !port.is_empty() && port.bytes().all(|b| b.is_ascii_digit()) => name,
        _ => host,
    }
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn request(target: &str, hosts: &[&str]) -> (Uri, HeaderMap) {
        let mut headers = HeaderMap::new();
        for host in hosts {
            headers.append(header::HOST, HeaderValue::from_str(host).expect("host"));
        }
        (target.parse().expect("target"), headers)
    }

    fn host_of(target: &str, hosts: &[&str]) -> Result<Option<String>, S3Error> {
        let (uri, headers) = request(target, hosts);
        request_host(&uri, &headers).map(|host| host.map(str::to_owned))
    }

    #[test]
    fn the_host_header_names_the_host_and_the_authority_stands_in_for_it() {
        assert_eq!(
            host_of("/k", &["a.s3.test:9878"]).unwrap().as_deref(),
            Some("a.s3.test:9878")
        );
        assert_eq!(
            host_of("http://a.s3.test/k", &[]).unwrap().as_deref(),
            Some("a.s3.test")
        );
        assert_eq!(
            host_of("http://A.s3.test/k", &["a.s3.test"])
                .unwrap()
                .as_deref(),
            Some("a.s3.test"),
            "the Host header, which is what SigV4 signs"
        );
        assert_eq!(host_of("/k", &[]).unwrap(), None);
    }

    #[test]
    fn a_request_naming_two_hosts_is_refused() {
        for (target, hosts) in [
            ("http://b.s3.test/k", &["a.s3.test"][..]),
            ("http://a.s3.test:1/k", &["a.s3.test"]),
            ("http://x@a.s3.test/k", &["a.s3.test"]),
            ("/k", &["a.s3.test", "b.s3.test"]),
            ("/k", &["a.s3.test", "a.s3.test"]),
        ] {
            let error = host_of(target, hosts).expect_err(target);
            assert_eq!((error.code, error.status.as_u16()), ("InvalidRequest", 400));
        }
    }

    #[test]
    fn virtual_host_buckets_need_the_domain() {
        let cases = [
            ("photos.s3.test", Some("photos")),
            ("photos.s3.test:9878", Some("photos")),
            ("Photos.S3.Test.", Some("photos")),
            ("a.b.s3.test", Some("a.b")),
            ("s3.test", None),
            ("s3.test:9878", None),
            ("photoss3.test", None),
            ("photos.evil.test", None),
            ("127.0.0.1:9878", None),
            ("[::1]:9878", None),
            // A port that is not a number is part of the name, so no bucket.
            ("photos.s3.test:x", None),
        ];
        for (host, bucket) in cases {
            assert_eq!(
                virtual_host_bucket(host, "s3.test").as_deref(),
                bucket,
                "{host}"
            );
        }
        assert_eq!(
            virtual_host_bucket("photos.s3.test", "S3.TEST.").as_deref(),
            Some("photos")
        );
    }

    #[test]
    fn request_bucket_is_path_style_without_a_domain() {
        let (uri, headers) = request("/k", &["photos.s3.test"]);
        assert_eq!(request_bucket(&uri, &headers, None).unwrap(), None);
        assert_eq!(
            request_bucket(&uri, &headers, Some("s3.test"))
                .unwrap()
                .as_deref(),
            Some("photos")
        );
    }
}

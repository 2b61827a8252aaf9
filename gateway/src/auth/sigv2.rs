//! AWS Signature Version 2, still sent by old tools (s3cmd, older SDKs
//! configured for it): `Authorization: AWS AKID:base64(HMAC-SHA1)` or
//! `?AWSAccessKeyId=&Expires=&Signature=`.
//!
//! The string to sign is `VERB\nContent-MD5\nContent-Type\nDate\n` then the
//! `x-amz-*` headers (`name:value\n`, sorted) then the resource: the bucket
//! (taken from the host for virtual-host requests, as the router takes it:
//! `crate::host`), the path as
//! sent, and the sub-resources in the list below. Every `x-amz-*` header is
//! signed by construction, so V2 has no signed-header list to check.

use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use hmac::{Hmac, Mac};
use http::request::Parts;
use sha1::Sha1;

use super::encoding::{percent_decode, query_names, query_pairs};
use super::errors::{access_denied, header_malformed, query_malformed};
use crate::error::S3Error;

/// Query parameters that name a sub-resource and so are part of what a V2
/// signature covers; all others (prefix, marker, ...) are not.
const SUB_RESOURCES: &[&str] = &[
    "accelerate",
    "acl",
    "analytics",
    "cors",
    "delete",
    "encryption",
    "intelligent-tiering",
    "inventory",
    "legal-hold",
    "lifecycle",
    "location",
    "logging",
    "metrics",
    "notification",
    "object-lock",
    "ownershipControls",
    "partNumber",
    "policy",
    "publicAccessBlock",
    "replication",
    "requestPayment",
    "response-cache-control",
    "response-content-disposition",
    "response-content-encoding",
    "response-content-language",
    "response-content-type",
    "response-expires",
    "restore",
    "retention",
    "select",
    "select-type",
    "tagging",
    "torrent",
    "uploadId",
    "uploads",
    "versionId",
    "versioning",
    "versions",
    "website",
];

/// `AWS AKID:signature`, split.
pub(crate) fn parse_header(value: &str) -> Result<(&str, &str), S3Error> {
    value
        .strip_prefix("AWS ")
        .and_then(|rest| rest.rsplit_once(':'))
        .filter(|(access_key, signature)| !access_key.is_empty() && !signature.is_empty())
        .ok_or_else(|| header_malformed("expecting \"AWS <AWSAccessKeyId>:<Signature>\"."))
}

pub(crate) struct PresignedV2 {
    pub access_key: String,
    pub signature: String,
    /// `Expires` as sent: seconds since the epoch, also the date line.
    pub expires: String,
    pub expires_at: u64,
}

pub(crate) fn is_presigned(raw_query: &str) -> bool {
    let (mut access_key, mut signature) = (false, false);
    for name in query_names(raw_query) {
        access_key |= *name == *b"AWSAccessKeyId";
        signature |= *name == *b"Signature";
    }
    access_key && signature
}

pub(crate) fn parse_query(raw_query: &str) -> Result<PresignedV2, S3Error> {
    let (mut access_key, mut signature, mut expires) = (None, None, None);
    for (name, value) in query_pairs(raw_query) {
        match name.as_str() {
            "AWSAccessKeyId" => access_key = Some(value),
            "Signature" => signature = Some(value),
            "Expires" => expires = Some(value),
            _ => {}
        }
    }
    let (Some(access_key), Some(signature), Some(expires)) = (access_key, signature, expires)
    else {
        return Err(query_malformed(
            "Query-string authentication requires the Signature, Expires and AWSAccessKeyId parameters",
        ));
    };
    let expires_at = expires
        .parse()
        .map_err(|_| query_malformed("Expires must be a number of seconds since the epoch"))?;
    Ok(PresignedV2 {
        access_key,
        signature,
        expires,
        expires_at,
    })
}

/// The V2 string to sign. `date_line` is the `Date` header (empty when
/// `x-amz-date` is sent, which is then signed among the `x-amz-*` headers)
/// or, for a presigned URL, `Expires`. `bucket` is the bucket named by a
/// virtual-host style Host header.
pub(crate) fn string_to_sign(parts: &Parts, date_line: &str, bucket: Option<&str>) -> String {
    build_string_to_sign(parts, date_line, bucket, parts.uri.path())
}

/// The string to sign with a trailing `/` after a path-style bucket
/// (`/bucket` signed as `/bucket/`), as botocore and other clients sign
/// bucket-level requests; `None` when the request does not address a bucket
/// alone that way.
pub(crate) fn bucket_root_string_to_sign(
    parts: &Parts,
    date_line: &str,
    bucket: Option<&str>,
) -> Option<String> {
    let path = parts.uri.path();
    let is_bare_bucket =
        bucket.is_none() && path.len() > 1 && path.starts_with('/') && !path[1..].contains('/');
    is_bare_bucket.then(|| build_string_to_sign(parts, date_line, bucket, &format!("{path}/")))
}

fn build_string_to_sign(
    parts: &Parts,
    date_line: &str,
    bucket: Option<&str>,
    path: &str,
) -> String {
    let header = |name: &str| {
        parts
            .headers
            .get(name)
            .map(|value| String::from_utf8_lossy(value.as_bytes()).trim().to_owned())
            .unwrap_or_default()
    };
    let mut out = format!(
        "{}\n{}\n{}\n{date_line}\n",
        parts.method,
        header("content-md5"),
        header("content-type")
    );
    let mut amz_names: Vec<&str> = parts
        .headers
        .keys()
        .map(|name| name.as_str())
        .filter(|name| name.starts_with("x-amz-"))
        .collect();
    amz_names.sort_unstable();
    for name in amz_names {
        let values: Vec<String> = parts
            .headers
            .get_all(name)
            .iter()
            .map(|value| String::from_utf8_lossy(value.as_bytes()).trim().to_owned())
            .collect();
        out.push_str(name);
        out.push(':');
        out.push_str(&values.join(","));
        out.push('\n');
    }
    if let Some(bucket) = bucket {
        out.push('/');
        out.push_str(bucket);
    }
    out.push_str(path);
    push_sub_resources(&mut out, parts.uri.query().unwrap_or(""));
    out
}

/// `?name[=value]&...` for the sub-resources present, sorted by name,
/// values decoded; `=` kept only when it was sent.
fn push_sub_resources(out: &mut String, raw_query: &str) {
    let mut found: Vec<(String, Option<String>)> = raw_query
        .split('&')
        .filter_map(|part| {
            let (name, value) = match part.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (part, None),
            };
            let name = String::from_utf8_lossy(&percent_decode(name, true)).into_owned();
            SUB_RESOURCES.contains(&name.as_str()).then(|| {
                let value = value.map(|value| {
                    String::from_utf8_lossy(&percent_decode(value, true)).into_owned()
                });
                (name, value)
            })
        })
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0));
    for (i, (name, value)) in found.iter().enumerate() {
        out.push(if i == 0 { '?' } else { '&' });
        out.push_str(name);
        if let Some(value) = value {
            out.push('=');
            out.push_str(value);
        }
    }
}

pub(crate) fn sign(secret: &str, string_to_sign: &str) -> String {
    // HMAC accepts keys of every length, so this cannot fail.
    let mut mac =
        Hmac::<Sha1>::new_from_slice(secret.as_bytes()).unwrap_or_else(|_| unreachable!());
    mac.update(string_to_sign.as_bytes());
    BASE64.encode(mac.finalize().into_bytes())
}

pub(crate) fn expired() -> S3Error {
    access_denied("Request has expired")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET: &str = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";

    fn parts(method: &str, target: &str, headers: &[(&str, &str)]) -> Parts {
        let mut builder = http::Request::builder().method(method).uri(target);
        for (name, value) in headers {
            builder = builder.header(*name, *value);
        }
        builder.body(()).unwrap().into_parts().0
    }

    // The examples of "Signing and authenticating REST requests" (V2).

    #[test]
    fn aws_example_get_object() {
        let request = parts(
            "GET",
            "/photos/puppy.jpg",
            &[("date", "Tue, 27 Mar 2007 19:36:42 +0000")],
        );
        let text = string_to_sign(
            &request,
            "Tue, 27 Mar 2007 19:36:42 +0000",
            Some("awsexamplebucket1"),
        );
        assert_eq!(
            text,
            "GET\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/awsexamplebucket1/photos/puppy.jpg"
        );
        assert_eq!(sign(SECRET, &text), "qgk2+6Sv9/oM7G3qLEjTH1a1l1g=");
    }

    #[test]
    fn aws_example_put_object() {
        let request = parts(
            "PUT",
            "/photos/puppy.jpg",
            &[("content-type", "image/jpeg"), ("content-length", "94328")],
        );
        let text = string_to_sign(
            &request,
            "Tue, 27 Mar 2007 21:15:45 +0000",
            Some("awsexamplebucket1"),
        );
        assert_eq!(sign(SECRET, &text), "iqRzw+ileNPu1fhspnRs8nOjjIA=");
    }

    #[test]
    fn aws_example_list_ignores_parameters_that_are_not_sub_resources() {
        let request = parts("GET", "/?prefix=photos&max-keys=50&marker=puppy", &[]);
        let text = string_to_sign(
            &request,
            "Tue, 27 Mar 2007 19:42:41 +0000",
            Some("awsexamplebucket1"),
        );
        assert!(text.ends_with("\n/awsexamplebucket1/"), "{text}");
        assert_eq!(sign(SECRET, &text), "m0WP8eCtspQl5Ahe6L1SozdX9YA=");
    }

    #[test]
    fn aws_example_fetch_acl() {
        let request = parts("GET", "/?acl", &[]);
        let text = string_to_sign(
            &request,
            "Tue, 27 Mar 2007 19:44:46 +0000",
            Some("awsexamplebucket1"),
        );
        assert_eq!(sign(SECRET, &text), "82ZHiFIjc+WbcwFKGUVEQspPn+0=");
    }

    #[test]
    fn aws_example_presigned_url() {
        let request = parts(
            "GET",
            "/photos/puppy.jpg?AWSAccessKeyId=AKIAIOSFODNN7EXAMPLE&Expires=1175139620&Signature=NpgCjnDzrM%2BWFzoENXmpNDUsSn8%3D",
            &[],
        );
        let query = parse_query(request.uri.query().unwrap()).unwrap();
        assert_eq!(query.signature, "NpgCjnDzrM+WFzoENXmpNDUsSn8=");
        assert_eq!(query.expires_at, 1_175_139_620);
        let text = string_to_sign(&request, &query.expires, Some("johnsmith"));
        assert_eq!(sign(SECRET, &text), query.signature);
    }

    #[test]
    fn amz_headers_and_sub_resources_are_canonicalised() {
        let request = parts(
            "PUT",
            "/b/k%20ey?uploadId=a%2Bb&partNumber=2&prefix=x",
            &[
                ("x-amz-meta-b", " two "),
                ("X-Amz-Meta-A", "one"),
                ("x-amz-meta-b", "three"),
                ("content-md5", "bWQ1"),
            ],
        );
        assert_eq!(
            string_to_sign(&request, "", None),
            "PUT\nbWQ1\n\n\nx-amz-meta-a:one\nx-amz-meta-b:two,three\n/b/k%20ey?partNumber=2&uploadId=a+b"
        );
    }

    #[test]
    fn parses_headers_and_queries() {
        assert_eq!(parse_header("AWS AK:c2ln").unwrap(), ("AK", "c2ln"));
        assert!(parse_header("AWS AK").is_err());
        assert!(parse_header("AWS :sig").is_err());
        assert!(is_presigned("AWSAccessKeyId=a&Signature=b&Expires=1"));
        assert!(!is_presigned("AWSAccessKeyId=a"));
        assert!(parse_query("AWSAccessKeyId=a&Signature=b").is_err());
        assert!(parse_query("AWSAccessKeyId=a&Signature=b&Expires=soon").is_err());
    }

    #[test]
    fn a_path_style_bucket_may_be_signed_with_a_trailing_slash() {
        let date = "Tue, 27 Mar 2007 19:36:42 +0000";
        let request = parts("PUT", "/photos?acl", &[("date", date)]);
        assert_eq!(
            bucket_root_string_to_sign(&request, date, None).as_deref(),
            Some("PUT\n\n\nTue, 27 Mar 2007 19:36:42 +0000\n/photos/?acl")
        );
        let object = parts("PUT", "/photos/cat.jpg", &[("date", date)]);
        assert_eq!(bucket_root_string_to_sign(&object, date, None), None);
        let root = parts("GET", "/", &[("date", date)]);
        assert_eq!(bucket_root_string_to_sign(&root, date, None), None);
        let virtual_host = parts("GET", "/", &[("date", date)]);
        assert_eq!(
            bucket_root_string_to_sign(&virtual_host, date, Some("photos")),
            None
        );
    }
}

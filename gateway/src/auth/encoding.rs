//! URI encoding as SigV4 defines it, and the canonical path and query built
//! from the raw request target.
//!
//! S3 differs from the other AWS services in two ways that matter here: the
//! path is encoded once (not twice) and is never normalised (`a/../b` and
//! `a//b` are distinct keys). Clients disagree on which characters they
//! escape on the wire (`$`, `:`, `@`, `+` are sent raw by some, escaped by
//! others), so the only form every client signs is "decode what was sent,
//! then encode every byte except the unreserved set" — which is what the
//! functions below do.

use std::borrow::Cow;

use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, percent_decode_str, percent_encode};

/// SigV4's unreserved characters, `A-Z a-z 0-9 - . _ ~`: every other byte
/// becomes `%XX` with upper-case hex.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');

/// The unreserved characters and the path separator.
const UNRESERVED_AND_SLASH: &AsciiSet = &UNRESERVED.remove(b'/');

/// Appends `bytes` percent-encoded per SigV4, keeping `/` when `keep_slash`.
pub(crate) fn uri_encode_into(out: &mut String, bytes: &[u8], keep_slash: bool) {
    let set = if keep_slash {
        UNRESERVED_AND_SLASH
    } else {
        UNRESERVED
    };
    out.extend(percent_encode(bytes, set));
}

pub(crate) fn uri_encode(bytes: &[u8], keep_slash: bool) -> String {
    let mut out = String::with_capacity(bytes.len() * 3);
    uri_encode_into(&mut out, bytes, keep_slash);
    out
}

/// Decodes `%XX` escapes; a `%` not followed by two hex digits is kept as is
/// (that is what lenient clients signed). With `plus_is_space`, `+` means a
/// space, as in form-encoded query strings; an escaped `%2B` stays a `+`.
/// Text with nothing to decode is borrowed, not copied: every request's
/// query passes through here more than once.
pub(crate) fn percent_decode(raw: &str, plus_is_space: bool) -> Cow<'_, [u8]> {
    if plus_is_space && raw.contains('+') {
        Cow::Owned(percent_decode_str(&raw.replace('+', " ")).collect())
    } else {
        percent_decode_str(raw).into()
    }
}

/// The canonical URI: each `/`-separated segment of the raw path decoded,
/// then encoded once. Splitting first keeps an escaped slash (`%2F`) inside
/// its segment, as the client signed it. An empty path is `/`.
pub(crate) fn canonical_path(raw_path: &str) -> String {
    if raw_path.is_empty() {
        return "/".to_owned();
    }
    let mut out = String::with_capacity(raw_path.len() * 3);
    for (i, segment) in raw_path.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        uri_encode_into(&mut out, &percent_decode(segment, false), false);
    }
    out
}

/// The raw (name, value) pieces of a query string, in the order sent; a
/// parameter without `=` has an empty value.
fn query_parts(raw_query: &str) -> impl Iterator<Item = (&str, &str)> {
    raw_query
        .split('&')
        .filter(|part| !part.is_empty())
        .map(|part| part.split_once('=').unwrap_or((part, "")))
}

/// The names of the query parameters, decoded, in the order sent; their
/// values are not decoded (a presigned URL's are long).
pub(crate) fn query_names(raw_query: &str) -> impl Iterator<Item = Cow<'_, [u8]>> {
    query_parts(raw_query).map(|(name, _)| percent_decode(name, true))
}

/// Query parameters as (name, value), decoded, in the order sent.
pub(crate) fn query_pairs(raw_query: &str) -> Vec<(String, String)> {
    query_parts(raw_query)
        .map(|(name, value)| {
            (
                String::from_utf8_lossy(&percent_decode(name, true)).into_owned(),
                String::from_utf8_lossy(&percent_decode(value, true)).into_owned(),
            )
        })
        .collect()
}

/// The canonical query string: every parameter (except `skip`, the
/// presigned signature itself) encoded, sorted by encoded name then value,
/// joined with `&`; `a` without `=` becomes `a=`.
pub(crate) fn canonical_query(raw_query: &str, skip: Option<&str>) -> String {
    let mut pairs: Vec<(String, String)> = query_parts(raw_query)
        .filter_map(|(name, value)| {
            let name = percent_decode(name, true);
            if skip.is_some_and(|skip| skip.as_bytes() == &*name) {
                return None;
            }
            Some((
                uri_encode(&name, false),
                uri_encode(&percent_decode(value, true), false),
            ))
        })
        .collect();
    pairs.sort();
    let mut out = String::with_capacity(raw_query.len() + 8);
    for (i, (name, value)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(name);
        out.push('=');
        out.push_str(value);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_unreserved_characters_stay_raw() {
        assert_eq!(uri_encode(b"a-b_c.d~e", false), "a-b_c.d~e");
        assert_eq!(
            uri_encode("a b/c+d=é*".as_bytes(), false),
            "a%20b%2Fc%2Bd%3D%C3%A9%2A"
        );
        assert_eq!(uri_encode(b"a/b", true), "a/b");
    }

    #[test]
    fn path_is_decoded_then_encoded_once_without_normalisation() {
        assert_eq!(canonical_path("/test$file.text"), "/test%24file.text");
        assert_eq!(canonical_path("/test%24file.text"), "/test%24file.text");
        assert_eq!(canonical_path("/a%20b/c%2Fd"), "/a%20b/c%2Fd");
        assert_eq!(canonical_path("/a/../b//c/./d"), "/a/../b//c/./d");
        assert_eq!(canonical_path("/k+ey"), "/k%2Bey");
        assert_eq!(canonical_path("/%e2%82%ac"), "/%E2%82%AC");
        assert_eq!(canonical_path("/100%"), "/100%25");
        assert_eq!(canonical_path(""), "/");
    }

    #[test]
    fn query_is_sorted_by_encoded_name_then_value() {
        assert_eq!(canonical_query("lifecycle", None), "lifecycle=");
        assert_eq!(
            canonical_query("prefix=J&max-keys=2", None),
            "max-keys=2&prefix=J"
        );
        assert_eq!(canonical_query("a=2&a=1&b&a=10", None), "a=1&a=10&a=2&b=");
        assert_eq!(
            canonical_query("prefix=a+b%2Fc&X-Amz-Signature=ff", Some("X-Amz-Signature")),
            "prefix=a%20b%2Fc"
        );
        assert_eq!(canonical_query("", None), "");
    }

    #[test]
    fn query_pairs_decode_names_and_values() {
        assert_eq!(
            query_pairs("a&b=%41+c&&d=&e=%2B"),
            vec![
                ("a".to_owned(), String::new()),
                ("b".to_owned(), "A c".to_owned()),
                ("d".to_owned(), String::new()),
                ("e".to_owned(), "+".to_owned()),
            ]
        );
    }

    #[test]
    fn query_names_decode_names_only() {
        let names: Vec<_> = query_names("a&X%2DY=%41&&b+c=%zz&d=").collect();
        assert_eq!(names, [&b"a"[..], b"X-Y", b"b c", b"d"]);
        assert!(matches!(
            percent_decode("plain", true),
            Cow::Borrowed(b"plain")
        ));
        assert_eq!(&*percent_decode("a%41+b%2B", true), b"aA b+");
        assert_eq!(&*percent_decode("a+b%zz", false), b"a+b%zz");
    }
}

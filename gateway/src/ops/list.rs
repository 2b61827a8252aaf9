//! ListObjects (v1), ListObjectsV2 and ListObjectVersions: one storage
//! range scan per page, rendered in each API's shape.

use axum::response::Response;
use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use storage_client::{BucketRef, ListEntry, ListPage, ListQuery, Owner};

use super::headers::stored_etag;
use super::put::STORAGE_CLASS;
use super::xml_response;
use crate::error::S3Error;
use crate::router::ListParams;
use crate::sse::size::client_size;
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE};

/// `encoding-type=url` escapes everything but unreserved characters and
/// `/`, so every client's decoder (plain or `+`-as-space) gets the key back.
pub(super) const URL_ENCODE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

pub async fn list_objects_v2(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    params: ListParams,
) -> Result<Response, S3Error> {
    // The token wins over start-after, as in S3.
    let start_after = match params.continuation_token.as_deref() {
        Some(token) if !token.is_empty() => Some(decode_token(token)?),
        _ => params.start_after.clone(),
    };
    let page = scan(state, owner, bucket, &params, start_after).await?;
    let encode = Encoder(params.url_encoding);
    let next_continuation_token = page
        .next_marker
        .as_deref()
        .filter(|_| page.is_truncated)
        .map(encode_token);
    let owner = params.fetch_owner;
    let document = xml::ListBucketResultV2 {
        xmlns: S3_NAMESPACE,
        name: bucket.to_owned(),
        prefix: encode.apply(&params.prefix),
        delimiter: params.delimiter.as_deref().map(|d| encode.apply(d)),
        max_keys: params.max_keys,
        encoding_type: encode.element(),
        key_count: page.entries.len() + page.common_prefixes.len(),
        is_truncated: page.is_truncated,
        continuation_token: params.continuation_token,
        next_continuation_token,
        start_after: params.start_after.as_deref().map(|s| encode.apply(s)),
        contents: contents(&page.entries, owner, encode),
        common_prefixes: common_prefixes(&page, encode),
    };
    xml_response("ListBucketResult", &document)
}

pub async fn list_objects_v1(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    params: ListParams,
) -> Result<Response, S3Error> {
    let page = scan(state, owner, bucket, &params, params.start_after.clone()).await?;
    let encode = Encoder(params.url_encoding);
    // AWS sends NextMarker only with a delimiter; without one clients
    // continue from the last key.
    let next_marker = page
        .next_marker
        .as_deref()
        .filter(|_| page.is_truncated && params.delimiter.is_some())
        .map(|m| encode.apply(m));
    let document = xml::ListBucketResultV1 {
        xmlns: S3_NAMESPACE,
        name: bucket.to_owned(),
        // S3 leaves the v1 Prefix unencoded (SDKs decode only the others).
        prefix: params.prefix.clone(),
        marker: encode.apply(params.start_after.as_deref().unwrap_or("")),
        next_marker,
        max_keys: params.max_keys,
        delimiter: params.delimiter.as_deref().map(|d| encode.apply(d)),
        encoding_type: encode.element(),
        is_truncated: page.is_truncated,
        contents: contents(&page.entries, true, encode),
        common_prefixes: common_prefixes(&page, encode),
    };
    xml_response("ListBucketResult", &document)
}

async fn scan(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
    params: &ListParams,
    start_after: Option<String>,
) -> Result<ListPage, S3Error> {
    let query = ListQuery {
        prefix: params.prefix.clone(),
        delimiter: params.delimiter.clone(),
        start_after,
        max_keys: params.max_keys,
    };
    let page = state
        .storage
        .list_objects(BucketRef::new(owner, bucket), &query)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    // `max-keys=0` asks for nothing; S3 then reports no truncation.
    if params.max_keys == 0 {
        return Ok(ListPage::default());
    }
    Ok(page)
}

fn contents(entries: &[ListEntry], with_owner: bool, encode: Encoder) -> Vec<xml::Object> {
    entries
        .iter()
        .map(|entry| xml::Object {
            key: encode.apply(&entry.key),
            last_modified: xml::iso8601(entry.last_modified),
            etag: stored_etag(&entry.etag),
            // An encrypted object's plaintext size, as HEAD and GET report.
            size: client_size(&entry.meta, entry.size, &entry.part_sizes),
            owner: with_owner.then(|| xml::Owner::from_access_key(&entry.owner)),
            storage_class: STORAGE_CLASS,
        })
        .collect()
}

fn common_prefixes(page: &ListPage, encode: Encoder) -> Vec<xml::CommonPrefix> {
    page.common_prefixes
        .iter()
        .map(|prefix| xml::CommonPrefix {
            prefix: encode.apply(prefix),
        })
        .collect()
}

/// Applies `encoding-type=url` when the client asked for it.
#[derive(Clone, Copy)]
pub(super) struct Encoder(pub(super) bool);

impl Encoder {
    pub(super) fn apply(self, text: &str) -> String {
        if self.0 {
            utf8_percent_encode(text, URL_ENCODE).to_string()
        } else {
            text.to_owned()
        }
    }

    /// The `EncodingType` element, present only when keys were encoded.
    pub(super) fn element(self) -> Option<&'static str> {
        self.0.then_some("url")
    }
}

/// Continuation tokens are opaque to clients: the key to continue after.
pub(super) fn encode_token(after: &str) -> String {
    URL_SAFE_NO_PAD.encode(after)
}

pub(super) fn decode_token(token: &str) -> Result<String, S3Error> {
    URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|raw| String::from_utf8(raw).ok())
        .ok_or_else(|| {
            S3Error::invalid_argument("The continuation token provided is incorrect")
                .with("ArgumentName", "continuation-token")
                .with("ArgumentValue", token)
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn continuation_tokens_round_trip_any_key() {
        for key in ["a", "dir/sub dir/€uro+plus", "", &"k".repeat(1024)] {
            assert_eq!(decode_token(&encode_token(key)).unwrap(), key);
        }
    }

    #[test]
    fn bad_continuation_tokens_are_invalid_argument() {
        for token in ["not base64!", "//8", "a"] {
            let err = decode_token(token).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("InvalidArgument", 400),
                "{token}"
            );
        }
    }

    #[test]
    fn url_encoding_keeps_slashes_and_unreserved_characters() {
        let encode = Encoder(true);
        assert_eq!(
            encode.apply("dir/a b+c&d~e_f.g-h"),
            "dir/a%20b%2Bc%26d~e_f.g-h"
        );
        assert_eq!(encode.apply("€"), "%E2%82%AC");
        assert_eq!(encode.apply("\u{1}"), "%01");
        assert_eq!(Encoder(false).apply("a b"), "a b");
        assert_eq!(Encoder(true).element(), Some("url"));
        assert_eq!(Encoder(false).element(), None);
    }
}

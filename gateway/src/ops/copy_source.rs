//! The source side of CopyObject and UploadPartCopy: `x-amz-copy-source`,
//! its `x-amz-copy-source-if-*` preconditions, `x-amz-copy-source-range`,
//! and the streaming of the chosen bytes into a new upload.

use std::ops::Range;

use futures::StreamExt;
use http::request::Parts;
use http::{HeaderMap, HeaderName, header};
use percent_encoding::percent_decode_str;
use storage_client::{BucketRef, KeyInfo, ObjectWriter, Owner};

use super::conditional::{Conditions, Outcome};
use super::sse::read::{Opened, Purpose};
use super::sse::write::Sealing;
use crate::checksum::{Checksummer, Digests};
use crate::error::{S3Error, S3Result};
use crate::state::AppState;

const COPY_SOURCE: &str = "x-amz-copy-source";
const COPY_SOURCE_RANGE: &str = "x-amz-copy-source-range";

/// The copy-source preconditions and the GET precondition each one means.
/// AWS evaluates them with the GET rules, except that "not modified" is a
/// 412 too, because a copy has no 304.
const COPY_CONDITIONS: [(&str, HeaderName); 4] = [
    ("x-amz-copy-source-if-match", header::IF_MATCH),
    ("x-amz-copy-source-if-none-match", header::IF_NONE_MATCH),
    (
        "x-amz-copy-source-if-modified-since",
        header::IF_MODIFIED_SINCE,
    ),
    (
        "x-amz-copy-source-if-unmodified-since",
        header::IF_UNMODIFIED_SINCE,
    ),
];

/// A looked-up copy source whose preconditions held.
#[derive(Debug)]
pub(crate) struct CopySource {
    pub bucket: String,
    pub key: String,
    /// The committed source object, with READ tokens for its blocks.
    pub info: KeyInfo,
    /// An SSE-S3 source, opened to be copied as its plaintext (only
    /// CopyObject takes one, see [`CopySource::from_request_opening`]).
    opened: Option<Opened>,
}

impl CopySource {
    /// Parses `x-amz-copy-source`, looks the object up as `owner` (whose
    /// access to the source bucket the OM checks) and evaluates the
    /// `x-amz-copy-source-if-*` headers against it. An encrypted source is
    /// opened and copied as its plaintext: an SSE-S3 one with the keyring, an
    /// SSE-C one with the key the `x-amz-copy-source-` SSE-C headers carry
    /// (refused without it, or with another key, as AWS refuses them).
    pub(crate) async fn from_request_opening(
        state: &AppState,
        parts: &Parts,
        owner: &Owner,
    ) -> S3Result<Self> {
        let mut source = Self::looked_up(state, parts, owner).await?;
        let source_key = super::sse::copy_source_key(state, parts)?;
        let keys = super::sse::Keys::of(state);
        source.opened =
            Opened::check(&source.info, source_key.as_ref(), keys, Purpose::Read).await?;
        Ok(source)
    }

    /// The source the request names, looked up, its preconditions held.
    async fn looked_up(state: &AppState, parts: &Parts, owner: &Owner) -> S3Result<Self> {
        let (bucket, key, version_id) = parse_copy_source(&parts.headers)?;
        let info = state
            .storage
            .lookup_version(
                BucketRef::new(owner, &bucket).object(&key),
                version_id.as_deref(),
            )
            .await
            .map_err(|err| S3Error::from(err).naming(&bucket, Some(&key)))?;
        check_preconditions(&parts.headers, &info)?;
        Ok(Self {
            bucket,
            key,
            info,
            opened: None,
        })
    }

    /// The size of what the source holds for the client: an encrypted
    /// source's plaintext.
    pub(crate) fn plain_size(&self) -> u64 {
        self.opened
            .as_ref()
            .map_or(self.info.size, |opened| opened.plain_size)
    }

    /// The bytes `x-amz-copy-source-range` selects, or the whole object.
    /// An encrypted source's range is of its plaintext.
    pub(crate) fn range(&self, headers: &HeaderMap) -> S3Result<Range<u64>> {
        let size = self.plain_size();
        match headers.get(COPY_SOURCE_RANGE) {
            None => Ok(0..size),
            Some(value) => copy_range(value.to_str().unwrap_or_default(), size),
        }
    }

    /// Streams plaintext `range` of the source into `writer` (sealed by
    /// `sealing`, if any), computing the digests `summer` was set up for
    /// on the way. The writer is left open: the caller commits or aborts
    /// it.
    pub(crate) async fn copy_into(
        &self,
        state: &AppState,
        owner: &Owner,
        range: Range<u64>,
        writer: &mut ObjectWriter,
        mut summer: Checksummer,
        mut sealing: Option<&mut Sealing<'_>>,
    ) -> S3Result<Digests> {
        let naming = |err: storage_client::StorageError| {
            S3Error::from(err).naming(&self.bucket, Some(&self.key))
        };
        if range.is_empty() {
            return Ok(summer.finish());
        }
        let mut stream = match &self.opened {
            None => state
                .storage
                .read(owner, &self.info, range)
                .await
                .map_err(naming)?
                .map(|piece| piece.map_err(naming))
                .boxed(),
            Some(opened) => {
                let (bucket, key) = (self.bucket.clone(), self.key.clone());
                opened
                    .read(&state.storage, owner, &self.info, range)
                    .await
                    .map_err(naming)?
                    .map(move |piece| {
                        piece.map_err(|err| {
                            tracing::error!(%bucket, %key, error = %err, "encrypted copy source failed");
                            S3Error::internal("The encrypted object is damaged and cannot be read")
                        })
                    })
                    .boxed()
            }
        };
        while let Some(piece) = stream.next().await {
            let piece = piece?;
            summer.update(&piece);
            match sealing.as_deref_mut() {
                Some(sealing) => sealing.write(writer, &piece).await?,
                None => writer.write(piece).await?,
            }
        }
        Ok(summer.finish())
    }
}

/// `bucket/key` or `/bucket/key`, URL-encoded, optionally followed by
/// `?versionId=<id>` (the latest version without it).
pub(super) fn parse_copy_source(headers: &HeaderMap) -> S3Result<(String, String, Option<String>)> {
    let raw = headers
        .get(COPY_SOURCE)
        .map(|value| String::from_utf8_lossy(value.as_bytes()).into_owned())
        .unwrap_or_default();
    // A `?` inside a key arrives encoded, so the first literal one starts the query.
    let (path, query) = raw.split_once('?').unwrap_or((&raw, ""));
    let version_id = query
        .split('&')
        .find_map(|pair| pair.strip_prefix("versionId="));
    if !query.is_empty() && version_id.is_none() {
        return Err(invalid_copy_source());
    }
    let version_id = match version_id {
        Some(id) => Some(
            percent_decode_str(id)
                .decode_utf8()
                .map_err(|_| invalid_copy_source())?
                .into_owned(),
        ),
        None => None,
    };
    let decoded = percent_decode_str(path)
        .decode_utf8()
        .map_err(|_| invalid_copy_source())?;
    let decoded = decoded.strip_prefix('/').unwrap_or(&decoded);
    match decoded.split_once('/') {
        Some((bucket, key)) if !bucket.is_empty() && !key.is_empty() => {
            Ok((bucket.to_owned(), key.to_owned(), version_id))
        }
        _ => Err(invalid_copy_source()),
    }
}

fn invalid_copy_source() -> S3Error {
    S3Error::invalid_argument(
        "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
    )
    .with("ArgumentName", COPY_SOURCE)
}

fn check_preconditions(headers: &HeaderMap, info: &KeyInfo) -> S3Result<()> {
    let mut as_get = HeaderMap::new();
    for (copy_name, get_name) in COPY_CONDITIONS {
        if let Some(value) = headers.get(copy_name) {
            as_get.insert(get_name, value.clone());
        }
    }
    if as_get.is_empty() {
        return Ok(());
    }
    match Conditions::from_headers(&as_get).evaluate(&info.etag, info.last_modified) {
        Outcome::Proceed => Ok(()),
        Outcome::NotModified | Outcome::PreconditionFailed(_) => {
            Err(S3Error::precondition_failed())
        }
    }
}

/// `bytes=first-last` (both inclusive, both required) within an object of
/// `size` bytes. Bad syntax is InvalidArgument; a range past the end is
/// InvalidRange, as AWS answers UploadPartCopy.
pub(super) fn copy_range(value: &str, size: u64) -> S3Result<Range<u64>> {
    let bad_syntax = || {
        S3Error::invalid_argument(
            "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy",
        )
        .with("ArgumentName", COPY_SOURCE_RANGE)
        .with("ArgumentValue", value)
    };
    let spec = value.trim().strip_prefix("bytes=").ok_or_else(bad_syntax)?;
    let (first, last) = spec.split_once('-').ok_or_else(bad_syntax)?;
    let first = digits(first).ok_or_else(bad_syntax)?;
    let last = digits(last).ok_or_else(bad_syntax)?;
    if first > last {
        return Err(bad_syntax());
    }
    if last >= size {
        return Err(S3Error::invalid_range(size));
    }
    Ok(first..last + 1)
}

fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use storage_client::ObjectMeta;

    use super::*;
    use crate::ops::test_headers as headers;

    fn source(value: &str) -> S3Result<(String, String)> {
        parse_copy_source(&headers(&[(COPY_SOURCE, value)])).map(|(b, k, _)| (b, k))
    }

    fn info() -> KeyInfo {
        KeyInfo {
            bucket: "b".into(),
            key: "k".into(),
            size: 10,
            etag: "abc".into(),
            // Sun, 06 Nov 1994 08:49:37 GMT
            last_modified: SystemTime::UNIX_EPOCH + Duration::from_secs(784_111_777),
            owner: "AK".into(),
            meta: ObjectMeta::default(),
            tags: vec![],
            checksum: None,
            locations: vec![],
            parts: vec![],
            version_id: None,
        }
    }

    #[test]
    fn copy_source_with_or_without_leading_slash() {
        let expected = ("src".to_owned(), "dir/key.txt".to_owned());
        assert_eq!(source("src/dir/key.txt").unwrap(), expected);
        assert_eq!(source("/src/dir/key.txt").unwrap(), expected);
    }

    #[test]
    fn copy_source_is_url_decoded_including_unicode() {
        assert_eq!(
            source("/src/caf%C3%A9%20menu%3F%2B.txt").unwrap(),
            ("src".to_owned(), "café menu?+.txt".to_owned())
        );
        assert_eq!(
            source("src/a+b").unwrap(),
            ("src".to_owned(), "a+b".to_owned())
        );
    }

    #[test]
    fn a_version_of_the_source_can_be_named() {
        let versioned = parse_copy_source(&headers(&[(
            COPY_SOURCE,
            "/src/k?versionId=0000000000000007",
        )]))
        .unwrap();
        assert_eq!(versioned.2.as_deref(), Some("0000000000000007"));
        let latest = parse_copy_source(&headers(&[(COPY_SOURCE, "/src/k")])).unwrap();
        assert_eq!(latest.2, None);
    }

    #[test]
    fn copy_source_without_bucket_or_key_is_invalid() {
        for bad in [
            "",
            "/",
            "src",
            "/src/",
            "//key",
            "src?versionId=null",
            "/src/k?x=1",
        ] {
            let err = source(bad).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("InvalidArgument", 400),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn copy_source_preconditions_fail_with_412() {
        let held = [
            vec![],
            vec![("x-amz-copy-source-if-match", "\"abc\"")],
            vec![("x-amz-copy-source-if-none-match", "\"other\"")],
            vec![(
                "x-amz-copy-source-if-modified-since",
                "Sat, 01 Jan 1994 00:00:00 GMT",
            )],
            vec![(
                "x-amz-copy-source-if-unmodified-since",
                "Fri, 01 Jan 2100 00:00:00 GMT",
            )],
            // AWS documents this pair as a successful copy.
            vec![
                ("x-amz-copy-source-if-match", "abc"),
                (
                    "x-amz-copy-source-if-unmodified-since",
                    "Sat, 01 Jan 1994 00:00:00 GMT",
                ),
            ],
        ];
        for pairs in held {
            assert!(
                check_preconditions(&headers(&pairs), &info()).is_ok(),
                "{pairs:?}"
            );
        }
        let failed = [
            vec![("x-amz-copy-source-if-match", "\"other\"")],
            vec![("x-amz-copy-source-if-none-match", "\"abc\"")],
            vec![(
                "x-amz-copy-source-if-modified-since",
                "Fri, 01 Jan 2100 00:00:00 GMT",
            )],
            vec![(
                "x-amz-copy-source-if-unmodified-since",
                "Sat, 01 Jan 1994 00:00:00 GMT",
            )],
            // AWS documents this pair as 412.
            vec![
                ("x-amz-copy-source-if-none-match", "abc"),
                (
                    "x-amz-copy-source-if-modified-since",
                    "Sat, 01 Jan 1994 00:00:00 GMT",
                ),
            ],
        ];
        for pairs in failed {
            let err = check_preconditions(&headers(&pairs), &info()).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("PreconditionFailed", 412),
                "{pairs:?}"
            );
        }
    }

    #[test]
    fn copy_range_is_inclusive_and_bounded_by_the_source() {
        assert_eq!(copy_range("bytes=0-9", 10).unwrap(), 0..10);
        assert_eq!(copy_range("bytes=3-3", 10).unwrap(), 3..4);
        let err = copy_range("bytes=0-10", 10).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("InvalidRange", 416));
        for bad in [
            "bytes=5-1",
            "bytes=0-",
            "bytes=-5",
            "0-5",
            "bytes=a-b",
            "bytes=0-1,2-3",
        ] {
            let err = copy_range(bad, 10).unwrap_err();
            assert_eq!(err.code, "InvalidArgument", "{bad}");
        }
    }
}

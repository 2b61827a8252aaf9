//! Entry points for the fuzz targets in `fuzz/` (cargo feature `fuzzing`):
//! the request-header and body parsers of the operations, which are private
//! to `ops`.

use std::ops::Range;

use std::time::SystemTime;

use axum::body::Body;
use bytes::Bytes;
use http::HeaderMap;

pub use super::conditional::{Conditions, Outcome, if_range_holds};
pub use super::cors::CorsConfiguration;
pub use super::headers::object_meta_from_request;
pub use super::integrity::IntegrityPlan;
pub use super::object_lock::{
    Configuration as ObjectLockConfiguration, requested_retention, requested_status,
};
pub use super::range::{RangeRequest, content_range, resolve as resolve_range};
pub use super::tagging::{tags_from_header, tags_from_xml};
use crate::auth::Payload;
use crate::error::S3Result;

/// The versioning state a PutBucketVersioning body asks for.
pub fn versioning_from_xml(body: &[u8]) -> S3Result<storage_client::Versioning> {
    super::versioning::requested_versioning(&crate::xml::from_xml(body)?)
}

/// The bucket and key `x-amz-copy-source` names.
pub fn copy_source(headers: &HeaderMap) -> S3Result<(String, String)> {
    super::copy_source::parse_copy_source(headers).map(|(bucket, key, _)| (bucket, key))
}

/// The bytes `x-amz-copy-source-range` selects in a `size`-byte source.
pub fn copy_source_range(value: &str, size: u64) -> S3Result<Range<u64>> {
    super::copy_source::copy_range(value, size)
}

/// Reads a PostObject form arriving in `pieces` as the operation does:
/// every field before the file within the fields' budget, checked against
/// the `policy` field's conditions at `now` if there is one, then the file
/// to its end. Returns the fields (the bucket first) and the file's length.
pub async fn read_post_form(
    pieces: Vec<Bytes>,
    boundary: &str,
    now: SystemTime,
) -> S3Result<(Vec<(String, String)>, u64)> {
    let stream = futures::stream::iter(pieces.into_iter().map(Ok::<_, std::io::Error>));
    let mut payload = Payload::unsigned(Body::from_stream(stream), None);
    super::post_object::read_form_for_fuzzing(&mut payload, boundary, now).await
}

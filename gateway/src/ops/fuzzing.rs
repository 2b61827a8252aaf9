//! Entry points for the fuzz targets in `fuzz/` (cargo feature `fuzzing`):
//! the request-header and body parsers of the operations, which are private
//! to `ops`.

use std::ops::Range;

use http::HeaderMap;

pub use super::conditional::{Conditions, Outcome, if_range_holds};
pub use super::headers::object_meta_from_request;
pub use super::integrity::IntegrityPlan;
pub use super::range::{RangeRequest, content_range, resolve as resolve_range};
pub use super::tagging::{tags_from_header, tags_from_xml};
use crate::error::S3Result;

/// The bucket and key `x-amz-copy-source` names.
pub fn copy_source(headers: &HeaderMap) -> S3Result<(String, String)> {
    super::copy_source::parse_copy_source(headers).map(|(bucket, key, _)| (bucket, key))
}

/// The bytes `x-amz-copy-source-range` selects in a `size`-byte source.
pub fn copy_source_range(value: &str, size: u64) -> S3Result<Range<u64>> {
    super::copy_source::copy_range(value, size)
}

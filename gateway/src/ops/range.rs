//! The `Range` header as S3 reads it: one byte range (`bytes=a-b`,
//! open-ended `bytes=a-`, suffix `bytes=-n`). Anything S3 does not serve as
//! a range (several ranges, bad syntax) means the whole object; a range
//! that misses the object is 416.

use std::ops::Range;

#[derive(Debug, PartialEq, Eq)]
pub enum RangeRequest {
    Whole,
    Partial(Range<u64>),
    Unsatisfiable,
}

/// Resolves the header value against an object of `size` bytes.
pub fn resolve(header: &str, size: u64) -> RangeRequest {
    let Some((unit, spec)) = header.trim().split_once('=') else {
        return RangeRequest::Whole;
    };
    if !unit.trim().eq_ignore_ascii_case("bytes") || spec.contains(',') {
        return RangeRequest::Whole;
    }
    let Some((first, last)) = spec.trim().split_once('-') else {
        return RangeRequest::Whole;
    };
    let (first, last) = (first.trim(), last.trim());
    if first.is_empty() {
        return match digits(last) {
            None => RangeRequest::Whole,
            Some(0) => RangeRequest::Unsatisfiable,
            Some(_) if size == 0 => RangeRequest::Unsatisfiable,
            Some(suffix) => RangeRequest::Partial(size.saturating_sub(suffix)..size),
        };
    }
    let Some(start) = digits(first) else {
        return RangeRequest::Whole;
    };
    let end_inclusive = if last.is_empty() {
        None
    } else {
        match digits(last) {
            Some(end) if end >= start => Some(end),
            _ => return RangeRequest::Whole,
        }
    };
    if start >= size {
        return RangeRequest::Unsatisfiable;
    }
    let end = end_inclusive.map_or(size, |end| end.saturating_add(1).min(size));
    RangeRequest::Partial(start..end)
}

/// A non-negative decimal; rejects signs and anything `u64::from_str`
/// would otherwise tolerate.
fn digits(text: &str) -> Option<u64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// `Content-Range` for a served range.
pub fn content_range(range: &Range<u64>, size: u64) -> String {
    format!(
        "bytes {}-{}/{}",
        range.start,
        range.end.saturating_sub(1),
        size
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use RangeRequest::{Partial, Unsatisfiable, Whole};

    #[test]
    fn closed_open_ended_and_suffix_ranges() {
        assert_eq!(resolve("bytes=0-9", 100), Partial(0..10));
        assert_eq!(resolve("bytes=10-", 100), Partial(10..100));
        assert_eq!(resolve("bytes=-10", 100), Partial(90..100));
        assert_eq!(resolve("bytes=99-99", 100), Partial(99..100));
        assert_eq!(resolve("Bytes= 5 - 6 ", 100), Partial(5..7));
    }

    #[test]
    fn ranges_past_the_end_are_clamped() {
        assert_eq!(resolve("bytes=90-1000", 100), Partial(90..100));
        assert_eq!(resolve("bytes=-1000", 100), Partial(0..100));
        assert_eq!(
            resolve("bytes=0-18446744073709551615", 100),
            Partial(0..100)
        );
    }

    #[test]
    fn ranges_that_miss_the_object_are_unsatisfiable() {
        assert_eq!(resolve("bytes=100-", 100), Unsatisfiable);
        assert_eq!(resolve("bytes=100-200", 100), Unsatisfiable);
        assert_eq!(resolve("bytes=-0", 100), Unsatisfiable);
        assert_eq!(resolve("bytes=0-", 0), Unsatisfiable);
        assert_eq!(resolve("bytes=-5", 0), Unsatisfiable);
    }

    #[test]
    fn multiple_or_malformed_ranges_mean_the_whole_object() {
        for header in [
            "bytes=0-1,5-6",
            "bytes=5-1",
            "bytes=a-b",
            "bytes=+1-2",
            "bytes=-",
            "bytes=1",
            "items=0-1",
            "bytes 0-1",
            "",
            "bytes=99999999999999999999-",
        ] {
            assert_eq!(resolve(header, 100), Whole, "{header:?}");
        }
    }

    #[test]
    fn content_range_is_inclusive() {
        assert_eq!(content_range(&(0..10), 100), "bytes 0-9/100");
        assert_eq!(content_range(&(99..100), 100), "bytes 99-99/100");
    }
}

//! The request-header parsers of the operations: Range, the conditional
//! headers and If-Range, x-amz-copy-source and its range, the integrity
//! headers (Content-MD5, x-amz-checksum-*, x-amz-sdk-checksum-algorithm,
//! x-amz-trailer), object metadata (x-amz-meta-*, Content-Type...) and
//! x-amz-tagging, the ACL headers (x-amz-acl, x-amz-grant-*). Checked: a
//! range served lies inside the object.
#![no_main]

use std::time::{Duration, UNIX_EPOCH};

use http::header::{IF_RANGE, RANGE};
use libfuzzer_sys::fuzz_target;
use s3_gateway::access_control::acl::Acl;
use s3_gateway::ops::fuzzing::{
    Conditions, IntegrityPlan, RangeRequest, content_range, copy_source, copy_source_range,
    if_range_holds, object_meta_from_request, resolve_range, tags_from_header,
};
use s3_gateway_fuzz::parse_request;

const SIZES: [u64; 5] = [0, 1, 1000, 5 * 1024 * 1024 * 1024, u64::MAX];
const ETAG: &str = "d41d8cd98f00b204e9800998ecf8427e";

fuzz_target!(|input: &[u8]| {
    let Some((parts, body)) = parse_request(input) else {
        return;
    };
    let headers = &parts.headers;
    let modified = UNIX_EPOCH + Duration::from_secs(1_369_353_600);
    let text = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    for size in SIZES {
        if let Some(range) = text(RANGE.as_str()) {
            if let RangeRequest::Partial(r) = resolve_range(range, size) {
                assert!(
                    r.start < r.end && r.end <= size,
                    "range {r:?} outside {size} bytes"
                );
                let _ = content_range(&r, size);
            }
        }
        if let Some(range) = text("x-amz-copy-source-range") {
            if let Ok(r) = copy_source_range(range, size) {
                assert!(
                    r.start < r.end && r.end <= size,
                    "copy range {r:?} outside {size} bytes"
                );
            }
        }
    }
    let _ = Conditions::from_headers(headers).evaluate(ETAG, modified);
    if let Some(value) = text(IF_RANGE.as_str()) {
        let _ = if_range_holds(value, ETAG, modified);
    }
    let _ = copy_source(headers);
    if let Ok(plan) = IntegrityPlan::from_headers(headers) {
        let _ = plan.verify_body(body, &http::HeaderMap::new());
    }
    let _ = object_meta_from_request(headers);
    if let Ok(tags) = tags_from_header(headers) {
        assert!(tags.len() <= 10, "more than 10 tags accepted");
    }
    if let Ok(Some(acl)) = Acl::from_headers(headers, "writer", "bucket-owner") {
        assert_eq!(acl.owner, "writer", "an ACL header gave the object away");
    }
});

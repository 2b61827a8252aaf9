//! The router: method, request target (origin and absolute form), query
//! and Host, with and without a virtual-host domain.
#![no_main]

use libfuzzer_sys::fuzz_target;
use s3_gateway::router::{Query, route};
use s3_gateway_fuzz::parse_request;

fuzz_target!(|input: &[u8]| {
    let Some((parts, _)) = parse_request(input) else {
        return;
    };
    let _ = Query::parse(parts.uri.query());
    for domain in [None, Some("s3.example.com")] {
        let _ = route(&parts.method, &parts.uri, &parts.headers, domain);
    }
});

//! A bucket policy: a request written as HTTP/1.1 text whose body is the
//! policy JSON, parsed as PutBucketPolicy parses it and, when accepted,
//! evaluated for a few actions in that request's context (its headers
//! and query are the condition keys' values), as the decision does.
#![no_main]

use libfuzzer_sys::fuzz_target;
use s3_gateway::access_control::policy::context::{NoRequest, RequestContext};
use s3_gateway::access_control::policy::{NeedsObjectTags, Policy, Resource};
use s3_gateway::client_address::TrustedProxies;
use s3_gateway_fuzz::parse_request;

const ACTIONS: [&str; 5] = [
    "GetObject",
    "PutObject",
    "ListBucket",
    "PutObjectTagging",
    "DeleteObject",
];

fuzz_target!(|input: &[u8]| {
    let Some((parts, body)) = parse_request(input) else {
        return;
    };
    let Ok(policy) = Policy::parse(body, "b") else {
        return;
    };
    let _ = policy.is_public();
    let trusted = TrustedProxies::default();
    let context = RequestContext::new(&parts, &trusted);
    let tags = [("k".to_owned(), "v".to_owned())];
    let loaded = context.with_existing_tags(&tags);
    for action in ACTIONS {
        for resource in [Resource::Bucket("b"), Resource::Object("b", "k")] {
            for who in [None, Some("AKIAIOSFODNN7EXAMPLE")] {
                let _ = policy.evaluate(who, action, resource, true, &context);
                let _ = policy.evaluate(who, action, resource, false, &NoRequest);
                assert_ne!(
                    policy.evaluate(who, action, resource, true, &loaded),
                    Err(NeedsObjectTags),
                    "the object's tags were loaded, yet asked for again"
                );
            }
        }
    }
});

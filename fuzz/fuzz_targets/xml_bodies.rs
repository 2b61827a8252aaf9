//! Every XML request body the gateway parses: CreateBucketConfiguration,
//! Delete (DeleteObjects), Tagging (with the tag rules),
//! CompleteMultipartUpload, LifecycleConfiguration (with its rules) and
//! CORSConfiguration (whose stored form must read back as the
//! configuration accepted).
#![no_main]

use libfuzzer_sys::fuzz_target;
use s3_gateway::lifecycle::rules::{Configuration, MAX_RULES};
use s3_gateway::ops::fuzzing::{CorsConfiguration, tags_from_xml};
use s3_gateway::xml::{CompleteMultipartUpload, CreateBucketConfiguration, Delete, from_xml};
use storage_client::ChecksumAlgorithm;

fuzz_target!(|body: &[u8]| {
    let _ = from_xml::<CreateBucketConfiguration>(body);
    let _ = from_xml::<Delete>(body);
    if let Ok(tags) = tags_from_xml(body) {
        assert!(tags.len() <= 10, "more than 10 tags accepted");
    }
    if let Ok(config) = CorsConfiguration::from_request_body(body) {
        assert!(
            config.rules.len() <= 100,
            "more than 100 CORS rules accepted"
        );
        let stored = config
            .to_document()
            .expect("an accepted configuration renders");
        let back =
            CorsConfiguration::from_stored(stored.as_bytes()).expect("the stored form parses");
        assert_eq!(back, config, "the stored form reads back as accepted");
    }
    if let Ok(request) = from_xml::<CompleteMultipartUpload>(body) {
        for part in &request.parts {
            for algorithm in ChecksumAlgorithm::ALL {
                let _ = part.checksum(algorithm);
            }
        }
    }
    if let Ok(config) = Configuration::from_request(body) {
        assert!(
            config.rules.len() <= MAX_RULES,
            "more than {MAX_RULES} rules accepted"
        );
        let stored = Configuration::from_stored(config.document.as_bytes());
        let again = stored.expect("an accepted configuration's stored form is accepted");
        assert_eq!(
            again.rules, config.rules,
            "the stored form reads back other rules"
        );
    }
});

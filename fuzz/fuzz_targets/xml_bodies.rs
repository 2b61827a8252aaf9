//! Every XML request body the gateway parses: CreateBucketConfiguration,
//! Delete (DeleteObjects), Tagging (with the tag rules),
//! CompleteMultipartUpload, LifecycleConfiguration (with its rules),
//! CORSConfiguration, AccessControlPolicy and ObjectLockConfiguration
//! (whose stored forms must read back as what was accepted),
//! PublicAccessBlockConfiguration, Retention and LegalHold,
//! VersioningConfiguration, OwnershipControls and
//! ServerSideEncryptionConfiguration (these two read back too).
#![no_main]

use libfuzzer_sys::fuzz_target;
use s3_gateway::access_control::acl::Acl;
use s3_gateway::access_control::object_ownership::ObjectOwnership;
use s3_gateway::access_control::public_access::PublicAccessBlock;
use s3_gateway::lifecycle::rules::{Configuration, MAX_RULES};
use s3_gateway::ops::fuzzing::{
    CorsConfiguration, ObjectLockConfiguration, requested_retention, requested_status,
    tags_from_xml, versioning_from_xml,
};
use s3_gateway::sse::bucket_default::BucketDefault;
use s3_gateway::xml::{CompleteMultipartUpload, CreateBucketConfiguration, Delete, from_xml};
use storage_client::ChecksumAlgorithm;

/// The canonical id an AccessControlPolicy must name as its owner.
const OWNER: &str = "79a59df900b949e55d96a1e698fbacedfd6e09d98eacf8f8d5218e7cd47ef2be";

fuzz_target!(|body: &[u8]| {
    let _ = from_xml::<CreateBucketConfiguration>(body);
    let _ = versioning_from_xml(body);
    if let Ok(ownership) = ObjectOwnership::from_xml(body) {
        let stored = ownership.to_xml().expect("an accepted setting renders");
        assert_eq!(
            ObjectOwnership::from_xml(stored.as_bytes()).ok(),
            Some(ownership),
            "the stored ownership reads back as accepted"
        );
    }
    if let Ok(default) = BucketDefault::from_xml(body) {
        let stored = default.to_xml().expect("an accepted default renders");
        assert_eq!(
            BucketDefault::from_xml(stored.as_bytes()).ok(),
            Some(default),
            "the stored default encryption reads back as accepted"
        );
    }
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
    if let Ok(acl) = Acl::from_xml(body, OWNER) {
        assert_eq!(acl.owner, OWNER, "an ACL gave the resource away");
        let stored = acl.to_xml().expect("an accepted ACL renders");
        let back = Acl::from_stored(stored.as_bytes()).expect("the stored ACL parses");
        assert_eq!(back, acl, "the stored ACL reads back as accepted");
    }
    if let Ok(block) = PublicAccessBlock::from_xml(body) {
        let stored = block.to_xml().expect("a block renders");
        assert_eq!(
            PublicAccessBlock::from_xml(stored.as_bytes()).ok(),
            Some(block)
        );
    }
    if let Ok(config) = ObjectLockConfiguration::from_xml(body) {
        let stored = config.to_xml().expect("an accepted configuration renders");
        let back = ObjectLockConfiguration::from_xml(stored.as_bytes());
        assert_eq!(
            back.ok(),
            Some(config),
            "the stored form reads back as accepted"
        );
    }
    let _ = requested_retention(body, std::time::SystemTime::UNIX_EPOCH);
    let _ = requested_status(body);
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

//! A version under object lock (retention or legal hold, kept in its
//! reserved metadata entries) is not deleted for good: the delete checks
//! the lock atomically and answers `ObjectLocked`; GOVERNANCE retention
//! gives way to a bypassing delete, COMPLIANCE and legal hold to none,
//! and a retention that has passed to every delete. A delete without a
//! version id only adds a delete marker and is allowed. Back ends without
//! versions (Ozone) have nothing to lock: the gateway refuses object lock
//! there.

use std::time::{Duration, SystemTime};

use storage_client::{
    BucketRef, LEGAL_HOLD_ENTRY, LEGAL_HOLD_OFF, LEGAL_HOLD_ON, MetaEntryChange, RETENTION_ENTRY,
    Retention, RetentionMode, Storage, StorageError, Versioning,
};

use super::{Capabilities, alice, assert_err, put};

fn retention(mode: RetentionMode, until: SystemTime) -> MetaEntryChange {
    MetaEntryChange::new(RETENTION_ENTRY, Some(Retention { mode, until }.to_entry()))
}

pub async fn object_lock(s: &Storage, caps: &Capabilities) {
    if !caps.versioning {
        return;
    }
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    s.put_bucket_versioning(BucketRef::new(&a, "b"), Versioning::Enabled)
        .await
        .unwrap();
    let future = SystemTime::now() + Duration::from_secs(3600);
    let past = SystemTime::now() - Duration::from_secs(1);
    let locked = |e: &StorageError| matches!(e, StorageError::ObjectLocked);

    // GOVERNANCE: refused, unless bypassed.
    let governed = put(s, &a, "b", "g", b"g").await.version_id.unwrap();
    let change = retention(RetentionMode::Governance, future);
    s.put_version_meta_entry(BucketRef::new(&a, "b").object("g"), Some(&governed), change)
        .await
        .unwrap();
    assert_err(
        s.delete_version(BucketRef::new(&a, "b").object("g"), &governed)
            .await,
        locked,
        "a version under GOVERNANCE retention",
    );
    // Without a version id, only a delete marker: allowed.
    let marker = s
        .delete_object(BucketRef::new(&a, "b").object("g"))
        .await
        .unwrap();
    assert!(marker.delete_marker);
    s.lookup_version(BucketRef::new(&a, "b").object("g"), Some(&governed))
        .await
        .unwrap();
    s.delete_version_bypassing_governance(BucketRef::new(&a, "b").object("g"), &governed, true)
        .await
        .unwrap();
    assert_err(
        s.lookup_version(BucketRef::new(&a, "b").object("g"), Some(&governed))
            .await,
        |e| matches!(e, StorageError::NoSuchVersion),
        "the bypassed version",
    );

    // COMPLIANCE: refused even bypassing; noncurrent versions too.
    let complied = put(s, &a, "b", "c", b"c").await.version_id.unwrap();
    let change = retention(RetentionMode::Compliance, future);
    s.put_version_meta_entry(BucketRef::new(&a, "b").object("c"), Some(&complied), change)
        .await
        .unwrap();
    put(s, &a, "b", "c", b"newer").await;
    assert_err(
        s.delete_version_bypassing_governance(BucketRef::new(&a, "b").object("c"), &complied, true)
            .await,
        locked,
        "a noncurrent version under COMPLIANCE retention",
    );

    // Legal hold: refused even bypassing, until it is lifted.
    let held = put(s, &a, "b", "h", b"h").await.version_id.unwrap();
    let hold = |value: &str| MetaEntryChange::new(LEGAL_HOLD_ENTRY, Some(value.to_owned()));
    s.put_version_meta_entry(
        BucketRef::new(&a, "b").object("h"),
        Some(&held),
        hold(LEGAL_HOLD_ON),
    )
    .await
    .unwrap();
    assert_err(
        s.delete_version_bypassing_governance(BucketRef::new(&a, "b").object("h"), &held, true)
            .await,
        locked,
        "a version on legal hold",
    );
    s.put_version_meta_entry(
        BucketRef::new(&a, "b").object("h"),
        Some(&held),
        hold(LEGAL_HOLD_OFF),
    )
    .await
    .unwrap();
    s.delete_version(BucketRef::new(&a, "b").object("h"), &held)
        .await
        .unwrap();

    // A retention that has passed protects nothing.
    let expired = put(s, &a, "b", "e", b"e").await.version_id.unwrap();
    let change = retention(RetentionMode::Compliance, past);
    s.put_version_meta_entry(BucketRef::new(&a, "b").object("e"), Some(&expired), change)
        .await
        .unwrap();
    s.delete_version(BucketRef::new(&a, "b").object("e"), &expired)
        .await
        .unwrap();
}

//! Multipart uploads: parts written in any order become one object at
//! completion, atomically, with the chosen parts' bytes in part order.

use bytes::Bytes;
use storage_client::{
    BucketRef, ChecksumAlgorithm, ChecksumType, CompleteUpload, ListQuery, NewObject, NewUpload,
    ObjectChecksum, ObjectMeta, Owner, PartCommit, PartInfo, PartNumber, Result, Storage,
    StorageError, UploadListQuery, VersionListQuery, WriteCondition,
};

use super::{Capabilities, alice, bob, data, get, put_with};

/// What a back end requires of multipart uploads beyond the facade's
/// API; the cases size their parts and expect the object's ETag to fit.
#[derive(Clone, Copy, Debug)]
pub struct MultipartRules {
    /// The smallest part that is not the last (S3's 5 MiB where the back
    /// end enforces it, as Ozone does).
    pub min_part_size: usize,
    /// The ETag a completed object gets from its parts and the ETag the
    /// caller gave: the caller's where the back end stores it; Ozone
    /// derives its own from the part ETags.
    pub object_etag: fn(parts: &[&PartInfo], given: &str) -> String,
}

impl MultipartRules {
    /// A back end that takes parts of any size and the caller's ETag.
    #[allow(dead_code, reason = "not every back end's test file has it")]
    pub const NONE: Self = Self {
        min_part_size: 0,
        object_etag: |_, given| given.to_owned(),
    };

    /// The size of a part that is not the last: `n` more than the minimum.
    fn inner(&self, n: usize) -> usize {
        self.min_part_size + n
    }
}

/// Writes `bytes` as part `number` with the ETag `etag-<number>-<len>`.
pub async fn upload_part(
    s: &Storage,
    owner: &Owner,
    key: &str,
    upload_id: &str,
    number: u16,
    bytes: &[u8],
) -> Result<PartInfo> {
    let size_hint = Some(bytes.len() as u64);
    let mut writer = s
        .create_part(
            BucketRef::new(owner, "b").object(key).upload(upload_id),
            PartNumber::new(number).unwrap(),
            size_hint,
        )
        .await?;
    for piece in bytes.chunks(5000) {
        writer.write(Bytes::copy_from_slice(piece)).await?;
    }
    let etag = format!("etag-{number}-{}", bytes.len());
    writer
        .commit_part(
            upload_id,
            PartNumber::new(number).unwrap(),
            PartCommit {
                etag,
                checksum: None,
            },
        )
        .await
}

async fn start(s: &Storage, owner: &Owner, key: &str) -> String {
    let upload = NewUpload {
        meta: ObjectMeta {
            content_type: Some("text/plain".into()),
            ..ObjectMeta::default()
        },
        tags: vec![("t".into(), "1".into())],
        ..NewUpload::default()
    };
    s.create_multipart_upload(BucketRef::new(owner, "b").object(key), upload)
        .await
        .expect("create upload")
        .upload_id
}

fn complete(parts: &[&PartInfo], etag: &str, condition: WriteCondition) -> CompleteUpload {
    CompleteUpload {
        parts: parts.iter().map(|p| (p.number, p.etag.clone())).collect(),
        etag: etag.into(),
        checksum: None,
        condition,
    }
}

pub async fn multipart_out_of_order(s: &Storage, caps: &Capabilities) {
    let rules = caps.multipart;
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let id = start(s, &a, "k").await;
    // Sizes cross block (16 KiB) and chunk boundaries in the test config.
    let (n1, n2, n3) = (rules.inner(40_000), rules.inner(17_000), 333);
    let (one, two, three) = (data(n1, 1), data(n2, 2), data(n3, 3));
    let p3 = upload_part(s, &a, "k", &id, 3, &three).await.unwrap();
    let p1 = upload_part(s, &a, "k", &id, 1, &one).await.unwrap();
    let p2 = upload_part(s, &a, "k", &id, 2, &two).await.unwrap();
    let (n1, n2, n3) = (n1 as u64, n2 as u64, n3 as u64);
    assert_eq!((p1.size, p2.size, p3.size), (n1, n2, n3));

    let etag = (rules.object_etag)(&[&p1, &p2, &p3], "final-3");
    let info = s
        .complete_multipart_upload(
            BucketRef::new(&a, "b").object("k").upload(&id),
            complete(&[&p1, &p2, &p3], &etag, WriteCondition::None),
        )
        .await
        .unwrap();
    assert_eq!(info.size, n1 + n2 + n3);
    assert_eq!(info.etag, etag);
    assert_eq!(info.meta.content_type.as_deref(), Some("text/plain"));
    assert_eq!(info.tags, vec![("t".to_owned(), "1".to_owned())]);
    let layout: Vec<(u16, u64)> = info.parts.iter().map(|p| (p.number, p.size)).collect();
    assert_eq!(layout, [(1, n1), (2, n2), (3, n3)]);
    assert_eq!(
        get(s, &a, "b", "k").await.unwrap(),
        [one, two, three].concat()
    );
    assert_eq!(
        s.lookup(BucketRef::new(&a, "b").object("k"))
            .await
            .unwrap()
            .parts,
        info.parts
    );
    // The upload is gone once completed.
    assert!(matches!(
        s.multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id))
            .await,
        Err(StorageError::NoSuchUpload)
    ));
    // A retried completion with the same list is recognised; any other
    // list, or an object that was not completed from parts, is not.
    let listed = |parts: &[&PartInfo]| -> Vec<(u16, String)> {
        parts.iter().map(|p| (p.number, p.etag.clone())).collect()
    };
    let retried = s
        .completed_by(
            BucketRef::new(&a, "b").object("k"),
            &listed(&[&p1, &p2, &p3]),
        )
        .await;
    assert_eq!(retried.map(|o| o.etag), Some(etag));
    assert!(
        s.completed_by(BucketRef::new(&a, "b").object("k"), &listed(&[&p1, &p2]))
            .await
            .is_none()
    );
    let mut swapped = listed(&[&p1, &p2, &p3]);
    swapped[1].1 = p3.etag.clone();
    assert!(
        s.completed_by(BucketRef::new(&a, "b").object("k"), &swapped)
            .await
            .is_none()
    );
    put_with(s, &a, "b", "k", b"single", WriteCondition::None)
        .await
        .unwrap();
    assert!(
        s.completed_by(
            BucketRef::new(&a, "b").object("k"),
            &listed(&[&p1, &p2, &p3])
        )
        .await
        .is_none()
    );
}

pub async fn multipart_part_replacement_and_gaps(s: &Storage, caps: &Capabilities) {
    let rules = caps.multipart;
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let id = start(s, &a, "k").await;
    upload_part(s, &a, "k", &id, 2, &data(rules.inner(20_000), 1))
        .await
        .unwrap();
    let replaced = data(rules.inner(21_000), 2);
    let p2 = upload_part(s, &a, "k", &id, 2, &replaced).await.unwrap();
    let p7 = upload_part(s, &a, "k", &id, 7, b"tail").await.unwrap();
    let listed = s
        .list_parts(BucketRef::new(&a, "b").object("k").upload(&id), 0, 100)
        .await
        .unwrap();
    let numbers: Vec<(u16, u64)> = listed.parts.iter().map(|p| (p.number, p.size)).collect();
    assert_eq!(numbers, [(2, replaced.len() as u64), (7, 4)]);
    let etag = (rules.object_etag)(&[&p2, &p7], "x-2");
    s.complete_multipart_upload(
        BucketRef::new(&a, "b").object("k").upload(&id),
        complete(&[&p2, &p7], &etag, WriteCondition::None),
    )
    .await
    .unwrap();
    assert_eq!(
        get(s, &a, "b", "k").await.unwrap(),
        [replaced, b"tail".to_vec()].concat()
    );
}

pub async fn multipart_complete_rejects_bad_lists(s: &Storage, caps: &Capabilities) {
    let rules = caps.multipart;
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let id = start(s, &a, "k").await;
    let first = data(rules.inner(1000), 1);
    let p1 = upload_part(s, &a, "k", &id, 1, &first).await.unwrap();
    let missing = CompleteUpload {
        parts: vec![(1, p1.etag.clone()), (2, "etag-2-5".into())],
        etag: "e".into(),
        ..CompleteUpload::default()
    };
    assert!(matches!(
        s.complete_multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id), missing)
            .await,
        Err(StorageError::InvalidPart(_))
    ));
    let wrong_etag = CompleteUpload {
        parts: vec![(1, "not-the-etag".into())],
        etag: "e".into(),
        ..CompleteUpload::default()
    };
    assert!(matches!(
        s.complete_multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id), wrong_etag)
            .await,
        Err(StorageError::InvalidPart(_))
    ));
    assert!(matches!(
        s.complete_multipart_upload(
            BucketRef::new(&a, "b").object("k").upload("0123abcd"),
            CompleteUpload::default()
        )
        .await,
        Err(StorageError::NoSuchUpload)
    ));
    // Another key's name with this upload id does not reach the upload.
    assert!(matches!(
        s.list_parts(BucketRef::new(&a, "b").object("other").upload(&id), 0, 10)
            .await,
        Err(StorageError::NoSuchUpload)
    ));
    if caps.checks_owner {
        assert!(matches!(
            s.multipart_upload(BucketRef::new(&bob(), "b").object("k").upload(&id))
                .await,
            Err(StorageError::AccessDenied)
        ));
    }
    // Failed completions left the upload as it was; a quoted ETag matches.
    let quoted = CompleteUpload {
        parts: vec![(1, format!("\"{}\"", p1.etag))],
        etag: "e".into(),
        ..CompleteUpload::default()
    };
    s.complete_multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id), quoted)
        .await
        .unwrap();
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), first);
}

/// A completed object records its parts: their numbers (gaps kept) and
/// sizes come back on lookup, and the bytes are the parts in order.
pub async fn multipart_completion_records_its_parts(s: &Storage, caps: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let id = start(s, &a, "k").await;
    let one = data(caps.multipart.inner(30_000), 1);
    let two = data(70_000, 2);
    let p1 = upload_part(s, &a, "k", &id, 1, &one).await.unwrap();
    let p3 = upload_part(s, &a, "k", &id, 3, &two).await.unwrap();
    let done = complete(&[&p1, &p3], "done-2", WriteCondition::None);
    s.complete_multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id), done)
        .await
        .unwrap();
    let info = s.lookup(BucketRef::new(&a, "b").object("k")).await.unwrap();
    let parts: Vec<(u16, u64)> = info.parts.iter().map(|p| (p.number, p.size)).collect();
    assert_eq!(parts, [(1, one.len() as u64), (3, two.len() as u64)]);
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), [one, two].concat());
}

pub async fn multipart_abort(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let id = start(s, &a, "k").await;
    let p1 = upload_part(s, &a, "k", &id, 1, &data(30_000, 1))
        .await
        .unwrap();
    s.abort_multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id))
        .await
        .unwrap();
    assert!(matches!(
        s.abort_multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id))
            .await,
        Err(StorageError::NoSuchUpload)
    ));
    assert!(matches!(
        s.complete_multipart_upload(
            BucketRef::new(&a, "b").object("k").upload(&id),
            complete(&[&p1], "e", WriteCondition::None)
        )
        .await,
        Err(StorageError::NoSuchUpload)
    ));
    // A part that finishes after the abort is refused.
    assert!(matches!(
        upload_part(s, &a, "k", &id, 2, b"late").await,
        Err(StorageError::NoSuchUpload)
    ));
    assert!(matches!(
        s.lookup(BucketRef::new(&a, "b").object("k")).await,
        Err(StorageError::NoSuchKey)
    ));

    // Deleting the bucket ends the uploads still in progress in it.
    let pending = start(s, &a, "pending").await;
    s.delete_bucket(BucketRef::new(&a, "b")).await.unwrap();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    assert!(matches!(
        s.multipart_upload(BucketRef::new(&a, "b").object("pending").upload(&pending))
            .await,
        Err(StorageError::NoSuchUpload)
    ));
    let query = UploadListQuery {
        max_uploads: 10,
        ..UploadListQuery::default()
    };
    let listed = s
        .list_multipart_uploads(BucketRef::new(&a, "b"), &query)
        .await
        .unwrap();
    assert!(listed.uploads.is_empty());
}

/// What UploadPart asks before a part's first byte: the algorithm the
/// upload's parts are checksummed with, and whether it is in progress
/// (refused by `part_checksum_algorithm` or, where the back end checks
/// there anyway, by `create_part`).
pub async fn multipart_part_checksum_algorithm(s: &Storage, caps: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let plain = start(s, &a, "plain").await;
    assert_eq!(
        s.part_checksum_algorithm(BucketRef::new(&a, "b").object("plain").upload(&plain))
            .await
            .unwrap(),
        None
    );
    let mut upload = NewUpload {
        checksum_algorithm: Some(ChecksumAlgorithm::Sha256),
        ..NewUpload::default()
    };
    upload
        .meta
        .user
        .insert("gateway record".into(), "kept for every part".into());
    let meta = upload.meta.clone();
    let summed = s
        .create_multipart_upload(BucketRef::new(&a, "b").object("summed"), upload)
        .await
        .unwrap()
        .upload_id;
    for _ in 0..2 {
        assert_eq!(
            s.part_checksum_algorithm(BucketRef::new(&a, "b").object("summed").upload(&summed))
                .await
                .unwrap(),
            Some(ChecksumAlgorithm::Sha256)
        );
        // The metadata the upload began with, which UploadPart may need
        // (the gateway's encryption record), on every back end.
        assert_eq!(
            s.part_settings(BucketRef::new(&a, "b").object("summed").upload(&summed))
                .await
                .unwrap()
                .meta,
            meta
        );
    }
    assert_eq!(
        s.multipart_upload(BucketRef::new(&a, "b").object("summed").upload(&summed))
            .await
            .unwrap()
            .meta,
        meta
    );
    if caps.checks_owner {
        assert!(matches!(
            s.part_checksum_algorithm(BucketRef::new(&bob(), "b").object("summed").upload(&summed))
                .await,
            Err(StorageError::AccessDenied)
        ));
    }
    s.abort_multipart_upload(BucketRef::new(&a, "b").object("summed").upload(&summed))
        .await
        .unwrap();
    let refused = match s
        .part_checksum_algorithm(BucketRef::new(&a, "b").object("summed").upload(&summed))
        .await
    {
        Ok(_) => s
            .create_part(
                BucketRef::new(&a, "b").object("summed").upload(&summed),
                PartNumber::new(1).unwrap(),
                Some(4),
            )
            .await
            .map(drop),
        Err(e) => Err(e),
    };
    assert!(
        matches!(refused, Err(StorageError::NoSuchUpload)),
        "{refused:?}"
    );
}

pub async fn multipart_listing_pages(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let id = start(s, &a, "k").await;
    for n in [5, 1, 3, 2, 4] {
        upload_part(s, &a, "k", &id, n, &[n as u8; 10])
            .await
            .unwrap();
    }
    let mut seen = Vec::new();
    let mut after = 0;
    loop {
        let page = s
            .list_parts(BucketRef::new(&a, "b").object("k").upload(&id), after, 2)
            .await
            .unwrap();
        seen.extend(page.parts.iter().map(|p| p.number));
        match page.next_marker {
            Some(marker) => {
                assert!(page.is_truncated);
                after = marker;
            }
            None => {
                assert!(!page.is_truncated);
                break;
            }
        }
    }
    assert_eq!(seen, [1, 2, 3, 4, 5]);

    let mut expected = vec![("k".to_owned(), id.clone())];
    for key in ["dir/a", "dir/b", "dir/b", "z"] {
        expected.push((key.to_owned(), start(s, &a, key).await));
    }
    expected.sort();
    let mut query = UploadListQuery {
        max_uploads: 2,
        ..UploadListQuery::default()
    };
    let mut listed = Vec::new();
    loop {
        let page = s
            .list_multipart_uploads(BucketRef::new(&a, "b"), &query)
            .await
            .unwrap();
        listed.extend(page.uploads.into_iter().map(|u| (u.key, u.upload_id)));
        if !page.is_truncated {
            break;
        }
        query.key_marker = page.next_key_marker;
        query.upload_id_marker = page.next_upload_id_marker;
    }
    assert_eq!(listed, expected);

    let grouped = UploadListQuery {
        delimiter: Some("/".into()),
        max_uploads: 1000,
        ..UploadListQuery::default()
    };
    let page = s
        .list_multipart_uploads(BucketRef::new(&a, "b"), &grouped)
        .await
        .unwrap();
    assert_eq!(page.common_prefixes, ["dir/"]);
    let keys: Vec<&str> = page.uploads.iter().map(|u| u.key.as_str()).collect();
    assert_eq!(keys, ["k", "z"]);
    let under_dir = UploadListQuery {
        prefix: "dir/b".into(),
        max_uploads: 1000,
        ..UploadListQuery::default()
    };
    let page = s
        .list_multipart_uploads(BucketRef::new(&a, "b"), &under_dir)
        .await
        .unwrap();
    assert_eq!(page.uploads.len(), 2);
}

pub async fn multipart_conditional_complete_races_put(s: &Storage, _: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    // An existing object makes If-None-Match fail and If-Match decide.
    put_with(s, &a, "b", "taken", b"old", WriteCondition::None)
        .await
        .unwrap();
    let id = start(s, &a, "taken").await;
    let p1 = upload_part(s, &a, "taken", &id, 1, b"new").await.unwrap();
    assert!(matches!(
        s.complete_multipart_upload(
            BucketRef::new(&a, "b").object("taken").upload(&id),
            complete(&[&p1], "e", WriteCondition::IfAbsent)
        )
        .await,
        Err(StorageError::PreconditionFailed)
    ));
    assert!(matches!(
        s.complete_multipart_upload(
            BucketRef::new(&a, "b").object("taken").upload(&id),
            complete(&[&p1], "e", WriteCondition::IfEtag("nope".into()))
        )
        .await,
        Err(StorageError::PreconditionFailed)
    ));
    let old_etag = s
        .lookup(BucketRef::new(&a, "b").object("taken"))
        .await
        .unwrap()
        .etag;
    s.complete_multipart_upload(
        BucketRef::new(&a, "b").object("taken").upload(&id),
        complete(&[&p1], "e", WriteCondition::IfEtag(old_etag)),
    )
    .await
    .unwrap();
    assert_eq!(get(s, &a, "b", "taken").await.unwrap(), b"new");

    // Racing If-None-Match: * writers, one completing, one putting: one wins.
    for round in 0..8 {
        let key = format!("race-{round}");
        let id = start(s, &a, &key).await;
        let part = upload_part(s, &a, &key, &id, 1, b"from-multipart")
            .await
            .unwrap();
        let completing = s.complete_multipart_upload(
            BucketRef::new(&a, "b").object(&key).upload(&id),
            complete(&[&part], "mp", WriteCondition::IfAbsent),
        );
        let putting = put_with(s, &a, "b", &key, b"from-put", WriteCondition::IfAbsent);
        let (completed, put) = tokio::join!(completing, putting);
        let winners = [completed.is_ok(), put.is_ok()];
        assert_eq!(winners.iter().filter(|w| **w).count(), 1, "{key}");
        let expected: &[u8] = if completed.is_ok() {
            b"from-multipart"
        } else {
            b"from-put"
        };
        assert_eq!(get(s, &a, "b", &key).await.unwrap(), expected);
    }
}

/// A completed object's checksums belong to its content: tagging it keeps
/// them (on Ozone, tagging changes the key's generation), writing over it
/// drops them.
pub async fn multipart_checksums_survive_tagging(s: &Storage, caps: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let sha256 = |value: &str, kind| ObjectChecksum {
        algorithm: ChecksumAlgorithm::Sha256,
        value: value.into(),
        kind,
    };
    let upload = NewUpload {
        checksum_algorithm: Some(ChecksumAlgorithm::Sha256),
        ..NewUpload::default()
    };
    let id = s
        .create_multipart_upload(BucketRef::new(&a, "b").object("k"), upload)
        .await
        .unwrap()
        .upload_id;
    let bytes = data(caps.multipart.inner(20_000), 7);
    let mut writer = s
        .create_part(
            BucketRef::new(&a, "b").object("k").upload(&id),
            PartNumber::new(1).unwrap(),
            Some(bytes.len() as u64),
        )
        .await
        .unwrap();
    writer.write(Bytes::from(bytes.clone())).await.unwrap();
    let part_sum = sha256("cGFydA==", ChecksumType::FullObject);
    let part = writer
        .commit_part(
            &id,
            PartNumber::new(1).unwrap(),
            PartCommit {
                etag: "etag-1".into(),
                checksum: Some(part_sum.clone()),
            },
        )
        .await
        .unwrap();
    let whole = sha256("d2hvbGU=-1", ChecksumType::Composite);
    let etag = (caps.multipart.object_etag)(&[&part], "final-1");
    let complete = CompleteUpload {
        checksum: Some(whole.clone()),
        ..complete(&[&part], &etag, WriteCondition::None)
    };
    s.complete_multipart_upload(BucketRef::new(&a, "b").object("k").upload(&id), complete)
        .await
        .unwrap();
    assert_eq!(
        s.lookup(BucketRef::new(&a, "b").object("k"))
            .await
            .unwrap()
            .checksum,
        Some(whole.clone())
    );

    s.put_tags(
        BucketRef::new(&a, "b").object("k"),
        vec![("t".into(), "2".into())],
    )
    .await
    .unwrap();
    let tagged = s.lookup(BucketRef::new(&a, "b").object("k")).await.unwrap();
    assert_eq!(tagged.tags, vec![("t".to_owned(), "2".to_owned())]);
    assert_eq!(tagged.checksum, Some(whole));
    assert_eq!(get(s, &a, "b", "k").await.unwrap(), bytes);

    put_with(s, &a, "b", "k", b"plain", WriteCondition::None)
        .await
        .unwrap();
    assert_eq!(
        s.lookup(BucketRef::new(&a, "b").object("k"))
            .await
            .unwrap()
            .checksum,
        None
    );
}

/// A listing (objects and versions) carries what was stored with each
/// object, as a lookup gives it: its metadata and, for a multipart
/// object, its parts' stored sizes in object order; read by the scan
/// itself, so a caller describes a page without a lookup per key.
pub async fn listing_carries_what_was_stored(s: &Storage, caps: &Capabilities) {
    let a = alice();
    s.create_bucket(BucketRef::new(&a, "b"), "").await.unwrap();
    let meta = ObjectMeta {
        content_type: Some("text/csv".into()),
        cache_control: Some("no-cache".into()),
        user: [
            ("color".to_owned(), "blue".to_owned()),
            // A name no header can carry: storage keeps it like any other.
            ("reserved entry".to_owned(), "v1 a 5 b c".to_owned()),
        ]
        .into(),
        ..ObjectMeta::default()
    };
    let mut writer = s
        .create_object(BucketRef::new(&a, "b").object("single"), Default::default())
        .await
        .unwrap();
    writer.write(Bytes::from(data(20_000, 1))).await.unwrap();
    writer
        .commit(NewObject {
            etag: "single-etag".into(),
            meta: meta.clone(),
            checksum: None,
        })
        .await
        .unwrap();
    let id = start(s, &a, "multi").await;
    let (n1, n3) = (caps.multipart.inner(30_000), 7_000);
    let p1 = upload_part(s, &a, "multi", &id, 1, &data(n1, 2))
        .await
        .unwrap();
    let p3 = upload_part(s, &a, "multi", &id, 3, &data(n3, 3))
        .await
        .unwrap();
    s.complete_multipart_upload(
        BucketRef::new(&a, "b").object("multi").upload(&id),
        complete(&[&p1, &p3], "multi-2", WriteCondition::None),
    )
    .await
    .unwrap();
    put_with(s, &a, "b", "plain", b"plain bytes", WriteCondition::None)
        .await
        .unwrap();

    let mut looked_up = Vec::new();
    for key in ["multi", "plain", "single"] {
        let info = s.lookup(BucketRef::new(&a, "b").object(key)).await.unwrap();
        let parts: Vec<u64> = info.parts.iter().map(|p| p.size).collect();
        looked_up.push((info.key, info.size, info.meta, parts));
    }
    assert_eq!(looked_up[2].2, meta);
    assert_eq!(looked_up[0].3, [n1 as u64, n3 as u64]);
    assert_eq!(looked_up[0].2.content_type.as_deref(), Some("text/plain"));
    assert!(looked_up[1].3.is_empty() && looked_up[2].3.is_empty());

    let query = ListQuery {
        max_keys: 10,
        ..ListQuery::default()
    };
    let page = s
        .list_objects(BucketRef::new(&a, "b"), &query)
        .await
        .unwrap();
    let listed: Vec<_> = page
        .entries
        .into_iter()
        .map(|e| (e.key, e.size, e.meta, e.part_sizes))
        .collect();
    assert_eq!(listed, looked_up);

    let query = VersionListQuery {
        max_keys: 10,
        ..VersionListQuery::default()
    };
    let page = s
        .list_versions(BucketRef::new(&a, "b"), &query)
        .await
        .unwrap();
    let listed: Vec<_> = page
        .entries
        .into_iter()
        .map(|e| (e.key, e.size, e.meta, e.part_sizes))
        .collect();
    assert_eq!(listed, looked_up);
}

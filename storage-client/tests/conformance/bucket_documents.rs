//! Bucket documents: one per bucket and kind, replaced and removed on
//! their own, written only by the bucket's owner, gone with the bucket.

use storage_client::{
    BucketDocument, BucketRef, MAX_BUCKET_DOCUMENT_BYTES, Namespace, Storage, StorageError,
};

use super::{Capabilities, alice, assert_err, bob};

async fn document(s: &Storage, bucket: &str, kind: BucketDocument) -> Option<String> {
    s.bucket_document(&Namespace::Shared, bucket, kind)
        .await
        .unwrap()
        .map(|text| text.to_string())
}

pub async fn bucket_documents(s: &Storage, caps: &Capabilities) {
    let (a, b) = (alice(), bob());
    s.create_bucket(BucketRef::new(&a, "docs"), "")
        .await
        .unwrap();
    for kind in BucketDocument::ALL {
        assert_eq!(document(s, "docs", kind).await, None, "{kind:?} before any");
    }

    let cors = "<CORSConfiguration>é</CORSConfiguration>".to_owned();
    s.put_bucket_document(
        BucketRef::new(&a, "docs"),
        BucketDocument::Cors,
        Some(cors.clone()),
    )
    .await
    .unwrap();
    s.put_bucket_document(
        BucketRef::new(&a, "docs"),
        BucketDocument::Tagging,
        Some("t1".into()),
    )
    .await
    .unwrap();
    assert_eq!(
        document(s, "docs", BucketDocument::Cors).await,
        Some(cors.clone())
    );
    assert_eq!(
        document(s, "docs", BucketDocument::Tagging).await,
        Some("t1".into())
    );
    assert_eq!(document(s, "docs", BucketDocument::Policy).await, None);

    // Replacing one kind leaves the others; removing twice is no error.
    s.put_bucket_document(
        BucketRef::new(&a, "docs"),
        BucketDocument::Tagging,
        Some("t2".into()),
    )
    .await
    .unwrap();
    assert_eq!(
        document(s, "docs", BucketDocument::Tagging).await,
        Some("t2".into())
    );
    s.put_bucket_document(BucketRef::new(&a, "docs"), BucketDocument::Tagging, None)
        .await
        .unwrap();
    s.put_bucket_document(BucketRef::new(&a, "docs"), BucketDocument::Tagging, None)
        .await
        .unwrap();
    assert_eq!(document(s, "docs", BucketDocument::Tagging).await, None);
    assert_eq!(document(s, "docs", BucketDocument::Cors).await, Some(cors));

    // Only the owner writes; a missing bucket has no documents.
    if caps.checks_owner {
        assert_err(
            s.put_bucket_document(
                BucketRef::new(&b, "docs"),
                BucketDocument::Policy,
                Some("{}".into()),
            )
            .await,
            |e| matches!(e, StorageError::AccessDenied),
            "non-owner writes a document",
        );
    }
    assert_eq!(document(s, "docs", BucketDocument::Policy).await, None);
    assert_err(
        s.bucket_document(&Namespace::Shared, "nobucket", BucketDocument::Cors)
            .await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "document of a missing bucket",
    );
    assert_err(
        s.put_bucket_document(
            BucketRef::new(&a, "nobucket"),
            BucketDocument::Cors,
            Some("x".into()),
        )
        .await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "document written to a missing bucket",
    );
    let oversized = "x".repeat(MAX_BUCKET_DOCUMENT_BYTES + 1);
    assert_err(
        s.put_bucket_document(
            BucketRef::new(&a, "docs"),
            BucketDocument::Lifecycle,
            Some(oversized),
        )
        .await,
        |e| matches!(e, StorageError::InvalidArgument(_)),
        "oversized document",
    );

    // A bucket deleted and made again starts with none.
    s.delete_bucket(BucketRef::new(&a, "docs")).await.unwrap();
    assert_err(
        s.bucket_document(&Namespace::Shared, "docs", BucketDocument::Cors)
            .await,
        |e| matches!(e, StorageError::NoSuchBucket),
        "document of a deleted bucket",
    );
    s.create_bucket(BucketRef::new(&b, "docs"), "")
        .await
        .unwrap();
    for kind in BucketDocument::ALL {
        assert_eq!(
            document(s, "docs", kind).await,
            None,
            "{kind:?} after re-creation"
        );
    }
}

//! Bucket tagging: Put/Get/DeleteBucketTagging. The tag set is kept as a
//! bucket document, the canonical `Tagging` XML in key order, which is what
//! GetBucketTagging answers.

use axum::response::Response;
use http::StatusCode;
use http::request::Parts;
use storage_client::{BucketDocument, Owner};

use super::bucket_documents;
use super::empty_response;
use super::tagging::{Tags, parse_tagging, sorted_tag_set, validate_each};
use crate::auth::Payload;
use crate::error::{Code, S3Error, S3Result};
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE, Tagging};

/// AWS allows at most 50 tags on a bucket.
const MAX_BUCKET_TAGS: usize = 50;
/// Fifty maximal tags in XML stay under this.
const MAX_BUCKET_TAGGING_BODY: usize = 64 * 1024;

pub async fn put_bucket_tagging(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    bucket: &str,
    payload: &mut Payload,
) -> S3Result<Response> {
    let body = bucket_documents::read_body(parts, payload, MAX_BUCKET_TAGGING_BODY).await?;
    let tags = bucket_tags_from_xml(&body)?;
    // An empty tag set leaves the bucket untagged, as AWS answers it after.
    let document = if tags.is_empty() {
        None
    } else {
        Some(tagging_document(tags)?)
    };
    bucket_documents::store(state, owner, bucket, BucketDocument::Tagging, document).await?;
    Ok(empty_response(StatusCode::NO_CONTENT))
}

pub async fn get_bucket_tagging(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::get(state, owner, bucket, BucketDocument::Tagging, || {
        no_such_tag_set(bucket)
    })
    .await
}

pub async fn delete_bucket_tagging(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> S3Result<Response> {
    bucket_documents::delete(state, owner, bucket, BucketDocument::Tagging).await
}

/// A PutBucketTagging body's tags, checked as object tags are but up to 50.
fn bucket_tags_from_xml(body: &[u8]) -> S3Result<Tags> {
    let tags = parse_tagging(body)?;
    if tags.len() > MAX_BUCKET_TAGS {
        return Err(S3Error::invalid_tag(
            "Bucket tag count cannot be greater than 50",
        ));
    }
    validate_each(&tags)?;
    Ok(tags)
}

fn tagging_document(tags: Tags) -> S3Result<String> {
    let document = Tagging {
        xmlns: S3_NAMESPACE,
        tag_set: sorted_tag_set(tags),
    };
    xml::to_xml("Tagging", &document)
}

fn no_such_tag_set(bucket: &str) -> S3Error {
    S3Error::new(Code::NoSuchTagSet, "The TagSet does not exist").with("BucketName", bucket)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(count: usize) -> String {
        let tags: String = (0..count)
            .map(|i| format!("<Tag><Key>k{i:02}</Key><Value>v</Value></Tag>"))
            .collect();
        format!("<Tagging><TagSet>{tags}</TagSet></Tagging>")
    }

    #[test]
    fn fifty_tags_are_allowed_not_fifty_one() {
        assert_eq!(bucket_tags_from_xml(body(50).as_bytes()).unwrap().len(), 50);
        let err = bucket_tags_from_xml(body(51).as_bytes()).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("InvalidTag", 400));
    }

    #[test]
    fn object_tag_rules_hold_for_buckets() {
        for bad in [
            "<Tagging><TagSet><Tag><Key>aws:x</Key><Value>v</Value></Tag></TagSet></Tagging>",
            "<Tagging><TagSet><Tag><Key></Key><Value>v</Value></Tag></TagSet></Tagging>",
            "<Tagging><TagSet><Tag><Key>a</Key></Tag><Tag><Key>a</Key></Tag></TagSet></Tagging>",
        ] {
            assert_eq!(
                bucket_tags_from_xml(bad.as_bytes()).unwrap_err().code,
                "InvalidTag",
                "{bad}"
            );
        }
        assert_eq!(
            bucket_tags_from_xml(b"<Tagging>").unwrap_err().code,
            "MalformedXML"
        );
    }

    #[test]
    fn the_stored_document_lists_tags_in_key_order() {
        let tags = vec![
            ("b".to_owned(), "2".to_owned()),
            ("a".to_owned(), String::new()),
        ];
        let document = tagging_document(tags).unwrap();
        assert!(
            document.contains("<TagSet><Tag><Key>a</Key><Value/></Tag><Tag><Key>b</Key>"),
            "{document}"
        );
    }
}

//! Bucket operations: ListBuckets, CreateBucket, HeadBucket, DeleteBucket,
//! GetBucketLocation.

use std::net::Ipv4Addr;

use axum::response::Response;
use http::{HeaderMap, HeaderName, HeaderValue, StatusCode, header};
use storage_client::{BucketInfo, BucketRef, Owner};

use super::body::read_to_end;
use super::list::{decode_token, encode_token};
use super::ownership_controls;
use super::{empty_response, xml_response};
use crate::auth::Payload;
use crate::error::S3Error;
use crate::router::ListBucketsParams;
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE};

/// A CreateBucketConfiguration is a few hundred bytes; refuse anything huge.
const MAX_CONFIGURATION_BYTES: usize = 64 * 1024;

/// The region S3 reports as an empty LocationConstraint.
const DEFAULT_REGION: &str = "us-east-1";

pub async fn list_buckets(
    state: &AppState,
    owner: &Owner,
    query: ListBucketsParams,
) -> Result<Response, S3Error> {
    let mut buckets = state.storage.list_buckets(owner).await?;
    buckets.sort_by(|a, b| a.name.cmp(&b.name));
    let (page, next) = bucket_page(&buckets, &query)?;
    let document = xml::ListAllMyBucketsResult {
        xmlns: S3_NAMESPACE,
        owner: xml::Owner::from_access_key(&owner.access_key),
        continuation_token: next.map(|last| encode_token(&last.name)),
        prefix: query.prefix,
        buckets: xml::Buckets {
            bucket: page
                .iter()
                .map(|b| xml::BucketEntry {
                    name: b.name.clone(),
                    creation_date: xml::iso8601(b.created),
                    bucket_region: region_of(b).to_owned(),
                })
                .collect(),
        },
    };
    xml_response("ListAllMyBucketsResult", &document)
}

/// The buckets after the continuation token that match the prefix, at most
/// `max_buckets` of them, and the last one listed when more remain.
fn bucket_page<'a>(
    sorted: &'a [BucketInfo],
    query: &ListBucketsParams,
) -> Result<(Vec<&'a BucketInfo>, Option<&'a BucketInfo>), S3Error> {
    let after = query
        .continuation_token
        .as_deref()
        .map(decode_token)
        .transpose()?;
    let prefix = query.prefix.as_deref().unwrap_or("");
    let mut matching = sorted.iter().filter(|b| {
        b.name.starts_with(prefix) && after.as_deref().is_none_or(|after| b.name.as_str() > after)
    });
    let limit = query.max_buckets.unwrap_or(usize::MAX);
    let page: Vec<&BucketInfo> = matching.by_ref().take(limit).collect();
    let next = if matching.next().is_some() {
        page.last().copied()
    } else {
        None
    };
    Ok((page, next))
}

pub async fn create_bucket(
    state: &AppState,
    owner: &Owner,
    headers: &HeaderMap,
    bucket: &str,
    payload: &mut Payload,
) -> Result<Response, S3Error> {
    validate_bucket_name(bucket)?;
    let locked = super::object_lock::requested_at_creation(state, headers)?;
    let acl = super::acl::bucket_acl_at_creation(owner, headers)?;
    let ownership = ownership_controls::ownership_at_creation(headers, acl.as_ref())?;
    let body = read_to_end(payload, MAX_CONFIGURATION_BYTES).await?;
    let constraint = if body.iter().all(u8::is_ascii_whitespace) {
        None
    } else {
        xml::from_xml::<xml::CreateBucketConfiguration>(&body)?
            .location_constraint
            .filter(|c| !c.is_empty())
    };
    // Stored as S3 reports it: empty means us-east-1.
    let region = match constraint.as_deref().unwrap_or(&state.region) {
        DEFAULT_REGION => "",
        other => other,
    };
    state
        .storage
        .create_bucket(BucketRef::new(owner, bucket), region)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    super::acl::store_bucket_acl(state, owner, bucket, acl).await?;
    if let Some(ownership) = ownership {
        ownership_controls::store(state, owner, bucket, ownership).await?;
    }
    if locked {
        super::object_lock::enable_at_creation(state, owner, bucket).await?;
    }
    let mut response = empty_response(StatusCode::OK);
    if let Ok(location) = HeaderValue::from_str(&format!("/{bucket}")) {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

pub async fn head_bucket(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> Result<Response, S3Error> {
    let info = bucket_info(state, owner, bucket).await?;
    let mut response = empty_response(StatusCode::OK);
    if let Ok(region) = HeaderValue::from_str(region_of(&info)) {
        response
            .headers_mut()
            .insert(HeaderName::from_static("x-amz-bucket-region"), region);
    }
    Ok(response)
}

pub async fn delete_bucket(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> Result<Response, S3Error> {
    state
        .storage
        .delete_bucket(BucketRef::new(owner, bucket))
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))?;
    Ok(empty_response(StatusCode::NO_CONTENT))
}

pub async fn get_bucket_location(
    state: &AppState,
    owner: &Owner,
    bucket: &str,
) -> Result<Response, S3Error> {
    let info = bucket_info(state, owner, bucket).await?;
    let document = xml::LocationConstraint {
        xmlns: S3_NAMESPACE,
        region: info.region,
    };
    xml_response("LocationConstraint", &document)
}

async fn bucket_info(state: &AppState, owner: &Owner, bucket: &str) -> Result<BucketInfo, S3Error> {
    state
        .storage
        .bucket_facts(&owner.namespace, bucket)
        .await
        .map_err(|err| S3Error::from(err).naming(bucket, None))
}

fn region_of(info: &BucketInfo) -> &str {
    if info.region.is_empty() {
        DEFAULT_REGION
    } else {
        &info.region
    }
}

/// The S3 bucket naming rules for general purpose buckets.
pub fn validate_bucket_name(name: &str) -> Result<(), S3Error> {
    let bytes = name.as_bytes();
    let allowed = |b: &u8| b.is_ascii_lowercase() || b.is_ascii_digit() || *b == b'.' || *b == b'-';
    let alnum = |b: Option<&u8>| b.is_some_and(|b| b.is_ascii_lowercase() || b.is_ascii_digit());
    let valid = (3..=63).contains(&bytes.len())
        && bytes.iter().all(allowed)
        && alnum(bytes.first())
        && alnum(bytes.last())
        && !name.contains("..")
        // Each dot-separated label is a DNS label: no hyphen next to a dot.
        && !name.contains("-.")
        && !name.contains(".-")
        && name.parse::<Ipv4Addr>().is_err()
        && !name.starts_with("xn--")
        && !name.starts_with("sthree-")
        && !name.ends_with("-s3alias")
        && !name.ends_with("--ol-s3");
    if valid {
        Ok(())
    } else {
        Err(S3Error::invalid_bucket_name(name))
    }
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use super::*;

    #[test]
    fn buckets_are_paged_by_name_after_the_token() {
        let buckets: Vec<BucketInfo> = ["a1", "a2", "a3", "b1"]
            .iter()
            .map(|name| BucketInfo {
                name: (*name).to_owned(),
                owner: "o".into(),
                created: SystemTime::UNIX_EPOCH,
                region: String::new(),
            })
            .collect();
        let names = |page: &[&BucketInfo]| page.iter().map(|b| b.name.clone()).collect::<Vec<_>>();
        let mut query = ListBucketsParams {
            max_buckets: Some(2),
            continuation_token: None,
            prefix: Some("a".into()),
        };
        let (page, next) = bucket_page(&buckets, &query).unwrap();
        assert_eq!(names(&page), ["a1", "a2"]);
        query.continuation_token = next.map(|b| encode_token(&b.name));
        let (page, next) = bucket_page(&buckets, &query).unwrap();
        assert_eq!(names(&page), ["a3"]);
        assert!(next.is_none());

        let all = bucket_page(&buckets, &ListBucketsParams::default()).unwrap();
        assert_eq!(names(&all.0), ["a1", "a2", "a3", "b1"]);
        assert!(all.1.is_none());

        query.continuation_token = Some("not base64!".into());
        assert_eq!(
            bucket_page(&buckets, &query).unwrap_err().code,
            "InvalidArgument"
        );
    }

    #[test]
    fn names_from_the_aws_rules_are_accepted() {
        for name in [
            "docexamplebucket1",
            "log-delivery-march-2020",
            "my-hosted-content",
            "docexamplewebsite.com",
            "www.docexamplewebsite.com",
            "my.example.s3.bucket",
            "abc",
            &"a".repeat(63),
            "1.2.3",
            "192.168.5.4x",
        ] {
            assert!(validate_bucket_name(name).is_ok(), "{name}");
        }
    }

    #[test]
    fn names_breaking_the_aws_rules_are_invalid_bucket_name() {
        for name in [
            "doc_example_bucket",
            "DocExampleBucket",
            "doc-example-bucket-",
            "-docexamplebucket",
            ".docexample",
            "ab",
            &"a".repeat(64),
            "my..bucket",
            "my-.bucket",
            "my.-bucket",
            "192.168.5.4",
            "xn--bucket",
            "sthree-bucket",
            "bucket-s3alias",
            "bucket--ol-s3",
            "_s3gw",
            "bucket name",
            "bücket",
            "",
        ] {
            let err = validate_bucket_name(name).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("InvalidBucketName", 400),
                "{name}"
            );
        }
    }

    #[test]
    fn empty_region_reads_as_us_east_1() {
        let mut info = BucketInfo {
            name: "b".into(),
            owner: "AK".into(),
            created: std::time::SystemTime::UNIX_EPOCH,
            region: String::new(),
        };
        assert_eq!(region_of(&info), "us-east-1");
        info.region = "eu-west-1".into();
        assert_eq!(region_of(&info), "eu-west-1");
    }
}

//! Object tagging: Put/Get/DeleteObjectTagging, and the tag rules every
//! way of setting tags shares (the XML body here, the `x-amz-tagging`
//! header of PutObject, CreateMultipartUpload and CopyObject).

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, StatusCode};
use storage_client::{BucketRef, Owner};

use super::body::read_to_end;
use super::headers::version_headers;
use super::integrity::IntegrityPlan;
use super::{empty_response, xml_response};
use crate::auth::Payload;
use crate::error::{S3Error, S3Result};
use crate::router::Query;
use crate::state::AppState;
use crate::xml::{self, S3_NAMESPACE, Tag, TagSet, Tagging};

/// S3 allows at most 10 tags per object.
const MAX_TAGS: usize = 10;
/// Limits in Unicode characters, not bytes, as AWS counts them.
const MAX_TAG_KEY_CHARS: usize = 128;
const MAX_TAG_VALUE_CHARS: usize = 256;
/// Ten maximal tags in XML stay well under this.
const MAX_TAGGING_BODY: usize = 64 * 1024;

pub type Tags = Vec<(String, String)>;

/// The object version a tagging request names (the latest without one).
pub struct Version<'a> {
    bucket: &'a str,
    key: &'a str,
    version_id: Option<&'a str>,
}

impl<'a> Version<'a> {
    pub fn new(bucket: &'a str, key: &'a str, version_id: Option<&'a str>) -> Self {
        Self {
            bucket,
            key,
            version_id,
        }
    }

    fn naming(&self, err: storage_client::StorageError) -> S3Error {
        S3Error::from(err).naming(self.bucket, Some(self.key))
    }

    async fn put_tags(&self, state: &AppState, owner: &Owner, tags: Tags) -> S3Result<()> {
        state
            .storage
            .put_version_tags(
                BucketRef::new(owner, self.bucket).object(self.key),
                self.version_id,
                tags,
            )
            .await
            .map_err(|err| self.naming(err))
    }

    /// The response with the version's id, as S3 answers a tagging request.
    fn answer(&self, mut response: Response, version_id: Option<&str>) -> Response {
        version_headers(response.headers_mut(), version_id, false);
        response
    }
}

pub async fn put_object_tagging(
    state: &AppState,
    owner: &Owner,
    parts: &Parts,
    object: Version<'_>,
    payload: &mut Payload,
) -> S3Result<Response> {
    let plan = IntegrityPlan::from_headers(&parts.headers)?;
    let body = read_to_end(payload, MAX_TAGGING_BODY).await?;
    plan.verify_body(&body, payload.trailers())?;

    let tags = tags_from_xml(&body)?;
    object.put_tags(state, owner, tags).await?;
    Ok(object.answer(empty_response(StatusCode::OK), object.version_id))
}

pub async fn get_object_tagging(
    state: &AppState,
    owner: &Owner,
    object: Version<'_>,
) -> S3Result<Response> {
    let info = state
        .storage
        .lookup_version(
            BucketRef::new(owner, object.bucket).object(object.key),
            object.version_id,
        )
        .await
        .map_err(|err| object.naming(err))?;
    let document = Tagging {
        xmlns: S3_NAMESPACE,
        tag_set: sorted_tag_set(info.tags),
    };
    Ok(object.answer(
        xml_response("Tagging", &document)?,
        info.version_id.as_deref(),
    ))
}

/// Tags in key order, whatever order they were sent or stored in: s3-tests
/// expects S3's order to be this, and the Ozone OM keeps tags in a hash map,
/// so sorting is also what makes both back ends answer alike.
pub(super) fn sorted_tag_set(mut tags: Tags) -> TagSet {
    tags.sort_unstable_by(|a, b| a.0.cmp(&b.0));
    TagSet {
        tags: tags
            .into_iter()
            .map(|(key, value)| Tag { key, value })
            .collect(),
    }
}

pub async fn delete_object_tagging(
    state: &AppState,
    owner: &Owner,
    object: Version<'_>,
) -> S3Result<Response> {
    object.put_tags(state, owner, Vec::new()).await?;
    Ok(object.answer(empty_response(StatusCode::NO_CONTENT), object.version_id))
}

/// `x-amz-tagging: k1=v1&k2=v2` (URL query encoding), validated; empty
/// when the header is absent.
pub fn tags_from_header(headers: &HeaderMap) -> S3Result<Tags> {
    let Some(value) = headers.get("x-amz-tagging") else {
        return Ok(Vec::new());
    };
    let invalid = || S3Error::invalid_tag("The x-amz-tagging header is not valid.");
    let text = value.to_str().map_err(|_| invalid())?;
    let query = Query::parse(Some(text)).map_err(|_| invalid())?;
    let tags = query.pairs().to_vec();
    validate(&tags)?;
    Ok(tags)
}

/// The tag set of a PutObjectTagging body, checked.
pub fn tags_from_xml(body: &[u8]) -> S3Result<Tags> {
    let tags = parse_tagging(body)?;
    validate(&tags)?;
    Ok(tags)
}

/// The tags of a `Tagging` document, unchecked.
pub(super) fn parse_tagging(body: &[u8]) -> S3Result<Tags> {
    let document: Tagging = xml::from_xml(body)?;
    Ok(document
        .tag_set
        .tags
        .into_iter()
        .map(|tag| (tag.key, tag.value))
        .collect())
}

/// The rules AWS applies to an object's tag set.
fn validate(tags: &[(String, String)]) -> S3Result<()> {
    if tags.len() > MAX_TAGS {
        return Err(S3Error::invalid_tag(
            "Object tags cannot be greater than 10",
        ));
    }
    validate_each(tags)
}

/// The rules every tag of an object or a bucket follows: key and value
/// lengths, no `aws:` keys, no key twice.
pub(super) fn validate_each(tags: &[(String, String)]) -> S3Result<()> {
    for (i, (key, value)) in tags.iter().enumerate() {
        if key.is_empty() || key.chars().count() > MAX_TAG_KEY_CHARS {
            return Err(S3Error::invalid_tag(
                "The TagKey you have provided is invalid",
            ));
        }
        if key.starts_with("aws:") {
            return Err(S3Error::invalid_tag(
                "Your TagKey cannot be prefixed with aws:",
            ));
        }
        if value.chars().count() > MAX_TAG_VALUE_CHARS {
            return Err(S3Error::invalid_tag(
                "The TagValue you have provided is invalid",
            ));
        }
        if tags[..i].iter().any(|(earlier, _)| earlier == key) {
            return Err(S3Error::invalid_tag(
                "Cannot provide multiple Tags with the same key",
            ));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use http::{HeaderName, HeaderValue};

    use super::*;

    fn tagging_header(value: &str) -> S3Result<Tags> {
        let mut headers = HeaderMap::new();
        headers.insert(
            HeaderName::from_static("x-amz-tagging"),
            HeaderValue::from_str(value).unwrap(),
        );
        tags_from_header(&headers)
    }

    fn tags(pairs: &[(&str, &str)]) -> Tags {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn tagging_header_is_parsed_in_order() {
        assert_eq!(
            tagging_header("b=1&a=two%20words&c=").unwrap(),
            tags(&[("b", "1"), ("a", "two words"), ("c", "")])
        );
        assert!(tags_from_header(&HeaderMap::new()).unwrap().is_empty());
    }

    #[test]
    fn tagging_header_breaking_the_rules_is_invalid_tag() {
        let eleven: Vec<String> = (0..11).map(|i| format!("k{i}=v")).collect();
        for bad in [
            eleven.join("&"),
            "a=1&a=2".to_owned(),
            "=v".to_owned(),
            "aws%3Asecret=1".to_owned(),
            format!("k={}", "v".repeat(257)),
            format!("{}=v", "k".repeat(129)),
        ] {
            let err = tagging_header(&bad).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("InvalidTag", 400),
                "{bad}"
            );
        }
    }

    #[test]
    fn limits_count_characters_not_bytes() {
        // 128 and 256 two-byte characters: over the limit in bytes, not in characters.
        let key = "é".repeat(MAX_TAG_KEY_CHARS);
        let value = "ü".repeat(MAX_TAG_VALUE_CHARS);
        assert!(validate(&[(key.clone(), value.clone())]).is_ok());
        assert!(validate(&[(format!("{key}é"), value.clone())]).is_err());
        assert!(validate(&[(key, format!("{value}ü"))]).is_err());
    }

    #[test]
    fn tagging_document_parses_with_namespace_and_empty_values() {
        let body = concat!(
            r#"<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet>"#,
            "<Tag><Key>a</Key><Value/></Tag><Tag><Key>b</Key><Value>2</Value></Tag>",
            "</TagSet></Tagging>",
        );
        let document: Tagging = xml::from_xml(body.as_bytes()).unwrap();
        assert_eq!(
            document.tag_set.tags,
            vec![
                Tag {
                    key: "a".into(),
                    value: String::new()
                },
                Tag {
                    key: "b".into(),
                    value: "2".into()
                },
            ]
        );
        let rendered = xml::to_xml("Tagging", &document).unwrap();
        assert!(
            rendered.contains("<TagSet><Tag><Key>a</Key><Value/></Tag>"),
            "{rendered}"
        );
    }

    #[test]
    fn tag_sets_are_returned_in_key_order() {
        let stored: Tags = vec![
            ("foo".into(), "bar".into()),
            ("bar".into(), String::new()),
            ("baz".into(), "1".into()),
        ];
        let keys: Vec<String> = sorted_tag_set(stored)
            .tags
            .into_iter()
            .map(|tag| tag.key)
            .collect();
        assert_eq!(keys, ["bar", "baz", "foo"]);
    }

    #[test]
    fn ten_tags_are_allowed() {
        let ten: Tags = (0..10).map(|i| (format!("k{i}"), "v".to_owned())).collect();
        assert!(validate(&ten).is_ok());
    }
}

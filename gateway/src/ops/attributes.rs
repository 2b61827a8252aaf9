//! GetObjectAttributes: the attributes named in `x-amz-object-attributes`
//! (ETag, Checksum, ObjectParts, StorageClass, ObjectSize) of the latest
//! version or the one `versionId` names, from one metadata lookup, without
//! reading the object. An encrypted object is checked as HEAD checks it
//! (an SSE-C one needs its key) and described by its plaintext sizes.

use axum::response::Response;
use http::request::Parts;
use http::{HeaderMap, header};
use storage_client::KeyInfo;

use super::authorise::ObjectVersion;
use super::headers::{http_date, insert, version_headers};
use super::put::STORAGE_CLASS;
use super::sse::Keys;
use super::sse::read::{Opened, Purpose, client_sizes};
use super::xml_response;
use crate::error::{S3Error, S3Result};
use crate::state::AppState;
use crate::xml::{
    ChecksumValues, GetObjectAttributesResponse, ObjectPart, ObjectParts, S3_NAMESPACE,
};

const OBJECT_ATTRIBUTES: &str = "x-amz-object-attributes";
const MAX_PARTS: &str = "x-amz-max-parts";
const PART_NUMBER_MARKER: &str = "x-amz-part-number-marker";
/// AWS's default and cap for parts listed in one answer.
const DEFAULT_MAX_PARTS: usize = 1000;

/// Which attributes the client asked for.
#[derive(Debug, Default, PartialEq, Eq)]
struct Wanted {
    etag: bool,
    checksum: bool,
    object_parts: bool,
    storage_class: bool,
    object_size: bool,
}

/// Where a part listing starts and how long it may be.
#[derive(Debug, PartialEq, Eq)]
struct PartPage {
    max_parts: usize,
    marker: u16,
}

pub async fn get_object_attributes(
    state: &AppState,
    object: ObjectVersion<'_>,
    parts: &Parts,
) -> S3Result<Response> {
    let headers = &parts.headers;
    let wanted = wanted_attributes(headers)?;
    let page = part_page(headers)?;
    let customer_key = super::sse::customer_key(state, parts)?;
    let info = object.resolve(state).await?;
    let opened = Opened::check(
        &info,
        customer_key.as_ref(),
        Keys::of(state),
        Purpose::Describe,
    )
    .await?;
    let (size, part_sizes) = client_sizes(opened.as_ref(), &info);

    let document = GetObjectAttributesResponse {
        xmlns: S3_NAMESPACE,
        etag: wanted.etag.then(|| info.etag.clone()),
        checksum: info
            .checksum
            .as_ref()
            .filter(|_| wanted.checksum)
            .and_then(ChecksumValues::from_stored),
        object_parts: wanted
            .object_parts
            .then(|| object_parts(&info, &part_sizes, &page))
            .flatten(),
        storage_class: wanted.storage_class.then_some(STORAGE_CLASS),
        object_size: wanted.object_size.then_some(size),
    };
    let mut response = xml_response("GetObjectAttributesResponse", &document)?;
    insert(
        response.headers_mut(),
        header::LAST_MODIFIED,
        &http_date(info.last_modified),
    );
    version_headers(response.headers_mut(), info.version_id.as_deref(), false);
    Ok(response)
}

/// `x-amz-object-attributes`: a comma-separated list, possibly spread over
/// several header lines; required, and every name must be known.
fn wanted_attributes(headers: &HeaderMap) -> S3Result<Wanted> {
    let mut wanted = Wanted::default();
    let mut any = false;
    for value in headers.get_all(OBJECT_ATTRIBUTES) {
        let text = value.to_str().map_err(|_| invalid_attribute())?;
        for name in text.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            let flag = match name {
                "ETag" => &mut wanted.etag,
                "Checksum" => &mut wanted.checksum,
                "ObjectParts" => &mut wanted.object_parts,
                "StorageClass" => &mut wanted.storage_class,
                "ObjectSize" => &mut wanted.object_size,
                _ => return Err(invalid_attribute()),
            };
            *flag = true;
            any = true;
        }
    }
    if !any {
        return Err(S3Error::invalid_argument(
            "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty",
        )
        .with("ArgumentName", OBJECT_ATTRIBUTES));
    }
    Ok(wanted)
}

fn invalid_attribute() -> S3Error {
    S3Error::invalid_argument("Invalid attribute name specified.")
        .with("ArgumentName", OBJECT_ATTRIBUTES)
}

fn part_page(headers: &HeaderMap) -> S3Result<PartPage> {
    let number = |name: &'static str| -> S3Result<Option<u64>> {
        let Some(value) = headers.get(name) else {
            return Ok(None);
        };
        let text = value.to_str().unwrap_or_default().trim();
        text.parse::<u64>().map(Some).map_err(|_| {
            S3Error::invalid_argument(format!(
                "Provided {name} not an integer or within integer range"
            ))
            .with("ArgumentName", name)
            .with("ArgumentValue", text)
        })
    };
    let max_parts = number(MAX_PARTS)?.map_or(DEFAULT_MAX_PARTS, |n| {
        usize::try_from(n).map_or(DEFAULT_MAX_PARTS, |n| n.min(DEFAULT_MAX_PARTS))
    });
    // Part numbers end at 10000, so a larger marker simply lists nothing.
    let marker = number(PART_NUMBER_MARKER)?.map_or(0, |n| u16::try_from(n).unwrap_or(u16::MAX));
    Ok(PartPage { max_parts, marker })
}

/// The part listing of a multipart object, its parts `sizes` as the client
/// sent them (in the order of `info.parts`); `None` for a single-part one,
/// which AWS answers without `ObjectParts`.
fn object_parts(info: &KeyInfo, sizes: &[u64], page: &PartPage) -> Option<ObjectParts> {
    if info.parts.is_empty() {
        return None;
    }
    let mut after_marker = info
        .parts
        .iter()
        .zip(sizes)
        .filter(|(p, _)| p.number > page.marker);
    let listed: Vec<ObjectPart> = after_marker
        .by_ref()
        .take(page.max_parts)
        .map(|(part, &size)| ObjectPart {
            part_number: part.number,
            size,
            checksum: part
                .checksum
                .as_ref()
                .and_then(ChecksumValues::from_stored_part),
        })
        .collect();
    let is_truncated = after_marker.next().is_some();
    Some(ObjectParts {
        is_truncated,
        max_parts: page.max_parts,
        part_number_marker: page.marker,
        next_part_number_marker: listed.last().map_or(page.marker, |p| p.part_number),
        parts: listed,
        parts_count: info.parts.len(),
    })
}

#[cfg(test)]
mod tests {
    use std::time::SystemTime;

    use storage_client::{
        ChecksumAlgorithm, ChecksumType, ObjectChecksum, ObjectMeta, PartSummary,
    };

    use super::*;
    use crate::ops::test_headers as headers;

    fn sizes(info: &KeyInfo) -> Vec<u64> {
        info.parts.iter().map(|part| part.size).collect()
    }

    fn multipart(parts: u16) -> KeyInfo {
        KeyInfo {
            bucket: "b".into(),
            key: "k".into(),
            size: u64::from(parts) * 5,
            etag: "abc-3".into(),
            last_modified: SystemTime::UNIX_EPOCH,
            owner: "AK".into(),
            meta: ObjectMeta::default(),
            tags: vec![],
            checksum: None,
            locations: vec![],
            parts: (1..=parts)
                .map(|number| PartSummary {
                    number,
                    size: 5,
                    etag: format!("p{number}"),
                    checksum: None,
                })
                .collect(),
            version_id: None,
        }
    }

    #[test]
    fn attribute_names_are_read_from_one_or_several_headers() {
        let wanted = wanted_attributes(&headers(&[
            (OBJECT_ATTRIBUTES, "ETag, ObjectSize"),
            (OBJECT_ATTRIBUTES, "StorageClass"),
        ]))
        .unwrap();
        assert_eq!(
            wanted,
            Wanted {
                etag: true,
                storage_class: true,
                object_size: true,
                ..Wanted::default()
            }
        );
    }

    #[test]
    fn missing_or_unknown_attributes_are_invalid_arguments() {
        for request in [
            vec![],
            vec![(OBJECT_ATTRIBUTES, "")],
            vec![(OBJECT_ATTRIBUTES, "ETag,Owner")],
            vec![(OBJECT_ATTRIBUTES, "etag")],
        ] {
            let err = wanted_attributes(&headers(&request)).unwrap_err();
            assert_eq!(
                (err.code, err.status.as_u16()),
                ("InvalidArgument", 400),
                "{request:?}"
            );
        }
    }

    #[test]
    fn part_paging_headers() {
        assert_eq!(
            part_page(&headers(&[])).unwrap(),
            PartPage {
                max_parts: 1000,
                marker: 0
            }
        );
        assert_eq!(
            part_page(&headers(&[(MAX_PARTS, "2"), (PART_NUMBER_MARKER, "1")])).unwrap(),
            PartPage {
                max_parts: 2,
                marker: 1
            }
        );
        for bad in [(MAX_PARTS, "-1"), (PART_NUMBER_MARKER, "x")] {
            assert_eq!(
                part_page(&headers(&[bad])).unwrap_err().code,
                "InvalidArgument"
            );
        }
    }

    #[test]
    fn parts_are_listed_in_pages() {
        let info = multipart(3);
        let first = object_parts(
            &info,
            &sizes(&info),
            &PartPage {
                max_parts: 2,
                marker: 0,
            },
        )
        .unwrap();
        assert!(first.is_truncated);
        assert_eq!(first.parts_count, 3);
        assert_eq!(first.next_part_number_marker, 2);
        assert_eq!(
            first
                .parts
                .iter()
                .map(|p| p.part_number)
                .collect::<Vec<_>>(),
            vec![1, 2]
        );
        let rest = object_parts(
            &info,
            &sizes(&info),
            &PartPage {
                max_parts: 2,
                marker: 2,
            },
        )
        .unwrap();
        assert!(!rest.is_truncated);
        assert_eq!(
            rest.parts.iter().map(|p| p.part_number).collect::<Vec<_>>(),
            vec![3]
        );
        assert!(
            object_parts(
                &multipart(0),
                &[],
                &PartPage {
                    max_parts: 2,
                    marker: 0
                }
            )
            .is_none()
        );
    }

    #[test]
    fn response_renders_in_the_aws_shape() {
        let mut info = multipart(2);
        info.parts[0].checksum = Some(ObjectChecksum {
            algorithm: ChecksumAlgorithm::Crc32,
            value: "AAAAAA==".into(),
            kind: ChecksumType::FullObject,
        });
        let page = PartPage {
            max_parts: 1,
            marker: 0,
        };
        let document = GetObjectAttributesResponse {
            xmlns: S3_NAMESPACE,
            etag: Some(info.etag.clone()),
            object_parts: object_parts(&info, &sizes(&info), &page),
            object_size: Some(info.size),
            ..GetObjectAttributesResponse::default()
        };
        let xml = crate::xml::to_xml("GetObjectAttributesResponse", &document).unwrap();
        let expected = concat!(
            "<ETag>abc-3</ETag>",
            "<ObjectParts><IsTruncated>true</IsTruncated><MaxParts>1</MaxParts>",
            "<PartNumberMarker>0</PartNumberMarker><NextPartNumberMarker>1</NextPartNumberMarker>",
            "<Part><PartNumber>1</PartNumber><Size>5</Size><ChecksumCRC32>AAAAAA==</ChecksumCRC32></Part>",
            "<PartsCount>2</PartsCount></ObjectParts><ObjectSize>10</ObjectSize>",
        );
        assert!(xml.contains(expected), "{xml}");
        assert!(!xml.contains("ChecksumType"), "{xml}");
        assert!(!xml.contains("StorageClass"), "{xml}");
    }
}

//! Request and response bodies: serde DTOs rendered and parsed by quick-xml.
//!
//! Field names are the S3 element names, so each struct reads like the AWS
//! API reference. Timestamps are pre-formatted strings (see [`iso8601`]).

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use storage_client::ChecksumAlgorithm;
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::error::S3Error;

pub const S3_NAMESPACE: &str = "http://s3.amazonaws.com/doc/2006-03-01/";

const XML_DECLARATION: &str = r#"<?xml version="1.0" encoding="UTF-8"?>"#;

/// Serializes `value` as the root element `root`, with the XML declaration.
pub fn to_xml<T: Serialize>(root: &str, value: &T) -> Result<String, S3Error> {
    let body = quick_xml::se::to_string_with_root(root, value)
        .map_err(|err| S3Error::internal(format!("rendering {root}: {err}")))?;
    Ok(format!("{XML_DECLARATION}{body}"))
}

/// Parses a request body; anything that is not the expected document is
/// the client's MalformedXML.
pub fn from_xml<'de, T: Deserialize<'de>>(body: &'de [u8]) -> Result<T, S3Error> {
    let text = std::str::from_utf8(body).map_err(|_| S3Error::malformed_xml())?;
    quick_xml::de::from_str(text).map_err(|_| S3Error::malformed_xml())
}

/// S3's timestamp format in XML bodies: `2009-10-12T17:50:30.000Z`.
pub fn iso8601(at: SystemTime) -> String {
    let at = OffsetDateTime::from(at);
    let millis = at.millisecond();
    let at = at.replace_nanosecond(0).unwrap_or(at);
    let text = at.format(&Rfc3339).unwrap_or_default();
    // Rfc3339 renders whole seconds as `...:30Z`; S3 always shows milliseconds.
    match text.strip_suffix('Z') {
        Some(head) => format!("{head}.{millis:03}Z"),
        None => text,
    }
}

#[derive(Debug, Serialize, PartialEq)]
pub struct Owner {
    #[serde(rename = "ID")]
    pub id: String,
    #[serde(rename = "DisplayName")]
    pub display_name: String,
}

impl Owner {
    /// Our owners are access keys, shown by their canonical id as ID and
    /// as DisplayName alike (an ACL knows grantees by id only, and the
    /// two must agree wherever an owner appears).
    pub fn from_access_key(access_key: &str) -> Self {
        Self::from_canonical_id(crate::access_control::owner::canonical_id(access_key))
    }

    pub fn from_canonical_id(id: String) -> Self {
        Self {
            display_name: id.clone(),
            id,
        }
    }
}

// ---- ListBuckets ----

#[derive(Debug, Serialize)]
pub struct ListAllMyBucketsResult {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Owner")]
    pub owner: Owner,
    #[serde(rename = "Buckets")]
    pub buckets: Buckets,
    /// Where the next page starts; only when this one is truncated.
    #[serde(rename = "ContinuationToken", skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
    #[serde(rename = "Prefix", skip_serializing_if = "Option::is_none")]
    pub prefix: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct Buckets {
    #[serde(rename = "Bucket", default)]
    pub bucket: Vec<BucketEntry>,
}

#[derive(Debug, Serialize)]
pub struct BucketEntry {
    #[serde(rename = "Name")]
    pub name: String,
    #[serde(rename = "CreationDate")]
    pub creation_date: String,
    #[serde(rename = "BucketRegion")]
    pub bucket_region: String,
}

// ---- CreateBucket / GetBucketLocation ----

#[derive(Debug, Deserialize, Default, PartialEq)]
pub struct CreateBucketConfiguration {
    #[serde(rename = "LocationConstraint", default)]
    pub location_constraint: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct LocationConstraint {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    /// Empty for us-east-1, as AWS answers.
    #[serde(rename = "$text")]
    pub region: String,
}

/// GetBucketVersioning's answer: no `Status` for a bucket never versioned.
#[derive(Debug, Serialize)]
pub struct VersioningConfiguration {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Status", skip_serializing_if = "Option::is_none")]
    pub status: Option<&'static str>,
}

/// PutBucketVersioning's body.
#[derive(Debug, Deserialize, PartialEq)]
pub struct VersioningRequest {
    #[serde(rename = "Status", default)]
    pub status: Option<String>,
    #[serde(rename = "MfaDelete", default)]
    pub mfa_delete: Option<String>,
}

// ---- ListObjects v1 / v2 / ListObjectVersions ----

#[derive(Debug, Serialize)]
pub struct ListBucketResultV2 {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Name")]
    pub name: String,
    #[serde(rename = "Prefix")]
    pub prefix: String,
    #[serde(rename = "Delimiter", skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    #[serde(rename = "MaxKeys")]
    pub max_keys: usize,
    #[serde(rename = "EncodingType", skip_serializing_if = "Option::is_none")]
    pub encoding_type: Option<&'static str>,
    #[serde(rename = "KeyCount")]
    pub key_count: usize,
    #[serde(rename = "IsTruncated")]
    pub is_truncated: bool,
    #[serde(rename = "ContinuationToken", skip_serializing_if = "Option::is_none")]
    pub continuation_token: Option<String>,
    #[serde(
        rename = "NextContinuationToken",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_continuation_token: Option<String>,
    #[serde(rename = "StartAfter", skip_serializing_if = "Option::is_none")]
    pub start_after: Option<String>,
    #[serde(rename = "Contents")]
    pub contents: Vec<Object>,
    #[serde(rename = "CommonPrefixes")]
    pub common_prefixes: Vec<CommonPrefix>,
}

#[derive(Debug, Serialize)]
pub struct ListBucketResultV1 {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Name")]
    pub name: String,
    #[serde(rename = "Prefix")]
    pub prefix: String,
    #[serde(rename = "Marker")]
    pub marker: String,
    #[serde(rename = "NextMarker", skip_serializing_if = "Option::is_none")]
    pub next_marker: Option<String>,
    #[serde(rename = "MaxKeys")]
    pub max_keys: usize,
    #[serde(rename = "Delimiter", skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    #[serde(rename = "EncodingType", skip_serializing_if = "Option::is_none")]
    pub encoding_type: Option<&'static str>,
    #[serde(rename = "IsTruncated")]
    pub is_truncated: bool,
    #[serde(rename = "Contents")]
    pub contents: Vec<Object>,
    #[serde(rename = "CommonPrefixes")]
    pub common_prefixes: Vec<CommonPrefix>,
}

#[derive(Debug, Serialize)]
pub struct ListVersionsResult {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Name")]
    pub name: String,
    #[serde(rename = "Prefix")]
    pub prefix: String,
    #[serde(rename = "KeyMarker")]
    pub key_marker: String,
    #[serde(rename = "VersionIdMarker")]
    pub version_id_marker: String,
    #[serde(rename = "NextKeyMarker", skip_serializing_if = "Option::is_none")]
    pub next_key_marker: Option<String>,
    #[serde(
        rename = "NextVersionIdMarker",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_version_id_marker: Option<String>,
    #[serde(rename = "MaxKeys")]
    pub max_keys: usize,
    #[serde(rename = "Delimiter", skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    #[serde(rename = "EncodingType", skip_serializing_if = "Option::is_none")]
    pub encoding_type: Option<&'static str>,
    #[serde(rename = "IsTruncated")]
    pub is_truncated: bool,
    /// Versions and delete markers, interleaved in listing order.
    #[serde(rename = "$value")]
    pub entries: Vec<VersionElement>,
    #[serde(rename = "CommonPrefixes")]
    pub common_prefixes: Vec<CommonPrefix>,
}

/// One `<Contents>` entry of a listing.
#[derive(Debug, Serialize)]
pub struct Object {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "LastModified")]
    pub last_modified: String,
    /// Quoted, as in the ETag header; none for a key written without one
    /// (by Ozone's shell or `ofs://`).
    #[serde(rename = "ETag", skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(rename = "Size")]
    pub size: u64,
    #[serde(rename = "Owner", skip_serializing_if = "Option::is_none")]
    pub owner: Option<Owner>,
    #[serde(rename = "StorageClass")]
    pub storage_class: &'static str,
}

#[derive(Debug, Serialize)]
pub enum VersionElement {
    Version(ObjectVersion),
    DeleteMarker(DeleteMarkerEntry),
}

#[derive(Debug, Serialize)]
pub struct DeleteMarkerEntry {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "VersionId")]
    pub version_id: String,
    #[serde(rename = "IsLatest")]
    pub is_latest: bool,
    #[serde(rename = "LastModified")]
    pub last_modified: String,
    #[serde(rename = "Owner")]
    pub owner: Owner,
}

#[derive(Debug, Serialize)]
pub struct ObjectVersion {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "VersionId")]
    pub version_id: String,
    #[serde(rename = "IsLatest")]
    pub is_latest: bool,
    #[serde(rename = "LastModified")]
    pub last_modified: String,
    #[serde(rename = "ETag")]
    pub etag: String,
    #[serde(rename = "Size")]
    pub size: u64,
    #[serde(rename = "Owner")]
    pub owner: Owner,
    #[serde(rename = "StorageClass")]
    pub storage_class: &'static str,
}

#[derive(Debug, Serialize)]
pub struct CommonPrefix {
    #[serde(rename = "Prefix")]
    pub prefix: String,
}

// ---- DeleteObjects ----

#[derive(Debug, Deserialize, PartialEq)]
pub struct Delete {
    #[serde(rename = "Object", default)]
    pub objects: Vec<ObjectIdentifier>,
    #[serde(rename = "Quiet", default)]
    pub quiet: bool,
}

#[derive(Debug, Default, Deserialize, PartialEq)]
pub struct ObjectIdentifier {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "VersionId", default)]
    pub version_id: Option<String>,
    /// A conditional delete's conditions on the current object.
    #[serde(rename = "ETag", default)]
    pub etag: Option<String>,
    #[serde(rename = "LastModifiedTime", default)]
    pub last_modified_time: Option<String>,
    #[serde(rename = "Size", default)]
    pub size: Option<String>,
}

#[derive(Debug, Serialize, Default)]
pub struct DeleteResult {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Deleted")]
    pub deleted: Vec<DeletedObject>,
    #[serde(rename = "Error")]
    pub errors: Vec<DeleteError>,
}

#[derive(Debug, Serialize)]
pub struct DeletedObject {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "VersionId", skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    #[serde(rename = "DeleteMarker", skip_serializing_if = "Option::is_none")]
    pub delete_marker: Option<bool>,
    #[serde(
        rename = "DeleteMarkerVersionId",
        skip_serializing_if = "Option::is_none"
    )]
    pub delete_marker_version_id: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct DeleteError {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "VersionId", skip_serializing_if = "Option::is_none")]
    pub version_id: Option<String>,
    #[serde(rename = "Code")]
    pub code: &'static str,
    #[serde(rename = "Message")]
    pub message: String,
}

// ---- Object tagging ----

/// PutObjectTagging's body and GetObjectTagging's answer.
#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct Tagging {
    #[serde(rename = "@xmlns", skip_deserializing)]
    pub xmlns: &'static str,
    #[serde(rename = "TagSet")]
    pub tag_set: TagSet,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct TagSet {
    #[serde(rename = "Tag", default)]
    pub tags: Vec<Tag>,
}

#[derive(Debug, Serialize, Deserialize, PartialEq)]
pub struct Tag {
    #[serde(rename = "Key")]
    pub key: String,
    /// An empty value may be sent as `<Value/>` or left out.
    #[serde(rename = "Value", default)]
    pub value: String,
}

// ---- CopyObject / GetObjectAttributes ----

/// A stored checksum under its algorithm's element name, as CopyObjectResult
/// and GetObjectAttributes' `<Checksum>` show it.
#[derive(Debug, Serialize, Default, PartialEq)]
pub struct ChecksumValues {
    #[serde(rename = "ChecksumCRC32", skip_serializing_if = "Option::is_none")]
    pub crc32: Option<String>,
    #[serde(rename = "ChecksumCRC32C", skip_serializing_if = "Option::is_none")]
    pub crc32c: Option<String>,
    #[serde(rename = "ChecksumCRC64NVME", skip_serializing_if = "Option::is_none")]
    pub crc64nvme: Option<String>,
    #[serde(rename = "ChecksumSHA1", skip_serializing_if = "Option::is_none")]
    pub sha1: Option<String>,
    #[serde(rename = "ChecksumSHA256", skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    #[serde(rename = "ChecksumType", skip_serializing_if = "Option::is_none")]
    pub checksum_type: Option<String>,
}

impl ChecksumValues {
    /// `None` for an object stored without a checksum (or with an algorithm
    /// this version does not know).
    pub fn from_stored(checksum: &storage_client::ObjectChecksum) -> Option<Self> {
        let mut values = Self {
            checksum_type: Some(checksum.kind.name().to_owned()),
            ..Self::default()
        };
        let slot = match checksum.algorithm {
            ChecksumAlgorithm::Crc32 => &mut values.crc32,
            ChecksumAlgorithm::Crc32c => &mut values.crc32c,
            ChecksumAlgorithm::Crc64Nvme => &mut values.crc64nvme,
            ChecksumAlgorithm::Sha1 => &mut values.sha1,
            ChecksumAlgorithm::Sha256 => &mut values.sha256,
        };
        *slot = Some(checksum.value.clone());
        Some(values)
    }

    /// A part's checksum, which S3 reports without a type: the type
    /// belongs to the object the parts make up.
    pub fn from_stored_part(checksum: &storage_client::ObjectChecksum) -> Option<Self> {
        Self::from_stored(checksum).map(|values| Self {
            checksum_type: None,
            ..values
        })
    }
}

#[derive(Debug, Serialize)]
pub struct CopyObjectResult {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    /// Quoted, as in the ETag header.
    #[serde(rename = "ETag")]
    pub etag: String,
    #[serde(rename = "LastModified")]
    pub last_modified: String,
    #[serde(flatten)]
    pub checksum: Option<ChecksumValues>,
}

/// Only the attributes the client asked for are present.
#[derive(Debug, Serialize, Default)]
pub struct GetObjectAttributesResponse {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    /// Unquoted, unlike everywhere else: AWS answers it this way.
    #[serde(rename = "ETag", skip_serializing_if = "Option::is_none")]
    pub etag: Option<String>,
    #[serde(rename = "Checksum", skip_serializing_if = "Option::is_none")]
    pub checksum: Option<ChecksumValues>,
    #[serde(rename = "ObjectParts", skip_serializing_if = "Option::is_none")]
    pub object_parts: Option<ObjectParts>,
    #[serde(rename = "StorageClass", skip_serializing_if = "Option::is_none")]
    pub storage_class: Option<&'static str>,
    #[serde(rename = "ObjectSize", skip_serializing_if = "Option::is_none")]
    pub object_size: Option<u64>,
}

#[derive(Debug, Serialize)]
pub struct ObjectParts {
    #[serde(rename = "IsTruncated")]
    pub is_truncated: bool,
    #[serde(rename = "MaxParts")]
    pub max_parts: usize,
    #[serde(rename = "PartNumberMarker")]
    pub part_number_marker: u16,
    #[serde(rename = "NextPartNumberMarker")]
    pub next_part_number_marker: u16,
    #[serde(rename = "Part")]
    pub parts: Vec<ObjectPart>,
    #[serde(rename = "PartsCount")]
    pub parts_count: usize,
}

#[derive(Debug, Serialize)]
pub struct ObjectPart {
    #[serde(rename = "PartNumber")]
    pub part_number: u16,
    #[serde(rename = "Size")]
    pub size: u64,
    #[serde(flatten)]
    pub checksum: Option<ChecksumValues>,
}

// ---- Multipart uploads ----

#[derive(Debug, Serialize)]
pub struct InitiateMultipartUploadResult {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Bucket")]
    pub bucket: String,
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "UploadId")]
    pub upload_id: String,
}

/// CompleteMultipartUpload's request body.
#[derive(Debug, Deserialize, PartialEq)]
pub struct CompleteMultipartUpload {
    #[serde(rename = "Part", default)]
    pub parts: Vec<CompletedPart>,
}

#[derive(Debug, Deserialize, PartialEq)]
pub struct CompletedPart {
    #[serde(rename = "PartNumber")]
    pub part_number: u32,
    #[serde(rename = "ETag")]
    pub etag: String,
    #[serde(rename = "ChecksumCRC32", default)]
    pub crc32: Option<String>,
    #[serde(rename = "ChecksumCRC32C", default)]
    pub crc32c: Option<String>,
    #[serde(rename = "ChecksumCRC64NVME", default)]
    pub crc64nvme: Option<String>,
    #[serde(rename = "ChecksumSHA1", default)]
    pub sha1: Option<String>,
    #[serde(rename = "ChecksumSHA256", default)]
    pub sha256: Option<String>,
}

impl CompletedPart {
    /// The checksum the client sent for this part under `algorithm`'s element.
    pub fn checksum(&self, algorithm: ChecksumAlgorithm) -> Option<&str> {
        match algorithm {
            ChecksumAlgorithm::Crc32 => self.crc32.as_deref(),
            ChecksumAlgorithm::Crc32c => self.crc32c.as_deref(),
            ChecksumAlgorithm::Crc64Nvme => self.crc64nvme.as_deref(),
            ChecksumAlgorithm::Sha1 => self.sha1.as_deref(),
            ChecksumAlgorithm::Sha256 => self.sha256.as_deref(),
        }
    }
}

#[derive(Debug, Serialize)]
pub struct CompleteMultipartUploadResult {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Location")]
    pub location: String,
    #[serde(rename = "Bucket")]
    pub bucket: String,
    #[serde(rename = "Key")]
    pub key: String,
    /// Quoted, as in the ETag header.
    #[serde(rename = "ETag")]
    pub etag: String,
    #[serde(flatten)]
    pub checksum: Option<ChecksumValues>,
}

#[derive(Debug, Serialize)]
pub struct ListPartsResult {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Bucket")]
    pub bucket: String,
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "UploadId")]
    pub upload_id: String,
    #[serde(rename = "PartNumberMarker")]
    pub part_number_marker: u16,
    #[serde(
        rename = "NextPartNumberMarker",
        skip_serializing_if = "Option::is_none"
    )]
    pub next_part_number_marker: Option<u16>,
    #[serde(rename = "MaxParts")]
    pub max_parts: usize,
    #[serde(rename = "IsTruncated")]
    pub is_truncated: bool,
    #[serde(rename = "Part")]
    pub parts: Vec<ListedPart>,
    #[serde(rename = "Initiator")]
    pub initiator: Owner,
    #[serde(rename = "Owner")]
    pub owner: Owner,
    #[serde(rename = "StorageClass")]
    pub storage_class: &'static str,
    #[serde(rename = "ChecksumAlgorithm", skip_serializing_if = "Option::is_none")]
    pub checksum_algorithm: Option<String>,
    #[serde(rename = "ChecksumType", skip_serializing_if = "Option::is_none")]
    pub checksum_type: Option<String>,
}

#[derive(Debug, Serialize)]
pub struct ListedPart {
    #[serde(rename = "PartNumber")]
    pub part_number: u16,
    #[serde(rename = "LastModified")]
    pub last_modified: String,
    /// Quoted, as in the ETag header.
    #[serde(rename = "ETag")]
    pub etag: String,
    #[serde(rename = "Size")]
    pub size: u64,
    #[serde(flatten)]
    pub checksum: Option<ChecksumValues>,
}

#[derive(Debug, Serialize)]
pub struct ListMultipartUploadsResult {
    #[serde(rename = "@xmlns")]
    pub xmlns: &'static str,
    #[serde(rename = "Bucket")]
    pub bucket: String,
    #[serde(rename = "KeyMarker")]
    pub key_marker: String,
    #[serde(rename = "UploadIdMarker")]
    pub upload_id_marker: String,
    #[serde(rename = "NextKeyMarker", skip_serializing_if = "Option::is_none")]
    pub next_key_marker: Option<String>,
    #[serde(rename = "NextUploadIdMarker", skip_serializing_if = "Option::is_none")]
    pub next_upload_id_marker: Option<String>,
    #[serde(rename = "Prefix")]
    pub prefix: String,
    #[serde(rename = "Delimiter", skip_serializing_if = "Option::is_none")]
    pub delimiter: Option<String>,
    #[serde(rename = "MaxUploads")]
    pub max_uploads: usize,
    #[serde(rename = "EncodingType", skip_serializing_if = "Option::is_none")]
    pub encoding_type: Option<&'static str>,
    #[serde(rename = "IsTruncated")]
    pub is_truncated: bool,
    #[serde(rename = "Upload")]
    pub uploads: Vec<MultipartUpload>,
    #[serde(rename = "CommonPrefixes")]
    pub common_prefixes: Vec<CommonPrefix>,
}

#[derive(Debug, Serialize)]
pub struct MultipartUpload {
    #[serde(rename = "Key")]
    pub key: String,
    #[serde(rename = "UploadId")]
    pub upload_id: String,
    #[serde(rename = "Initiator")]
    pub initiator: Owner,
    #[serde(rename = "Owner")]
    pub owner: Owner,
    #[serde(rename = "StorageClass")]
    pub storage_class: &'static str,
    #[serde(rename = "Initiated")]
    pub initiated: String,
    #[serde(rename = "ChecksumAlgorithm", skip_serializing_if = "Option::is_none")]
    pub checksum_algorithm: Option<String>,
    #[serde(rename = "ChecksumType", skip_serializing_if = "Option::is_none")]
    pub checksum_type: Option<String>,
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn timestamps_always_carry_milliseconds() {
        let at = SystemTime::UNIX_EPOCH + Duration::from_millis(1_255_369_830_000);
        assert_eq!(iso8601(at), "2009-10-12T17:50:30.000Z");
        let at = SystemTime::UNIX_EPOCH + Duration::from_micros(1_255_369_830_123_456);
        assert_eq!(iso8601(at), "2009-10-12T17:50:30.123Z");
    }

    #[test]
    fn list_all_my_buckets_matches_the_aws_shape() {
        let doc = ListAllMyBucketsResult {
            xmlns: S3_NAMESPACE,
            owner: Owner::from_access_key("AKID"),
            continuation_token: None,
            prefix: None,
            buckets: Buckets {
                bucket: vec![BucketEntry {
                    name: "b1".into(),
                    creation_date: "2019-12-11T23:32:47.000Z".into(),
                    bucket_region: "us-east-1".into(),
                }],
            },
        };
        let id = crate::access_control::owner::canonical_id("AKID");
        assert_eq!(
            to_xml("ListAllMyBucketsResult", &doc).unwrap(),
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\
             <ListAllMyBucketsResult xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\
             <Owner><ID>{id}</ID><DisplayName>{id}</DisplayName></Owner>\
             <Buckets><Bucket><Name>b1</Name><CreationDate>2019-12-11T23:32:47.000Z</CreationDate>\
             <BucketRegion>us-east-1</BucketRegion></Bucket></Buckets></ListAllMyBucketsResult>"
            )
        );
    }

    #[test]
    fn empty_bucket_list_still_has_a_buckets_element() {
        let doc = ListAllMyBucketsResult {
            xmlns: S3_NAMESPACE,
            owner: Owner::from_access_key("A"),
            continuation_token: None,
            prefix: None,
            buckets: Buckets { bucket: vec![] },
        };
        let xml = to_xml("ListAllMyBucketsResult", &doc).unwrap();
        assert!(
            xml.contains("</Owner><Buckets/></ListAllMyBucketsResult>"),
            "{xml}"
        );
    }

    #[test]
    fn location_constraint_is_empty_for_us_east_1() {
        let doc = LocationConstraint {
            xmlns: S3_NAMESPACE,
            region: String::new(),
        };
        let xml = to_xml("LocationConstraint", &doc).unwrap();
        assert!(
            xml.ends_with(
                "<LocationConstraint xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\"/>"
            ),
            "{xml}"
        );
        let doc = LocationConstraint {
            xmlns: S3_NAMESPACE,
            region: "eu-west-1".into(),
        };
        assert!(
            to_xml("LocationConstraint", &doc)
                .unwrap()
                .ends_with(">eu-west-1</LocationConstraint>")
        );
    }

    #[test]
    fn create_bucket_configuration_parses_with_namespace() {
        let body = br#"<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <LocationConstraint>eu-west-1</LocationConstraint>
        </CreateBucketConfiguration>"#;
        let parsed: CreateBucketConfiguration = from_xml(body).unwrap();
        assert_eq!(parsed.location_constraint.as_deref(), Some("eu-west-1"));
        let parsed: CreateBucketConfiguration = from_xml(b"<CreateBucketConfiguration/>").unwrap();
        assert_eq!(parsed, CreateBucketConfiguration::default());
    }

    #[test]
    fn delete_request_parses_keys_versions_and_quiet() {
        let body = br#"<?xml version="1.0" encoding="UTF-8"?>
            <Delete xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
              <Object><Key>sample1.txt</Key></Object>
              <Object><Key>a &amp; b</Key><VersionId>null</VersionId></Object>
              <Quiet>true</Quiet>
            </Delete>"#;
        let parsed: Delete = from_xml(body).unwrap();
        assert!(parsed.quiet);
        assert_eq!(
            parsed.objects,
            vec![
                ObjectIdentifier {
                    key: "sample1.txt".into(),
                    ..ObjectIdentifier::default()
                },
                ObjectIdentifier {
                    key: "a & b".into(),
                    version_id: Some("null".into()),
                    ..ObjectIdentifier::default()
                },
            ]
        );
    }

    #[test]
    fn bad_xml_is_malformed_xml() {
        for body in [
            &b"<Delete><Object><Key>x</Key></Delete>"[..],
            b"not xml at all",
            b"<Delete><Object></Object></Delete>",
            b"\xff\xfe",
        ] {
            let err = from_xml::<Delete>(body).unwrap_err();
            assert_eq!(err.code, "MalformedXML", "{body:?}");
        }
    }

    #[test]
    fn list_v2_renders_contents_and_common_prefixes_in_order() {
        let doc = ListBucketResultV2 {
            xmlns: S3_NAMESPACE,
            name: "bucket".into(),
            prefix: String::new(),
            delimiter: Some("/".into()),
            max_keys: 1000,
            encoding_type: None,
            key_count: 2,
            is_truncated: true,
            continuation_token: Some("tok".into()),
            next_continuation_token: Some("next".into()),
            start_after: None,
            contents: vec![Object {
                key: "a&b".into(),
                last_modified: "2009-10-12T17:50:30.000Z".into(),
                etag: Some("\"abc\"".into()),
                size: 5,
                owner: None,
                storage_class: "STANDARD",
            }],
            common_prefixes: vec![CommonPrefix {
                prefix: "dir/".into(),
            }],
        };
        let xml = to_xml("ListBucketResult", &doc).unwrap();
        assert!(
            xml.contains(
                "<Name>bucket</Name><Prefix/><Delimiter>/</Delimiter><MaxKeys>1000</MaxKeys>\
                 <KeyCount>2</KeyCount><IsTruncated>true</IsTruncated>\
                 <ContinuationToken>tok</ContinuationToken>\
                 <NextContinuationToken>next</NextContinuationToken>\
                 <Contents><Key>a&amp;b</Key><LastModified>2009-10-12T17:50:30.000Z</LastModified>\
                 <ETag>\"abc\"</ETag><Size>5</Size><StorageClass>STANDARD</StorageClass></Contents>\
                 <CommonPrefixes><Prefix>dir/</Prefix></CommonPrefixes>"
            ),
            "{xml}"
        );
    }

    #[test]
    fn delete_result_lists_deleted_and_errors() {
        let doc = DeleteResult {
            xmlns: S3_NAMESPACE,
            deleted: vec![DeletedObject {
                key: "k1".into(),
                version_id: None,
                delete_marker: None,
                delete_marker_version_id: None,
            }],
            errors: vec![DeleteError {
                key: "k2".into(),
                version_id: None,
                code: "AccessDenied",
                message: "Access Denied".into(),
            }],
        };
        let xml = to_xml("DeleteResult", &doc).unwrap();
        assert!(
            xml.ends_with(
                "<Deleted><Key>k1</Key></Deleted><Error><Key>k2</Key><Code>AccessDenied</Code>\
                 <Message>Access Denied</Message></Error></DeleteResult>"
            ),
            "{xml}"
        );
    }
}

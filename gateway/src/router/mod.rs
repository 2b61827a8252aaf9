//! Turns (method, host, path, query, headers) into an [`Endpoint`]: every S3
//! operation a client may send, in one flat enum.
//!
//! The operation is chosen from the method, then the query keywords that
//! name a sub-resource (`?tagging`, `?uploads`, `uploadId=`...), then the
//! headers that change an operation's meaning (`x-amz-copy-source`). The
//! body is never touched here. Operations the gateway does not implement
//! still get their variant, so the answer names them (501 NotImplemented).

mod endpoint;

pub use endpoint::{
    Endpoint, ListBucketsParams, ListParams, MAX_LIST_BUCKETS, MAX_LIST_KEYS, OPERATION_NAMES,
};
use http::{HeaderMap, Method, Uri};
use percent_encoding::percent_decode_str;
use storage_client::{MAX_KEY_BYTES, PartNumber};

use crate::error::S3Error;
use crate::host;

/// Decoded query parameters in request order. Lookups take the first
/// occurrence of a name.
#[derive(Debug, Default)]
pub struct Query {
    pairs: Vec<(String, String)>,
}

impl Query {
    /// Parses a raw query string with form decoding (`+` is a space), the
    /// way S3 reads query parameters.
    pub fn parse(raw: Option<&str>) -> Result<Self, S3Error> {
        let mut pairs = Vec::new();
        for piece in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (name, value) = piece.split_once('=').unwrap_or((piece, ""));
            pairs.push((form_decode(name)?, form_decode(value)?));
        }
        Ok(Self { pairs })
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.pairs
    }

    pub fn has(&self, name: &str) -> bool {
        self.pairs.iter().any(|(n, _)| n == name)
    }

    pub fn get(&self, name: &str) -> Option<&str> {
        self.pairs
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// A parameter whose empty value means it was not given.
    pub fn non_empty(&self, name: &str) -> Option<&str> {
        self.get(name).filter(|v| !v.is_empty())
    }

    /// A non-negative integer parameter, or AWS's InvalidArgument naming it.
    pub fn integer(&self, name: &'static str) -> Result<Option<u64>, S3Error> {
        let Some(raw) = self.non_empty(name) else {
            return Ok(None);
        };
        raw.parse().map(Some).map_err(|_| {
            S3Error::invalid_argument(format!(
                "Provided {name} not an integer or within integer range"
            ))
            .with("ArgumentName", name)
            .with("ArgumentValue", raw)
        })
    }

    /// A page size such as `max-keys`: `cap` when absent, and larger
    /// values are capped rather than refused, as AWS does.
    pub fn page_size(&self, name: &'static str, cap: usize) -> Result<usize, S3Error> {
        Ok(self
            .integer(name)?
            .map_or(cap, |n| usize::try_from(n).unwrap_or(cap).min(cap)))
    }

    /// `encoding-type`: `url` asks for percent-encoded keys in a listing.
    pub fn url_encoding(&self) -> Result<bool, S3Error> {
        match self.non_empty("encoding-type") {
            None => Ok(false),
            Some(value) if value.eq_ignore_ascii_case("url") => Ok(true),
            Some(value) => Err(S3Error::invalid_argument(
                "Invalid Encoding Method specified in Request",
            )
            .with("ArgumentName", "encoding-type")
            .with("ArgumentValue", value)),
        }
    }

    fn owned(&self, name: &str) -> Option<String> {
        self.non_empty(name).map(str::to_owned)
    }

    fn required(&self, name: &str) -> Result<String, S3Error> {
        self.owned(name)
            .ok_or_else(|| S3Error::invalid_argument(format!("{name} must not be empty")))
    }
}

fn form_decode(raw: &str) -> Result<String, S3Error> {
    // Most names and values need no decoding: copied as they are.
    if !raw.contains(['%', '+']) {
        return Ok(raw.to_owned());
    }
    let spaced = raw.replace('+', " ");
    percent_decode_str(&spaced)
        .decode_utf8()
        .map(|text| text.into_owned())
        .map_err(|_| S3Error::invalid_uri())
}

fn path_decode(raw: &str) -> Result<String, S3Error> {
    percent_decode_str(raw)
        .decode_utf8()
        .map(|text| text.into_owned())
        .map_err(|_| S3Error::invalid_uri())
}

/// Routes a request. `domain` enables virtual-host style: a Host of
/// `<bucket>.<domain>` (any port) names the bucket; any other Host, such as
/// the domain itself, an IP address or localhost, means path style. A
/// request naming two hosts is refused (see [`host`]).
pub fn route(
    method: &Method,
    uri: &Uri,
    headers: &HeaderMap,
    domain: Option<&str>,
) -> Result<Endpoint, S3Error> {
    let query = Query::parse(uri.query())?;
    let path = uri.path();
    let (bucket, key) = match host::request_bucket(uri, headers, domain)? {
        Some(bucket) => (bucket, path_decode(path.strip_prefix('/').unwrap_or(path))?),
        None => {
            let path = path.strip_prefix('/').unwrap_or(path);
            let (bucket, key) = path.split_once('/').unwrap_or((path, ""));
            (path_decode(bucket)?, path_decode(key)?)
        }
    };
    if key.len() > MAX_KEY_BYTES {
        return Err(S3Error::key_too_long());
    }
    if bucket.is_empty() {
        return service_endpoint(method, &query);
    }
    if key.is_empty() {
        bucket_endpoint(method, bucket, &query)
    } else {
        object_endpoint(method, bucket, key, &query, headers)
    }
}

fn service_endpoint(method: &Method, query: &Query) -> Result<Endpoint, S3Error> {
    match *method {
        Method::GET => Ok(Endpoint::ListBuckets {
            query: list_buckets_params(query)?,
        }),
        _ => Err(S3Error::method_not_allowed()),
    }
}

/// ListBuckets paging: `max-buckets` (1-10000), `continuation-token`, `prefix`.
fn list_buckets_params(query: &Query) -> Result<ListBucketsParams, S3Error> {
    let max_buckets = match query.non_empty("max-buckets") {
        None => None,
        Some(text) => Some(
            text.parse::<usize>()
                .ok()
                .filter(|n| (1..=MAX_LIST_BUCKETS).contains(n))
                .ok_or_else(|| {
                    S3Error::invalid_argument("max-buckets must be between 1 and 10000")
                        .with("ArgumentName", "max-buckets")
                        .with("ArgumentValue", text)
                })?,
        ),
    };
    Ok(ListBucketsParams {
        max_buckets,
        continuation_token: query.owned("continuation-token"),
        prefix: query.owned("prefix"),
    })
}

/// Bucket sub-resources whose operation depends only on the method.
/// Order matters only for documentation; a request names one sub-resource.
const BUCKET_SUBRESOURCES: &[&str] = &[
    "location",
    "versioning",
    "object-lock",
    "acl",
    "policy",
    "policyStatus",
    "cors",
    "lifecycle",
    "tagging",
    "website",
    "encryption",
    "logging",
    "notification",
    "replication",
    "requestPayment",
    "accelerate",
    "ownershipControls",
    "publicAccessBlock",
    "analytics",
    "inventory",
    "metrics",
    "intelligent-tiering",
    "uploads",
    "versions",
    "delete",
];

fn bucket_endpoint(method: &Method, bucket: String, query: &Query) -> Result<Endpoint, S3Error> {
    use Endpoint as E;
    let sub = BUCKET_SUBRESOURCES.iter().copied().find(|s| query.has(s));
    let id = || query.owned("id");
    let endpoint = match (method.clone(), sub) {
        (Method::HEAD, _) => E::HeadBucket { bucket },
        (Method::OPTIONS, _) => E::PreflightRequest {
            bucket,
            key: String::new(),
        },

        (Method::GET, None) if query.get("list-type") == Some("2") => E::ListObjectsV2 {
            bucket,
            query: list_params(query, ListVersion::V2)?,
        },
        (Method::GET, None) => E::ListObjects {
            bucket,
            query: list_params(query, ListVersion::V1)?,
        },
        (Method::GET, Some("versions")) => E::ListObjectVersions {
            bucket,
            query: list_params(query, ListVersion::Versions)?,
        },
        (Method::GET, Some("uploads")) => E::ListMultipartUploads { bucket },
        (Method::GET, Some("location")) => E::GetBucketLocation { bucket },
        (Method::GET, Some("versioning")) => E::GetBucketVersioning { bucket },
        (Method::GET, Some("object-lock")) => E::GetObjectLockConfiguration { bucket },
        (Method::GET, Some("acl")) => E::GetBucketAcl { bucket },
        (Method::GET, Some("policy")) => E::GetBucketPolicy { bucket },
        (Method::GET, Some("policyStatus")) => E::GetBucketPolicyStatus { bucket },
        (Method::GET, Some("cors")) => E::GetBucketCors { bucket },
        (Method::GET, Some("lifecycle")) => E::GetBucketLifecycleConfiguration { bucket },
        (Method::GET, Some("tagging")) => E::GetBucketTagging { bucket },
        (Method::GET, Some("website")) => E::GetBucketWebsite { bucket },
        (Method::GET, Some("encryption")) => E::GetBucketEncryption { bucket },
        (Method::GET, Some("logging")) => E::GetBucketLogging { bucket },
        (Method::GET, Some("notification")) => E::GetBucketNotificationConfiguration { bucket },
        (Method::GET, Some("replication")) => E::GetBucketReplication { bucket },
        (Method::GET, Some("requestPayment")) => E::GetBucketRequestPayment { bucket },
        (Method::GET, Some("accelerate")) => E::GetBucketAccelerateConfiguration { bucket },
        (Method::GET, Some("ownershipControls")) => E::GetBucketOwnershipControls { bucket },
        (Method::GET, Some("publicAccessBlock")) => E::GetPublicAccessBlock { bucket },
        (Method::GET, Some("analytics")) => match id() {
            Some(id) => E::GetBucketAnalyticsConfiguration { bucket, id },
            None => E::ListBucketAnalyticsConfigurations { bucket },
        },
        (Method::GET, Some("inventory")) => match id() {
            Some(id) => E::GetBucketInventoryConfiguration { bucket, id },
            None => E::ListBucketInventoryConfigurations { bucket },
        },
        (Method::GET, Some("metrics")) => match id() {
            Some(id) => E::GetBucketMetricsConfiguration { bucket, id },
            None => E::ListBucketMetricsConfigurations { bucket },
        },
        (Method::GET, Some("intelligent-tiering")) => match id() {
            Some(id) => E::GetBucketIntelligentTieringConfiguration { bucket, id },
            None => E::ListBucketIntelligentTieringConfigurations { bucket },
        },

        (Method::PUT, None) => E::CreateBucket { bucket },
        (Method::PUT, Some("versioning")) => E::PutBucketVersioning { bucket },
        (Method::PUT, Some("object-lock")) => E::PutObjectLockConfiguration { bucket },
        (Method::PUT, Some("acl")) => E::PutBucketAcl { bucket },
        (Method::PUT, Some("policy")) => E::PutBucketPolicy { bucket },
        (Method::PUT, Some("cors")) => E::PutBucketCors { bucket },
        (Method::PUT, Some("lifecycle")) => E::PutBucketLifecycleConfiguration { bucket },
        (Method::PUT, Some("tagging")) => E::PutBucketTagging { bucket },
        (Method::PUT, Some("website")) => E::PutBucketWebsite { bucket },
        (Method::PUT, Some("encryption")) => E::PutBucketEncryption { bucket },
        (Method::PUT, Some("logging")) => E::PutBucketLogging { bucket },
        (Method::PUT, Some("notification")) => E::PutBucketNotificationConfiguration { bucket },
        (Method::PUT, Some("replication")) => E::PutBucketReplication { bucket },
        (Method::PUT, Some("requestPayment")) => E::PutBucketRequestPayment { bucket },
        (Method::PUT, Some("accelerate")) => E::PutBucketAccelerateConfiguration { bucket },
        (Method::PUT, Some("ownershipControls")) => E::PutBucketOwnershipControls { bucket },
        (Method::PUT, Some("publicAccessBlock")) => E::PutPublicAccessBlock { bucket },
        (Method::PUT, Some("analytics")) => E::PutBucketAnalyticsConfiguration {
            bucket,
            id: query.required("id")?,
        },
        (Method::PUT, Some("inventory")) => E::PutBucketInventoryConfiguration {
            bucket,
            id: query.required("id")?,
        },
        (Method::PUT, Some("metrics")) => E::PutBucketMetricsConfiguration {
            bucket,
            id: query.required("id")?,
        },
        (Method::PUT, Some("intelligent-tiering")) => E::PutBucketIntelligentTieringConfiguration {
            bucket,
            id: query.required("id")?,
        },

        (Method::DELETE, None) => E::DeleteBucket { bucket },
        (Method::DELETE, Some("policy")) => E::DeleteBucketPolicy { bucket },
        (Method::DELETE, Some("cors")) => E::DeleteBucketCors { bucket },
        (Method::DELETE, Some("lifecycle")) => E::DeleteBucketLifecycle { bucket },
        (Method::DELETE, Some("tagging")) => E::DeleteBucketTagging { bucket },
        (Method::DELETE, Some("website")) => E::DeleteBucketWebsite { bucket },
        (Method::DELETE, Some("encryption")) => E::DeleteBucketEncryption { bucket },
        (Method::DELETE, Some("replication")) => E::DeleteBucketReplication { bucket },
        (Method::DELETE, Some("ownershipControls")) => E::DeleteBucketOwnershipControls { bucket },
        (Method::DELETE, Some("publicAccessBlock")) => E::DeletePublicAccessBlock { bucket },
        (Method::DELETE, Some("analytics")) => E::DeleteBucketAnalyticsConfiguration {
            bucket,
            id: query.required("id")?,
        },
        (Method::DELETE, Some("inventory")) => E::DeleteBucketInventoryConfiguration {
            bucket,
            id: query.required("id")?,
        },
        (Method::DELETE, Some("metrics")) => E::DeleteBucketMetricsConfiguration {
            bucket,
            id: query.required("id")?,
        },
        (Method::DELETE, Some("intelligent-tiering")) => {
            E::DeleteBucketIntelligentTieringConfiguration {
                bucket,
                id: query.required("id")?,
            }
        }

        (Method::POST, Some("delete")) => E::DeleteObjects { bucket },
        (Method::POST, None) => E::PostObject { bucket },

        _ => return Err(S3Error::method_not_allowed()),
    };
    Ok(endpoint)
}

fn object_endpoint(
    method: &Method,
    bucket: String,
    key: String,
    query: &Query,
    headers: &HeaderMap,
) -> Result<Endpoint, S3Error> {
    use Endpoint as E;
    let upload_id = query.owned("uploadId");
    let part_number = part_number(query)?;
    let version_id = query.owned("versionId");
    let copy = headers.contains_key("x-amz-copy-source");

    let endpoint = match *method {
        Method::GET => match upload_id {
            Some(upload_id) => E::ListParts {
                bucket,
                key,
                upload_id,
            },
            None if query.has("acl") => E::GetObjectAcl {
                bucket,
                key,
                version_id,
            },
            None if query.has("tagging") => E::GetObjectTagging {
                bucket,
                key,
                version_id,
            },
            None if query.has("attributes") => E::GetObjectAttributes {
                bucket,
                key,
                version_id,
            },
            None if query.has("legal-hold") => E::GetObjectLegalHold {
                bucket,
                key,
                version_id,
            },
            None if query.has("retention") => E::GetObjectRetention {
                bucket,
                key,
                version_id,
            },
            None if query.has("torrent") => E::GetObjectTorrent { bucket, key },
            None => E::GetObject {
                bucket,
                key,
                part_number,
                version_id,
            },
        },
        Method::HEAD => E::HeadObject {
            bucket,
            key,
            part_number,
            version_id,
        },
        Method::PUT => match (upload_id, part_number) {
            (Some(upload_id), Some(part_number)) if copy => E::UploadPartCopy {
                bucket,
                key,
                part_number,
                upload_id,
            },
            (Some(upload_id), Some(part_number)) => E::UploadPart {
                bucket,
                key,
                part_number,
                upload_id,
            },
            (Some(_), None) => {
                return Err(S3Error::invalid_argument(
                    "Part number must be an integer between 1 and 10000, inclusive",
                ));
            }
            (None, _) if query.has("acl") => E::PutObjectAcl {
                bucket,
                key,
                version_id,
            },
            (None, _) if query.has("tagging") => E::PutObjectTagging {
                bucket,
                key,
                version_id,
            },
            (None, _) if query.has("legal-hold") => E::PutObjectLegalHold {
                bucket,
                key,
                version_id,
            },
            (None, _) if query.has("retention") => E::PutObjectRetention {
                bucket,
                key,
                version_id,
            },
            (None, _) if copy => E::CopyObject { bucket, key },
            (None, _) => E::PutObject { bucket, key },
        },
        Method::POST => match upload_id {
            Some(upload_id) => E::CompleteMultipartUpload {
                bucket,
                key,
                upload_id,
            },
            None if query.has("uploads") => E::CreateMultipartUpload { bucket, key },
            None if query.has("restore") => E::RestoreObject { bucket, key },
            None if query.has("select") => E::SelectObjectContent { bucket, key },
            None => return Err(S3Error::method_not_allowed()),
        },
        Method::DELETE => match upload_id {
            Some(upload_id) => E::AbortMultipartUpload {
                bucket,
                key,
                upload_id,
            },
            None if query.has("tagging") => E::DeleteObjectTagging {
                bucket,
                key,
                version_id,
            },
            None => E::DeleteObject {
                bucket,
                key,
                version_id,
            },
        },
        Method::OPTIONS => E::PreflightRequest { bucket, key },
        _ => return Err(S3Error::method_not_allowed()),
    };
    Ok(endpoint)
}

/// `partNumber`, which S3 allows from 1 to 10000.
fn part_number(query: &Query) -> Result<Option<PartNumber>, S3Error> {
    let Some(raw) = query.get("partNumber") else {
        return Ok(None);
    };
    match raw.parse::<u16>().map(PartNumber::new) {
        Ok(Ok(number)) => Ok(Some(number)),
        _ => Err(S3Error::invalid_argument(
            "Part number must be an integer between 1 and 10000, inclusive",
        )
        .with("ArgumentName", "partNumber")
        .with("ArgumentValue", raw)),
    }
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ListVersion {
    V1,
    V2,
    Versions,
}

fn list_params(query: &Query, version: ListVersion) -> Result<ListParams, S3Error> {
    let max_keys = query.page_size("max-keys", MAX_LIST_KEYS)?;
    let url_encoding = query.url_encoding()?;
    let start_after = match version {
        ListVersion::V1 => query.owned("marker"),
        ListVersion::V2 => query.owned("start-after"),
        ListVersion::Versions => query.owned("key-marker"),
    };
    let v2 = version == ListVersion::V2;
    Ok(ListParams {
        prefix: query.owned("prefix").unwrap_or_default(),
        delimiter: query.owned("delimiter"),
        max_keys,
        url_encoding,
        fetch_owner: v2 && query.get("fetch-owner") == Some("true"),
        continuation_token: query
            .get("continuation-token")
            .filter(|_| v2)
            .map(str::to_owned),
        start_after,
        version_id_marker: query
            .owned("version-id-marker")
            .filter(|_| version == ListVersion::Versions),
    })
}

#[cfg(test)]
mod tests {
    use http::HeaderValue;

    use super::*;

    fn route_with(method: Method, target: &str, headers: &[(&str, &str)]) -> Endpoint {
        try_route(method, target, headers).unwrap_or_else(|err| panic!("{target}: {err}"))
    }

    fn try_route(
        method: Method,
        target: &str,
        headers: &[(&str, &str)],
    ) -> Result<Endpoint, S3Error> {
        let uri: Uri = target.parse().expect("test uri");
        let mut map = HeaderMap::new();
        for (name, value) in headers {
            map.insert(
                http::HeaderName::from_bytes(name.as_bytes()).expect("header name"),
                HeaderValue::from_str(value).expect("header value"),
            );
        }
        route(&method, &uri, &map, Some("s3.example.com"))
    }

    fn name(method: Method, target: &str) -> &'static str {
        route_with(method, target, &[]).name()
    }

    const COPY: &[(&str, &str)] = &[("x-amz-copy-source", "/src/key")];

    #[test]
    fn service_and_bucket_operations_from_the_aws_reference() {
        let cases = [
            (Method::GET, "/", "ListBuckets"),
            (Method::PUT, "/b", "CreateBucket"),
            (Method::HEAD, "/b", "HeadBucket"),
            (Method::DELETE, "/b", "DeleteBucket"),
            (Method::GET, "/b?location", "GetBucketLocation"),
            (Method::GET, "/b", "ListObjects"),
            (Method::GET, "/b/", "ListObjects"),
            (Method::GET, "/b?list-type=2", "ListObjectsV2"),
            (Method::GET, "/b?versions", "ListObjectVersions"),
            (Method::GET, "/b?uploads", "ListMultipartUploads"),
            (Method::POST, "/b?delete", "DeleteObjects"),
            (Method::POST, "/b", "PostObject"),
            (Method::GET, "/b?versioning", "GetBucketVersioning"),
            (Method::PUT, "/b?versioning", "PutBucketVersioning"),
            (Method::GET, "/b?object-lock", "GetObjectLockConfiguration"),
            (Method::PUT, "/b?object-lock", "PutObjectLockConfiguration"),
            (Method::GET, "/b?acl", "GetBucketAcl"),
            (Method::PUT, "/b?acl", "PutBucketAcl"),
            (Method::GET, "/b?policy", "GetBucketPolicy"),
            (Method::PUT, "/b?policy", "PutBucketPolicy"),
            (Method::DELETE, "/b?policy", "DeleteBucketPolicy"),
            (Method::GET, "/b?policyStatus", "GetBucketPolicyStatus"),
            (Method::GET, "/b?cors", "GetBucketCors"),
            (Method::PUT, "/b?cors", "PutBucketCors"),
            (Method::DELETE, "/b?cors", "DeleteBucketCors"),
            (
                Method::GET,
                "/b?lifecycle",
                "GetBucketLifecycleConfiguration",
            ),
            (
                Method::PUT,
                "/b?lifecycle",
                "PutBucketLifecycleConfiguration",
            ),
            (Method::DELETE, "/b?lifecycle", "DeleteBucketLifecycle"),
            (Method::GET, "/b?tagging", "GetBucketTagging"),
            (Method::PUT, "/b?tagging", "PutBucketTagging"),
            (Method::DELETE, "/b?tagging", "DeleteBucketTagging"),
            (Method::GET, "/b?website", "GetBucketWebsite"),
            (Method::PUT, "/b?website", "PutBucketWebsite"),
            (Method::DELETE, "/b?website", "DeleteBucketWebsite"),
            (Method::GET, "/b?encryption", "GetBucketEncryption"),
            (Method::PUT, "/b?encryption", "PutBucketEncryption"),
            (Method::DELETE, "/b?encryption", "DeleteBucketEncryption"),
            (Method::GET, "/b?logging", "GetBucketLogging"),
            (Method::PUT, "/b?logging", "PutBucketLogging"),
            (
                Method::GET,
                "/b?notification",
                "GetBucketNotificationConfiguration",
            ),
            (
                Method::PUT,
                "/b?notification",
                "PutBucketNotificationConfiguration",
            ),
            (Method::GET, "/b?replication", "GetBucketReplication"),
            (Method::PUT, "/b?replication", "PutBucketReplication"),
            (Method::DELETE, "/b?replication", "DeleteBucketReplication"),
            (Method::GET, "/b?requestPayment", "GetBucketRequestPayment"),
            (Method::PUT, "/b?requestPayment", "PutBucketRequestPayment"),
            (
                Method::GET,
                "/b?accelerate",
                "GetBucketAccelerateConfiguration",
            ),
            (
                Method::PUT,
                "/b?accelerate",
                "PutBucketAccelerateConfiguration",
            ),
            (
                Method::GET,
                "/b?ownershipControls",
                "GetBucketOwnershipControls",
            ),
            (
                Method::PUT,
                "/b?ownershipControls",
                "PutBucketOwnershipControls",
            ),
            (
                Method::DELETE,
                "/b?ownershipControls",
                "DeleteBucketOwnershipControls",
            ),
            (Method::GET, "/b?publicAccessBlock", "GetPublicAccessBlock"),
            (Method::PUT, "/b?publicAccessBlock", "PutPublicAccessBlock"),
            (
                Method::DELETE,
                "/b?publicAccessBlock",
                "DeletePublicAccessBlock",
            ),
            (
                Method::GET,
                "/b?analytics&id=a1",
                "GetBucketAnalyticsConfiguration",
            ),
            (
                Method::PUT,
                "/b?analytics&id=a1",
                "PutBucketAnalyticsConfiguration",
            ),
            (
                Method::DELETE,
                "/b?analytics&id=a1",
                "DeleteBucketAnalyticsConfiguration",
            ),
            (
                Method::GET,
                "/b?analytics",
                "ListBucketAnalyticsConfigurations",
            ),
            (
                Method::GET,
                "/b?inventory&id=i",
                "GetBucketInventoryConfiguration",
            ),
            (
                Method::PUT,
                "/b?inventory&id=i",
                "PutBucketInventoryConfiguration",
            ),
            (
                Method::DELETE,
                "/b?inventory&id=i",
                "DeleteBucketInventoryConfiguration",
            ),
            (
                Method::GET,
                "/b?inventory",
                "ListBucketInventoryConfigurations",
            ),
            (
                Method::GET,
                "/b?metrics&id=m",
                "GetBucketMetricsConfiguration",
            ),
            (
                Method::PUT,
                "/b?metrics&id=m",
                "PutBucketMetricsConfiguration",
            ),
            (
                Method::DELETE,
                "/b?metrics&id=m",
                "DeleteBucketMetricsConfiguration",
            ),
            (Method::GET, "/b?metrics", "ListBucketMetricsConfigurations"),
            (
                Method::GET,
                "/b?intelligent-tiering&id=t",
                "GetBucketIntelligentTieringConfiguration",
            ),
            (
                Method::PUT,
                "/b?intelligent-tiering&id=t",
                "PutBucketIntelligentTieringConfiguration",
            ),
            (
                Method::DELETE,
                "/b?intelligent-tiering&id=t",
                "DeleteBucketIntelligentTieringConfiguration",
            ),
            (
                Method::GET,
                "/b?intelligent-tiering",
                "ListBucketIntelligentTieringConfigurations",
            ),
            (Method::OPTIONS, "/b", "PreflightRequest"),
        ];
        for (method, target, expected) in cases {
            assert_eq!(name(method.clone(), target), expected, "{method} {target}");
        }
    }

    #[test]
    fn object_operations_from_the_aws_reference() {
        let cases = [
            (Method::GET, "/b/k", "GetObject"),
            (Method::HEAD, "/b/k", "HeadObject"),
            (Method::PUT, "/b/k", "PutObject"),
            (Method::DELETE, "/b/k", "DeleteObject"),
            (Method::GET, "/b/k?attributes", "GetObjectAttributes"),
            (Method::GET, "/b/k?acl", "GetObjectAcl"),
            (Method::PUT, "/b/k?acl", "PutObjectAcl"),
            (Method::GET, "/b/k?tagging", "GetObjectTagging"),
            (Method::PUT, "/b/k?tagging", "PutObjectTagging"),
            (Method::DELETE, "/b/k?tagging", "DeleteObjectTagging"),
            (Method::GET, "/b/k?legal-hold", "GetObjectLegalHold"),
            (Method::PUT, "/b/k?legal-hold", "PutObjectLegalHold"),
            (Method::GET, "/b/k?retention", "GetObjectRetention"),
            (Method::PUT, "/b/k?retention", "PutObjectRetention"),
            (Method::GET, "/b/k?torrent", "GetObjectTorrent"),
            (Method::POST, "/b/k?restore", "RestoreObject"),
            (
                Method::POST,
                "/b/k?select&select-type=2",
                "SelectObjectContent",
            ),
            (Method::POST, "/b/k?uploads", "CreateMultipartUpload"),
            (Method::PUT, "/b/k?partNumber=1&uploadId=U", "UploadPart"),
            (Method::POST, "/b/k?uploadId=U", "CompleteMultipartUpload"),
            (Method::DELETE, "/b/k?uploadId=U", "AbortMultipartUpload"),
            (Method::GET, "/b/k?uploadId=U", "ListParts"),
            (Method::OPTIONS, "/b/k", "PreflightRequest"),
        ];
        for (method, target, expected) in cases {
            assert_eq!(name(method.clone(), target), expected, "{method} {target}");
        }
    }

    #[test]
    fn copy_source_header_turns_puts_into_copies() {
        assert_eq!(route_with(Method::PUT, "/b/k", COPY).name(), "CopyObject");
        assert_eq!(
            route_with(Method::PUT, "/b/k?partNumber=3&uploadId=U", COPY),
            Endpoint::UploadPartCopy {
                bucket: "b".into(),
                key: "k".into(),
                part_number: PartNumber::new(3).unwrap(),
                upload_id: "U".into(),
            }
        );
    }

    #[test]
    fn keys_are_percent_decoded_and_keep_slashes() {
        assert_eq!(
            route_with(Method::GET, "/b/dir/a%20b%2Bc+d/%E2%82%AC", &[]),
            Endpoint::GetObject {
                bucket: "b".into(),
                key: "dir/a b+c+d/€".into(),
                part_number: None,
                version_id: None,
            }
        );
        assert_eq!(
            route_with(Method::DELETE, "/b//lead", &[]),
            Endpoint::DeleteObject {
                bucket: "b".into(),
                key: "/lead".into(),
                version_id: None,
            }
        );
    }

    #[test]
    fn virtual_host_style_takes_the_bucket_from_host() {
        let host = [("host", "photos.s3.example.com:9878")];
        assert_eq!(
            route_with(Method::PUT, "/2024/cat.jpg", &host),
            Endpoint::PutObject {
                bucket: "photos".into(),
                key: "2024/cat.jpg".into(),
            }
        );
        assert_eq!(
            route_with(Method::GET, "/?list-type=2", &host).name(),
            "ListObjectsV2"
        );
        assert_eq!(
            route_with(Method::GET, "/", &[("host", "Photos.S3.Example.COM")]),
            Endpoint::ListObjects {
                bucket: "photos".into(),
                query: ListParams {
                    max_keys: 1000,
                    ..ListParams::default()
                },
            }
        );
        let dotted = [("host", "my.bucket.s3.example.com")];
        assert_eq!(
            route_with(Method::HEAD, "/", &dotted),
            Endpoint::HeadBucket {
                bucket: "my.bucket".into()
            }
        );
    }

    #[test]
    fn domain_ip_and_localhost_hosts_mean_path_style() {
        for host in [
            "s3.example.com",
            "s3.example.com:443",
            "127.0.0.1:9878",
            "[::1]:9878",
            "localhost",
            "other.org",
        ] {
            assert_eq!(
                route_with(Method::GET, "/b/k", &[("host", host)]),
                Endpoint::GetObject {
                    bucket: "b".into(),
                    key: "k".into(),
                    part_number: None,
                    version_id: None,
                },
                "{host}"
            );
        }
        let uri: Uri = "/b/k".parse().unwrap();
        let mut headers = HeaderMap::new();
        headers.insert(
            http::header::HOST,
            HeaderValue::from_static("b2.s3.example.com"),
        );
        assert_eq!(
            route(&Method::PUT, &uri, &headers, None).unwrap().name(),
            "PutObject"
        );
        assert!(matches!(
            route(&Method::PUT, &uri, &headers, None).unwrap(),
            Endpoint::PutObject { bucket, .. } if bucket == "b"
        ));
    }

    #[test]
    fn http2_authority_is_used_for_virtual_hosts() {
        let uri: Uri = "https://pics.s3.example.com/a.png".parse().unwrap();
        assert_eq!(
            route(
                &Method::GET,
                &uri,
                &HeaderMap::new(),
                Some("s3.example.com")
            )
            .unwrap(),
            Endpoint::GetObject {
                bucket: "pics".into(),
                key: "a.png".into(),
                part_number: None,
                version_id: None,
            }
        );
    }

    #[test]
    fn a_target_naming_another_host_than_the_host_header_is_refused() {
        // The signature covers the Host header; routing by the target's
        // authority would act on a bucket nobody signed for.
        let error = try_route(
            Method::GET,
            "http://b.s3.example.com/k",
            &[("host", "a.s3.example.com")],
        )
        .unwrap_err();
        assert_eq!((error.code, error.status.as_u16()), ("InvalidRequest", 400));
        assert!(matches!(
            route_with(
                Method::GET,
                "http://a.s3.example.com/k",
                &[("host", "a.s3.example.com")]
            ),
            Endpoint::GetObject { bucket, .. } if bucket == "a"
        ));
    }

    #[test]
    fn warp_list_request_treats_empty_parameters_as_absent() {
        let endpoint = route_with(
            Method::GET,
            "/b?list-type=2&encoding-type=url&fetch-owner=true&prefix=&delimiter=&continuation-token=&start-after=",
            &[],
        );
        assert_eq!(
            endpoint,
            Endpoint::ListObjectsV2 {
                bucket: "b".into(),
                query: ListParams {
                    prefix: String::new(),
                    delimiter: None,
                    max_keys: 1000,
                    url_encoding: true,
                    fetch_owner: true,
                    continuation_token: Some(String::new()),
                    start_after: None,
                    version_id_marker: None,
                },
            }
        );
    }

    #[test]
    fn list_buckets_takes_paging_parameters() {
        let endpoint = route_with(
            Method::GET,
            "/?max-buckets=2&continuation-token=YQ&prefix=ph",
            &[],
        );
        assert_eq!(
            endpoint,
            Endpoint::ListBuckets {
                query: ListBucketsParams {
                    max_buckets: Some(2),
                    continuation_token: Some("YQ".into()),
                    prefix: Some("ph".into()),
                }
            }
        );
        for bad in ["0", "10001", "many"] {
            let err = try_route(Method::GET, &format!("/?max-buckets={bad}"), &[]).unwrap_err();
            assert_eq!(err.code, "InvalidArgument", "{bad}");
        }
    }

    #[test]
    fn list_parameters_are_decoded_and_capped() {
        let endpoint = route_with(
            Method::GET,
            "/b?list-type=2&prefix=photos%2F2006%2F&delimiter=%2F&max-keys=5000&continuation-token=abc%3D&start-after=x",
            &[],
        );
        let Endpoint::ListObjectsV2 { query, .. } = endpoint else {
            panic!("not ListObjectsV2: {endpoint:?}");
        };
        assert_eq!(query.prefix, "photos/2006/");
        assert_eq!(query.delimiter.as_deref(), Some("/"));
        assert_eq!(query.max_keys, 1000);
        assert_eq!(query.continuation_token.as_deref(), Some("abc="));
        assert_eq!(query.start_after.as_deref(), Some("x"));
        assert!(!query.fetch_owner);

        let Endpoint::ListObjects { query, .. } = route_with(
            Method::GET,
            "/b?marker=m1&max-keys=0&start-after=ignored",
            &[],
        ) else {
            panic!("not ListObjects");
        };
        assert_eq!(
            (query.start_after.as_deref(), query.max_keys),
            (Some("m1"), 0)
        );

        let Endpoint::ListObjectVersions { query, .. } =
            route_with(Method::GET, "/b?versions&key-marker=k&max-keys=2", &[])
        else {
            panic!("not ListObjectVersions");
        };
        assert_eq!(
            (query.start_after.as_deref(), query.max_keys),
            (Some("k"), 2)
        );
    }

    #[test]
    fn bad_list_parameters_are_invalid_argument() {
        for target in [
            "/b?list-type=2&max-keys=-1",
            "/b?list-type=2&max-keys=ten",
            "/b?max-keys=1.5",
            "/b?list-type=2&encoding-type=base64",
        ] {
            let err = try_route(Method::GET, target, &[]).unwrap_err();
            assert_eq!(err.code, "InvalidArgument", "{target}");
        }
    }

    #[test]
    fn part_numbers_and_version_ids_are_parsed() {
        assert_eq!(
            route_with(Method::GET, "/b/k?partNumber=2&versionId=null", &[]),
            Endpoint::GetObject {
                bucket: "b".into(),
                key: "k".into(),
                part_number: PartNumber::new(2).ok(),
                version_id: Some("null".into()),
            }
        );
        for target in [
            "/b/k?partNumber=0",
            "/b/k?partNumber=10001",
            "/b/k?partNumber=x",
        ] {
            let err = try_route(Method::GET, target, &[]).unwrap_err();
            assert_eq!(err.code, "InvalidArgument", "{target}");
        }
        let err = try_route(Method::PUT, "/b/k?uploadId=U", &[]).unwrap_err();
        assert_eq!(err.code, "InvalidArgument");
    }

    #[test]
    fn object_acl_calls_carry_their_version_id() {
        let get = route_with(Method::GET, "/b/k?acl&versionId=v1", &[]);
        assert_eq!(
            get,
            Endpoint::GetObjectAcl {
                bucket: "b".into(),
                key: "k".into(),
                version_id: Some("v1".into()),
            }
        );
        let put = route_with(Method::PUT, "/b/k?acl&versionId=v1", &[]);
        assert_eq!((put.name(), put.version_id()), ("PutObjectAcl", Some("v1")));
        assert_eq!((put.bucket(), put.key()), (Some("b"), Some("k")));
        let latest = route_with(Method::GET, "/b/k?acl", &[]);
        assert_eq!(latest.version_id(), None);
        let bucket = route_with(Method::GET, "/b?acl", &[]);
        assert_eq!((bucket.key(), bucket.version_id()), (None, None));
    }

    #[test]
    fn malformed_requests_are_client_errors() {
        let long_key = format!("/b/{}", "k".repeat(MAX_KEY_BYTES + 1));
        assert_eq!(
            try_route(Method::PUT, &long_key, &[]).unwrap_err().code,
            "KeyTooLongError"
        );
        let max_key = format!("/b/{}", "k".repeat(MAX_KEY_BYTES));
        assert_eq!(name(Method::PUT, &max_key), "PutObject");
        assert_eq!(
            try_route(Method::GET, "/b/%FF%FE", &[]).unwrap_err().code,
            "InvalidURI"
        );
        assert_eq!(
            try_route(Method::GET, "/b?prefix=%C3", &[])
                .unwrap_err()
                .code,
            "InvalidURI"
        );
        for (method, target) in [
            (Method::PUT, "/"),
            (Method::DELETE, "/"),
            (Method::PATCH, "/b/k"),
            (Method::POST, "/b/k"),
            (Method::POST, "/b?acl"),
        ] {
            let err = try_route(method.clone(), target, &[]).unwrap_err();
            assert_eq!(err.code, "MethodNotAllowed", "{method} {target}");
        }
        assert_eq!(
            try_route(Method::PUT, "/b?analytics", &[])
                .unwrap_err()
                .code,
            "InvalidArgument"
        );
    }
}

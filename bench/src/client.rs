//! A minimal S3 client for load generation: path-style requests over one
//! pooled HTTP/1.1 connection pool, signed with SigV4 by the `aws-sigv4`
//! crate. Bodies are sent as `UNSIGNED-PAYLOAD` (as warp does over loopback)
//! so hashing never makes the client the bottleneck. Every answer's status
//! is checked; object bodies are streamed and counted, never buffered.

use std::net::IpAddr;
use std::time::{Duration, SystemTime};

use aws_credential_types::Credentials;
use aws_sigv4::http_request::{
    PayloadChecksumKind, PercentEncodingMode, SignableBody, SignableRequest, SignatureLocation,
    SigningInstructions, SigningSettings, UriPathNormalizationMode, sign,
};
use aws_sigv4::sign::v4;
use aws_smithy_runtime_api::client::identity::Identity;
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use bytes::Bytes;
use md5::{Digest, Md5};
use percent_encoding::{AsciiSet, NON_ALPHANUMERIC, utf8_percent_encode};
use reqwest::{Method, StatusCode, Url};
use serde::Deserialize;

/// Characters SigV4 leaves unencoded in query values.
const UNRESERVED: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

/// Characters left unencoded in an object key's path: also the separator.
const KEY_PATH: &AsciiSet = &UNRESERVED.remove(b'/');

/// How long one request may take before it counts as an error, so a hung
/// server cannot keep the benchmark from stopping.
const REQUEST_TIMEOUT: Duration = Duration::from_secs(120);
/// How long an unused pooled connection is kept (see its use).
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum RequestError {
    #[error("transport: {0}")]
    Transport(#[from] reqwest::Error),
    #[error("HTTP {status}: {code}")]
    Status { status: StatusCode, code: String },
    #[error("cannot sign: {0}")]
    Signing(String),
    #[error("unexpected answer: {0}")]
    Unexpected(String),
    #[error("wrong bytes from offset {offset}")]
    WrongBytes { offset: u64 },
}

/// One page of a ListObjectsV2 listing.
#[derive(Debug, PartialEq)]
pub struct ListPage {
    pub keys: usize,
    pub next_token: Option<String>,
}

pub struct S3Client {
    http: reqwest::Client,
    endpoint: Url,
    host: String,
    region: String,
    identity: Identity,
}

impl S3Client {
    /// Refuses any endpoint that is not a loopback HTTP URL: this tool
    /// generates load and must not be pointed at someone else's server.
    pub fn new(
        endpoint: &str,
        region: &str,
        access_key: &str,
        secret_key: &str,
        connections: usize,
    ) -> Result<Self, String> {
        let url =
            Url::parse(endpoint).map_err(|e| format!("invalid endpoint {endpoint:?}: {e}"))?;
        if url.scheme() != "http" {
            return Err(format!("endpoint {endpoint:?}: only http:// is supported"));
        }
        let host_name = url.host_str().unwrap_or_default();
        if !is_loopback(host_name) {
            return Err(format!(
                "endpoint {endpoint:?} is not a loopback address; s3-bench only loads local servers"
            ));
        }
        let host = match url.port() {
            Some(port) => format!("{host_name}:{port}"),
            None => host_name.to_string(),
        };
        let http = reqwest::Client::builder()
            .no_proxy()
            .tcp_nodelay(true)
            .pool_max_idle_per_host(connections)
            // Below every server's idle timeout here (HAProxy's keep-alive 10 s
            // in the load-balancer test, the gateway's 30 s): a pooled
            // connection the server has just closed fails the request sent on it.
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build()
            .map_err(|e| format!("cannot build the HTTP client: {e}"))?;
        Ok(Self {
            http,
            endpoint: url,
            host,
            region: region.to_string(),
            identity: Credentials::new(access_key, secret_key, None, None, "s3-bench").into(),
        })
    }

    /// Creates the bucket; false if it exists already. Some servers
    /// (s3s-fs) answer BucketAlreadyExists for the caller's own bucket; if
    /// it is in fact someone else's, the requests that follow fail.
    pub async fn create_bucket(&self, bucket: &str) -> Result<bool, RequestError> {
        match self.send(Method::PUT, bucket, None, "", None).await {
            Ok(_) => Ok(true),
            Err(RequestError::Status { code, .. })
                if code == "BucketAlreadyOwnedByYou" || code == "BucketAlreadyExists" =>
            {
                Ok(false)
            }
            Err(e) => Err(e),
        }
    }

    pub async fn delete_bucket(&self, bucket: &str) -> Result<(), RequestError> {
        self.send(Method::DELETE, bucket, None, "", None).await?;
        Ok(())
    }

    pub async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: Bytes,
    ) -> Result<(), RequestError> {
        self.send(Method::PUT, bucket, Some(key), "", Some(body))
            .await?;
        Ok(())
    }

    /// Reads the whole object and returns its length; with `expected`,
    /// every byte must be the one expected there.
    pub async fn get_object(
        &self,
        bucket: &str,
        key: &str,
        expected: Option<&[u8]>,
    ) -> Result<u64, RequestError> {
        let mut response = self.send(Method::GET, bucket, Some(key), "", None).await?;
        let mut length = 0;
        while let Some(chunk) = response.chunk().await? {
            let end = length + chunk.len();
            if let Some(expected) = expected
                && expected.get(length..end) != Some(chunk.as_ref())
            {
                return Err(RequestError::WrongBytes {
                    offset: length as u64,
                });
            }
            length = end;
        }
        Ok(length as u64)
    }

    /// Returns the object's Content-Length.
    pub async fn head_object(&self, bucket: &str, key: &str) -> Result<u64, RequestError> {
        let response = self.send(Method::HEAD, bucket, Some(key), "", None).await?;
        response
            .headers()
            .get(reqwest::header::CONTENT_LENGTH)
            .and_then(|value| value.to_str().ok())
            .and_then(|value| value.parse().ok())
            .ok_or_else(|| RequestError::Unexpected("HEAD without a Content-Length".into()))
    }

    pub async fn delete_object(&self, bucket: &str, key: &str) -> Result<(), RequestError> {
        self.send(Method::DELETE, bucket, Some(key), "", None)
            .await?;
        Ok(())
    }

    /// Deletes `keys` with one quiet DeleteObjects; any key the answer
    /// says was not deleted fails the request. Returns the keys deleted.
    pub async fn delete_objects(&self, bucket: &str, keys: &[String]) -> Result<u64, RequestError> {
        let mut body = String::from("<Delete><Quiet>true</Quiet>");
        for key in keys {
            body.push_str("<Object><Key>");
            body.push_str(&quick_xml::escape::escape(key.as_str()));
            body.push_str("</Key></Object>");
        }
        body.push_str("</Delete>");
        let digest = BASE64.encode(Md5::digest(body.as_bytes()));
        let response = self
            .send_with(
                Method::POST,
                bucket,
                None,
                "delete",
                Some(Bytes::from(body)),
                &[("content-md5", digest.as_str())],
            )
            .await?;
        let answer = response.text().await?;
        if answer.contains("<Error>") {
            let code = xml_element(&answer, "Code").unwrap_or_default();
            return Err(RequestError::Unexpected(format!(
                "a key was not deleted: {code}"
            )));
        }
        Ok(keys.len() as u64)
    }

    /// One ListObjectsV2 page of up to 1000 keys under `prefix`.
    pub async fn list_page(
        &self,
        bucket: &str,
        prefix: &str,
        token: Option<&str>,
    ) -> Result<ListPage, RequestError> {
        let mut query = format!(
            "list-type=2&max-keys=1000&prefix={}",
            utf8_percent_encode(prefix, UNRESERVED)
        );
        if let Some(token) = token {
            query.push_str("&continuation-token=");
            query.extend(utf8_percent_encode(token, UNRESERVED));
        }
        let body = self
            .send(Method::GET, bucket, None, &query, None)
            .await?
            .bytes()
            .await?;
        parse_list_page(&body)
    }

    /// Starts a multipart upload and returns its upload id.
    pub async fn create_multipart(&self, bucket: &str, key: &str) -> Result<String, RequestError> {
        let body = self
            .send(Method::POST, bucket, Some(key), "uploads", None)
            .await?
            .bytes()
            .await?;
        #[derive(Deserialize)]
        #[serde(rename_all = "PascalCase")]
        struct InitiateMultipartUploadResult {
            upload_id: String,
        }
        let result: InitiateMultipartUploadResult = quick_xml::de::from_reader(&body[..])
            .map_err(|e| RequestError::Unexpected(format!("CreateMultipartUpload: {e}")))?;
        Ok(result.upload_id)
    }

    /// Uploads one part and returns its ETag.
    pub async fn upload_part(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        number: u32,
        body: Bytes,
    ) -> Result<String, RequestError> {
        let query = format!(
            "partNumber={number}&uploadId={}",
            utf8_percent_encode(upload_id, UNRESERVED)
        );
        let response = self
            .send(Method::PUT, bucket, Some(key), &query, Some(body))
            .await?;
        response
            .headers()
            .get(reqwest::header::ETAG)
            .and_then(|value| value.to_str().ok())
            .map(str::to_string)
            .ok_or_else(|| RequestError::Unexpected("UploadPart without an ETag".into()))
    }

    /// Completes an upload from its parts' ETags, in part-number order.
    pub async fn complete_multipart(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        etags: &[String],
    ) -> Result<(), RequestError> {
        let query = format!("uploadId={}", utf8_percent_encode(upload_id, UNRESERVED));
        let body = self
            .send(
                Method::POST,
                bucket,
                Some(key),
                &query,
                Some(Bytes::from(completion_body(etags))),
            )
            .await?
            .bytes()
            .await?;
        // S3 may answer 200 and still fail the completion in the body.
        if let Some(code) = xml_element(&String::from_utf8_lossy(&body), "Code") {
            return Err(RequestError::Status {
                status: StatusCode::OK,
                code,
            });
        }
        Ok(())
    }

    pub async fn abort_multipart(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> Result<(), RequestError> {
        let query = format!("uploadId={}", utf8_percent_encode(upload_id, UNRESERVED));
        self.send(Method::DELETE, bucket, Some(key), &query, None)
            .await?;
        Ok(())
    }

    /// A presigned URL (query-string SigV4, `UNSIGNED-PAYLOAD`) for one
    /// request on `key`, valid for `expires`: what other load generators
    /// (oha) send without knowing S3.
    pub fn presigned_url(
        &self,
        method: &Method,
        bucket: &str,
        key: &str,
        expires: Duration,
    ) -> Result<String, RequestError> {
        let mut url = self.object_url(bucket, Some(key), "");
        let mut settings = s3_signing_settings();
        settings.signature_location = SignatureLocation::QueryParams;
        settings.expires_in = Some(expires);
        settings.payload_checksum_kind = PayloadChecksumKind::NoHeader;
        let (instructions, _signature) = self.sign(method, &url, settings)?;
        let mut query = String::new();
        for (name, value) in instructions.params() {
            if !query.is_empty() {
                query.push('&');
            }
            query.extend(utf8_percent_encode(name, UNRESERVED));
            query.push('=');
            query.extend(utf8_percent_encode(value, UNRESERVED));
        }
        url.set_query(Some(&query));
        Ok(url.to_string())
    }

    fn object_url(&self, bucket: &str, key: Option<&str>, query: &str) -> Url {
        let mut url = self.endpoint.clone();
        let path = match key {
            Some(key) => format!("/{bucket}/{}", utf8_percent_encode(key, KEY_PATH)),
            None => format!("/{bucket}"),
        };
        url.set_path(&path);
        url.set_query((!query.is_empty()).then_some(query));
        url
    }

    fn sign(
        &self,
        method: &Method,
        url: &Url,
        settings: SigningSettings,
    ) -> Result<(SigningInstructions, String), RequestError> {
        let params = v4::SigningParams::builder()
            .identity(&self.identity)
            .region(&self.region)
            .name("s3")
            .time(SystemTime::now())
            .settings(settings)
            .build()
            .map_err(|e| RequestError::Signing(e.to_string()))?
            .into();
        let signable = SignableRequest::new(
            method.as_str(),
            url.as_str(),
            std::iter::once(("host", self.host.as_str())),
            SignableBody::UnsignedPayload,
        )
        .map_err(|e| RequestError::Signing(e.to_string()))?;
        Ok(sign(signable, &params)
            .map_err(|e| RequestError::Signing(e.to_string()))?
            .into_parts())
    }

    /// Signs and sends one request; any non-2xx answer becomes an error
    /// carrying the S3 error code.
    async fn send(
        &self,
        method: Method,
        bucket: &str,
        key: Option<&str>,
        query: &str,
        body: Option<Bytes>,
    ) -> Result<reqwest::Response, RequestError> {
        self.send_with(method, bucket, key, query, body, &[]).await
    }

    /// [`Self::send`] with more headers, which are not signed.
    async fn send_with(
        &self,
        method: Method,
        bucket: &str,
        key: Option<&str>,
        query: &str,
        body: Option<Bytes>,
        headers: &[(&str, &str)],
    ) -> Result<reqwest::Response, RequestError> {
        let url = self.object_url(bucket, key, query);
        let (instructions, _signature) = self.sign(&method, &url, s3_signing_settings())?;

        let mut request = self.http.request(method, url).header("host", &self.host);
        for (name, value) in instructions.headers().chain(headers.iter().copied()) {
            request = request.header(name, value);
        }
        if let Some(body) = body {
            request = request
                .header(reqwest::header::CONTENT_TYPE, "application/octet-stream")
                .body(body);
        }
        let response = request.send().await?;
        let status = response.status();
        if status.is_success() {
            return Ok(response);
        }
        let body = response.bytes().await.unwrap_or_default();
        let code = xml_element(&String::from_utf8_lossy(&body), "Code")
            .unwrap_or_else(|| status.canonical_reason().unwrap_or("no error code").into());
        Err(RequestError::Status { status, code })
    }
}

/// S3 signs with a payload hash header, single URI encoding and no path
/// normalisation.
fn s3_signing_settings() -> SigningSettings {
    let mut settings = SigningSettings::default();
    settings.payload_checksum_kind = PayloadChecksumKind::XAmzSha256;
    settings.percent_encoding_mode = PercentEncodingMode::Single;
    settings.uri_path_normalization_mode = UriPathNormalizationMode::Disabled;
    settings
}

fn is_loopback(host: &str) -> bool {
    let bare = host.trim_start_matches('[').trim_end_matches(']');
    bare.eq_ignore_ascii_case("localhost")
        || bare.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

fn parse_list_page(body: &[u8]) -> Result<ListPage, RequestError> {
    #[derive(Deserialize)]
    struct Entry {
        #[serde(rename = "Key")]
        _key: String,
    }
    #[derive(Deserialize)]
    #[serde(rename_all = "PascalCase")]
    struct ListBucketResult {
        #[serde(default)]
        contents: Vec<Entry>,
        #[serde(default)]
        is_truncated: bool,
        next_continuation_token: Option<String>,
    }
    let result: ListBucketResult = quick_xml::de::from_reader(body)
        .map_err(|e| RequestError::Unexpected(format!("ListObjectsV2: {e}")))?;
    Ok(ListPage {
        keys: result.contents.len(),
        next_token: result
            .next_continuation_token
            .filter(|_| result.is_truncated),
    })
}

fn completion_body(etags: &[String]) -> String {
    let mut xml = String::from("<CompleteMultipartUpload>");
    for (index, etag) in etags.iter().enumerate() {
        let etag = etag.replace('&', "&amp;").replace('<', "&lt;");
        xml.push_str(&format!(
            "<Part><PartNumber>{}</PartNumber><ETag>{etag}</ETag></Part>",
            index + 1
        ));
    }
    xml.push_str("</CompleteMultipartUpload>");
    xml
}

/// The text of the first `<name>` element, for S3 error codes.
fn xml_element(text: &str, name: &str) -> Option<String> {
    let open = format!("<{name}>");
    let close = format!("</{name}>");
    let start = text.find(&open)? + open.len();
    let end = text[start..].find(&close)? + start;
    Some(text[start..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_endpoints_are_accepted() {
        for good in [
            "http://127.0.0.1:9878",
            "http://localhost:29878",
            "http://[::1]:9000",
            "http://127.1.2.3",
        ] {
            assert!(
                S3Client::new(good, "us-east-1", "a", "b", 4).is_ok(),
                "{good}"
            );
        }
        for bad in [
            "http://example.com:9878",
            "http://10.0.0.1",
            "https://127.0.0.1:9878",
            "127.0.0.1:9878",
            "not a url",
        ] {
            assert!(
                S3Client::new(bad, "us-east-1", "a", "b", 4).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn list_pages_count_keys_and_follow_tokens() {
        let truncated = br#"<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>b</Name><Prefix></Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>
  <IsTruncated>true</IsTruncated>
  <Contents><Key>a</Key><Size>1</Size></Contents>
  <Contents><Key>b</Key><Size>1</Size></Contents>
  <NextContinuationToken>tok&amp;en</NextContinuationToken>
</ListBucketResult>"#;
        assert_eq!(
            parse_list_page(truncated).expect("parses"),
            ListPage {
                keys: 2,
                next_token: Some("tok&en".into())
            }
        );
        let last = br#"<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>c</Key></Contents></ListBucketResult>"#;
        assert_eq!(
            parse_list_page(last).expect("parses"),
            ListPage {
                keys: 1,
                next_token: None
            }
        );
        let empty = br#"<ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>"#;
        assert_eq!(parse_list_page(empty).expect("parses").keys, 0);
        assert!(parse_list_page(b"<html>").is_err());
    }

    #[test]
    fn presigned_urls_carry_the_signature_in_the_query() {
        let client = S3Client::new("http://127.0.0.1:9000", "us-east-1", "AKID", "secret", 1)
            .expect("client");
        let url = client
            .presigned_url(&Method::GET, "b", "dir/obj 1", Duration::from_secs(600))
            .expect("presigns");
        let url = Url::parse(&url).expect("a URL");
        assert_eq!(url.path(), "/b/dir/obj%201");
        let query: std::collections::HashMap<String, String> =
            url.query_pairs().into_owned().collect();
        assert_eq!(query["X-Amz-Algorithm"], "AWS4-HMAC-SHA256");
        assert_eq!(query["X-Amz-Expires"], "600");
        assert_eq!(query["X-Amz-SignedHeaders"], "host");
        assert!(query["X-Amz-Credential"].starts_with("AKID/"), "{query:?}");
        assert_eq!(query["X-Amz-Signature"].len(), 64);
        assert!(!query.contains_key("X-Amz-Content-Sha256"), "{query:?}");
    }

    #[test]
    fn completion_lists_parts_in_order() {
        let body = completion_body(&["\"e1\"".into(), "\"e2\"".into()]);
        assert_eq!(
            body,
            "<CompleteMultipartUpload>\
             <Part><PartNumber>1</PartNumber><ETag>\"e1\"</ETag></Part>\
             <Part><PartNumber>2</PartNumber><ETag>\"e2\"</ETag></Part>\
             </CompleteMultipartUpload>"
        );
    }

    #[test]
    fn error_codes_come_from_the_body() {
        let body = "<Error><Code>NoSuchKey</Code><Message>gone</Message></Error>";
        assert_eq!(xml_element(body, "Code").as_deref(), Some("NoSuchKey"));
        assert_eq!(xml_element("<Error/>", "Code"), None);
    }
}

//! S3 errors: the AWS code, the HTTP status and the XML body in one place.

use std::io::ErrorKind;

use axum::body::Body;
use axum::http::{HeaderName, HeaderValue, StatusCode, header};
use axum::response::Response;
use storage_client::StorageError;

/// Declares [`Code`]: every S3 error code the gateway answers, each with
/// the HTTP status AWS answers it with (one exception is made where it is
/// made: a presigned URL's out-of-range lifetime, 403 where the same code
/// is otherwise 400, as S3 answers).
macro_rules! codes {
    ($($code:ident => $status:ident,)*) => {
        /// An S3 error code, as AWS spells it.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub enum Code {
            $($code,)*
        }

        impl Code {
            /// The code as it appears in the XML body's `Code`.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Self::$code => stringify!($code),)*
                }
            }

            /// The HTTP status AWS answers the code with.
            pub fn status(self) -> StatusCode {
                match self {
                    $(Self::$code => StatusCode::$status,)*
                }
            }
        }
    };
}

codes! {
    AccessControlListNotSupported => BAD_REQUEST,
    AuthorizationHeaderMalformed => BAD_REQUEST,
    AuthorizationQueryParametersError => BAD_REQUEST,
    BadDigest => BAD_REQUEST,
    BadRequest => BAD_REQUEST,
    EntityTooLarge => BAD_REQUEST,
    EntityTooSmall => BAD_REQUEST,
    IllegalVersioningConfigurationException => BAD_REQUEST,
    IncompleteBody => BAD_REQUEST,
    InvalidArgument => BAD_REQUEST,
    InvalidBucketAclWithObjectOwnership => BAD_REQUEST,
    InvalidBucketName => BAD_REQUEST,
    InvalidDigest => BAD_REQUEST,
    InvalidPart => BAD_REQUEST,
    InvalidPartOrder => BAD_REQUEST,
    InvalidPolicyDocument => BAD_REQUEST,
    InvalidRequest => BAD_REQUEST,
    InvalidStorageClass => BAD_REQUEST,
    InvalidTag => BAD_REQUEST,
    InvalidURI => BAD_REQUEST,
    KeyTooLongError => BAD_REQUEST,
    MalformedACLError => BAD_REQUEST,
    MalformedPOSTRequest => BAD_REQUEST,
    MalformedPolicy => BAD_REQUEST,
    MalformedXML => BAD_REQUEST,
    MaxMessageLengthExceeded => BAD_REQUEST,
    MetadataTooLarge => BAD_REQUEST,
    MissingSecurityHeader => BAD_REQUEST,
    RequestHeaderSectionTooLarge => BAD_REQUEST,
    RequestTimeout => BAD_REQUEST,
    UnexpectedContent => BAD_REQUEST,
    UnresolvableGrantByEmailAddress => BAD_REQUEST,
    UserKeyMustBeSpecified => BAD_REQUEST,
    XAmzContentSHA256Mismatch => BAD_REQUEST,
    AccessDenied => FORBIDDEN,
    AccessForbidden => FORBIDDEN,
    InvalidAccessKeyId => FORBIDDEN,
    RequestTimeTooSkewed => FORBIDDEN,
    SignatureDoesNotMatch => FORBIDDEN,
    NoSuchAdminResource => NOT_FOUND,
    NoSuchBucket => NOT_FOUND,
    NoSuchBucketPolicy => NOT_FOUND,
    NoSuchCORSConfiguration => NOT_FOUND,
    NoSuchEntity => NOT_FOUND,
    NoSuchKey => NOT_FOUND,
    NoSuchLifecycleConfiguration => NOT_FOUND,
    NoSuchObjectLockConfiguration => NOT_FOUND,
    NoSuchPublicAccessBlockConfiguration => NOT_FOUND,
    NoSuchTagSet => NOT_FOUND,
    NoSuchUpload => NOT_FOUND,
    NoSuchVersion => NOT_FOUND,
    ObjectLockConfigurationNotFoundError => NOT_FOUND,
    OwnershipControlsNotFoundError => NOT_FOUND,
    ServerSideEncryptionConfigurationNotFoundError => NOT_FOUND,
    MethodNotAllowed => METHOD_NOT_ALLOWED,
    BucketAlreadyExists => CONFLICT,
    BucketAlreadyOwnedByYou => CONFLICT,
    BucketNotEmpty => CONFLICT,
    DeleteConflict => CONFLICT,
    InvalidBucketState => CONFLICT,
    KeyNameInUse => CONFLICT,
    OperationAborted => CONFLICT,
    PreconditionFailed => PRECONDITION_FAILED,
    RequestURITooLong => URI_TOO_LONG,
    InvalidPartNumber => RANGE_NOT_SATISFIABLE,
    InvalidRange => RANGE_NOT_SATISFIABLE,
    InternalError => INTERNAL_SERVER_ERROR,
    NotImplemented => NOT_IMPLEMENTED,
    ServiceUnavailable => SERVICE_UNAVAILABLE,
    SlowDown => SERVICE_UNAVAILABLE,
    InsufficientStorage => INSUFFICIENT_STORAGE,
}

/// An S3 error response. `resource` and `request_id` are filled in by the
/// server just before rendering, so handlers only say what went wrong.
#[derive(Debug, Clone)]
pub struct S3Error {
    /// The [`Code`]'s text, and below its status: set together from it.
    pub code: &'static str,
    pub status: StatusCode,
    pub message: String,
    /// Extra elements AWS puts in some error bodies (e.g. `Key`, `BucketName`).
    pub extra: Vec<(&'static str, String)>,
    /// Response headers some errors carry (e.g. `Content-Range` on 416).
    pub headers: Vec<(HeaderName, HeaderValue)>,
}

pub type S3Result<T> = Result<T, S3Error>;

impl S3Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code: code.as_str(),
            status: code.status(),
            message: message.into(),
            extra: Vec::new(),
            headers: Vec::new(),
        }
    }

    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.extra.push((name, value.into()));
        self
    }

    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    // ---- 400 ----

    pub fn invalid_argument(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidArgument, message)
    }

    pub fn invalid_request(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidRequest, message)
    }

    pub fn invalid_bucket_name(bucket: &str) -> Self {
        Self::new(
            Code::InvalidBucketName,
            "The specified bucket is not valid.",
        )
        .with("BucketName", bucket)
    }

    pub fn invalid_uri() -> Self {
        Self::new(Code::InvalidURI, "Couldn't parse the specified URI.")
    }

    pub fn key_too_long() -> Self {
        Self::new(Code::KeyTooLongError, "Your key is too long")
    }

    pub fn malformed_xml() -> Self {
        Self::new(
            Code::MalformedXML,
            "The XML you provided was not well-formed or did not validate against our published schema",
        )
    }

    pub fn entity_too_large(max: u64) -> Self {
        Self::new(
            Code::EntityTooLarge,
            "Your proposed upload exceeds the maximum allowed size",
        )
        .with("MaxSizeAllowed", max.to_string())
    }

    pub fn max_message_length_exceeded() -> Self {
        Self::new(Code::MaxMessageLengthExceeded, "Your request was too big.")
    }

    pub fn bad_digest(message: impl Into<String>) -> Self {
        Self::new(Code::BadDigest, message)
    }

    pub fn invalid_digest() -> Self {
        Self::new(
            Code::InvalidDigest,
            "The Content-MD5 you specified is not valid.",
        )
    }

    pub fn invalid_storage_class() -> Self {
        Self::new(
            Code::InvalidStorageClass,
            "The storage class you specified is not valid",
        )
    }

    pub fn metadata_too_large(max: usize) -> Self {
        Self::new(
            Code::MetadataTooLarge,
            "Your metadata headers exceed the maximum allowed metadata size.",
        )
        .with("MaxSizeAllowed", max.to_string())
    }

    pub fn invalid_tag(message: impl Into<String>) -> Self {
        Self::new(Code::InvalidTag, message)
    }

    pub fn invalid_version_id() -> Self {
        Self::invalid_argument("Invalid version id specified")
    }

    // ---- 403 / 404 / 409 ----

    pub fn access_denied() -> Self {
        Self::new(Code::AccessDenied, "Access Denied")
    }

    pub fn object_lock_configuration_not_found(bucket: &str) -> Self {
        Self::new(
            Code::ObjectLockConfigurationNotFoundError,
            "Object Lock configuration does not exist for this bucket",
        )
        .with("BucketName", bucket)
    }

    pub fn no_such_lifecycle_configuration(bucket: &str) -> Self {
        Self::new(
            Code::NoSuchLifecycleConfiguration,
            "The lifecycle configuration does not exist",
        )
        .with("BucketName", bucket)
    }

    pub fn method_not_allowed() -> Self {
        Self::new(
            Code::MethodNotAllowed,
            "The specified method is not allowed against this resource.",
        )
    }

    // ---- 412 / 416 ----

    pub fn precondition_failed() -> Self {
        Self::new(
            Code::PreconditionFailed,
            "At least one of the pre-conditions you specified did not hold",
        )
    }

    /// 416, with the `Content-Range: bytes */<size>` RFC 9110 asks for.
    pub fn invalid_range(object_size: u64) -> Self {
        let err = Self::new(Code::InvalidRange, "The requested range is not satisfiable")
            .with("ActualObjectSize", object_size.to_string());
        match HeaderValue::try_from(format!("bytes */{object_size}")) {
            Ok(value) => err.with_header(header::CONTENT_RANGE, value),
            Err(_) => err,
        }
    }

    pub fn invalid_part_number(parts_count: u64) -> Self {
        Self::new(
            Code::InvalidPartNumber,
            "The requested partnumber is not satisfiable",
        )
        .with("PartsCount", parts_count.to_string())
    }

    /// A request body that stopped arriving, in AWS's words.
    pub fn request_timeout() -> Self {
        Self::new(
            Code::RequestTimeout,
            "Your socket connection to the server was not read from or written to within the timeout period. Idle connections will be closed.",
        )
    }

    pub fn header_section_too_large(what: &str, max: usize) -> Self {
        Self::new(
            Code::RequestHeaderSectionTooLarge,
            format!("Your request header section exceeds the maximum allowed size: {what}."),
        )
        .with("MaxSizeAllowed", max.to_string())
    }

    /// AWS answers an overlong target from its front end with a bare 414;
    /// here it gets an S3 body like every other error.
    pub fn uri_too_long(max: usize) -> Self {
        Self::new(
            Code::RequestURITooLong,
            "Your request URI exceeds the maximum allowed length.",
        )
        .with("MaxSizeAllowed", max.to_string())
    }

    // ---- 5xx ----

    pub fn slow_down() -> Self {
        Self::new(Code::SlowDown, "Please reduce your request rate.")
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Self::new(Code::InternalError, message)
    }

    pub fn not_implemented(operation: &str) -> Self {
        Self::new(
            Code::NotImplemented,
            format!("{operation} is not implemented"),
        )
    }

    pub fn service_unavailable(message: impl Into<String>) -> Self {
        Self::new(Code::ServiceUnavailable, message)
    }

    /// Adds the bucket or key name AWS includes in NoSuchBucket / NoSuchKey
    /// bodies, which a bare `StorageError` cannot know.
    pub fn naming(mut self, bucket: &str, key: Option<&str>) -> Self {
        let (element, value) = match (self.code, key) {
            (
                "NoSuchBucket"
                | "BucketNotEmpty"
                | "BucketAlreadyExists"
                | "BucketAlreadyOwnedByYou",
                _,
            ) => ("BucketName", bucket),
            ("NoSuchKey", Some(key)) => ("Key", key),
            _ => return self,
        };
        if !self.extra.iter().any(|(name, _)| *name == element) {
            self.extra.push((element, value.to_owned()));
        }
        self
    }

    /// Renders the S3 XML error body. The server strips the body for HEAD.
    pub fn into_response(self, resource: &str, request_id: &str) -> Response {
        let mut body = String::with_capacity(256);
        body.push_str(r#"<?xml version="1.0" encoding="UTF-8"?>"#);
        body.push_str("<Error>");
        push_element(&mut body, "Code", self.code);
        push_element(&mut body, "Message", &self.message);
        for (name, value) in &self.extra {
            push_element(&mut body, name, value);
        }
        push_element(&mut body, "Resource", resource);
        push_element(&mut body, "RequestId", request_id);
        body.push_str("</Error>");

        let mut response = Response::new(Body::from(body));
        *response.status_mut() = self.status;
        for (name, value) in self.headers {
            response.headers_mut().insert(name, value);
        }
        response.headers_mut().insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/xml"),
        );
        response
    }
}

impl std::fmt::Display for S3Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}): {}", self.code, self.status, self.message)
    }
}

impl std::error::Error for S3Error {}

/// `x-amz-version-id`: the version a response is about.
pub static VERSION_ID: HeaderName = HeaderName::from_static("x-amz-version-id");
/// `x-amz-delete-marker: true`: that version is a delete marker.
pub static DELETE_MARKER: HeaderName = HeaderName::from_static("x-amz-delete-marker");

impl From<StorageError> for S3Error {
    fn from(err: StorageError) -> Self {
        match err {
            StorageError::NoSuchBucket => {
                Self::new(Code::NoSuchBucket, "The specified bucket does not exist")
            }
            StorageError::NoSuchKey => {
                Self::new(Code::NoSuchKey, "The specified key does not exist.")
            }
            StorageError::BucketAlreadyExists => Self::new(
                Code::BucketAlreadyExists,
                "The requested bucket name is not available.",
            ),
            StorageError::BucketAlreadyOwnedByYou => Self::new(
                Code::BucketAlreadyOwnedByYou,
                "Your previous request to create the named bucket succeeded and you already own it.",
            ),
            StorageError::BucketNotEmpty => Self::new(
                Code::BucketNotEmpty,
                "The bucket you tried to delete is not empty",
            ),
            StorageError::AccessDenied | StorageError::TokenRefused(_) => Self::access_denied(),
            StorageError::PreconditionFailed => Self::precondition_failed(),
            StorageError::ObjectLocked => Self::new(
                Code::AccessDenied,
                "Access Denied because object protected by object lock.",
            ),
            StorageError::InvalidArgument(message) => Self::invalid_argument(message),
            // Which datanode or pipeline failed is for the operator's log,
            // not for the caller, who only needs to retry later.
            StorageError::Unavailable(detail) => {
                tracing::warn!(error = %detail, "storage unavailable");
                Self::service_unavailable(
                    "The storage cluster cannot serve this request right now. Please try again.",
                )
            }
            // A full disk clears when space is freed: the client may retry
            // later. 507 as RFC 4918 names it (MinIO and Ceph answer the same).
            StorageError::Io(e)
                if matches!(e.kind(), ErrorKind::StorageFull | ErrorKind::QuotaExceeded) =>
            {
                tracing::error!(error = %e, "storage full");
                Self::new(
                    Code::InsufficientStorage,
                    "There is not enough free space to store this object. Please try again later.",
                )
            }
            StorageError::NoSuchUpload => Self::new(
                Code::NoSuchUpload,
                "The specified upload does not exist. The upload ID may be invalid, or the upload may have been aborted or completed.",
            ),
            StorageError::InvalidPart(message) => Self::new(Code::InvalidPart, message),
            StorageError::NoSuchVersion => {
                Self::new(Code::NoSuchVersion, "The specified version does not exist.")
            }
            // AWS answers a marker addressed by id 405, the latest being
            // one 404, both saying which marker it was.
            StorageError::DeleteMarker {
                version_id,
                addressed,
            } => {
                let err = if addressed {
                    Self::method_not_allowed()
                        .with_header(header::ALLOW, HeaderValue::from_static("DELETE"))
                } else {
                    Self::from(StorageError::NoSuchKey)
                };
                let err = err.with_header(DELETE_MARKER.clone(), HeaderValue::from_static("true"));
                match HeaderValue::from_str(&version_id) {
                    Ok(value) => err.with_header(VERSION_ID.clone(), value),
                    Err(_) => err,
                }
            }
            StorageError::NotImplemented(message) => Self::new(Code::NotImplemented, message),
            // Corrupt data, I/O and internal faults are ours, not the client's;
            // the detail goes to the log, never to the caller.
            other => {
                tracing::error!(error = %other, "storage failure");
                Self::internal("We encountered an internal error. Please try again.")
            }
        }
    }
}

/// Appends `<name>value</name>`, escaping the value for XML 1.0. Control
/// characters, which XML 1.0 cannot carry even escaped, are dropped so a key
/// like "a\u{1}b" still yields a parseable error body.
fn push_element(out: &mut String, name: &str, value: &str) {
    out.push('<');
    out.push_str(name);
    out.push('>');
    for c in value.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\t' | '\n' | '\r' => out.push(c),
            c if c.is_control() => {}
            c => out.push(c),
        }
    }
    out.push_str("</");
    out.push_str(name);
    out.push('>');
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    async fn body_text(response: Response) -> String {
        let bytes = response
            .into_body()
            .collect()
            .await
            .expect("in-memory body")
            .to_bytes();
        String::from_utf8(bytes.to_vec()).expect("utf-8 body")
    }

    #[tokio::test]
    async fn no_such_key_renders_code_key_resource_and_request_id() {
        let response = S3Error::from(StorageError::NoSuchKey)
            .naming("bkt", Some("a<b"))
            .into_response("/bkt/a<b", "REQ1");
        assert_eq!(response.status(), StatusCode::NOT_FOUND);
        assert_eq!(response.headers()[header::CONTENT_TYPE], "application/xml");
        let body = body_text(response).await;
        assert_eq!(
            body,
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><Error><Code>NoSuchKey</Code>\
             <Message>The specified key does not exist.</Message><Key>a&lt;b</Key>\
             <Resource>/bkt/a&lt;b</Resource><RequestId>REQ1</RequestId></Error>"
        );
    }

    #[test]
    fn invalid_range_carries_the_object_size_in_content_range() {
        let response = S3Error::invalid_range(10240).into_response("/b/k", "R");
        assert_eq!(response.status(), StatusCode::RANGE_NOT_SATISFIABLE);
        assert_eq!(response.headers()[header::CONTENT_RANGE], "bytes */10240");
    }

    #[tokio::test]
    async fn control_characters_are_dropped_from_the_body() {
        let body = body_text(
            S3Error::from(StorageError::NoSuchKey)
                .naming("b", Some("a\u{1}b"))
                .into_response("/", "R"),
        )
        .await;
        assert!(body.contains("<Key>ab</Key>"), "{body}");
    }

    #[test]
    fn storage_errors_map_to_aws_codes_and_statuses() {
        let cases = [
            (StorageError::NoSuchBucket, "NoSuchBucket", 404),
            (StorageError::NoSuchKey, "NoSuchKey", 404),
            (
                StorageError::BucketAlreadyExists,
                "BucketAlreadyExists",
                409,
            ),
            (
                StorageError::BucketAlreadyOwnedByYou,
                "BucketAlreadyOwnedByYou",
                409,
            ),
            (StorageError::BucketNotEmpty, "BucketNotEmpty", 409),
            (StorageError::AccessDenied, "AccessDenied", 403),
            (StorageError::PreconditionFailed, "PreconditionFailed", 412),
            (StorageError::ObjectLocked, "AccessDenied", 403),
            (
                StorageError::InvalidArgument("x".into()),
                "InvalidArgument",
                400,
            ),
            (StorageError::TokenRefused("x".into()), "AccessDenied", 403),
            (StorageError::Corrupt("x".into()), "InternalError", 500),
            (
                StorageError::Unavailable("x".into()),
                "ServiceUnavailable",
                503,
            ),
            (
                StorageError::Io(std::io::Error::other("disk")),
                "InternalError",
                500,
            ),
            (
                StorageError::Io(ErrorKind::StorageFull.into()),
                "InsufficientStorage",
                507,
            ),
            (
                StorageError::Io(ErrorKind::QuotaExceeded.into()),
                "InsufficientStorage",
                507,
            ),
            (StorageError::Internal("x".into()), "InternalError", 500),
            (StorageError::NoSuchUpload, "NoSuchUpload", 404),
            (StorageError::InvalidPart("x".into()), "InvalidPart", 400),
        ];
        for (err, code, status) in cases {
            let s3 = S3Error::from(err);
            assert_eq!((s3.code, s3.status.as_u16()), (code, status));
        }
    }

    #[test]
    fn naming_adds_bucket_or_key_once() {
        let err = S3Error::from(StorageError::NoSuchKey).naming("b", Some("k"));
        assert_eq!(err.extra, vec![("Key", "k".to_owned())]);
        let err = S3Error::from(StorageError::NoSuchBucket).naming("b", Some("k"));
        assert_eq!(err.extra, vec![("BucketName", "b".to_owned())]);
        let err = S3Error::from(StorageError::NoSuchBucket).naming("b", None);
        assert_eq!(err.extra.len(), 1);
        let err = S3Error::access_denied().naming("b", Some("k"));
        assert!(err.extra.is_empty());
    }
}

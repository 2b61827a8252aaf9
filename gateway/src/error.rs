//! S3 errors: the AWS code, the HTTP status and the XML body in one place.

use axum::http::StatusCode;

/// An S3 error response. `resource` and `request_id` are filled in by the
/// server just before rendering, so handlers only say what went wrong.
#[derive(Debug, Clone)]
pub struct S3Error {
    pub code: &'static str,
    pub status: StatusCode,
    pub message: String,
    /// Extra elements AWS puts in some error bodies (e.g. `Key`, `BucketName`).
    pub extra: Vec<(&'static str, String)>,
}

impl S3Error {
    pub fn new(code: &'static str, status: StatusCode, message: impl Into<String>) -> Self {
        Self {
            code,
            status,
            message: message.into(),
            extra: Vec::new(),
        }
    }

    pub fn with(mut self, name: &'static str, value: impl Into<String>) -> Self {
        self.extra.push((name, value.into()));
        self
    }
}

pub type S3Result<T> = Result<T, S3Error>;

//! Endpoint settings, test data, digests and the JSON-lines reporter.

use aws_sdk_s3::config::http::HttpResponse;
use aws_sdk_s3::error::{BuildError, DisplayErrorContext, ProvideErrorMetadata, SdkError};
use aws_sdk_s3::presigning::PresigningConfigError;
use aws_sdk_s3::primitives::ByteStreamError;
use base64::Engine as _;
use md5::{Digest as _, Md5};
use std::error::Error;
use std::time::{SystemTime, UNIX_EPOCH};

pub type Fallible<T> = Result<T, Problem>;

/// Why a scenario failed, as one readable line.
#[derive(Debug)]
pub struct Problem(pub String);

impl<E: ProvideErrorMetadata + Error + 'static> From<SdkError<E, HttpResponse>> for Problem {
    fn from(error: SdkError<E, HttpResponse>) -> Self {
        match &error {
            SdkError::ServiceError(service) => Problem(format!(
                "{} (HTTP {}): {}",
                service.err().code().unwrap_or("no error code"),
                service.raw().status().as_u16(),
                service.err().message().unwrap_or("no message"),
            )),
            _ => Problem(DisplayErrorContext(&error).to_string()),
        }
    }
}

/// Errors outside the S3 calls (local I/O, request building, body streaming) keep their full chain.
macro_rules! problem_from {
    ($($error:ty),*) => {$(
        impl From<$error> for Problem {
            fn from(error: $error) -> Self {
                Problem(DisplayErrorContext(&error).to_string())
            }
        }
    )*};
}

problem_from!(
    std::io::Error,
    BuildError,
    ByteStreamError,
    PresigningConfigError
);

pub const SCENARIOS: [&str; 10] = [
    "bucket",
    "object",
    "range",
    "list-v2-delimiter",
    "multipart",
    "copy",
    "tagging",
    "presigned",
    "checksum-default",
    "checksum-off",
];

/// The S3 endpoint under test, from `S3_ENDPOINT`, `S3_ACCESS_KEY`, `S3_SECRET_KEY`, `S3_REGION`.
pub struct Endpoint {
    pub url: String,
    pub access_key: String,
    pub secret_key: String,
    pub region: String,
}

impl Endpoint {
    pub fn from_env() -> Result<Self, String> {
        let required =
            |name: &str| std::env::var(name).map_err(|_| format!("missing environment: {name}"));
        Ok(Self {
            url: required("S3_ENDPOINT")?.trim_end_matches('/').to_owned(),
            access_key: required("S3_ACCESS_KEY")?,
            secret_key: required("S3_SECRET_KEY")?,
            region: std::env::var("S3_REGION")
                .ok()
                .filter(|r| !r.is_empty())
                .unwrap_or_else(|| "us-east-1".to_owned()),
        })
    }
}

/// A failed check, as the scenario's error.
pub fn fail<T>(message: impl Into<String>) -> Fallible<T> {
    Err(Problem(message.into()))
}

pub fn check(condition: bool, message: impl FnOnce() -> String) -> Fallible<()> {
    if condition { Ok(()) } else { fail(message()) }
}

/// Non-cryptographic random bytes (xorshift64*), seeded from the clock: the
/// data only has to differ between runs and parts.
pub struct Noise(u64);

impl Noise {
    pub fn from_clock() -> Self {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        // Truncating the nanoseconds keeps their fast-changing low bits, which is all a seed needs.
        Self((nanos as u64) ^ (u64::from(std::process::id()) << 32) | 1)
    }

    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        let mut out = Vec::with_capacity(len + 8);
        while out.len() < len {
            out.extend_from_slice(&self.next().to_le_bytes());
        }
        out.truncate(len);
        out
    }

    pub fn hex_suffix(&mut self) -> String {
        format!("{:08x}", self.next() >> 32)
    }
}

pub fn quoted_md5(data: &[u8]) -> String {
    format!("\"{}\"", hex(&Md5::digest(data)))
}

/// The S3 multipart ETag: md5 of the concatenated binary part md5s, then `-N`.
/// The S3 multipart ETag: md5 of the concatenated binary part md5s, then
/// -N. With S3_MULTIPART_ETAG=ozone, Ozone's: md5 of the parts' hex md5s as text.
pub fn multipart_etag(parts: &[Vec<u8>]) -> String {
    let ozone = std::env::var("S3_MULTIPART_ETAG").is_ok_and(|form| form == "ozone");
    let mut joined = Md5::new();
    for part in parts {
        let sum = Md5::digest(part);
        if ozone {
            joined.update(hex(&sum).as_bytes());
        } else {
            joined.update(sum);
        }
    }
    format!("\"{}-{}\"", hex(&joined.finalize()), parts.len())
}

pub fn crc32_base64(data: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(crc32fast::hash(data).to_be_bytes())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

pub fn check_same_bytes(got: &[u8], expected: &[u8], what: &str) -> Fallible<()> {
    check(got == expected, || {
        format!(
            "{what}: got {} bytes, expected {} bytes with other content",
            got.len(),
            expected.len()
        )
    })
}

/// Prints one JSON line per scenario result.
pub struct Reporter {
    pub version: String,
}

impl Reporter {
    pub fn emit(&self, scenario: &str, ok: bool, detail: &str) {
        println!(
            "{{\"sdk\":\"rust\",\"version\":{},\"scenario\":{},\"ok\":{ok},\"detail\":{}}}",
            json_string(&self.version),
            json_string(scenario),
            json_string(&shorten(detail)),
        );
    }
}

fn shorten(text: &str) -> String {
    match text.char_indices().nth(600) {
        Some((cut, _)) => format!("{}...", &text[..cut]),
        None => text.to_owned(),
    }
}

fn json_string(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if u32::from(c) < 0x20 => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

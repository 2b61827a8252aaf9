//! The trailer block of an aws-chunked body: `name:value` lines after the
//! final zero-length chunk, declared up front in `x-amz-trailer`, and in the
//! signed mode closed by `x-amz-trailer-signature`.

use http::{HeaderMap, HeaderName, HeaderValue};

use super::errors::{chunk_signature_mismatch, invalid_request, malformed_chunk};
use super::sigv4::{SigningContext, signatures_match};
use crate::error::S3Error;

/// Trailer lines accepted; clients send one checksum.
const MAX_TRAILERS: usize = 16;
/// Bytes of trailer block accepted; a checksum line is under 100 bytes.
pub(crate) const MAX_TRAILER_BYTES: usize = 16 * 1024;

const SIGNATURE_NAME: &str = "x-amz-trailer-signature";

/// The names listed in `x-amz-trailer`, lower-cased.
pub(crate) fn declared_names(header: &str) -> Vec<String> {
    header
        .split(',')
        .map(|name| name.trim().to_ascii_lowercase())
        .filter(|name| !name.is_empty())
        .collect()
}

/// How the trailer block's signature is checked.
pub(crate) enum TrailerSigning<'a> {
    /// An unsigned payload: the block must carry no signature.
    Unsigned,
    /// Chained from the previous signature, checked here.
    Check(&'a SigningContext, &'a str),
    /// Present, and vouched for elsewhere ([`TrailerCollector::signed`]).
    Vouched,
}

#[derive(Default)]
pub(crate) struct TrailerCollector {
    entries: Vec<(String, String)>,
    signature: Option<String>,
    bytes: usize,
}

impl TrailerCollector {
    /// One line of the block, without its CRLF.
    pub(crate) fn add_line(&mut self, line: &[u8], declared: &[String]) -> Result<(), S3Error> {
        self.bytes += line.len() + 2;
        if self.bytes > MAX_TRAILER_BYTES || self.entries.len() >= MAX_TRAILERS {
            return Err(malformed_chunk("the trailer block is too large"));
        }
        let line = std::str::from_utf8(line)
            .map_err(|_| malformed_chunk("a trailer line is not UTF-8"))?;
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| malformed_chunk("a trailer line has no ':'"))?;
        // Only blanks are trimmed, and one stray `\n` that minio-go puts
        // before the CRLF; anything else is part of the value.
        let blank = [' ', '\t'];
        let name = name.trim_matches(blank).to_ascii_lowercase();
        let value = value
            .strip_suffix('\n')
            .unwrap_or(value)
            .trim_matches(blank)
            .to_owned();
        if name == SIGNATURE_NAME {
            if self.signature.replace(value).is_some() {
                return Err(malformed_chunk("the trailer signature appears twice"));
            }
            return Ok(());
        }
        if !declared.contains(&name) {
            return Err(invalid_request(format!(
                "The trailer {name} was not declared in x-amz-trailer"
            )));
        }
        if self.entries.iter().any(|(seen, _)| *seen == name) {
            return Err(malformed_chunk("a trailer appears twice"));
        }
        self.entries.push((name, value));
        Ok(())
    }

    /// The `x-amz-trailer-signature` of the block and what it signs, for a
    /// chain whose signatures are vouched for elsewhere
    /// ([`super::chunked::SignatureChain::vouched`]); `None` without one.
    pub(crate) fn signed(
        &mut self,
        context: &SigningContext,
        previous: &str,
    ) -> Option<(String, String)> {
        self.entries.sort();
        let signature = self.signature.clone()?;
        Some((
            context.trailer_string_to_sign(previous, &self.canonical()),
            signature,
        ))
    }

    /// Checks the block is complete (and, when `signing` is given, that its
    /// signature chains from `previous`), and returns it as headers.
    pub(crate) fn finish(
        mut self,
        declared: &[String],
        signing: TrailerSigning<'_>,
    ) -> Result<HeaderMap, S3Error> {
        self.entries.sort();
        match (signing, &self.signature) {
            (TrailerSigning::Check(context, previous), Some(provided)) => {
                let expected = context.trailer_signature(previous, &self.canonical());
                if !signatures_match(&expected, provided) {
                    return Err(chunk_signature_mismatch());
                }
            }
            (TrailerSigning::Vouched, Some(_)) => {}
            (TrailerSigning::Check(..) | TrailerSigning::Vouched, None) => {
                return Err(invalid_request(
                    "The trailer x-amz-trailer-signature is missing",
                ));
            }
            (TrailerSigning::Unsigned, Some(_)) => {
                return Err(invalid_request(
                    "x-amz-trailer-signature is not allowed with an unsigned payload",
                ));
            }
            (TrailerSigning::Unsigned, None) => {}
        }
        if let Some(missing) = declared
            .iter()
            .find(|name| !self.entries.iter().any(|(seen, _)| seen == *name))
        {
            return Err(invalid_request(format!(
                "The trailer {missing} declared in x-amz-trailer is missing"
            )));
        }
        let mut headers = HeaderMap::with_capacity(self.entries.len());
        for (name, value) in self.entries {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| malformed_chunk("a trailer name is not a valid header name"))?;
            let value = HeaderValue::from_str(&value)
                .map_err(|_| malformed_chunk("a trailer value is not a valid header value"))?;
            headers.insert(name, value);
        }
        Ok(headers)
    }

    /// `name:value\n` per trailer, sorted by name: what the signature covers.
    fn canonical(&self) -> String {
        self.entries
            .iter()
            .map(|(name, value)| format!("{name}:{value}\n"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context() -> SigningContext {
        SigningContext {
            key: [7; 32],
            stamp: "20250101T000000Z".to_owned(),
            scope: "20250101/us-east-1/s3/aws4_request".to_owned(),
        }
    }

    #[test]
    fn parses_declared_trailers() {
        let declared = declared_names(" X-Amz-Checksum-CRC32 ");
        let mut collector = TrailerCollector::default();
        collector
            .add_line(b"x-amz-checksum-crc32:AAAAAA==", &declared)
            .unwrap();
        let headers = collector
            .finish(&declared, TrailerSigning::Unsigned)
            .unwrap();
        assert_eq!(headers["x-amz-checksum-crc32"], "AAAAAA==");
    }

    #[test]
    fn tolerates_the_minio_go_line_ending_only() {
        let declared = declared_names("x-amz-checksum-crc32c");
        let mut collector = TrailerCollector::default();
        collector
            .add_line(b"x-amz-checksum-crc32c: AAAA==\n", &declared)
            .unwrap();
        assert_eq!(
            collector
                .finish(&declared, TrailerSigning::Unsigned)
                .unwrap()["x-amz-checksum-crc32c"],
            "AAAA=="
        );
        let mut collector = TrailerCollector::default();
        collector
            .add_line(b"x-amz-checksum-crc32c:AAAA==\x0c", &declared)
            .unwrap();
        assert!(
            collector
                .finish(&declared, TrailerSigning::Unsigned)
                .is_err(),
            "a form feed is not a valid value"
        );
    }

    #[test]
    fn verifies_the_trailer_signature() {
        let declared = declared_names("x-amz-checksum-crc32");
        let signature = context().trailer_signature("prev", "x-amz-checksum-crc32:AAAAAA==\n");
        let mut collector = TrailerCollector::default();
        collector
            .add_line(b"x-amz-checksum-crc32:AAAAAA==", &declared)
            .unwrap();
        collector
            .add_line(
                format!("x-amz-trailer-signature:{signature}").as_bytes(),
                &declared,
            )
            .unwrap();
        assert!(
            collector
                .finish(&declared, TrailerSigning::Check(&context(), "prev"))
                .is_ok()
        );

        let mut tampered = TrailerCollector::default();
        tampered
            .add_line(b"x-amz-checksum-crc32:AAAAAB==", &declared)
            .unwrap();
        tampered
            .add_line(
                format!("x-amz-trailer-signature:{signature}").as_bytes(),
                &declared,
            )
            .unwrap();
        let error = tampered
            .finish(&declared, TrailerSigning::Check(&context(), "prev"))
            .unwrap_err();
        assert_eq!(error.code, "SignatureDoesNotMatch");
    }

    #[test]
    fn refuses_missing_undeclared_and_malformed_trailers() {
        let declared = declared_names("x-amz-checksum-crc32");
        let error = TrailerCollector::default()
            .finish(&declared, TrailerSigning::Unsigned)
            .unwrap_err();
        assert_eq!(error.code, "InvalidRequest");

        let mut collector = TrailerCollector::default();
        assert!(
            collector
                .add_line(b"x-amz-checksum-sha1:AAAA", &declared)
                .is_err()
        );
        assert!(collector.add_line(b"no colon", &declared).is_err());

        let error = TrailerCollector::default()
            .finish(&[], TrailerSigning::Check(&context(), "prev"))
            .unwrap_err();
        assert_eq!(error.code, "InvalidRequest");

        let mut unsigned = TrailerCollector::default();
        unsigned
            .add_line(b"x-amz-trailer-signature:00", &[])
            .unwrap();
        assert!(unsigned.finish(&[], TrailerSigning::Unsigned).is_err());
    }
}

//! What a request says about its body's integrity (Content-MD5, one
//! `x-amz-checksum-<alg>` header or trailer, `x-amz-sdk-checksum-algorithm`)
//! and the check of what was received against it.

use http::{HeaderMap, HeaderName};
use storage_client::ObjectChecksum;

use crate::checksum::{
    AlgorithmHeader, ChecksumAlgorithm, Checksummer, Digests, decode_content_md5,
};
use crate::error::S3Error;

const CONTENT_MD5: &str = "content-md5";
const X_AMZ_TRAILER: &str = "x-amz-trailer";
const X_AMZ_SDK_CHECKSUM_ALGORITHM: &str = "x-amz-sdk-checksum-algorithm";

/// Where the expected checksum value comes from.
#[derive(Debug, PartialEq, Eq)]
enum Expected {
    /// Only computed (and stored), nothing to compare with.
    Nothing,
    Header(String),
    /// Declared by `x-amz-trailer`; read after the body.
    Trailer,
}

#[derive(Debug, PartialEq, Eq)]
pub struct IntegrityPlan {
    algorithm: Option<ChecksumAlgorithm>,
    expected: Expected,
    content_md5: Option<[u8; 16]>,
}

impl IntegrityPlan {
    /// Reads and validates the integrity headers before any byte is read.
    pub fn from_headers(headers: &HeaderMap) -> Result<Self, S3Error> {
        let content_md5 = match headers.get(CONTENT_MD5) {
            None => None,
            Some(value) => Some(
                value
                    .to_str()
                    .ok()
                    .and_then(decode_content_md5)
                    .ok_or_else(S3Error::invalid_digest)?,
            ),
        };

        let mut header_checksum = None;
        for (name, value) in headers {
            let Some(alg) = ChecksumAlgorithm::from_header_name(name.as_str()) else {
                continue;
            };
            if header_checksum.is_some() {
                return Err(S3Error::invalid_request(
                    "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.",
                ));
            }
            let value = value.to_str().unwrap_or_default().trim();
            if !alg.is_well_formed(value) {
                return Err(S3Error::invalid_request(format!(
                    "Value for {} header is invalid.",
                    alg.header_name()
                )));
            }
            header_checksum = Some((alg, value.to_owned()));
        }

        let trailer = match headers.get(X_AMZ_TRAILER) {
            None => None,
            Some(value) => Some(trailer_algorithm(value.to_str().unwrap_or_default())?),
        };

        let sdk_algorithm = requested_algorithm(headers, X_AMZ_SDK_CHECKSUM_ALGORITHM)?;

        let (algorithm, expected) = match (header_checksum, trailer) {
            (Some(_), Some(_)) => {
                return Err(S3Error::invalid_request(
                    "Expecting a single x-amz-checksum- header: x-amz-trailer and an x-amz-checksum- header cannot be sent together.",
                ));
            }
            (Some((alg, value)), None) => (Some(alg), Expected::Header(value)),
            (None, Some(alg)) => (
                alg,
                if alg.is_some() {
                    Expected::Trailer
                } else {
                    Expected::Nothing
                },
            ),
            (None, None) => (sdk_algorithm, Expected::Nothing),
        };
        if let (Some(sdk), Some(alg)) = (sdk_algorithm, algorithm)
            && sdk != alg
        {
            return Err(S3Error::invalid_request(format!(
                "Value for x-amz-sdk-checksum-algorithm header is invalid: the checksum sent is {}.",
                alg.name().to_ascii_uppercase()
            )));
        }
        Ok(Self {
            algorithm,
            expected,
            content_md5,
        })
    }

    /// The additional checksum the request sends or asks for, if any.
    pub fn algorithm(&self) -> Option<ChecksumAlgorithm> {
        self.algorithm
    }

    /// Whether the client gave anything to verify the body against.
    pub fn has_expected_digest(&self) -> bool {
        self.content_md5.is_some() || self.expected != Expected::Nothing
    }

    /// The streaming digests this plan needs.
    pub fn checksummer(&self) -> Checksummer {
        Checksummer::new(self.algorithm)
    }

    /// Verifies a request body read whole (an XML document) the same way.
    pub fn verify_body(&self, body: &[u8], trailers: &HeaderMap) -> Result<(), S3Error> {
        let mut summer = self.checksummer();
        summer.update(body);
        self.verify(&summer.finish(), trailers).map(drop)
    }

    /// Compares what was received with what the client declared and returns
    /// the checksum to store. `trailers` are the verified aws-chunked trailers.
    pub fn verify(
        &self,
        digests: &Digests,
        trailers: &HeaderMap,
    ) -> Result<Option<ObjectChecksum>, S3Error> {
        if self.content_md5.is_some_and(|md5| md5 != digests.md5) {
            return Err(S3Error::bad_digest(
                "The Content-MD5 you specified did not match what we received.",
            ));
        }
        let Some((alg, computed)) = &digests.checksum else {
            return Ok(None);
        };
        let expected = match &self.expected {
            Expected::Nothing => None,
            Expected::Header(value) => Some(value.clone()),
            Expected::Trailer => Some(trailer_value(*alg, trailers)?),
        };
        if expected.is_some_and(|value| value != *computed) {
            return Err(S3Error::bad_digest(format!(
                "The {} you specified did not match the calculated checksum.",
                alg.name().to_ascii_uppercase()
            )));
        }
        Ok(digests.stored_checksum())
    }
}

/// The algorithm a header such as `x-amz-checksum-algorithm` names;
/// absent is `None`, an unknown name is refused.
pub(super) fn requested_algorithm(
    headers: &HeaderMap,
    name: &str,
) -> Result<Option<ChecksumAlgorithm>, S3Error> {
    let Some(value) = headers.get(name) else {
        return Ok(None);
    };
    value
        .to_str()
        .ok()
        .and_then(ChecksumAlgorithm::from_name)
        .map(Some)
        .ok_or_else(|| {
            S3Error::invalid_request(
                "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]",
            )
        })
}

/// The checksum algorithm an `x-amz-trailer` declares. Trailers other than
/// checksums carry nothing we store, so they select no algorithm.
fn trailer_algorithm(declared: &str) -> Result<Option<ChecksumAlgorithm>, S3Error> {
    let mut found = None;
    for name in declared.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let lower = name.to_ascii_lowercase();
        if !lower.starts_with("x-amz-checksum-") {
            continue;
        }
        let alg = ChecksumAlgorithm::from_header_name(&lower).ok_or_else(|| {
            S3Error::invalid_request(format!("The trailer {name} is not a supported checksum."))
        })?;
        if found.replace(alg).is_some() {
            return Err(S3Error::invalid_request(
                "Expecting a single x-amz-checksum- trailer.",
            ));
        }
    }
    Ok(found)
}

fn trailer_value(alg: ChecksumAlgorithm, trailers: &HeaderMap) -> Result<String, S3Error> {
    let name = HeaderName::from_static(alg.header_name());
    let value = trailers
        .get(&name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
        .ok_or_else(|| {
            S3Error::invalid_request(format!(
                "The x-amz-trailer header declares {} but the trailer was not sent.",
                alg.header_name()
            ))
        })?;
    if !alg.is_well_formed(value) {
        return Err(S3Error::invalid_request(format!(
            "Value for {} trailing header is invalid.",
            alg.header_name()
        )));
    }
    Ok(value.to_owned())
}

#[cfg(test)]
mod tests {

    use super::*;
    use crate::ops::test_headers as headers;
    use storage_client::ChecksumType;

    const BODY: &[u8] = b"123456789";
    /// CRC32 of BODY (0xCBF43926), base64.
    const BODY_CRC32: &str = "y/Q5Jg==";
    /// MD5 of BODY, base64.
    const BODY_MD5: &str = "JfnnlDI7RTiF9RgfG2JNCw==";

    fn check(
        request: &[(&str, &str)],
        trailers: &[(&str, &str)],
    ) -> Result<Option<ObjectChecksum>, S3Error> {
        let plan = IntegrityPlan::from_headers(&headers(request))?;
        let mut summer = plan.checksummer();
        summer.update(BODY);
        plan.verify(&summer.finish(), &headers(trailers))
    }

    fn stored(alg: &str, value: &str) -> Option<ObjectChecksum> {
        Some(ObjectChecksum {
            algorithm: ChecksumAlgorithm::from_name(alg).unwrap(),
            value: value.into(),
            kind: ChecksumType::FullObject,
        })
    }

    #[test]
    fn no_integrity_headers_store_no_checksum() {
        assert_eq!(check(&[], &[]).unwrap(), None);
        assert!(
            !IntegrityPlan::from_headers(&HeaderMap::new())
                .unwrap()
                .has_expected_digest()
        );
    }

    #[test]
    fn content_md5_is_verified() {
        assert_eq!(check(&[("content-md5", BODY_MD5)], &[]).unwrap(), None);
        let err = check(&[("content-md5", "1B2M2Y8AsgTpgAmY7PhCfg==")], &[]).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("BadDigest", 400));
        let err = check(&[("content-md5", "short")], &[]).unwrap_err();
        assert_eq!(err.code, "InvalidDigest");
    }

    #[test]
    fn checksum_header_is_verified_and_stored() {
        assert_eq!(
            check(&[("x-amz-checksum-crc32", BODY_CRC32)], &[]).unwrap(),
            stored("crc32", BODY_CRC32)
        );
        let err = check(&[("x-amz-checksum-crc32", "AAAAAA==")], &[]).unwrap_err();
        assert_eq!(err.code, "BadDigest");
        let err = check(&[("x-amz-checksum-crc32", "AAAA")], &[]).unwrap_err();
        assert_eq!(err.code, "InvalidRequest");
    }

    #[test]
    fn checksum_trailer_is_verified_after_the_body() {
        let request = [
            ("x-amz-trailer", "x-amz-checksum-crc32"),
            ("x-amz-sdk-checksum-algorithm", "CRC32"),
        ];
        assert_eq!(
            check(&request, &[("x-amz-checksum-crc32", BODY_CRC32)]).unwrap(),
            stored("crc32", BODY_CRC32)
        );
        let err = check(&request, &[("x-amz-checksum-crc32", "AAAAAA==")]).unwrap_err();
        assert_eq!(err.code, "BadDigest");
        let err = check(&request, &[]).unwrap_err();
        assert_eq!(err.code, "InvalidRequest");
    }

    #[test]
    fn a_body_read_whole_is_checked_against_its_trailer() {
        let plan =
            IntegrityPlan::from_headers(&headers(&[("x-amz-trailer", "x-amz-checksum-crc32")]))
                .unwrap();
        assert!(plan.has_expected_digest());
        let trailers = headers(&[("x-amz-checksum-crc32", BODY_CRC32)]);
        assert!(plan.verify_body(BODY, &trailers).is_ok());
        let err = plan.verify_body(b"other", &trailers).unwrap_err();
        assert_eq!(err.code, "BadDigest");
    }

    #[test]
    fn sdk_algorithm_alone_computes_and_stores() {
        let crc64 = ChecksumAlgorithm::Crc64Nvme.digest(BODY);
        assert_eq!(
            check(&[("x-amz-sdk-checksum-algorithm", "CRC64NVME")], &[]).unwrap(),
            stored("crc64nvme", &crc64)
        );
    }

    #[test]
    fn contradictory_integrity_headers_are_invalid_requests() {
        for request in [
            &[
                ("x-amz-trailer", "x-amz-checksum-crc32"),
                ("x-amz-checksum-crc32", BODY_CRC32),
            ][..],
            &[
                ("x-amz-checksum-crc32", BODY_CRC32),
                ("x-amz-checksum-sha1", "qZk+NkcGgWq6PiVxeFDCbJzQ2J0="),
            ],
            &[
                ("x-amz-sdk-checksum-algorithm", "SHA256"),
                ("x-amz-checksum-crc32", BODY_CRC32),
            ],
            &[("x-amz-sdk-checksum-algorithm", "MD5")],
            &[("x-amz-trailer", "x-amz-checksum-md5")],
        ] {
            let err = IntegrityPlan::from_headers(&headers(request)).unwrap_err();
            assert_eq!(err.code, "InvalidRequest", "{request:?}");
        }
    }
}

//! Parsing `Authorization: AWS4-HMAC-SHA256 Credential=..., SignedHeaders=...,
//! Signature=...`. Clients differ in spacing after the commas; the order of
//! the three components is free; each must appear exactly once.

use super::errors::header_malformed;
use super::sigv4::{ALGORITHM, Credential};
use crate::error::S3Error;

#[derive(Debug, PartialEq, Eq)]
pub(crate) struct AuthorizationHeader<'a> {
    pub credential: Credential<'a>,
    pub signed_headers: Vec<&'a str>,
    pub signature: &'a str,
}

pub(crate) const CREDENTIAL_FORMAT: &str =
    "the Credential is mal-formed; expecting \"<YOUR-AKID>/YYYYMMDD/REGION/SERVICE/aws4_request\".";

/// Parses the value of an `Authorization` header that starts with
/// `AWS4-HMAC-SHA256 `.
pub(crate) fn parse(value: &str) -> Result<AuthorizationHeader<'_>, S3Error> {
    let rest = value
        .strip_prefix(ALGORITHM)
        .filter(|rest| rest.starts_with(' '))
        .ok_or_else(|| header_malformed("the authorization mechanism is not AWS4-HMAC-SHA256."))?;
    let (mut credential, mut signed_headers, mut signature) = (None, None, None);
    for component in rest.split(',') {
        let component = component.trim();
        let (name, value) = component.split_once('=').ok_or_else(|| {
            header_malformed(&format!("the component '{component}' is not name=value."))
        })?;
        let slot = match name {
            "Credential" => &mut credential,
            "SignedHeaders" => &mut signed_headers,
            "Signature" => &mut signature,
            _ => {
                return Err(header_malformed(&format!(
                    "the component '{name}' is unknown."
                )));
            }
        };
        if slot.replace(value).is_some() {
            return Err(header_malformed(&format!(
                "the component '{name}' appears twice."
            )));
        }
    }
    let missing = |name: &str| header_malformed(&format!("the component '{name}' is missing."));
    let credential = credential.ok_or_else(|| missing("Credential"))?;
    let signed_headers = signed_headers.ok_or_else(|| missing("SignedHeaders"))?;
    let signature = signature.ok_or_else(|| missing("Signature"))?;
    Ok(AuthorizationHeader {
        credential: Credential::parse(credential)
            .ok_or_else(|| header_malformed(CREDENTIAL_FORMAT))?,
        signed_headers: parse_signed_headers(signed_headers).ok_or_else(|| {
            header_malformed(
                "the SignedHeaders component is not a ;-separated list of lower-case header names.",
            )
        })?,
        signature,
    })
}

/// `host;x-amz-date`: lower-case names, none empty.
pub(crate) fn parse_signed_headers(text: &str) -> Option<Vec<&str>> {
    let names: Vec<&str> = text.split(';').collect();
    let valid = names.iter().all(|name| {
        !name.is_empty()
            && name
                .bytes()
                .all(|b| b.is_ascii_graphic() && !b.is_ascii_uppercase() && b != b':')
    });
    valid.then_some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    const EXAMPLE: &str = "AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;range;x-amz-content-sha256;x-amz-date,Signature=f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";

    #[test]
    fn parses_the_documented_header() {
        let parsed = parse(EXAMPLE).unwrap();
        assert_eq!(parsed.credential.access_key, "AKIAIOSFODNN7EXAMPLE");
        assert_eq!(parsed.credential.date, "20130524");
        assert_eq!(
            parsed.signed_headers,
            ["host", "range", "x-amz-content-sha256", "x-amz-date"]
        );
        assert_eq!(
            parsed.signature,
            "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41"
        );
    }

    #[test]
    fn accepts_spaces_and_any_order() {
        let value = "AWS4-HMAC-SHA256 Signature=ab, SignedHeaders=host, Credential=AK/20130524/us-east-1/s3/aws4_request";
        let parsed = parse(value).unwrap();
        assert_eq!(parsed.signature, "ab");
        assert_eq!(parsed.signed_headers, ["host"]);
    }

    #[test]
    fn refuses_malformed_headers() {
        for value in [
            "AWS4-HMAC-SHA256",
            "AWS4-HMAC-SHA256X Credential=a",
            "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,SignedHeaders=host",
            "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=a,Signature=b",
            "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,SignedHeaders=Host,Signature=a",
            "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,SignedHeaders=host;;x,Signature=a",
            "AWS4-HMAC-SHA256 Credential=garbage,SignedHeaders=host,Signature=a",
            "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,SignedHeaders=host,Signature=a,Extra=1",
            "AWS4-HMAC-SHA256 Credential=AK/20130524/us-east-1/s3/aws4_request,SignedHeaders=host,Signature",
        ] {
            let error = parse(value).unwrap_err();
            assert_eq!(error.code, "AuthorizationHeaderMalformed", "{value}");
            assert_eq!(error.status, 400);
        }
    }
}

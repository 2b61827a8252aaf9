//! The `s3Authentication` a security-on OM checks on every request that
//! carries one: a SigV4 string to sign and its signature under the acting
//! access id's S3 secret from the OM's own store.
//!
//! The OM derives the signing key from the string's third line (the
//! credential scope) and compares HMACs; it checks nothing else, not the
//! date and not what the string describes (conformance-tests/ozone/README.md,
//! "How the OM authenticates a gRPC caller"). The string still names its
//! request, by a hash of the encoded command, and its time, so that no two
//! requests carry the same pair and a logged pair says what it was for.

use std::time::{SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use sha2::{Digest, Sha256};
use time::OffsetDateTime;
use time::macros::format_description;

use super::proto::hadoop::ozone::S3Authentication;

const ALGORITHM: &str = "AWS4-HMAC-SHA256";
/// The OM keys the signature by nothing but the scope's date, region and
/// service names; these are what an S3 client in the default region sends.
const REGION: &str = "us-east-1";
const SERVICE: &str = "s3";

/// `s3Authentication` for a request by `access_id` whose encoded command is
/// `request`, signed at `at` with `secret`.
pub(super) fn sign(
    access_id: &str,
    secret: &str,
    at: SystemTime,
    request: &[u8],
) -> S3Authentication {
    let (date, stamp) = dates(at);
    let scope = format!("{date}/{REGION}/{SERVICE}/aws4_request");
    let string_to_sign = format!(
        "{ALGORITHM}\n{stamp}\n{scope}\n{}",
        hex::encode(Sha256::digest(request))
    );
    let mut key = hmac(format!("AWS4{secret}").as_bytes(), date.as_bytes());
    for part in [REGION, SERVICE, "aws4_request"] {
        key = hmac(&key, part.as_bytes());
    }
    S3Authentication {
        signature: Some(hex::encode(hmac(&key, string_to_sign.as_bytes()))),
        string_to_sign: Some(string_to_sign),
        access_id: Some(access_id.to_owned()),
    }
}

/// `YYYYMMDD` and `YYYYMMDDTHHMMSSZ` of `at` (UTC); the epoch for a time
/// before it or beyond what the calendar holds.
fn dates(at: SystemTime) -> (String, String) {
    let seconds = at
        .duration_since(UNIX_EPOCH)
        .ok()
        .and_then(|since| i64::try_from(since.as_secs()).ok())
        .unwrap_or(0);
    let time = OffsetDateTime::from_unix_timestamp(seconds).unwrap_or(OffsetDateTime::UNIX_EPOCH);
    let stamp = time
        .format(format_description!(
            "[year][month][day]T[hour][minute][second]Z"
        ))
        .unwrap_or_else(|_| "19700101T000000Z".into());
    (stamp[..8].to_owned(), stamp)
}

fn hmac(key: &[u8], data: &[u8]) -> Vec<u8> {
    let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(key).expect("HMAC takes any key length");
    mac.update(data);
    mac.finalize().into_bytes().to_vec()
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    /// AWS's published SigV4 example (the GET Object of "Examples of the
    /// complete Version 4 signing process", 2013-05-24): the same string
    /// to sign under the same secret gives AWS's signature.
    #[test]
    fn signs_as_sigv4_does() {
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let at = UNIX_EPOCH + Duration::from_secs(1_369_353_600);
        let canonical_request = "GET\n/test.txt\n\nhost:examplebucket.s3.amazonaws.com\n\
            range:bytes=0-9\n\
            x-amz-content-sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855\n\
            x-amz-date:20130524T000000Z\n\n\
            host;range;x-amz-content-sha256;x-amz-date\n\
            e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        let auth = sign(
            "AKIAIOSFODNN7EXAMPLE",
            secret,
            at,
            canonical_request.as_bytes(),
        );
        assert_eq!(
            auth.string_to_sign.as_deref(),
            Some(
                "AWS4-HMAC-SHA256\n20130524T000000Z\n20130524/us-east-1/s3/aws4_request\n\
                 7344ae5b7ee6c3e7e6b0fe0640412a37625d1fbfff95c48bbb2dc43964946972"
            )
        );
        assert_eq!(
            auth.signature.as_deref(),
            Some("f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")
        );
        assert_eq!(auth.access_id.as_deref(), Some("AKIAIOSFODNN7EXAMPLE"));
    }

    #[test]
    fn each_request_and_time_gets_its_own_pair() {
        let at = UNIX_EPOCH + Duration::from_secs(1_700_000_000);
        let a = sign("k", "s", at, b"one");
        let b = sign("k", "s", at, b"two");
        let later = sign("k", "s", at + Duration::from_secs(1), b"one");
        assert_ne!(a.signature, b.signature);
        assert_ne!(a.signature, later.signature);
        assert_ne!(a.signature, sign("k", "t", at, b"one").signature);
        assert_eq!(a, sign("k", "s", at, b"one"));
    }

    #[test]
    fn a_time_before_the_epoch_signs_as_the_epoch() {
        let before = UNIX_EPOCH - Duration::from_secs(5);
        let auth = sign("k", "s", before, b"");
        assert!(
            auth.string_to_sign
                .as_deref()
                .is_some_and(|s| s.starts_with("AWS4-HMAC-SHA256\n19700101T000000Z\n19700101/")),
            "{auth:?}"
        );
    }
}

//! SSE-C: the customer's key as a request sends it, in
//! `x-amz-server-side-encryption-customer-algorithm` (`AES256`),
//! `-customer-key` (base64 of 32 bytes) and `-customer-key-MD5` (base64 of
//! the key's MD5, which proves the key arrived intact). Refusals follow
//! AWS's words and never repeat the key.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use http::HeaderMap;
use md5::{Digest, Md5};

use crate::error::S3Error;

pub const ALGORITHM: &str = "x-amz-server-side-encryption-customer-algorithm";
pub const KEY: &str = "x-amz-server-side-encryption-customer-key";
pub const KEY_MD5: &str = "x-amz-server-side-encryption-customer-key-md5";
/// The same three for a copy's source (CopyObject, UploadPartCopy).
pub const SOURCE_HEADERS: [&str; 3] = [
    "x-amz-copy-source-server-side-encryption-customer-algorithm",
    "x-amz-copy-source-server-side-encryption-customer-key",
    "x-amz-copy-source-server-side-encryption-customer-key-md5",
];
/// The one algorithm SSE-C has.
pub const AES256: &str = "AES256";

pub struct CustomerKey {
    pub key: [u8; 32],
    /// Base64 of the key's MD5: how the key is recognised later, stored
    /// with the object and echoed in responses.
    pub md5: String,
}

impl CustomerKey {
    /// The key the SSE-C headers carry; `None` when none of them is sent.
    pub fn from_headers(headers: &HeaderMap) -> Result<Option<Self>, S3Error> {
        Self::from_named(headers, [ALGORITHM, KEY, KEY_MD5])
    }

    /// The key of a copy's source, in the `x-amz-copy-source-` headers.
    pub fn from_copy_source_headers(headers: &HeaderMap) -> Result<Option<Self>, S3Error> {
        Self::from_named(headers, SOURCE_HEADERS)
    }

    fn from_named(headers: &HeaderMap, names: [&'static str; 3]) -> Result<Option<Self>, S3Error> {
        let [algorithm_name, key_name, md5_name] = names;
        let text = |name: &str| headers.get(name).map(|v| v.to_str().unwrap_or_default());
        let (algorithm, key, md5) = (text(algorithm_name), text(key_name), text(md5_name));
        if algorithm.is_none() && key.is_none() && md5.is_none() {
            return Ok(None);
        }
        let argument = |name: &'static str, message: &str| {
            S3Error::invalid_argument(message).with("ArgumentName", name)
        };
        match algorithm {
            Some(AES256) => {}
            Some(_) => {
                return Err(argument(
                    algorithm_name,
                    "The requested encryption algorithm is not valid, must be AES256.",
                ));
            }
            None => {
                return Err(argument(
                    algorithm_name,
                    "Requests specifying Server Side Encryption with Customer provided keys \
                     must provide a valid encryption algorithm.",
                ));
            }
        }
        let Some(key) = key else {
            return Err(argument(
                key_name,
                "Requests specifying Server Side Encryption with Customer provided keys must \
                 provide an appropriate secret key.",
            ));
        };
        let key: [u8; 32] = STANDARD
            .decode(key.trim())
            .ok()
            .and_then(|bytes| bytes.try_into().ok())
            .ok_or_else(|| {
                argument(
                    key_name,
                    "The secret key was invalid for the specified algorithm.",
                )
            })?;
        let Some(md5) = md5 else {
            return Err(argument(
                md5_name,
                "Requests specifying Server Side Encryption with Customer provided keys must \
                 provide the client calculated MD5 of the secret key.",
            ));
        };
        let computed = STANDARD.encode(Md5::digest(key));
        if md5.trim() != computed {
            return Err(argument(
                md5_name,
                "The calculated MD5 hash of the key did not match the hash that was provided.",
            ));
        }
        Ok(Some(Self { key, md5: computed }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        pairs
            .iter()
            .map(|(name, value)| {
                (
                    http::HeaderName::from_bytes(name.as_bytes()).unwrap(),
                    http::HeaderValue::from_str(value).unwrap(),
                )
            })
            .collect()
    }

    fn sent(key: &[u8]) -> (String, String) {
        (STANDARD.encode(key), STANDARD.encode(Md5::digest(key)))
    }

    #[test]
    fn a_well_formed_key_is_taken() {
        let (key, md5) = sent(&[5; 32]);
        let found = CustomerKey::from_headers(&headers(&[
            (ALGORITHM, AES256),
            (KEY, &key),
            (KEY_MD5, &md5),
        ]))
        .unwrap()
        .unwrap();
        assert_eq!((found.key, found.md5), ([5; 32], md5));
        assert!(CustomerKey::from_headers(&headers(&[])).unwrap().is_none());
    }

    #[test]
    fn malformed_keys_are_invalid_arguments_that_do_not_repeat_the_key() {
        let (key, md5) = sent(&[5; 32]);
        let (short, short_md5) = sent(&[5; 16]);
        let (_, other_md5) = sent(&[6; 32]);
        for sent in [
            vec![
                (ALGORITHM, "AES128"),
                (KEY, key.as_str()),
                (KEY_MD5, md5.as_str()),
            ],
            vec![(KEY, key.as_str()), (KEY_MD5, md5.as_str())],
            vec![(ALGORITHM, AES256), (KEY_MD5, md5.as_str())],
            vec![(ALGORITHM, AES256), (KEY, key.as_str())],
            vec![(ALGORITHM, AES256), (KEY, "%%%"), (KEY_MD5, md5.as_str())],
            vec![
                (ALGORITHM, AES256),
                (KEY, short.as_str()),
                (KEY_MD5, short_md5.as_str()),
            ],
            vec![
                (ALGORITHM, AES256),
                (KEY, key.as_str()),
                (KEY_MD5, other_md5.as_str()),
            ],
        ] {
            let err = CustomerKey::from_headers(&headers(&sent)).err().unwrap();
            assert_eq!((err.code, err.status.as_u16()), ("InvalidArgument", 400));
            assert!(!err.message.contains(&key), "{}", err.message);
        }
    }
}

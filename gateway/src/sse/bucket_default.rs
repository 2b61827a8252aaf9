//! A bucket's default encryption (PutBucketEncryption's
//! `ServerSideEncryptionConfiguration`): one rule whose
//! `ApplyServerSideEncryptionByDefault` names the algorithm every write
//! without encryption headers gets. Only `AES256` (SSE-S3) exists here;
//! `aws:kms` and `aws:kms:dsse` need a KMS this gateway does not have.
//! Stored as its canonical XML.

use serde::{Deserialize, Serialize};

use crate::error::{Code, S3Error};
use crate::xml::{self, S3_NAMESPACE};

/// SSE-S3's algorithm name.
const AES256: &str = "AES256";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BucketDefault {
    /// Kept and answered as sent: with SSE-S3 it changes nothing (a bucket
    /// key only saves KMS calls), but clients read back what they set.
    pub bucket_key_enabled: Option<bool>,
}

#[derive(Serialize, Deserialize)]
struct ServerSideEncryptionConfiguration {
    #[serde(rename = "@xmlns", default, skip_deserializing)]
    xmlns: &'static str,
    #[serde(rename = "Rule", default)]
    rules: Vec<Rule>,
}

#[derive(Serialize, Deserialize)]
struct Rule {
    #[serde(rename = "ApplyServerSideEncryptionByDefault")]
    apply: Option<Apply>,
    #[serde(
        rename = "BucketKeyEnabled",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    bucket_key_enabled: Option<bool>,
}

#[derive(Serialize, Deserialize)]
struct Apply {
    #[serde(rename = "SSEAlgorithm")]
    algorithm: String,
    #[serde(
        rename = "KMSMasterKeyID",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    kms_master_key_id: Option<String>,
}

impl BucketDefault {
    /// A configuration: exactly one rule applying `AES256`, else
    /// MalformedXML (or the KMS refusal), as AWS answers.
    pub fn from_xml(body: &[u8]) -> Result<Self, S3Error> {
        let document: ServerSideEncryptionConfiguration = xml::from_xml(body)?;
        let [rule] = &document.rules[..] else {
            return Err(S3Error::malformed_xml());
        };
        let Some(apply) = &rule.apply else {
            return Err(S3Error::malformed_xml());
        };
        match apply.algorithm.trim() {
            AES256 if apply.kms_master_key_id.is_some() => Err(S3Error::invalid_argument(
                "a KMSMasterKeyID is not applicable if the default sse algorithm is not aws:kms \
                 or aws:kms:dsse",
            )),
            AES256 => Ok(Self {
                bucket_key_enabled: rule.bucket_key_enabled,
            }),
            "aws:kms" | "aws:kms:dsse" => Err(S3Error::new(
                Code::NotImplemented,
                "SSE-KMS is not implemented: this gateway has no KMS configured; use AES256 \
                 (SSE-S3) as the default encryption",
            )),
            _ => Err(S3Error::malformed_xml()),
        }
    }

    pub fn to_xml(self) -> Result<String, S3Error> {
        let document = ServerSideEncryptionConfiguration {
            xmlns: S3_NAMESPACE,
            rules: vec![Rule {
                apply: Some(Apply {
                    algorithm: AES256.to_owned(),
                    kms_master_key_id: None,
                }),
                bucket_key_enabled: self.bucket_key_enabled,
            }],
        };
        xml::to_xml("ServerSideEncryptionConfiguration", &document)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule(inner: &str) -> String {
        format!(
            "<ServerSideEncryptionConfiguration xmlns=\"{S3_NAMESPACE}\"><Rule>{inner}</Rule>\
             </ServerSideEncryptionConfiguration>"
        )
    }

    #[test]
    fn aes256_reads_back_canonical() {
        let apply = "<ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm>\
                     </ApplyServerSideEncryptionByDefault>";
        let plain = BucketDefault::from_xml(rule(apply).as_bytes()).unwrap();
        assert_eq!(plain.bucket_key_enabled, None);
        let with_key = format!("{apply}<BucketKeyEnabled>true</BucketKeyEnabled>");
        let keyed = BucketDefault::from_xml(rule(&with_key).as_bytes()).unwrap();
        assert_eq!(keyed.bucket_key_enabled, Some(true));
        for setting in [plain, keyed] {
            let xml = setting.to_xml().unwrap();
            assert!(xml.contains("<SSEAlgorithm>AES256</SSEAlgorithm>"), "{xml}");
            assert_eq!(BucketDefault::from_xml(xml.as_bytes()).unwrap(), setting);
        }
    }

    #[test]
    fn kms_is_refused_naming_it_and_nonsense_is_malformed() {
        for algorithm in ["aws:kms", "aws:kms:dsse"] {
            let body = rule(&format!(
                "<ApplyServerSideEncryptionByDefault><SSEAlgorithm>{algorithm}</SSEAlgorithm>\
                 </ApplyServerSideEncryptionByDefault>"
            ));
            let err = BucketDefault::from_xml(body.as_bytes()).unwrap_err();
            assert_eq!((err.code, err.status.as_u16()), ("NotImplemented", 501));
            assert!(err.message.contains("KMS"), "{}", err.message);
        }
        let with_kms_key = rule(
            "<ApplyServerSideEncryptionByDefault><SSEAlgorithm>AES256</SSEAlgorithm>\
             <KMSMasterKeyID>k</KMSMasterKeyID></ApplyServerSideEncryptionByDefault>",
        );
        assert_eq!(
            BucketDefault::from_xml(with_kms_key.as_bytes())
                .unwrap_err()
                .code,
            "InvalidArgument"
        );
        for body in [
            "<ServerSideEncryptionConfiguration/>".to_owned(),
            rule(""),
            rule(
                "<ApplyServerSideEncryptionByDefault><SSEAlgorithm>DES</SSEAlgorithm>\
                 </ApplyServerSideEncryptionByDefault>",
            ),
            "not xml".to_owned(),
        ] {
            let err = BucketDefault::from_xml(body.as_bytes()).unwrap_err();
            assert_eq!(err.code, "MalformedXML", "{body}");
        }
    }
}

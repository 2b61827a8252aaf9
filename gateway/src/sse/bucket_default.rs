//! A bucket's default encryption (PutBucketEncryption's
//! `ServerSideEncryptionConfiguration`): one rule whose
//! `ApplyServerSideEncryptionByDefault` names the algorithm every write
//! without encryption headers gets: `AES256` (SSE-S3) or `aws:kms` (SSE-KMS,
//! with its `KMSMasterKeyID` or the gateway's default KMS key);
//! `aws:kms:dsse` is not built. Stored as its canonical XML.

use serde::{Deserialize, Serialize};

use crate::error::{Code, S3Error};
use crate::xml::{self, S3_NAMESPACE};

/// SSE-S3's algorithm name.
const AES256: &str = "AES256";
/// SSE-KMS's.
const AWS_KMS: &str = "aws:kms";

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BucketDefault {
    pub algorithm: DefaultAlgorithm,
    /// Kept and answered as sent: it changes nothing here (on AWS a bucket
    /// key saves KMS calls; the gateway keeps opened data keys for a
    /// while instead), but clients read back what they set.
    pub bucket_key_enabled: Option<bool>,
}

/// What a bucket's default encrypts with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DefaultAlgorithm {
    /// SSE-S3.
    SseS3,
    /// SSE-KMS under this KMS key, or the gateway's default KMS key.
    Kms { key_id: Option<String> },
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
    /// A configuration: exactly one rule applying `AES256` or `aws:kms`,
    /// else MalformedXML (or the dual-layer refusal), as AWS answers.
    pub fn from_xml(body: &[u8]) -> Result<Self, S3Error> {
        let document: ServerSideEncryptionConfiguration = xml::from_xml(body)?;
        let [rule] = &document.rules[..] else {
            return Err(S3Error::malformed_xml());
        };
        let Some(apply) = &rule.apply else {
            return Err(S3Error::malformed_xml());
        };
        let key_id = apply
            .kms_master_key_id
            .as_deref()
            .map(str::trim)
            .filter(|key| !key.is_empty());
        let algorithm = match apply.algorithm.trim() {
            AES256 if key_id.is_some() => {
                return Err(S3Error::invalid_argument(
                    "a KMSMasterKeyID is not applicable if the default sse algorithm is not \
                     aws:kms or aws:kms:dsse",
                ));
            }
            AES256 => DefaultAlgorithm::SseS3,
            AWS_KMS => DefaultAlgorithm::Kms {
                key_id: key_id.map(str::to_owned),
            },
            "aws:kms:dsse" => {
                return Err(S3Error::new(
                    Code::NotImplemented,
                    "Dual-layer SSE-KMS (aws:kms:dsse) is not implemented; use aws:kms or \
                     AES256 (SSE-S3) as the default encryption",
                ));
            }
            _ => return Err(S3Error::malformed_xml()),
        };
        Ok(Self {
            algorithm,
            bucket_key_enabled: rule.bucket_key_enabled,
        })
    }

    pub fn to_xml(&self) -> Result<String, S3Error> {
        let apply = match &self.algorithm {
            DefaultAlgorithm::SseS3 => Apply {
                algorithm: AES256.to_owned(),
                kms_master_key_id: None,
            },
            DefaultAlgorithm::Kms { key_id } => Apply {
                algorithm: AWS_KMS.to_owned(),
                kms_master_key_id: key_id.clone(),
            },
        };
        let document = ServerSideEncryptionConfiguration {
            xmlns: S3_NAMESPACE,
            rules: vec![Rule {
                apply: Some(apply),
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
        assert_eq!(plain.algorithm, DefaultAlgorithm::SseS3);
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
    fn kms_reads_back_with_its_key_or_without() {
        for (inner, key_id) in [
            (
                "<KMSMasterKeyID>testkey-1</KMSMasterKeyID>",
                Some("testkey-1"),
            ),
            ("", None),
        ] {
            let body = rule(&format!(
                "<ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms</SSEAlgorithm>\
                 {inner}</ApplyServerSideEncryptionByDefault>"
            ));
            let setting = BucketDefault::from_xml(body.as_bytes()).unwrap();
            assert_eq!(
                setting.algorithm,
                DefaultAlgorithm::Kms {
                    key_id: key_id.map(str::to_owned)
                }
            );
            let xml = setting.to_xml().unwrap();
            assert!(
                xml.contains("<SSEAlgorithm>aws:kms</SSEAlgorithm>"),
                "{xml}"
            );
            assert_eq!(BucketDefault::from_xml(xml.as_bytes()).unwrap(), setting);
        }
    }

    #[test]
    fn dual_layer_is_refused_naming_it_and_nonsense_is_malformed() {
        let body = rule(
            "<ApplyServerSideEncryptionByDefault><SSEAlgorithm>aws:kms:dsse</SSEAlgorithm>\
             </ApplyServerSideEncryptionByDefault>",
        );
        let err = BucketDefault::from_xml(body.as_bytes()).unwrap_err();
        assert_eq!((err.code, err.status.as_u16()), ("NotImplemented", 501));
        assert!(err.message.contains("KMS"), "{}", err.message);
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

//! PublicAccessBlock: the four switches a bucket owner sets to keep a
//! bucket private whatever its ACLs and policy say. Stored as its
//! canonical XML; a bucket without one has every switch off.

use serde::{Deserialize, Serialize};

use crate::error::S3Error;
use crate::xml::{self, S3_NAMESPACE};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PublicAccessBlock {
    #[serde(rename = "BlockPublicAcls", default)]
    pub block_public_acls: bool,
    #[serde(rename = "IgnorePublicAcls", default)]
    pub ignore_public_acls: bool,
    #[serde(rename = "BlockPublicPolicy", default)]
    pub block_public_policy: bool,
    #[serde(rename = "RestrictPublicBuckets", default)]
    pub restrict_public_buckets: bool,
}

#[derive(Serialize)]
struct Document<'a> {
    #[serde(rename = "@xmlns")]
    xmlns: &'static str,
    #[serde(flatten)]
    block: &'a PublicAccessBlock,
}

impl PublicAccessBlock {
    /// A PublicAccessBlockConfiguration document; absent switches are off.
    pub fn from_xml(body: &[u8]) -> Result<Self, S3Error> {
        xml::from_xml(body)
    }

    pub fn to_xml(&self) -> Result<String, S3Error> {
        let document = Document {
            xmlns: S3_NAMESPACE,
            block: self,
        };
        xml::to_xml("PublicAccessBlockConfiguration", &document)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switches_round_trip_and_default_off() {
        let text = br#"<PublicAccessBlockConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
            <BlockPublicAcls>true</BlockPublicAcls><RestrictPublicBuckets>true</RestrictPublicBuckets>
            </PublicAccessBlockConfiguration>"#;
        let block = PublicAccessBlock::from_xml(text).unwrap();
        assert!(block.block_public_acls && !block.ignore_public_acls);
        let again = PublicAccessBlock::from_xml(block.to_xml().unwrap().as_bytes()).unwrap();
        assert_eq!(again, block);
        assert_eq!(
            PublicAccessBlock::from_xml(b"<PublicAccessBlockConfiguration><BlockPublicAcls>maybe")
                .unwrap_err()
                .code,
            "MalformedXML"
        );
    }
}

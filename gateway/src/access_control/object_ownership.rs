//! Object Ownership (a bucket's OwnershipControls): who owns an object
//! another key writes, and whether ACLs count at all. Stored as its
//! canonical XML. A bucket without the document keeps this gateway's
//! behaviour from before the setting existed (see [`owner_of_new_object`]):
//! ACLs apply and the bucket owner owns every object.

use serde::{Deserialize, Serialize};

use crate::error::S3Error;
use crate::xml::{self, S3_NAMESPACE};

/// The request header CreateBucket names the setting in.
pub const HEADER: &str = "x-amz-object-ownership";

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjectOwnership {
    /// ACLs are disabled: they grant nothing and only the bucket owner's
    /// full control may be set; the bucket owner owns every object.
    BucketOwnerEnforced,
    /// The writer owns what it writes, unless it hands the object to the
    /// bucket owner with the `bucket-owner-full-control` canned ACL.
    BucketOwnerPreferred,
    /// The writer owns what it writes.
    ObjectWriter,
}

#[derive(Serialize, Deserialize)]
struct OwnershipControls {
    #[serde(rename = "@xmlns", default, skip_deserializing)]
    xmlns: &'static str,
    #[serde(rename = "Rule", default)]
    rules: Vec<Rule>,
}

#[derive(Serialize, Deserialize)]
struct Rule {
    #[serde(rename = "ObjectOwnership")]
    object_ownership: String,
}

impl ObjectOwnership {
    /// The setting by its AWS name.
    pub fn from_name(name: &str) -> Option<Self> {
        match name {
            "BucketOwnerEnforced" => Some(Self::BucketOwnerEnforced),
            "BucketOwnerPreferred" => Some(Self::BucketOwnerPreferred),
            "ObjectWriter" => Some(Self::ObjectWriter),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::BucketOwnerEnforced => "BucketOwnerEnforced",
            Self::BucketOwnerPreferred => "BucketOwnerPreferred",
            Self::ObjectWriter => "ObjectWriter",
        }
    }

    /// An OwnershipControls document: exactly one rule naming a known
    /// setting, else MalformedXML, as AWS answers.
    pub fn from_xml(body: &[u8]) -> Result<Self, S3Error> {
        let document: OwnershipControls = xml::from_xml(body)?;
        match &document.rules[..] {
            [rule] => {
                Self::from_name(rule.object_ownership.trim()).ok_or_else(S3Error::malformed_xml)
            }
            _ => Err(S3Error::malformed_xml()),
        }
    }

    pub fn to_xml(self) -> Result<String, S3Error> {
        let document = OwnershipControls {
            xmlns: S3_NAMESPACE,
            rules: vec![Rule {
                object_ownership: self.name().to_owned(),
            }],
        };
        xml::to_xml("OwnershipControls", &document)
    }

    /// Whether ACLs grant anything (and may be set) in a bucket with this
    /// setting.
    pub fn acls_enabled(self) -> bool {
        self != Self::BucketOwnerEnforced
    }
}

/// The canonical id of the owner of an object `writer` writes (`None`:
/// an anonymous writer, which can own nothing) into a bucket owned by
/// `bucket_owner` under `ownership` (`None`: no document), the write
/// naming the canned ACL `canned_acl`, if any.
pub fn owner_of_new_object<'a>(
    ownership: Option<ObjectOwnership>,
    writer: Option<&'a str>,
    bucket_owner: &'a str,
    canned_acl: Option<&str>,
) -> &'a str {
    let writer_owns = match ownership {
        // This gateway's behaviour before the setting: objects belong to
        // the bucket owner whoever wrote them.
        None | Some(ObjectOwnership::BucketOwnerEnforced) => false,
        Some(ObjectOwnership::BucketOwnerPreferred) => {
            canned_acl.map(str::trim) != Some("bucket-owner-full-control")
        }
        Some(ObjectOwnership::ObjectWriter) => true,
    };
    match writer {
        Some(writer) if writer_owns => writer,
        _ => bucket_owner,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn documents_round_trip_and_bad_ones_are_malformed() {
        for setting in [
            ObjectOwnership::BucketOwnerEnforced,
            ObjectOwnership::BucketOwnerPreferred,
            ObjectOwnership::ObjectWriter,
        ] {
            let text = setting.to_xml().unwrap();
            assert!(text.contains(S3_NAMESPACE), "{text}");
            assert_eq!(ObjectOwnership::from_xml(text.as_bytes()).unwrap(), setting);
        }
        for bad in [
            "<OwnershipControls/>",
            "<OwnershipControls><Rule><ObjectOwnership>Mine</ObjectOwnership></Rule></OwnershipControls>",
            "<OwnershipControls><Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule>\
             <Rule><ObjectOwnership>ObjectWriter</ObjectOwnership></Rule></OwnershipControls>",
            "<OwnershipControls><Rule>",
        ] {
            assert_eq!(
                ObjectOwnership::from_xml(bad.as_bytes()).unwrap_err().code,
                "MalformedXML",
                "{bad}"
            );
        }
    }

    #[test]
    fn who_owns_a_new_object() {
        use ObjectOwnership::*;
        let (writer, owner) = (Some("w"), "o");
        assert_eq!(owner_of_new_object(None, writer, owner, None), "o");
        assert_eq!(
            owner_of_new_object(Some(BucketOwnerEnforced), writer, owner, None),
            "o"
        );
        assert_eq!(
            owner_of_new_object(Some(ObjectWriter), writer, owner, None),
            "w"
        );
        assert_eq!(
            owner_of_new_object(Some(ObjectWriter), None, owner, None),
            "o"
        );
        let handed_over = Some("bucket-owner-full-control");
        assert_eq!(
            owner_of_new_object(Some(ObjectWriter), writer, owner, handed_over),
            "w"
        );
        assert_eq!(
            owner_of_new_object(Some(BucketOwnerPreferred), writer, owner, None),
            "w"
        );
        assert_eq!(
            owner_of_new_object(Some(BucketOwnerPreferred), writer, owner, handed_over),
            "o"
        );
    }
}

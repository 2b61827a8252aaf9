//! The condition keys a bucket policy may test: parsed once, at
//! PutBucketPolicy, so a key this gateway cannot answer is refused there
//! (a condition on a key that is never present would silently turn an
//! Allow off or a Deny on, depending on its operator).

/// A condition key. Names are case-insensitive; a tag key after
/// `ExistingObjectTag/` or `RequestObjectTag/` is kept as written (tag
/// keys are case-sensitive).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Key {
    /// `aws:SourceIp`: the client's address, as the access log records it.
    SourceIp,
    SecureTransport,
    CurrentTime,
    EpochTime,
    /// `aws:username` and `aws:userid`: the access key id.
    Username,
    Userid,
    PrincipalArn,
    PrincipalType,
    Referer,
    UserAgent,
    /// `s3:prefix`, `s3:delimiter`, `s3:max-keys`: a listing's query
    /// parameter of that name.
    Query(&'static str),
    /// The `s3:x-amz-...` keys: the request header of that name.
    Header(&'static str),
    ExistingObjectTag(String),
    RequestObjectTag(String),
    /// Multivalued: the keys of the tags the request sets.
    RequestObjectTagKeys,
    VersionId,
    SignatureVersion,
    AuthType,
    TlsVersion,
}

/// The `s3:` keys that are a request header of the same name.
const HEADERS: [&str; 13] = [
    "x-amz-acl",
    "x-amz-grant-read",
    "x-amz-grant-write",
    "x-amz-grant-read-acp",
    "x-amz-grant-write-acp",
    "x-amz-grant-full-control",
    "x-amz-server-side-encryption",
    "x-amz-server-side-encryption-aws-kms-key-id",
    "x-amz-server-side-encryption-customer-algorithm",
    "x-amz-copy-source",
    "x-amz-metadata-directive",
    "x-amz-storage-class",
    "x-amz-content-sha256",
];

const QUERIES: [&str; 3] = ["prefix", "delimiter", "max-keys"];

impl Key {
    /// The key `name` names, or `None` if this gateway does not know it.
    pub fn parse(name: &str) -> Option<Self> {
        let lower = name.to_ascii_lowercase();
        if let Some((kind, tag)) = name.split_once('/') {
            let tag = tag.to_owned();
            return match kind.to_ascii_lowercase().as_str() {
                "s3:existingobjecttag" if !tag.is_empty() => Some(Self::ExistingObjectTag(tag)),
                "s3:requestobjecttag" if !tag.is_empty() => Some(Self::RequestObjectTag(tag)),
                _ => None,
            };
        }
        let key = match lower.as_str() {
            "aws:sourceip" => Self::SourceIp,
            "aws:securetransport" => Self::SecureTransport,
            "aws:currenttime" => Self::CurrentTime,
            "aws:epochtime" => Self::EpochTime,
            "aws:username" => Self::Username,
            "aws:userid" => Self::Userid,
            "aws:principalarn" => Self::PrincipalArn,
            "aws:principaltype" => Self::PrincipalType,
            "aws:referer" => Self::Referer,
            "aws:useragent" => Self::UserAgent,
            "s3:requestobjecttagkeys" => Self::RequestObjectTagKeys,
            "s3:versionid" => Self::VersionId,
            "s3:signatureversion" => Self::SignatureVersion,
            "s3:authtype" => Self::AuthType,
            "s3:tlsversion" => Self::TlsVersion,
            other => {
                let name = other.strip_prefix("s3:")?;
                if let Some(query) = QUERIES.iter().find(|q| **q == name) {
                    Self::Query(query)
                } else {
                    Self::Header(HEADERS.iter().find(|h| **h == name)?)
                }
            }
        };
        Some(key)
    }

    /// Whether a condition requiring fixed values of this key keeps a
    /// statement open to everyone from being public: AWS's list in "The
    /// meaning of public", as far as this gateway knows its keys.
    pub fn narrows_public_access(&self) -> bool {
        matches!(
            self,
            Self::SourceIp
                | Self::Userid
                | Self::Username
                | Self::PrincipalArn
                | Self::Header("x-amz-server-side-encryption-aws-kms-key-id")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_case_insensitive_and_tag_keys_are_not() {
        assert_eq!(Key::parse("AWS:SOURCEIP"), Some(Key::SourceIp));
        assert_eq!(Key::parse("s3:X-Amz-Acl"), Some(Key::Header("x-amz-acl")));
        assert_eq!(Key::parse("s3:Max-Keys"), Some(Key::Query("max-keys")));
        assert_eq!(
            Key::parse("s3:x-amz-server-side-encryption-customer-algorithm"),
            Some(Key::Header(
                "x-amz-server-side-encryption-customer-algorithm"
            ))
        );
        assert_eq!(
            Key::parse("S3:ExistingObjectTag/Project"),
            Some(Key::ExistingObjectTag("Project".into()))
        );
        for unknown in [
            "aws:SourceVpc",
            "s3:object-lock-mode",
            "s3:ExistingObjectTag/",
            "s3:x-amz-meta-a",
            "prefix",
            "",
        ] {
            assert_eq!(Key::parse(unknown), None, "{unknown}");
        }
    }
}

//! Bucket configuration kept as whole documents: ACL, policy, CORS,
//! lifecycle, tagging and the like. Storage keeps each as the text the
//! gateway gave it (it parses, validates and answers S3 with them), one
//! per bucket and kind, and drops them with their bucket.

/// The kinds of document a bucket can hold, one of each at most.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BucketDocument {
    Acl,
    Policy,
    PublicAccessBlock,
    Cors,
    Lifecycle,
    Tagging,
    OwnershipControls,
    ObjectLock,
    /// Default encryption (PutBucketEncryption).
    Encryption,
}

impl BucketDocument {
    pub const ALL: [BucketDocument; 9] = [
        Self::Acl,
        Self::Policy,
        Self::PublicAccessBlock,
        Self::Cors,
        Self::Lifecycle,
        Self::Tagging,
        Self::OwnershipControls,
        Self::ObjectLock,
        Self::Encryption,
    ];

    /// The name it is stored under: never change one, data on disk and in
    /// Ozone clusters carries it.
    pub fn stored_name(self) -> &'static str {
        match self {
            Self::Acl => "acl",
            Self::Policy => "policy",
            Self::PublicAccessBlock => "public-access-block",
            Self::Cors => "cors",
            Self::Lifecycle => "lifecycle",
            Self::Tagging => "tagging",
            Self::OwnershipControls => "ownership-controls",
            Self::ObjectLock => "object-lock",
            Self::Encryption => "encryption",
        }
    }
}

/// The largest document stored: S3's own largest, a bucket policy, is
/// capped at 20 KiB, and a lifecycle configuration of 1000 rules stays
/// well below this.
pub const MAX_BUCKET_DOCUMENT_BYTES: usize = 1 << 20;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_names_are_distinct() {
        let mut names: Vec<_> = BucketDocument::ALL
            .iter()
            .map(|d| d.stored_name())
            .collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), BucketDocument::ALL.len());
    }
}

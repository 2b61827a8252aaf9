//! Who may do what: ACLs, bucket policies and public access blocks,
//! evaluated once per request, before the operation runs (see
//! [`decision`] for the rules and [`authorise`] for how the back end is
//! then asked to act).

pub mod acl;
pub mod actions;
pub mod decision;
pub mod object_acl;
pub mod object_ownership;
pub mod owner;
pub mod policy;
pub mod public_access;

use storage_client::{Namespace, Owner};

/// Who is asking: the access key a request's signature proved. Only the
/// decision reads it; storage is never handed one, only the bucket owner
/// the decision judged ([`storage_client::Owner`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    pub access_key: String,
    /// Where the key's bucket names live: an Ozone tenant's keys name
    /// their tenant's buckets only.
    pub namespace: Namespace,
}

impl Identity {
    /// A key of S3's shared namespace.
    pub fn new(access_key: impl Into<String>) -> Self {
        Self::in_namespace(access_key, Namespace::Shared)
    }

    pub fn in_namespace(access_key: impl Into<String>, namespace: Namespace) -> Self {
        Self {
            access_key: access_key.into(),
            namespace,
        }
    }

    /// This key as the owner of what it creates.
    pub fn owner(&self) -> Owner {
        Owner::in_namespace(&self.access_key, self.namespace.clone())
    }
}

/// The access key of the anonymous identity: empty, which no credential
/// can have (access keys are at least 16 characters), so it owns nothing.
const ANONYMOUS_KEY: &str = "";

/// The identity of a request that carries no signature.
pub fn anonymous() -> Identity {
    Identity::new(ANONYMOUS_KEY)
}

pub fn is_anonymous(who: &Identity) -> bool {
    who.access_key == ANONYMOUS_KEY
}

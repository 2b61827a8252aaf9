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

/// Who is asking: the access key a request's signature proved. Only the
/// decision reads it; storage is never handed one, only the bucket owner
/// the decision judged ([`storage_client::Owner`]).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Identity {
    pub access_key: String,
}

impl Identity {
    pub fn new(access_key: impl Into<String>) -> Self {
        Self {
            access_key: access_key.into(),
        }
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

//! Block tokens (see the storage helper's implementation).
use serde::{Deserialize, Serialize};

/// An Ozone-compatible block token: identifier bytes and HMAC password.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BlockToken {
    pub identifier: Vec<u8>,
    pub password: Vec<u8>,
    pub kind: String,
    pub service: String,
}

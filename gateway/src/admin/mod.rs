//! Key and bucket management (with `crate::credentials_file`, the files
//! keys are kept in): the admin HTTP API the server answers under
//! `/_s3gw/admin/` (root keys only), the client the `s3-gateway admin`
//! command uses to call it, key generation, and the keys set up at start;
//! and `admin check`, a signed S3 round trip through a running gateway.

pub mod api;
pub mod bootstrap;
pub mod buckets;
pub mod check;
pub mod client;
pub mod keygen;
mod trust;

use crate::error::{Code, S3Error};

/// The admin API's answer for an access key id no key has.
fn no_such_key(access_key: &str) -> S3Error {
    S3Error::new(
        Code::NoSuchEntity,
        format!("No key with access key id {access_key}."),
    )
}

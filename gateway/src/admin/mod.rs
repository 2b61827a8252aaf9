//! Key management (with `crate::credentials_file`, the files keys are kept in): the admin HTTP API the server answers under
//! `/_s3gw/admin/` (root keys only), the client the `s3-gateway admin`
//! command uses to call it, key generation, and the keys set up at start;
//! and `admin check`, a signed S3 round trip through a running gateway.

pub mod api;
pub mod bootstrap;
pub mod check;
pub mod client;
pub mod keygen;
mod trust;

//! s3-gateway: an S3-compatible HTTP front end over an Ozone-style object store.
//!
//! A request flows `server` -> `router` (to an [`router::Endpoint`]) -> `auth`
//! (SigV4, yielding the caller's identity and a verified body) -> `ops` (one
//! file per operation family) -> `storage_client::Storage`.

/// The version, the commit it was built from and that commit's date
/// (`0.1.0 (a6a0971c2d3e 2026-12-04)`; see build.rs).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("S3GW_COMMIT"),
    " ",
    env!("S3GW_COMMIT_DATE"),
    ")"
);

pub mod access_control;
pub mod admin;
pub mod auth;
pub mod checksum;
pub mod client_address;
pub mod config;
pub mod console;
pub mod credentials_file;
pub mod error;
pub mod host;
pub mod lifecycle;
pub mod logging;
pub mod ops;
pub mod parsed_documents;
pub mod router;
pub mod server;
pub mod sse;
pub mod state;
pub mod toml_error;
pub mod word;
pub mod xml;

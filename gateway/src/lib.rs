//! s3-gateway: an S3-compatible HTTP front end over an Ozone-style object store.
//!
//! A request flows `server` -> `router` (to an [`router::Endpoint`]) -> `auth`
//! (SigV4, yielding the caller's identity and a verified body) -> `ops` (one
//! file per operation family) -> `storage_client::Storage`.

pub mod access_control;
pub mod admin;
pub mod auth;
pub mod checksum;
pub mod config;
pub mod credentials_file;
pub mod error;
pub mod host;
pub mod lifecycle;
pub mod logging;
pub mod ops;
pub mod parsed_documents;
pub mod router;
pub mod server;
pub mod state;
pub mod toml_error;
pub mod word;
pub mod xml;

//! Server-side encryption with customer keys (SSE-C), with the
//! gateway's master keys (SSE-S3) and with a KMS's (SSE-KMS), above storage: the
//! gateway seals an object's bytes before they reach either back end and
//! opens them on the way out, so embedded and Ozone hold only ciphertext
//! and behave alike. See docs/security.md, "Server-side encryption".
//!
//! - [`segments`]: the stored format (AES-256-GCM segments) and its
//!   streaming sealer and opener;
//! - [`object_key`]: the random per-object key and its sealing;
//! - [`customer_key`]: the SSE-C request headers;
//! - [`bucket_default`]: a bucket's default encryption document;
//! - [`keyring`]: SSE-S3's master keys and their file;
//! - [`kms`]: SSE-KMS's key service, a Hadoop KMS;
//! - [`record`]: the reserved metadata entry that describes an encrypted
//!   object;
//! - [`multipart`]: multipart uploads, encrypted part by part;
//! - [`size`]: the plaintext size a listing shows, from what it carries.

pub mod bucket_default;
pub mod customer_key;
pub mod keyring;
pub mod kms;
pub mod multipart;
pub mod object_key;
pub mod record;
pub mod segments;
pub mod size;

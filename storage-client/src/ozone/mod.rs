//! The `ozone` back end: a real Apache Ozone 2.x cluster spoken to over its
//! own wire protocols. [`om_client::OmClient`] sends metadata commands to the
//! Ozone Manager (`OzoneManagerService/submitRequest`), and
//! [`dn_client::DnClient`] reads block bytes from datanodes
//! (`XceiverClientProtocolService/send`). The message definitions are our own
//! subsets of Ozone's, in `proto/`.

mod checksum;
pub mod dn_client;
mod model;
pub mod om_client;
pub mod om_multipart;

pub use model::{
    Datanode, ETAG_METADATA_KEY, OpenPart, OzoneBlock, OzoneKey, OzoneOpenKey, OzonePart,
    OzoneUpload, Replication,
};

/// Code generated from `proto/` by `build.rs`.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/ozone_protos.rs"));
}

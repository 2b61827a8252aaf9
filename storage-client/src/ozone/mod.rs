//! The `ozone` back end: a real Apache Ozone 2.x cluster spoken to over its
//! own wire protocols. [`om_client::OmClient`] sends metadata commands to the
//! Ozone Manager (`OzoneManagerService/submitRequest`),
//! [`dn_client::DnClient`] reads block bytes from datanodes
//! (`XceiverClientProtocolService/send`) and [`ratis_client::RatisClient`]
//! writes them through the pipeline's Raft group
//! (`RaftClientProtocolService/unordered`). The gateway plugs them into its
//! storage roles as `OzoneMetadata` (the metadata role) and `OzoneBlocks`
//! (the block role); its own writer cuts chunks and blocks. The message
//! definitions are our own subsets of Ozone's, in `proto/`.

mod block_store;
mod channels;
mod checksum;
mod checksum_records;
pub mod dn_client;
mod metadata_store;
mod model;
mod object_mapping;
pub mod om_client;
pub mod om_multipart;
pub mod ratis_client;

pub(crate) use block_store::OzoneBlocks;
pub(crate) use metadata_store::OzoneMetadata;
pub use model::{
    Datanode, ETAG_METADATA_KEY, KeyExpectation, OpenPart, OzoneBlock, OzoneKey, OzoneOpenKey,
    OzonePart, OzoneUpload, RatisPipeline, Replication,
};

/// Code generated from `proto/` by `build.rs`.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/ozone_protos.rs"));
}

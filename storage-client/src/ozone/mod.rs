//! The `ozone` back end: a real Apache Ozone 2.x cluster spoken to over its
//! own wire protocols. [`om_client::OmClient`] sends metadata commands to the
//! Ozone Manager (`OzoneManagerService/submitRequest`),
//! [`dn_client::DnClient`] reads block bytes from datanodes
//! (`XceiverClientProtocolService/send`) and [`ratis_client::RatisClient`]
//! writes them through the pipeline's Raft group
//! (`RaftClientProtocolService/unordered`); [`dn_protocol`] is what the two
//! datanode clients share. [`open`] plugs them into the storage roles as
//! `OzoneMetadata` (the metadata role) and `OzoneBlocks` (the block role);
//! the facade's writer cuts chunks and blocks. The message definitions are
//! our own subsets of Ozone's, in `proto/`.

mod block_store;
mod bucket_documents;
mod channels;
mod checksum;
mod checksum_records;
mod cluster_view;
// `pub` inside this private module: visible only in the crate, and
// re-exported for the live tests by `crate::test_support`.
pub mod dn_client;
mod dn_protocol;
mod entry_records;
mod fso_listing;
mod grpc_tls;
mod keyring;
mod metadata_store;
pub mod model;
mod object_mapping;
pub mod om_client;
mod om_multipart;
mod one_reply;
mod ordered_chunks;
pub mod ratis_client;
mod record_bucket;
mod records;
mod s3_signature;
mod system_volume;
mod versions;

use std::sync::Arc;

use block_store::OzoneBlocks;
use dn_client::{DnClient, DnConfig};
use metadata_store::OzoneMetadata;
use om_client::{OmClient, OmConfig};
use ratis_client::{RatisClient, RatisConfig};

use crate::backend::Backend;
use crate::writer::WriteSizes;
use crate::{OzoneStorageConfig, Result};

/// Code generated from `proto/` by `build.rs`.
#[allow(clippy::all, clippy::pedantic, missing_docs)]
pub mod proto {
    include!(concat!(env!("OUT_DIR"), "/ozone_protos.rs"));
}

/// Connects to the cluster: refuses to start without the records key,
/// fails (`Unavailable`) when no OM answers, signs every OM request if the
/// cluster has security on (refusing to start without the system
/// identity's secret, or with one the OM does not hold), creates the
/// gateway's records volume and buckets on first use, owner-only, and
/// refuses a cluster where someone else owns them or they grant others
/// access.
pub(crate) async fn open(config: OzoneStorageConfig) -> Result<Backend> {
    config.validate()?;
    let sealer = Arc::new(records::Sealer::new(metadata_store::records_key(&config)?));
    let om_config = OmConfig {
        connect_timeout: config.connect_timeout,
        request_timeout: config.request_timeout,
        tls: config.tls.clone(),
        ..OmConfig::new(config.om_addresses.clone())
    };
    let mut om = OmClient::new(&om_config)?;
    if om.security_enabled().await? {
        om = om.sign_with(metadata_store::system_keyring(
            &config,
            Arc::clone(&sealer),
        )?);
        metadata_store::check_system_secret(&om, &config).await?;
    }
    let mut calls = vec![om.calls()];
    let om = Arc::new(om);
    let metadata = OzoneMetadata::new(
        Arc::clone(&om),
        sealer,
        config.bucket_prefix.clone(),
        config.open_key_expiry,
        config.metadata_cache_ttl,
    )
    .vouching_for_users(config.user_secrets);
    metadata.prepare().await?;
    let datanodes = Arc::new(cluster_view::Reachability::default());
    let reader = DnClient::new(DnConfig {
        connect_timeout: config.connect_timeout,
        request_timeout: config.request_timeout,
        tls: config.tls.clone(),
    })
    .reporting_to(Arc::clone(&datanodes));
    let writer = RatisClient::new(RatisConfig {
        connect_timeout: config.connect_timeout,
        request_timeout: config.request_timeout,
        tls: config.tls.clone(),
        ..RatisConfig::default()
    })
    .reporting_to(Arc::clone(&datanodes));
    calls.extend([reader.calls(), writer.calls()]);
    let blocks = OzoneBlocks::new(
        reader,
        writer,
        config.bytes_per_checksum,
        config.chunks_in_flight,
        config.open_key_expiry,
    );
    Ok(Backend {
        metadata: Arc::new(metadata),
        // See `versions`: Ozone's OM addresses no older version of a key.
        keeps_versions: false,
        completed_by: metadata_store::completed_by,
        blocks: Arc::new(blocks),
        write: WriteSizes {
            block_size: config.block_size,
            chunk_size: config.chunk_size,
            blocks_in_flight: config.blocks_in_flight,
            // Every byte goes to the datanodes: the OM keeps no object data.
            with_key_max: 0,
        },
        cache: config.cache(),
        // The OM's ACLs are not the gateway's ownership: it checks first.
        // Ozone reclaims replaced and abandoned blocks itself.
        reclaimer: None,
        background: None,
        local_store: None,
        calls,
        cluster: Some(Arc::new(cluster_view::OzoneCluster { om, datanodes })),
    })
}

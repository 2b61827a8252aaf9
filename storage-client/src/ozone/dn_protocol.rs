//! What every command to a datanode carries, whether it goes to the
//! datanode's own gRPC service (reads, [`super::dn_client`]) or through the
//! pipeline's Raft group (writes, [`super::ratis_client`]), and what its
//! result codes mean.

use crate::StorageError;

use super::model::{Datanode, OzoneBlock};
use super::proto::hadoop::hdds::datanode::{self as dn, ContainerCommandRequest, DatanodeBlockId};

/// The container protocol version Ozone 2.x clients announce.
pub(super) const CLIENT_VERSION: u32 = 3;

/// The fields every container command carries, addressed to datanode
/// `datanode_uuid`; the block token, when the OM issued one, in Hadoop's
/// URL encoding. Writes through Ratis carry the same fields.
pub(super) fn container_command(
    cmd: dn::Type,
    block: &OzoneBlock,
    datanode_uuid: &str,
) -> ContainerCommandRequest {
    ContainerCommandRequest {
        cmd_type: cmd as i32,
        container_id: block.id.container as i64,
        datanode_uuid: datanode_uuid.to_owned(),
        encoded_token: block.token.as_ref().map(|t| t.encode_url()),
        version: Some(CLIENT_VERSION),
        ..Default::default()
    }
}

pub(super) fn datanode_block_id(block: &OzoneBlock) -> DatanodeBlockId {
    DatanodeBlockId {
        container_id: block.id.container as i64,
        local_id: block.id.local as i64,
        block_commit_sequence_id: Some(block.commit_sequence_id),
        replica_index: None,
    }
}

/// The error a datanode's result code stands for.
pub(super) fn result_error(node: &Datanode, result: dn::Result, message: &str) -> StorageError {
    let text = format!(
        "datanode {}: {}: {message}",
        node.address,
        result.as_str_name()
    );
    match result {
        dn::Result::BlockTokenVerificationFailed => StorageError::TokenRefused(text),
        dn::Result::ChecksumMismatch => StorageError::Corrupt(text),
        dn::Result::NoSuchBlock | dn::Result::UnableToFindChunk => StorageError::Internal(text),
        // Behind on the block (UNKNOWN_BCSID), container gone or unhealthy,
        // I/O trouble: another replica may serve it.
        _ => StorageError::Unavailable(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_datanode_results() {
        let node = Datanode {
            uuid: "u".into(),
            address: "dn:9859".into(),
        };
        assert!(matches!(
            result_error(&node, dn::Result::UnknownBcsid, ""),
            StorageError::Unavailable(_)
        ));
        assert!(matches!(
            result_error(&node, dn::Result::BlockTokenVerificationFailed, ""),
            StorageError::TokenRefused(_)
        ));
        assert!(matches!(
            result_error(&node, dn::Result::NoSuchBlock, ""),
            StorageError::Internal(_)
        ));
    }
}

//! What the OM tells us about keys and blocks, in our terms: the decoded
//! form of `KeyInfo`, `KeyLocation` and `Pipeline` that the datanode client
//! and (next) the `MetadataStore` implementation work with.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use crate::BlockToken;
use crate::{BlockId, BucketInfo, ListEntry, ObjectMeta};

use super::proto::hadoop::{common, hdds, ozone};

/// The metadata key under which Ozone's S3 gateway stores an object's ETag.
pub const ETAG_METADATA_KEY: &str = "ETag";

/// The bucket metadata entry holding the LocationConstraint given at
/// creation.
const REGION_METADATA_KEY: &str = "s3gw-region";

/// A bucket's metadata carrying `region`.
pub(super) fn region_metadata(region: &str) -> Vec<hdds::KeyValue> {
    key_values(&[(REGION_METADATA_KEY.to_owned(), region.to_owned())])
}

/// The datanode gRPC port Ozone uses when a member advertises none.
const DEFAULT_STANDALONE_PORT: u32 = 9859;

/// The datanode Ratis client port (`hdds.container.ratis.ipc.port`) Ozone
/// uses when a member advertises none.
const DEFAULT_RATIS_PORT: u32 = 9858;

/// One replica holder of a block, as the datanode client reaches it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Datanode {
    /// The datanode's UUID string; every container command must name it.
    pub uuid: String,
    /// `host:port` of its `XceiverClientProtocolService` (the STANDALONE port).
    pub address: String,
}

/// One block of a key, with everything needed to read it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OzoneBlock {
    pub id: BlockId,
    /// The commit sequence id a replica must have reached to serve this block.
    pub commit_sequence_id: u64,
    /// Offset of the block's first byte within the key.
    pub offset: u64,
    pub length: u64,
    /// The READ token the OM issued (absent when security is off).
    pub token: Option<BlockToken>,
    /// The pipeline's members, its leader first.
    pub datanodes: Vec<Datanode>,
    /// The multipart part this block belongs to, if any.
    pub part_number: Option<u32>,
    /// The Raft group that writes to the block go through (absent when the
    /// OM sent no usable pipeline).
    pub pipeline: Option<RatisPipeline>,
}

/// A block's pipeline as a Ratis client addresses it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RatisPipeline {
    /// The pipeline id, which is also the Raft group id.
    pub id: uuid::Uuid,
    /// The members with their RATIS client endpoints, the leader first.
    pub members: Vec<Datanode>,
    /// Every member takes a WriteChunk that carries the block's PutBlock
    /// (wire version [`COMBINED_WRITE_VERSION`] or later), so a block of
    /// one chunk is written and sealed in one Raft transaction.
    pub seals_with_last_write: bool,
}

/// The datanode wire version from which a WriteChunk may carry its block's
/// PutBlock (Ozone's `COMBINED_PUTBLOCK_WRITECHUNK_RPC`); an older
/// datanode would ignore it and leave the block unsealed.
pub const COMBINED_WRITE_VERSION: i32 = 2;

/// A key as the OM describes it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OzoneKey {
    pub bucket: String,
    pub key: String,
    pub size: u64,
    pub created: SystemTime,
    pub modified: SystemTime,
    pub owner: String,
    /// Key metadata as stored, including `ETag`.
    pub metadata: BTreeMap<String, String>,
    pub tags: Vec<(String, String)>,
    /// The blocks of the latest version, in key order (empty for HEAD).
    pub blocks: Vec<OzoneBlock>,
    pub is_multipart: bool,
    /// The OM's generation of the key, changed by every write to it.
    pub update_id: u64,
}

impl OzoneKey {
    /// The S3 ETag the writer recorded, without quotes.
    pub fn etag(&self) -> Option<&str> {
        self.metadata.get(ETAG_METADATA_KEY).map(String::as_str)
    }
}

/// A key handed out by `CreateKey`, not visible until committed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OzoneOpenKey {
    pub bucket: String,
    pub key: String,
    /// The OM's handle for the open key (`clientID` of AllocateBlock/CommitKey).
    pub id: u64,
    /// Blocks the OM allocated with the key (none for an empty size hint).
    pub blocks: Vec<OzoneBlock>,
    /// The replication the OM chose for the key; AllocateBlock and
    /// CommitKey must repeat it (the OM has no default for them).
    pub replication: Replication,
    /// Set when the open key is a part of a multipart upload.
    pub part: Option<OpenPart>,
}

/// Which multipart upload and part an open key will become.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpenPart {
    pub upload_id: String,
    pub number: u32,
}

/// A committed part of a multipart upload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OzonePart {
    pub number: u32,
    /// The OM's name for the part, which completion must quote.
    pub name: String,
    pub size: u64,
    pub modified: SystemTime,
    pub etag: Option<String>,
}

/// A multipart upload in progress.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OzoneUpload {
    pub key: String,
    pub upload_id: String,
    pub created: SystemTime,
}

/// What the OM must find under a key for a write to go ahead: checked at
/// CreateKey (or CompleteMultipartUpload) and, for a key, again at
/// CommitKey, atomically with it (Ozone's atomic rewrite).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum KeyExpectation {
    #[default]
    Anything,
    /// No key (`If-None-Match: *`).
    Absent,
    /// The key at this generation (its `updateID`).
    Generation(u64),
    /// A key whose `ETag` metadata is this (without quotes).
    Etag(String),
}

/// Ozone's `expectedDataGeneration` for "the key must not exist".
const GENERATION_ABSENT: u64 = 0;

impl KeyExpectation {
    /// Sets the matching `KeyArgs` fields.
    pub(super) fn apply(&self, args: &mut ozone::KeyArgs) {
        match self {
            Self::Anything => {}
            Self::Absent => args.expected_data_generation = Some(GENERATION_ABSENT),
            Self::Generation(generation) => args.expected_data_generation = Some(*generation),
            Self::Etag(etag) => args.expected_etag = Some(etag.clone()),
        }
    }
}

/// A key's replication as the OM states it (`hadoop.hdds` wire values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Replication {
    /// RATIS=1, STAND_ALONE=2, EC=4.
    pub kind: i32,
    /// ONE=1, THREE=3.
    pub factor: i32,
}

pub(super) fn millis(ms: u64) -> SystemTime {
    UNIX_EPOCH + Duration::from_millis(ms)
}

pub(super) fn pairs(values: Vec<hdds::KeyValue>) -> Vec<(String, String)> {
    values
        .into_iter()
        .map(|kv| (kv.key, kv.value.unwrap_or_default()))
        .collect()
}

pub(super) fn key_values(pairs: &[(String, String)]) -> Vec<hdds::KeyValue> {
    pairs
        .iter()
        .map(|(key, value)| hdds::KeyValue {
            key: key.clone(),
            value: Some(value.clone()),
        })
        .collect()
}

pub(super) fn bucket_from_proto(info: ozone::BucketInfo) -> BucketInfo {
    let region = info
        .metadata
        .iter()
        .find(|kv| kv.key == REGION_METADATA_KEY)
        .and_then(|kv| kv.value.clone())
        .unwrap_or_default();
    BucketInfo {
        owner: info.owner.clone().unwrap_or_default(),
        created: millis(info.creation_time()),
        name: info.bucket_name,
        region,
    }
}

pub(super) fn key_from_proto(info: ozone::KeyInfo) -> OzoneKey {
    // Only the latest version's locations matter to an S3 reader.
    let latest = info.key_location_list.into_iter().last();
    let is_multipart = latest.as_ref().is_some_and(|l| l.is_multipart_key());
    let mut blocks: Vec<OzoneBlock> = latest
        .map(|l| l.key_locations.into_iter().map(block_from_proto).collect())
        .unwrap_or_default();
    // The OM's `offset` is not the block's place in the key (it is 0 for
    // every block); the blocks simply follow each other.
    let mut offset = 0;
    for block in &mut blocks {
        block.offset = offset;
        offset += block.length;
    }
    OzoneKey {
        size: info.data_size,
        created: millis(info.creation_time),
        modified: millis(info.modification_time),
        owner: info.owner_name.unwrap_or_default(),
        metadata: pairs(info.metadata).into_iter().collect(),
        tags: pairs(info.tags),
        blocks,
        is_multipart,
        update_id: info.update_id.unwrap_or_default(),
        bucket: info.bucket_name,
        key: info.key_name,
    }
}

/// A listing entry from ListKeysLight's answer, which carries no key
/// metadata: the entry's `meta` and `part_sizes` are empty.
pub(super) fn listed_from_proto(info: ozone::BasicKeyInfo) -> ListEntry {
    ListEntry {
        size: info.data_size(),
        last_modified: millis(info.modification_time()),
        etag: info.etag.unwrap_or_default(),
        owner: info.owner_name.unwrap_or_default(),
        key: info.key_name.unwrap_or_default(),
        meta: ObjectMeta::default(),
        part_sizes: Vec::new(),
    }
}

pub(super) fn block_from_proto(location: ozone::KeyLocation) -> OzoneBlock {
    let id = location.block_id.container_block_id;
    OzoneBlock {
        id: BlockId {
            // Ozone's ids are non-negative int64 on the wire.
            container: id.container_id as u64,
            local: id.local_id as u64,
        },
        commit_sequence_id: location.block_id.block_commit_sequence_id(),
        // Placed by the caller: see `key_from_proto`.
        offset: 0,
        length: location.length,
        token: location.token.map(token_from_proto),
        pipeline: location.pipeline.as_ref().and_then(ratis_pipeline),
        datanodes: location.pipeline.map(datanodes).unwrap_or_default(),
        part_number: location
            .part_number
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0),
    }
}

pub(super) fn block_to_proto(block: &OzoneBlock) -> ozone::KeyLocation {
    ozone::KeyLocation {
        block_id: hdds::BlockId {
            container_block_id: hdds::ContainerBlockId {
                container_id: block.id.container as i64,
                local_id: block.id.local as i64,
            },
            block_commit_sequence_id: Some(block.commit_sequence_id),
        },
        // Ozone's writers send 0 here: a block's place in the key is
        // given by the order of the locations.
        offset: 0,
        length: block.length,
        part_number: block.part_number.and_then(|n| i32::try_from(n).ok()),
        ..Default::default()
    }
}

fn token_from_proto(token: common::Token) -> BlockToken {
    BlockToken {
        identifier: token.identifier,
        password: token.password,
        kind: token.kind,
        service: token.service,
    }
}

/// The pipeline's members as gRPC endpoints, the Raft leader first (reads
/// of a just-written block succeed there first).
fn datanodes(pipeline: hdds::Pipeline) -> Vec<Datanode> {
    endpoints(&pipeline, "STANDALONE", DEFAULT_STANDALONE_PORT)
}

/// The Raft group of a pipeline: its id (a UUID, given as a string or as
/// two halves) and its members' RATIS endpoints.
fn ratis_pipeline(pipeline: &hdds::Pipeline) -> Option<RatisPipeline> {
    let id = match (&pipeline.id.id, &pipeline.id.uuid128) {
        (Some(text), _) => uuid::Uuid::parse_str(text).ok()?,
        (None, Some(halves)) => {
            uuid::Uuid::from_u64_pair(halves.most_sig_bits as u64, halves.least_sig_bits as u64)
        }
        (None, None) => return None,
    };
    let members = endpoints(pipeline, "RATIS", DEFAULT_RATIS_PORT);
    let seals_with_last_write = pipeline
        .members
        .iter()
        .all(|m| m.current_version.unwrap_or_default() >= COMBINED_WRITE_VERSION);
    (!members.is_empty()).then_some(RatisPipeline {
        id,
        members,
        seals_with_last_write,
    })
}

/// Each member's `host:port` for the port named `port_name`, the Raft
/// leader first.
fn endpoints(pipeline: &hdds::Pipeline, port_name: &str, default_port: u32) -> Vec<Datanode> {
    let leader = pipeline.leader_id.clone().unwrap_or_default();
    let mut nodes: Vec<Datanode> = pipeline
        .members
        .iter()
        .map(|member| {
            let port = member
                .ports
                .iter()
                .find(|p| p.name == port_name)
                .map_or(default_port, |p| p.value);
            let host = &member.ip_address;
            Datanode {
                uuid: member.uuid.clone().unwrap_or_default(),
                // An IPv6 literal needs brackets before the port.
                address: if host.contains(':') {
                    format!("[{host}]:{port}")
                } else {
                    format!("{host}:{port}")
                },
            }
        })
        .collect();
    nodes.sort_by_key(|node| node.uuid != leader);
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(
        local: i64,
        length: u64,
        members: &[(&str, u32)],
        leader: &str,
    ) -> ozone::KeyLocation {
        ozone::KeyLocation {
            block_id: hdds::BlockId {
                container_block_id: hdds::ContainerBlockId {
                    container_id: 7,
                    local_id: local,
                },
                block_commit_sequence_id: Some(3),
            },
            offset: 0,
            length,
            pipeline: Some(hdds::Pipeline {
                members: members
                    .iter()
                    .map(|(uuid, port)| hdds::DatanodeDetails {
                        uuid: Some((*uuid).into()),
                        ip_address: "10.0.0.1".into(),
                        host_name: "dn".into(),
                        ports: vec![hdds::Port {
                            name: "STANDALONE".into(),
                            value: *port,
                        }],
                        current_version: None,
                        uuid128: None,
                    })
                    .collect(),
                leader_id: Some(leader.into()),
                ..Default::default()
            }),
            ..Default::default()
        }
    }

    #[test]
    fn places_blocks_one_after_another_leader_first() {
        let info = ozone::KeyInfo {
            key_name: "k".into(),
            data_size: 150,
            key_location_list: vec![ozone::KeyLocationList {
                key_locations: vec![
                    location(1, 100, &[("a", 1), ("b", 2)], "b"),
                    location(2, 50, &[("a", 1)], "a"),
                ],
                ..Default::default()
            }],
            metadata: vec![hdds::KeyValue {
                key: ETAG_METADATA_KEY.into(),
                value: Some("abc".into()),
            }],
            ..Default::default()
        };
        let key = key_from_proto(info);
        assert_eq!(key.etag(), Some("abc"));
        let places: Vec<_> = key.blocks.iter().map(|b| (b.offset, b.length)).collect();
        assert_eq!(places, [(0, 100), (100, 50)]);
        let first = &key.blocks[0];
        assert_eq!(
            first.id,
            BlockId {
                container: 7,
                local: 1
            }
        );
        assert_eq!(first.commit_sequence_id, 3);
        assert_eq!(first.datanodes[0].uuid, "b");
        assert_eq!(first.datanodes[0].address, "10.0.0.1:2");
    }

    #[test]
    fn finds_the_raft_group_and_ratis_ports() {
        let group = "5a0a8e5e-3b71-4c8e-9d38-0d5c0a3c2f11";
        let mut with_string_id = location(1, 10, &[("a", 1), ("b", 2)], "b");
        let pipeline = with_string_id.pipeline.as_mut().unwrap();
        pipeline.id.id = Some(group.into());
        pipeline.members[0].ports.push(hdds::Port {
            name: "RATIS".into(),
            value: 7777,
        });
        let block = block_from_proto(with_string_id);
        let ratis = block.pipeline.unwrap();
        assert_eq!(ratis.id.to_string(), group);
        // The leader first; a member without a RATIS port gets the default.
        let addresses: Vec<_> = ratis.members.iter().map(|m| m.address.as_str()).collect();
        assert_eq!(addresses, ["10.0.0.1:9858", "10.0.0.1:7777"]);

        let id = uuid::Uuid::parse_str(group).unwrap();
        let (most, least) = id.as_u64_pair();
        let mut with_halves = location(1, 10, &[("a", 1)], "a");
        with_halves.pipeline.as_mut().unwrap().id.uuid128 = Some(hdds::Uuid {
            most_sig_bits: most as i64,
            least_sig_bits: least as i64,
        });
        assert_eq!(block_from_proto(with_halves).pipeline.unwrap().id, id);

        // No id at all: the block cannot be written through Ratis.
        assert_eq!(
            block_from_proto(location(1, 10, &[("a", 1)], "a")).pipeline,
            None
        );
    }

    #[test]
    fn a_pipeline_seals_with_its_last_write_only_when_every_member_can() {
        let seals = |versions: &[Option<i32>]| {
            let mut at = location(1, 10, &[("a", 1), ("b", 2), ("c", 3)], "a");
            let pipeline = at.pipeline.as_mut().unwrap();
            pipeline.id.id = Some("5a0a8e5e-3b71-4c8e-9d38-0d5c0a3c2f11".into());
            for (member, version) in pipeline.members.iter_mut().zip(versions) {
                member.current_version = *version;
            }
            block_from_proto(at).pipeline.unwrap().seals_with_last_write
        };
        assert!(seals(&[Some(2), Some(3), Some(2)]));
        // One member too old, or one that does not say: two calls, as before.
        assert!(!seals(&[Some(3), Some(1), Some(3)]));
        assert!(!seals(&[Some(3), None, Some(3)]));
    }

    #[test]
    fn a_bucket_keeps_the_region_it_was_created_with() {
        let info = |metadata| ozone::BucketInfo {
            volume_name: "s3v".into(),
            bucket_name: "b".into(),
            owner: Some("alice".into()),
            metadata,
            ..Default::default()
        };
        let bucket = bucket_from_proto(info(region_metadata("eu-west-1")));
        assert_eq!(bucket.region, "eu-west-1");
        assert_eq!(bucket.owner, "alice");
        assert_eq!(bucket_from_proto(info(Vec::new())).region, "");
    }
}

//! How S3 objects look in Ozone: the facade's types to and from the OM
//! client's, and the key metadata layout shared with Ozone's own S3 gateway
//! so that objects written by either gateway read back through the other.
//!
//! Ozone's gateway stores user metadata `x-amz-meta-<name>` as key metadata
//! `<name>` and returns every metadata entry except `ETag` as
//! `x-amz-meta-<entry>`; a user entry named `etag` is stored as
//! `etag-custom`. We do the same. Our gateway lower-cases user metadata
//! names, so the system headers below, stored under their canonical
//! mixed-case names, can never collide with a user entry.

use std::collections::BTreeMap;
use std::time::SystemTime;

use md5::{Digest, Md5};

use crate::metadata::OpenKey;
use crate::{
    BlockLocation, ChecksumAlgorithm, ChecksumType, KeyInfo, ListEntry, NewObject, ObjectChecksum,
    ObjectMeta, PartSummary, Replica, WriteGroup,
};

use super::model::{Datanode, ETAG_METADATA_KEY, OzoneBlock, OzoneKey, RatisPipeline};

/// Where Ozone's gateway keeps a user metadata entry named `etag`.
const CUSTOM_ETAG_KEY: &str = "etag-custom";
/// The object checksum as `<algorithm> <kind> <value>`; Ozone keeps none.
const CHECKSUM_KEY: &str = "s3gw-checksum";
const CONTENT_TYPE: &str = "Content-Type";
const CONTENT_ENCODING: &str = "Content-Encoding";
const CONTENT_DISPOSITION: &str = "Content-Disposition";
const CONTENT_LANGUAGE: &str = "Content-Language";
const CACHE_CONTROL: &str = "Cache-Control";
const EXPIRES: &str = "Expires";

/// The key metadata (besides `ETag`) that records `meta` and `checksum`.
pub(super) fn object_metadata(
    meta: &ObjectMeta,
    checksum: Option<&ObjectChecksum>,
) -> Vec<(String, String)> {
    let system = [
        (CONTENT_TYPE, &meta.content_type),
        (CONTENT_ENCODING, &meta.content_encoding),
        (CONTENT_DISPOSITION, &meta.content_disposition),
        (CONTENT_LANGUAGE, &meta.content_language),
        (CACHE_CONTROL, &meta.cache_control),
        (EXPIRES, &meta.expires),
    ];
    let mut out: Vec<(String, String)> = system
        .into_iter()
        .filter_map(|(name, value)| value.as_ref().map(|v| (name.to_owned(), v.clone())))
        .collect();
    out.extend(meta.user.iter().map(|(name, value)| {
        let stored = if name == "etag" {
            CUSTOM_ETAG_KEY
        } else {
            name
        };
        (stored.to_owned(), value.clone())
    }));
    if let Some(c) = checksum {
        out.push((CHECKSUM_KEY.to_owned(), checksum_text(c)));
    }
    out
}

/// A checksum as one metadata value: `<algorithm> <kind> <value>`.
pub(super) fn checksum_text(c: &ObjectChecksum) -> String {
    format!("{} {} {}", c.algorithm, c.kind, c.value)
}

/// The object metadata and checksum recorded in key metadata; entries
/// written by Ozone's gateway come back as user metadata.
pub(super) fn meta_from_metadata(
    metadata: &BTreeMap<String, String>,
) -> (ObjectMeta, Option<ObjectChecksum>) {
    let mut meta = ObjectMeta::default();
    let mut checksum = None;
    for (name, value) in metadata {
        let value = value.clone();
        match name.as_str() {
            ETAG_METADATA_KEY => {}
            CONTENT_TYPE => meta.content_type = Some(value),
            CONTENT_ENCODING => meta.content_encoding = Some(value),
            CONTENT_DISPOSITION => meta.content_disposition = Some(value),
            CONTENT_LANGUAGE => meta.content_language = Some(value),
            CACHE_CONTROL => meta.cache_control = Some(value),
            EXPIRES => meta.expires = Some(value),
            CHECKSUM_KEY => checksum = parse_checksum(&value),
            CUSTOM_ETAG_KEY => {
                meta.user.insert("etag".to_owned(), value);
            }
            other => {
                meta.user.insert(other.to_ascii_lowercase(), value);
            }
        }
    }
    (meta, checksum)
}

/// The checksum [`checksum_text`] wrote.
pub(super) fn parse_checksum(text: &str) -> Option<ObjectChecksum> {
    let mut fields = text.split(' ');
    let (algorithm, kind, value) = (fields.next()?, fields.next()?, fields.next()?);
    if fields.next().is_some() {
        return None;
    }
    Some(ObjectChecksum {
        algorithm: ChecksumAlgorithm::from_name(algorithm)?,
        kind: ChecksumType::from_name(kind)?,
        value: value.to_owned(),
    })
}

/// The facade's view of a committed key.
pub(super) fn key_info(key: OzoneKey) -> KeyInfo {
    let (meta, checksum) = meta_from_metadata(&key.metadata);
    let parts = if key.is_multipart {
        part_summaries(&key.blocks)
    } else {
        Vec::new()
    };
    KeyInfo {
        etag: key.etag().unwrap_or_default().to_owned(),
        bucket: key.bucket,
        key: key.key,
        size: key.size,
        last_modified: key.modified,
        owner: key.owner,
        meta,
        tags: key.tags,
        checksum,
        locations: key.blocks.into_iter().map(location_from_block).collect(),
        parts,
        // Ozone buckets are unversioned here (see `super::versions`).
        version_id: None,
    }
}

/// A listing entry from a full key record (ListKeys and ListStatus
/// answer those): what [`key_info`] makes of it, less the block
/// locations, tags and checksum.
pub(super) fn listed(key: OzoneKey) -> ListEntry {
    let (meta, _) = meta_from_metadata(&key.metadata);
    let part_sizes = if key.is_multipart {
        part_summaries(&key.blocks).iter().map(|p| p.size).collect()
    } else {
        Vec::new()
    };
    ListEntry {
        etag: key.etag().unwrap_or_default().to_owned(),
        size: key.size,
        last_modified: key.modified,
        owner: key.owner,
        key: key.key,
        meta,
        part_sizes,
    }
}

/// The parts of a multipart key from its blocks' part numbers. Ozone does
/// not keep the parts' ETags once the upload is complete.
fn part_summaries(blocks: &[OzoneBlock]) -> Vec<PartSummary> {
    let mut parts: Vec<PartSummary> = Vec::new();
    for block in blocks {
        let Some(number) = block.part_number.and_then(|n| u16::try_from(n).ok()) else {
            continue;
        };
        match parts.last_mut() {
            Some(last) if last.number == number => last.size += block.length,
            _ => parts.push(PartSummary {
                number,
                size: block.length,
                etag: String::new(),
                checksum: None,
            }),
        }
    }
    parts
}

/// The ETag Ozone's OM gives a completed multipart key: the MD5 of the
/// parts' ETags as text, concatenated, then `-N` (S3 hashes the binary
/// MD5s instead). Ozone's own S3 gateway reports the same value.
pub(super) fn ozone_multipart_etag(parts: &[(u16, String)]) -> String {
    let text: String = parts.iter().map(|(_, etag)| etag.as_str()).collect();
    format!("{}-{}", hex::encode(Md5::digest(text)), parts.len())
}

/// What the facade returns right after a commit, without asking the OM again.
pub(super) fn committed_info(
    open: &OpenKey,
    owner: &str,
    blocks: Vec<BlockLocation>,
    obj: NewObject,
) -> KeyInfo {
    KeyInfo {
        bucket: open.object.bucket.clone(),
        key: open.object.key.clone(),
        size: blocks.iter().map(|b| b.length).sum(),
        etag: obj.etag,
        last_modified: SystemTime::now(),
        owner: owner.to_owned(),
        meta: obj.meta,
        tags: open.intent.tags.clone(),
        checksum: obj.checksum,
        locations: blocks,
        parts: Vec::new(),
        version_id: None,
    }
}

pub(super) fn location_from_block(block: OzoneBlock) -> BlockLocation {
    BlockLocation {
        block: block.id,
        offset: block.offset,
        length: block.length,
        datanodes: block.datanodes.iter().map(|d| d.address.clone()).collect(),
        token: block.token,
        commit_sequence_id: block.commit_sequence_id,
        replicas: block.datanodes.into_iter().map(replica).collect(),
        write_group: block.pipeline.map(|p| WriteGroup {
            id: p.id,
            members: p.members.into_iter().map(replica).collect(),
            seals_with_last_write: p.seals_with_last_write,
        }),
        bytes_with_key: None,
    }
}

/// The OM client's block for `location`, part of part `part_number` if given.
pub(super) fn block_from_location(
    location: &BlockLocation,
    part_number: Option<u32>,
) -> OzoneBlock {
    OzoneBlock {
        id: location.block,
        commit_sequence_id: location.commit_sequence_id,
        offset: location.offset,
        length: location.length,
        token: location.token.clone(),
        datanodes: location.replicas.iter().map(datanode).collect(),
        part_number,
        pipeline: location.write_group.as_ref().map(|g| RatisPipeline {
            id: g.id,
            members: g.members.iter().map(datanode).collect(),
            seals_with_last_write: g.seals_with_last_write,
        }),
    }
}

fn replica(node: Datanode) -> Replica {
    Replica {
        id: node.uuid,
        address: node.address,
    }
}

fn datanode(replica: &Replica) -> Datanode {
    Datanode {
        uuid: replica.id.clone(),
        address: replica.address.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_round_trips_and_reads_ozone_gateway_entries() {
        let meta = ObjectMeta {
            content_type: Some("text/plain".into()),
            cache_control: Some("no-cache".into()),
            user: [
                ("colour".to_owned(), "blue".to_owned()),
                ("etag".to_owned(), "mine".to_owned()),
            ]
            .into(),
            ..Default::default()
        };
        let checksum = ObjectChecksum {
            algorithm: ChecksumAlgorithm::Crc32,
            kind: ChecksumType::FullObject,
            value: "AAAAAA==".into(),
        };
        let mut stored: BTreeMap<String, String> = object_metadata(&meta, Some(&checksum))
            .into_iter()
            .collect();
        assert_eq!(stored.get("colour").map(String::as_str), Some("blue"));
        assert_eq!(
            stored.get(CUSTOM_ETAG_KEY).map(String::as_str),
            Some("mine")
        );
        stored.insert(ETAG_METADATA_KEY.into(), "abc".into());
        assert_eq!(meta_from_metadata(&stored), (meta, Some(checksum)));

        // Written by Ozone's gateway: user entries as sent, no system headers.
        let theirs: BTreeMap<String, String> = [
            ("ETag".to_owned(), "abc".to_owned()),
            ("Shape".to_owned(), "round".to_owned()),
        ]
        .into();
        let (meta, checksum) = meta_from_metadata(&theirs);
        assert_eq!(meta.user, [("shape".to_owned(), "round".to_owned())].into());
        assert_eq!((meta.content_type, checksum), (None, None));
    }

    #[test]
    fn a_malformed_checksum_entry_is_ignored() {
        assert_eq!(parse_checksum("crc32 FULL_OBJECT"), None);
        assert_eq!(parse_checksum("a b c d"), None);
    }

    #[test]
    fn multipart_blocks_group_into_parts() {
        let block = |part: u32, length: u64| OzoneBlock {
            id: crate::BlockId {
                container: 1,
                local: u64::from(part) * 10 + length,
            },
            commit_sequence_id: 0,
            offset: 0,
            length,
            token: None,
            datanodes: Vec::new(),
            part_number: Some(part),
            pipeline: None,
        };
        let parts = part_summaries(&[block(1, 5), block(1, 3), block(4, 2)]);
        let got: Vec<(u16, u64)> = parts.iter().map(|p| (p.number, p.size)).collect();
        assert_eq!(got, [(1, 8), (4, 2)]);
    }
}

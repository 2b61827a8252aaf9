//! Small objects kept with their key: the only block of an object of at
//! most `object_with_key_max` bytes is a row of `om.redb`
//! ([`BLOCKS_WITH_KEYS`]), written in the transaction that commits the
//! object, read in the one that looks it up, and removed in the one that
//! frees its block. A PUT is then one OM commit and no DN write, a GET one
//! read transaction and no DN read. The block keeps its id, so every path
//! that moves, versions or frees blocks (`queue_for_reclaim`) needs no
//! other case.

use bytes::Bytes;
use redb::{ReadableTable, WriteTransaction};

use crate::backend::SmallBlockUsage;
use crate::embedded::DbResult;
use crate::embedded::block_row;
use crate::embedded::schema::{
    BLOCKS_WITH_KEYS, BYTES_WITH_KEYS, COUNT_WITH_KEYS, COUNTERS, KeyRecord,
};
use crate::{BlockId, BlockLocation, Result, StorageError};

/// The longest block that may be kept with its key (the setting's bound):
/// a lookup of a longer one does not look here.
const LONGEST: u64 = 1024 * 1024;

/// Stores the bytes of those of `blocks` that carry them (the writer hands
/// an object of at most `object_with_key_max` bytes over that way).
pub(super) fn store(
    txn: &WriteTransaction,
    blocks: &[BlockLocation],
    bytes_per_checksum: u32,
) -> Result<()> {
    let mut added = SmallBlockUsage::default();
    {
        let mut table = txn.open_table(BLOCKS_WITH_KEYS).db()?;
        for location in blocks {
            let Some(data) = &location.bytes_with_key else {
                continue;
            };
            let row = block_row::encode(&data.0, bytes_per_checksum);
            let block = location.block;
            table
                .insert((block.container, block.local), row.as_slice())
                .db()?;
            added.blocks += 1;
            added.bytes += data.0.len() as u64;
        }
    }
    change_totals(txn, added, SmallBlockUsage::default())
}

/// A bad block list is refused before anything changes: bytes carried by
/// a block that is not the object's only one, or of another length.
pub(super) fn check(blocks: &[BlockLocation]) -> Result<()> {
    let carried = blocks.iter().filter(|b| b.bytes_with_key.is_some()).count();
    let fits = blocks.iter().all(|b| {
        b.bytes_with_key
            .as_ref()
            .is_none_or(|d| d.0.len() as u64 == b.length && b.length <= LONGEST)
    });
    if carried > 1 || (carried == 1 && blocks.len() > 1) || !fits {
        return Err(StorageError::InvalidArgument(
            "only an object's only block, of at most 1 MiB, is kept with its key".into(),
        ));
    }
    Ok(())
}

/// Removes `block`'s row if it has one; whether it had. A block freed
/// here has nothing on the DN to reclaim.
pub(super) fn free(txn: &WriteTransaction, block: BlockId) -> Result<bool> {
    let removed = {
        let mut table = txn.open_table(BLOCKS_WITH_KEYS).db()?;
        table
            .remove((block.container, block.local))
            .db()?
            .map(|row| block_row::stored_len(row.value()))
    };
    let Some(bytes) = removed else {
        return Ok(false);
    };
    change_totals(
        txn,
        SmallBlockUsage::default(),
        SmallBlockUsage { blocks: 1, bytes },
    )?;
    Ok(true)
}

/// The object's bytes if its only block is kept with its key, verified.
pub(super) fn read(
    table: &impl ReadableTable<(u64, u64), &'static [u8]>,
    record: &KeyRecord,
) -> Result<Option<Bytes>> {
    let [only] = record.blocks.as_slice() else {
        return Ok(None);
    };
    if only.length > LONGEST {
        return Ok(None);
    }
    let block = only.block;
    match table.get((block.container, block.local)).db()? {
        Some(row) => block_row::decode(block, row.value(), only.length).map(Some),
        None => Ok(None),
    }
}

/// How many blocks are kept with their keys, and their bytes.
pub(super) fn usage(table: &impl ReadableTable<&'static str, u64>) -> Result<SmallBlockUsage> {
    let get = |name| -> Result<u64> { Ok(table.get(name).db()?.map_or(0, |v| v.value())) };
    Ok(SmallBlockUsage {
        blocks: get(COUNT_WITH_KEYS)?,
        bytes: get(BYTES_WITH_KEYS)?,
    })
}

fn change_totals(
    txn: &WriteTransaction,
    added: SmallBlockUsage,
    removed: SmallBlockUsage,
) -> Result<()> {
    if added == removed {
        return Ok(());
    }
    let mut counters = txn.open_table(COUNTERS).db()?;
    let before = usage(&counters)?;
    let after = |was: u64, plus: u64, minus: u64| was.saturating_add(plus).saturating_sub(minus);
    counters
        .insert(
            COUNT_WITH_KEYS,
            after(before.blocks, added.blocks, removed.blocks),
        )
        .db()?;
    counters
        .insert(
            BYTES_WITH_KEYS,
            after(before.bytes, added.bytes, removed.bytes),
        )
        .db()?;
    Ok(())
}

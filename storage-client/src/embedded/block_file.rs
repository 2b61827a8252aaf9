//! One block on disk: `<localid>.block` holds the bytes and `<localid>.crc`
//! beside it a 4-byte header (bytes per checksum window) followed by the
//! big-endian CRC32 of every window, as Ozone's default checksum does.
//! Reads verify every window they touch, so a flipped bit on disk is an
//! error, never wrong bytes. These functions block: call them from
//! `spawn_blocking`.

use std::fs::{self, File};
use std::io::ErrorKind;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::{BlockId, Result, StorageError, private_files};

const HEADER_LEN: u64 = 4;
const SUM_LEN: u64 = 4;

pub(crate) struct BlockPaths {
    root: PathBuf,
    dir: PathBuf,
    data: PathBuf,
    sums: PathBuf,
}

impl BlockPaths {
    pub(crate) fn new(containers: &Path, block: BlockId) -> Self {
        let dir = containers.join(block.container.to_string());
        Self {
            data: dir.join(format!("{}.block", block.local)),
            sums: dir.join(format!("{}.crc", block.local)),
            root: containers.to_owned(),
            dir,
        }
    }
}

fn sync_dir(dir: &Path) -> Result<()> {
    File::open(dir)?.sync_all()?;
    Ok(())
}

fn invalid(message: String) -> StorageError {
    StorageError::InvalidArgument(message)
}

/// Appends one chunk at `offset`, which must be the block's current length
/// and a whole number of checksum windows.
pub(crate) fn append(
    paths: &BlockPaths,
    offset: u64,
    data: &[u8],
    bytes_per_checksum: u32,
) -> Result<()> {
    write_at(paths, offset, data, bytes_per_checksum).map(drop)
}

/// Writes a whole block and makes it durable, as `append` at offset 0 and
/// then `seal` would, opening each file once.
pub(crate) fn write_sealed(paths: &BlockPaths, data: &[u8], bytes_per_checksum: u32) -> Result<()> {
    let (data_file, sums_file) = write_at(paths, 0, data, bytes_per_checksum)?;
    sync_sealed(paths, &data_file, &sums_file)
}

/// `append`, returning the block's two files.
fn write_at(
    paths: &BlockPaths,
    offset: u64,
    data: &[u8],
    bytes_per_checksum: u32,
) -> Result<(File, File)> {
    let window = u64::from(bytes_per_checksum);
    if !offset.is_multiple_of(window) {
        return Err(invalid(format!(
            "chunk offset {offset} is not a multiple of the {window}-byte checksum window"
        )));
    }
    if offset == 0 && !paths.dir.exists() {
        private_files::ensure_private_dir(&paths.dir)?;
        // The new container directory must survive a crash with its files.
        sync_dir(&paths.root)?;
    }
    // A (retried) first chunk starts the block over.
    let first = offset == 0;
    let open = |path: &Path| {
        private_files::private_file_options()
            .write(true)
            .create(true)
            .truncate(first)
            .open(path)
    };
    let (data_file, sums_file) = (open(&paths.data)?, open(&paths.sums)?);
    if first {
        sums_file.write_all_at(&bytes_per_checksum.to_be_bytes(), 0)?;
    } else {
        let current = data_file.metadata()?.len();
        if current != offset {
            return Err(invalid(format!(
                "chunk at offset {offset} but the block holds {current} bytes"
            )));
        }
    }
    let mut sums = Vec::with_capacity(data.len().div_ceil(bytes_per_checksum as usize) * 4);
    for window_bytes in data.chunks(bytes_per_checksum as usize) {
        sums.extend_from_slice(&crc32fast::hash(window_bytes).to_be_bytes());
    }
    data_file.write_all_at(data, offset)?;
    sums_file.write_all_at(&sums, HEADER_LEN + offset / window * SUM_LEN)?;
    Ok((data_file, sums_file))
}

/// Makes a fully written block durable before the OM commit names it.
/// Each of the three syncs is needed: the bytes, their checksums (a block
/// whose sums were lost would read as corrupt), and the directory, which
/// holds the two files' names (new files: a crash could otherwise leave
/// synced contents under no name). One directory sync covers both names.
pub(crate) fn seal(paths: &BlockPaths, length: u64) -> Result<()> {
    let data_file = File::open(&paths.data)?;
    let current = data_file.metadata()?.len();
    if current != length {
        return Err(invalid(format!(
            "sealing at {length} bytes but the block holds {current}"
        )));
    }
    sync_sealed(paths, &data_file, &File::open(&paths.sums)?)
}

/// The three syncs of `seal`.
fn sync_sealed(paths: &BlockPaths, data_file: &File, sums_file: &File) -> Result<()> {
    data_file.sync_data()?;
    sums_file.sync_data()?;
    sync_dir(&paths.dir)
}

/// The local id a block file is named after, if `name` is one.
fn local_id(name: &str) -> Option<u64> {
    let stem = name
        .strip_suffix(".block")
        .or_else(|| name.strip_suffix(".crc"))?;
    stem.parse().ok()
}

/// Removes the files of `first` and of every later block id, which no
/// committed record can name (see `EmbeddedOm::first_unallocated_block`).
/// Only the containers from `first`'s on are listed. Returns how many
/// blocks had files.
pub(crate) fn remove_from(containers: &Path, first: BlockId) -> Result<usize> {
    let mut removed = std::collections::BTreeSet::new();
    for entry in fs::read_dir(containers)? {
        let entry = entry?;
        let container = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u64>().ok());
        if container.is_none_or(|c| c < first.container) {
            continue;
        }
        for file in fs::read_dir(entry.path())? {
            let file = file?;
            let Some(local) = file.file_name().to_str().and_then(local_id) else {
                continue;
            };
            if local >= first.local {
                fs::remove_file(file.path())?;
                removed.insert(local);
            }
        }
    }
    Ok(removed.len())
}

pub(crate) fn delete(paths: &BlockPaths) -> Result<()> {
    for path in [&paths.data, &paths.sums] {
        match fs::remove_file(path) {
            Err(e) if e.kind() != ErrorKind::NotFound => return Err(e.into()),
            _ => {}
        }
    }
    Ok(())
}

/// An open block ready for verified reads of a byte range.
pub(crate) struct BlockReader {
    data: File,
    window: u64,
    /// Stored checksums of windows `first_window..`.
    sums: Vec<u32>,
    first_window: u64,
    /// The block's committed length, which bounds the last window.
    length: u64,
}

fn corrupt(block: BlockId, what: &str) -> StorageError {
    StorageError::Corrupt(format!("block {}/{}: {what}", block.container, block.local))
}

fn short_read(block: BlockId, e: std::io::Error) -> StorageError {
    if e.kind() == ErrorKind::UnexpectedEof {
        corrupt(block, "file shorter than its recorded length")
    } else {
        e.into()
    }
}

impl BlockReader {
    /// Opens the block and loads the checksums covering `start..end` only.
    pub(crate) fn open(
        paths: &BlockPaths,
        block: BlockId,
        length: u64,
        start: u64,
        end: u64,
    ) -> Result<Self> {
        let open = |path: &Path| {
            File::open(path).map_err(|e| match e.kind() {
                ErrorKind::NotFound => corrupt(block, "file missing"),
                _ => e.into(),
            })
        };
        let (data, sums_file) = (open(&paths.data)?, open(&paths.sums)?);
        let mut header = [0u8; HEADER_LEN as usize];
        sums_file
            .read_exact_at(&mut header, 0)
            .map_err(|e| short_read(block, e))?;
        let window = u64::from(u32::from_be_bytes(header));
        if window == 0 {
            return Err(corrupt(block, "checksum header is zero"));
        }
        let first_window = start / window;
        let end_window = end.div_ceil(window);
        let count = usize::try_from(end_window - first_window)
            .map_err(|_| corrupt(block, "range too large"))?;
        let mut raw = vec![0u8; count * SUM_LEN as usize];
        sums_file
            .read_exact_at(&mut raw, HEADER_LEN + first_window * SUM_LEN)
            .map_err(|e| short_read(block, e))?;
        let sums = raw
            .chunks_exact(SUM_LEN as usize)
            .map(|c| u32::from_be_bytes([c[0], c[1], c[2], c[3]]))
            .collect();
        Ok(Self {
            data,
            window,
            sums,
            first_window,
            length,
        })
    }

    pub(crate) fn window(&self) -> u64 {
        self.window
    }

    /// Reads and verifies every window `range` touches, in one piece.
    pub(crate) fn read_all(&self, block: BlockId, range: std::ops::Range<u64>) -> Result<Bytes> {
        let first = range.start / self.window;
        let count = range.end.div_ceil(self.window) - first;
        self.read_windows(block, first, count, range)
    }

    /// Reads windows `first..first + count`, verifies each, and returns the
    /// part of them inside `range`.
    pub(crate) fn read_windows(
        &self,
        block: BlockId,
        first: u64,
        count: u64,
        range: std::ops::Range<u64>,
    ) -> Result<Bytes> {
        let start = first * self.window;
        let end = ((first + count) * self.window).min(self.length);
        let len = usize::try_from(end - start).map_err(|_| corrupt(block, "range too large"))?;
        let mut buf = vec![0u8; len];
        self.data
            .read_exact_at(&mut buf, start)
            .map_err(|e| short_read(block, e))?;
        for (i, window_bytes) in buf.chunks(self.window as usize).enumerate() {
            let index = (first - self.first_window) as usize + i;
            let stored = self.sums.get(index).copied();
            if stored != Some(crc32fast::hash(window_bytes)) {
                return Err(corrupt(
                    block,
                    &format!("window {} failed its checksum", first as usize + i),
                ));
            }
        }
        let lo = (range.start.max(start) - start) as usize;
        let hi = (range.end.min(end) - start) as usize;
        Ok(Bytes::from(buf).slice(lo..hi))
    }
}

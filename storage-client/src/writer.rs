//! Streaming object upload: bytes go to the block role as they arrive, and
//! the object becomes visible only at `commit`.

use bytes::Bytes;

use crate::{KeyInfo, NewObject, Result};

/// An open key: blocks allocated with WRITE tokens, nothing visible yet.
/// Dropping it without `commit` leaves only blocks that will be reclaimed.
pub struct ObjectWriter {}

impl ObjectWriter {
    /// Appends bytes to the object.
    pub async fn write(&mut self, _data: Bytes) -> Result<()> {
        todo!()
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        todo!()
    }

    /// Makes the data durable, then makes the object visible atomically
    /// (replacing any previous object under the key) if `obj.condition` holds.
    pub async fn commit(self, _obj: NewObject) -> Result<KeyInfo> {
        todo!()
    }

    /// Gives up the upload; its blocks are reclaimed.
    pub async fn abort(self) {}
}

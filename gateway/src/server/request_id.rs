//! Request ids: 16 upper-case hex characters, unique within a process.

use std::sync::atomic::{AtomicU64, Ordering};

use base64::Engine;
use rand::Rng;

/// Hands out request ids. Each process starts at a random point of the
/// 64-bit space, so ids from replicas behind one load balancer do not collide
/// in practice, and within a process they cannot repeat.
pub struct RequestIds {
    next: AtomicU64,
    host: [u8; 16],
}

/// The two ids S3 sends with every response.
pub struct RequestId {
    /// `x-amz-request-id`.
    pub id: String,
    /// `x-amz-id-2`: names this process as well as the request.
    pub extended: String,
}

impl RequestIds {
    pub fn new() -> Self {
        let mut rng = rand::rng();
        Self {
            next: AtomicU64::new(rng.random()),
            host: rng.random(),
        }
    }

    pub fn next(&self) -> RequestId {
        let value = self.next.fetch_add(1, Ordering::Relaxed);
        let mut extended = [0u8; 24];
        extended[..16].copy_from_slice(&self.host);
        extended[16..].copy_from_slice(&value.to_be_bytes());
        RequestId {
            id: format!("{value:016X}"),
            extended: base64::engine::general_purpose::STANDARD.encode(extended),
        }
    }
}

impl Default for RequestIds {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    #[test]
    fn ids_are_sixteen_hex_characters_and_unique() {
        let ids = RequestIds::new();
        let mut seen = HashSet::new();
        for _ in 0..1000 {
            let id = ids.next();
            assert_eq!(id.id.len(), 16);
            assert!(
                id.id
                    .bytes()
                    .all(|b| b.is_ascii_digit() || (b'A'..=b'F').contains(&b))
            );
            assert!(seen.insert(id.id), "repeated id");
        }
    }
}

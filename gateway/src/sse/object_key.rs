//! The per-object key: a random AES-256 data key and a random segment
//! nonce base, made fresh for every object written encrypted. It is stored
//! only sealed (AES-256-GCM) under a wrapping key: the customer's key for
//! SSE-C, which the gateway never keeps, or a master key of the keyring
//! for SSE-S3, which lives outside the store. Whoever reads the stored
//! bytes and metadata without the wrapping key learns nothing but sizes.
//! What the sealing binds the key to (`aad`, see `Wrapping::aad`) makes a
//! sealed key open only as what its record says it is.

use aes_gcm::aead::{Aead, Payload};
use aes_gcm::{Aes256Gcm, KeyInit, Nonce};
use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use rand::RngCore;

use super::segments::SealError;

pub struct ObjectKey {
    data_key: [u8; 32],
    pub base: [u8; 12],
}

impl ObjectKey {
    pub fn random() -> Self {
        let mut key = Self {
            data_key: [0; 32],
            base: [0; 12],
        };
        let mut rng = rand::rng();
        rng.fill_bytes(&mut key.data_key);
        rng.fill_bytes(&mut key.base);
        key
    }

    pub fn cipher(&self) -> Aes256Gcm {
        Aes256Gcm::new(&self.data_key.into())
    }

    /// The key sealed under `wrapping`, bound to `aad`, as base64 of
    /// nonce, ciphertext and tag.
    pub fn seal(&self, wrapping: &[u8; 32], aad: &[u8]) -> Result<String, SealError> {
        let mut nonce = [0u8; 12];
        rand::rng().fill_bytes(&mut nonce);
        let mut material = [0u8; 44];
        material[..32].copy_from_slice(&self.data_key);
        material[32..].copy_from_slice(&self.base);
        let sealed = Aes256Gcm::new(wrapping.into())
            .encrypt(
                Nonce::from_slice(&nonce),
                Payload {
                    msg: &material,
                    aad,
                },
            )
            .map_err(|_| SealError)?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(STANDARD.encode(out))
    }

    /// Opens what [`ObjectKey::seal`] made; `None` when `wrapping` is not the
    /// key that sealed it or the record (`aad`) was changed.
    pub fn open(sealed: &str, wrapping: &[u8; 32], aad: &[u8]) -> Option<Self> {
        let bytes = STANDARD.decode(sealed).ok()?;
        let (nonce, sealed) = bytes.split_at_checked(12)?;
        let material = Aes256Gcm::new(wrapping.into())
            .decrypt(Nonce::from_slice(nonce), Payload { msg: sealed, aad })
            .ok()?;
        let (data_key, base) = material.split_at_checked(32)?;
        Some(Self {
            data_key: data_key.try_into().ok()?,
            base: base.try_into().ok()?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_only_with_the_wrapping_key_and_binding_it_was_sealed_with() {
        let key = ObjectKey::random();
        let sealed = key.seal(&[1; 32], b"ten").unwrap();
        let opened = ObjectKey::open(&sealed, &[1; 32], b"ten").unwrap();
        assert_eq!((opened.data_key, opened.base), (key.data_key, key.base));
        assert!(ObjectKey::open(&sealed, &[2; 32], b"ten").is_none());
        assert!(ObjectKey::open(&sealed, &[1; 32], b"eleven").is_none());
        assert!(ObjectKey::open("not base64!", &[1; 32], b"ten").is_none());
        assert!(ObjectKey::open("", &[1; 32], b"ten").is_none());
    }

    #[test]
    fn every_object_gets_its_own_key() {
        let (a, b) = (ObjectKey::random(), ObjectKey::random());
        assert_ne!(a.data_key, b.data_key);
        assert_ne!(a.base, b.base);
    }
}

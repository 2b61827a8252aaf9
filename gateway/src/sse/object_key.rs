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
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use super::segments::SealError;

#[derive(Clone)]
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

    /// Part `number`'s own key, derived from this upload key (see
    /// `super::multipart`): HMAC-SHA256 under the upload's data key of a
    /// label, the part number and the part's random salt, once for the
    /// data key and once for the nonce base. Each upload of a part draws a
    /// fresh salt, so no two part streams share a key, and a part opens
    /// only as the part number of the upload it was written for.
    pub fn for_part(&self, number: u16, salt: &[u8]) -> Self {
        let derive = |label: &[u8]| {
            let mut mac = <Hmac<Sha256> as Mac>::new_from_slice(&self.data_key)
                .expect("HMAC takes any key length");
            mac.update(label);
            mac.update(&self.base);
            mac.update(&number.to_be_bytes());
            mac.update(salt);
            mac.finalize().into_bytes()
        };
        let data_key = derive(b"s3gw sse part key v1");
        let base = derive(b"s3gw sse part nonce v1");
        let mut part = Self {
            data_key: [0; 32],
            base: [0; 12],
        };
        part.data_key.copy_from_slice(&data_key);
        part.base.copy_from_slice(&base[..12]);
        part
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
    fn part_keys_are_bound_to_upload_number_and_salt() {
        let upload = ObjectKey::random();
        let part = upload.for_part(3, &[5; 16]);
        let again = upload.for_part(3, &[5; 16]);
        assert_eq!((part.data_key, part.base), (again.data_key, again.base));
        for other in [
            upload.for_part(4, &[5; 16]),
            upload.for_part(3, &[6; 16]),
            ObjectKey::random().for_part(3, &[5; 16]),
        ] {
            assert_ne!(part.data_key, other.data_key);
            assert_ne!(part.base, other.base);
        }
        assert_ne!(part.data_key, upload.data_key);
    }

    #[test]
    fn every_object_gets_its_own_key() {
        let (a, b) = (ObjectKey::random(), ObjectKey::random());
        assert_ne!(a.data_key, b.data_key);
        assert_ne!(a.base, b.base);
    }
}

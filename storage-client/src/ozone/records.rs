//! Sealing the gateway's own records on Ozone (credentials, bucket
//! documents, checksum records) under the records key, which the gateway
//! holds outside Ozone (`ozone_records_key_file`): whoever can write to the
//! cluster must not be able to forge, alter or move a record, nor read a
//! secret out of one.
//!
//! Two subkeys are derived from the records key with HKDF-SHA256, one per
//! purpose: an XChaCha20-Poly1305 key that wraps each stored secret (its
//! associated data names the record and the field, so a wrapped secret
//! opens only where it was written), and an HMAC-SHA256 key for the MAC
//! every record carries in its metadata entry [`MAC_FIELD`]. The MAC covers
//! the record's full identity (volume, bucket, key name) and every
//! `s3gw-` entry of its metadata, names and values, so a record copied to
//! another name, a field added, dropped or changed, or a record written by
//! anyone without the key fails it. A record that fails it is refused
//! ([`Sealer::verify`] answers `None`) and logged at warn, naming the
//! record but nothing in it.
//!
//! Not prevented by a MAC: deleting a record, or putting back an earlier
//! authentic record under the same name. Owner-only ACLs on the records'
//! volume, enforced where the cluster has `ozone.acl.enabled`, are what
//! keep other Ozone users from writing there at all (docs/security.md).

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use chacha20poly1305::aead::{Aead, KeyInit, Payload};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use hmac::{Hmac, Mac};
use rand::RngCore;
use sha2::Sha256;

use crate::{RecordsKey, Result, StorageError};

/// The volume the gateway keeps its records in (see `system_volume.rs`).
pub(super) const RECORDS_VOLUME: &str = "s3gw-records";

/// A records bucket's path (`volume/bucket`) in [`RECORDS_VOLUME`].
pub(super) fn records_bucket(name: &str) -> String {
    format!("{RECORDS_VOLUME}/{name}")
}

type HmacSha256 = Hmac<Sha256>;

/// Metadata entries the gateway writes and reads all start with this; the
/// MAC covers every one of them (entries Ozone adds, such as the ETag, do
/// not start with it and are never read).
pub(super) const FIELD_PREFIX: &str = "s3gw-";
/// The record's MAC, hex.
pub(super) const MAC_FIELD: &str = "s3gw-mac";
/// What a wrapped secret starts with: the format, then base64 of the
/// 24-byte nonce and the ciphertext with its tag.
const SEALED_PREFIX: &str = "v1:";
const NONCE_BYTES: usize = 24;
/// HKDF salt and the two subkeys' `info`: a new format gets new labels.
const KDF_SALT: &[u8] = b"s3-gateway ozone records v1";
const ENCRYPTION_INFO: &[u8] = b"secret wrapping (XChaCha20-Poly1305)";
const MAC_INFO: &[u8] = b"record MAC (HMAC-SHA256)";
/// Domain separation of what is MACed and of a wrapped secret's
/// associated data.
const MAC_LABEL: &[u8] = b"s3gw record v1";
const AAD_LABEL: &[u8] = b"s3gw sealed field v1";

/// Where a record lives: the identity its MAC and wrapped secrets are
/// bound to.
#[derive(Clone, Copy, Debug)]
pub(super) struct RecordId<'a> {
    pub volume: &'a str,
    pub bucket: &'a str,
    pub key: &'a str,
}

impl<'a> RecordId<'a> {
    /// Record `key` of the records bucket at `path` (`volume/bucket`, as
    /// [`records_bucket`] names it).
    pub(super) fn in_bucket(path: &'a str, key: &'a str) -> Self {
        let (volume, bucket) = path.split_once('/').unwrap_or((RECORDS_VOLUME, path));
        Self {
            volume,
            bucket,
            key,
        }
    }
}

/// The records key's two subkeys.
pub(super) struct Sealer {
    cipher: XChaCha20Poly1305,
    mac_key: [u8; 32],
}

impl std::fmt::Debug for Sealer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Sealer(..)")
    }
}

impl Sealer {
    pub(super) fn new(key: &RecordsKey) -> Self {
        let prk = hmac_sha256(KDF_SALT, &[key.expose()]);
        let encryption = hkdf_expand(&prk, ENCRYPTION_INFO);
        let mac_key = hkdf_expand(&prk, MAC_INFO);
        Self {
            cipher: XChaCha20Poly1305::new((&encryption).into()),
            mac_key,
        }
    }

    /// `secret` wrapped for the entry `field` of the record `id`.
    pub(super) fn seal(&self, id: RecordId<'_>, field: &str, secret: &str) -> Result<String> {
        let mut nonce = [0u8; NONCE_BYTES];
        rand::rng().fill_bytes(&mut nonce);
        let aad = associated_data(id, field);
        let sealed = self
            .cipher
            .encrypt(
                XNonce::from_slice(&nonce),
                Payload {
                    msg: secret.as_bytes(),
                    aad: &aad,
                },
            )
            .map_err(|_| StorageError::Internal("cannot wrap a secret".into()))?;
        let mut out = nonce.to_vec();
        out.extend_from_slice(&sealed);
        Ok(format!("{SEALED_PREFIX}{}", BASE64.encode(out)))
    }

    /// The secret [`Self::seal`] wrapped for this very entry; `None` for
    /// anything else (not wrapped, wrapped under another key, for another
    /// record or field, or altered).
    pub(super) fn open(&self, id: RecordId<'_>, field: &str, sealed: &str) -> Option<String> {
        let bytes = BASE64.decode(sealed.strip_prefix(SEALED_PREFIX)?).ok()?;
        if bytes.len() < NONCE_BYTES {
            return None;
        }
        let (nonce, ciphertext) = bytes.split_at(NONCE_BYTES);
        let aad = associated_data(id, field);
        let plain = self
            .cipher
            .decrypt(
                XNonce::from_slice(nonce),
                Payload {
                    msg: ciphertext,
                    aad: &aad,
                },
            )
            .ok()?;
        String::from_utf8(plain).ok()
    }

    /// `fields` (all named `s3gw-...`) with the record's MAC added.
    pub(super) fn sign(
        &self,
        id: RecordId<'_>,
        fields: &[(String, String)],
    ) -> Result<Vec<(String, String)>> {
        let mut named: BTreeMap<&str, &str> = BTreeMap::new();
        for (name, value) in fields {
            let fresh = named.insert(name, value).is_none();
            if !name.starts_with(FIELD_PREFIX) || name == MAC_FIELD || !fresh {
                return Err(StorageError::Internal(format!(
                    "a record field named {name:?} cannot be signed"
                )));
            }
        }
        let tag = hex::encode(self.mac(id, &named).finalize().into_bytes());
        let mut out = fields.to_vec();
        out.push((MAC_FIELD.to_owned(), tag));
        Ok(out)
    }

    /// The record's `s3gw-` fields (the MAC left out) if its MAC holds;
    /// otherwise `None`, logged at warn: the record is not the gateway's
    /// or was changed, and nothing in it may be trusted.
    pub(super) fn verify(
        &self,
        id: RecordId<'_>,
        metadata: &BTreeMap<String, String>,
    ) -> Option<BTreeMap<String, String>> {
        let fields: BTreeMap<&str, &str> = metadata
            .iter()
            .filter(|(name, _)| name.starts_with(FIELD_PREFIX) && name.as_str() != MAC_FIELD)
            .map(|(name, value)| (name.as_str(), value.as_str()))
            .collect();
        let holds = metadata
            .get(MAC_FIELD)
            .and_then(|tag| hex::decode(tag).ok())
            .is_some_and(|tag| self.mac(id, &fields).verify_slice(&tag).is_ok());
        if !holds {
            tracing::warn!(
                volume = id.volume,
                bucket = id.bucket,
                record = id.key,
                "refused a gateway record that fails its MAC (forged, altered, moved, or \
                 written by a release before records were sealed): it is treated as absent"
            );
            return None;
        }
        Some(
            fields
                .into_iter()
                .map(|(name, value)| (name.to_owned(), value.to_owned()))
                .collect(),
        )
    }

    fn mac(&self, id: RecordId<'_>, fields: &BTreeMap<&str, &str>) -> HmacSha256 {
        let mut mac = <HmacSha256 as Mac>::new_from_slice(&self.mac_key)
            .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
        let mut feed = |bytes: &[u8]| {
            mac.update(&(bytes.len() as u64).to_be_bytes());
            mac.update(bytes);
        };
        feed(MAC_LABEL);
        feed(id.volume.as_bytes());
        feed(id.bucket.as_bytes());
        feed(id.key.as_bytes());
        feed(&(fields.len() as u64).to_be_bytes());
        for (name, value) in fields {
            feed(name.as_bytes());
            feed(value.as_bytes());
        }
        mac
    }
}

/// A wrapped secret's associated data: the record and the field,
/// length-prefixed.
fn associated_data(id: RecordId<'_>, field: &str) -> Vec<u8> {
    let mut out = Vec::new();
    for part in [
        AAD_LABEL,
        id.volume.as_bytes(),
        id.bucket.as_bytes(),
        id.key.as_bytes(),
        field.as_bytes(),
    ] {
        out.extend_from_slice(&(part.len() as u64).to_be_bytes());
        out.extend_from_slice(part);
    }
    out
}

fn hmac_sha256(key: &[u8], parts: &[&[u8]]) -> [u8; 32] {
    let mut mac = <HmacSha256 as Mac>::new_from_slice(key)
        .unwrap_or_else(|_| unreachable!("HMAC takes a key of any length"));
    for part in parts {
        mac.update(part);
    }
    mac.finalize().into_bytes().into()
}

/// HKDF-Expand (RFC 5869) for one block: 32 bytes.
fn hkdf_expand(prk: &[u8; 32], info: &[u8]) -> [u8; 32] {
    hmac_sha256(prk, &[info, &[1]])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sealer(key: &str) -> Sealer {
        Sealer::new(&RecordsKey::new(key.as_bytes().to_vec()))
    }

    const ID: RecordId<'static> = RecordId {
        volume: "s3gw-records",
        bucket: "s3gw-credentials",
        key: "AKIAEXAMPLEROOT00001",
    };

    fn stored(fields: Vec<(String, String)>) -> BTreeMap<String, String> {
        let mut metadata: BTreeMap<String, String> = fields.into_iter().collect();
        // Ozone adds its own entries; they are not the record's.
        metadata.insert("ETag".into(), String::new());
        metadata
    }

    fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| ((*n).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn hkdf_matches_rfc_5869_test_case_1() {
        let ikm = [0x0b_u8; 22];
        let salt: Vec<u8> = (0x00..=0x0c).collect();
        let info: Vec<u8> = (0xf0..=0xf9).collect();
        let prk = hmac_sha256(&salt, &[&ikm]);
        assert_eq!(
            hex::encode(prk),
            "077709362c2e32df0ddc3f0dc47bba6390b6c73bb50f9c3122ec844ad7c2b3e5"
        );
        assert_eq!(
            hex::encode(hkdf_expand(&prk, &info)),
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf"
        );
    }

    #[test]
    fn a_signed_record_verifies_and_gives_back_its_fields() {
        let keys = sealer("k".repeat(32).as_str());
        let written = fields(&[("s3gw-name", "root"), ("s3gw-root", "true")]);
        let metadata = stored(keys.sign(ID, &written).unwrap());
        let read = keys.verify(ID, &metadata).expect("verifies");
        assert_eq!(read, written.into_iter().collect());
    }

    #[test]
    fn tampered_moved_forged_or_foreign_records_are_refused() {
        let keys = sealer("k".repeat(32).as_str());
        let written = fields(&[("s3gw-name", "root"), ("s3gw-root", "false")]);
        let good = stored(keys.sign(ID, &written).unwrap());

        let mut altered = good.clone();
        altered.insert("s3gw-root".into(), "true".into());
        assert!(keys.verify(ID, &altered).is_none(), "altered value");

        let mut added = good.clone();
        added.insert("s3gw-extra".into(), "x".into());
        assert!(keys.verify(ID, &added).is_none(), "added field");

        let mut dropped = good.clone();
        dropped.remove("s3gw-root");
        assert!(keys.verify(ID, &dropped).is_none(), "dropped field");

        // The same metadata under another name, bucket or volume.
        for moved in [
            RecordId { key: "alice", ..ID },
            RecordId {
                bucket: "s3gw-bucket-documents",
                ..ID
            },
            RecordId {
                volume: "s3v",
                ..ID
            },
        ] {
            assert!(keys.verify(moved, &good).is_none(), "{moved:?}");
        }

        // Written without the key: no MAC, a made-up one, another key's.
        let forged = stored(fields(&[("s3gw-name", "x"), ("s3gw-root", "true")]));
        assert!(keys.verify(ID, &forged).is_none(), "no MAC");
        let mut made_up = forged.clone();
        made_up.insert(MAC_FIELD.into(), "00".repeat(32));
        assert!(keys.verify(ID, &made_up).is_none(), "made-up MAC");
        let other = sealer("o".repeat(32).as_str());
        let foreign = stored(other.sign(ID, &written).unwrap());
        assert!(keys.verify(ID, &foreign).is_none(), "another key's MAC");

        // Entries that are not the record's (Ozone's own) change nothing.
        let mut with_ozones = good.clone();
        with_ozones.insert("gdprEnabled".into(), "true".into());
        assert!(keys.verify(ID, &with_ozones).is_some());
    }

    #[test]
    fn field_boundaries_are_part_of_the_mac() {
        let keys = sealer("k".repeat(32).as_str());
        let a = keys.sign(ID, &fields(&[("s3gw-a", "bc")])).unwrap();
        let metadata = stored(fields(&[("s3gw-ab", "c"), (MAC_FIELD, &a[1].1)]));
        assert!(keys.verify(ID, &metadata).is_none());
    }

    #[test]
    fn refuses_to_sign_fields_it_would_not_read_back() {
        let keys = sealer("k".repeat(32).as_str());
        for bad in [
            fields(&[("other", "x")]),
            fields(&[(MAC_FIELD, "x")]),
            fields(&[("s3gw-a", "1"), ("s3gw-a", "2")]),
        ] {
            assert!(keys.sign(ID, &bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_sealed_secret_opens_only_where_it_was_written() {
        let keys = sealer("k".repeat(32).as_str());
        let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY";
        let sealed = keys.seal(ID, "s3gw-secret", secret).unwrap();
        assert!(!sealed.contains(secret));
        assert!(!sealed.contains("wJalrXUtnFEMI"));
        assert_eq!(
            keys.open(ID, "s3gw-secret", &sealed).as_deref(),
            Some(secret)
        );
        // Two seals of one secret differ (fresh nonce).
        assert_ne!(sealed, keys.seal(ID, "s3gw-secret", secret).unwrap());

        assert_eq!(
            keys.open(RecordId { key: "alice", ..ID }, "s3gw-secret", &sealed),
            None
        );
        assert_eq!(keys.open(ID, "s3gw-name", &sealed), None);
        assert_eq!(
            sealer("o".repeat(32).as_str()).open(ID, "s3gw-secret", &sealed),
            None
        );
        // Any flipped byte, a cut one, or a clear secret.
        let raw = BASE64.decode(&sealed[SEALED_PREFIX.len()..]).unwrap();
        for at in [0, NONCE_BYTES, raw.len() - 1] {
            let mut flipped = raw.clone();
            flipped[at] ^= 1;
            let text = format!("{SEALED_PREFIX}{}", BASE64.encode(flipped));
            assert_eq!(keys.open(ID, "s3gw-secret", &text), None, "byte {at}");
        }
        let cut = format!("{SEALED_PREFIX}{}", BASE64.encode(&raw[..10]));
        assert_eq!(keys.open(ID, "s3gw-secret", &cut), None);
        assert_eq!(keys.open(ID, "s3gw-secret", secret), None);
    }

    #[test]
    fn debug_output_shows_no_key() {
        let keys = sealer("hunter2-hunter2-hunter2-hunter2-");
        assert_eq!(format!("{keys:?}"), "Sealer(..)");
        let key = RecordsKey::new(b"hunter2-hunter2-hunter2-hunter2-".to_vec());
        assert!(!format!("{key:?}").contains("hunter2"));
    }
}

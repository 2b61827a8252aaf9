//! Block tokens, compatible with Ozone's `HDDS_BLOCK_TOKEN`.
//!
//! The OM signs a token per block it hands out (READ on lookup, READ+WRITE
//! on allocation); the DN checks it on every access. The identifier is a
//! protobuf `BlockTokenSecretProto`, the password its HMAC-SHA256 under a
//! rotating symmetric secret key, so a check costs microseconds.

mod hadoop;
mod keys;
mod protobuf;

use hmac::{Hmac, Mac};
use sha2::Sha256;
use uuid::Uuid;

pub use keys::{KeyRing, SecretKey};

use crate::{BlockId, BlockToken, Result, StorageError};
use protobuf::{Decoder, Encoder, Value};

/// The token kind Ozone datanodes expect.
pub const BLOCK_TOKEN_KIND: &str = "HDDS_BLOCK_TOKEN";

impl BlockToken {
    /// Hadoop's `Token.encodeToUrlString`: the `encodedToken` a DN accepts.
    pub fn encode_url(&self) -> String {
        hadoop::encode_url(&hadoop::TokenParts {
            identifier: &self.identifier,
            password: &self.password,
            kind: &self.kind,
            service: &self.service,
        })
    }

    pub fn decode_url(encoded: &str) -> Result<Self> {
        let parts = hadoop::decode_url(encoded).map_err(malformed)?;
        Ok(Self {
            identifier: parts.identifier,
            password: parts.password,
            kind: parts.kind,
            service: parts.service,
        })
    }
}

/// What a token allows (`BlockTokenSecretProto.AccessModeProto`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AccessMode {
    Read = 1,
    Write = 2,
    Copy = 3,
    Delete = 4,
}

impl AccessMode {
    fn from_wire(value: u64) -> Option<Self> {
        match value {
            1 => Some(Self::Read),
            2 => Some(Self::Write),
            3 => Some(Self::Copy),
            4 => Some(Self::Delete),
            _ => None,
        }
    }
}

/// The decoded `BlockTokenSecretProto`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TokenIdentifier {
    pub owner: String,
    pub block: BlockId,
    /// Milliseconds since the Unix epoch.
    pub expiry_ms: u64,
    pub om_cert_serial: String,
    pub modes: Vec<AccessMode>,
    /// The token grants access to bytes `0..max_length` of the block.
    pub max_length: u64,
    pub secret_key_id: Uuid,
}

/// Ozone's block id string, used both inside the identifier and as the service.
pub fn block_service(block: BlockId) -> String {
    format!("conID: {} locID: {}", block.container, block.local)
}

fn parse_block_service(text: &str) -> Option<BlockId> {
    let rest = text.strip_prefix("conID: ")?;
    let (container, local) = rest.split_once(" locID: ")?;
    Some(BlockId {
        container: container.parse().ok()?,
        local: local.parse().ok()?,
    })
}

fn malformed(reason: String) -> StorageError {
    StorageError::TokenRefused(format!("malformed token: {reason}"))
}

impl TokenIdentifier {
    pub fn encode(&self) -> Vec<u8> {
        let mut enc = Encoder::default();
        enc.bytes(1, self.owner.as_bytes());
        enc.bytes(2, block_service(self.block).as_bytes());
        enc.uint64(3, self.expiry_ms);
        // Ozone omits an empty serial, and a datanode verifies the
        // signature over the identifier as Java re-serialises it.
        if !self.om_cert_serial.is_empty() {
            enc.bytes(4, self.om_cert_serial.as_bytes());
        }
        for mode in &self.modes {
            enc.uint64(5, *mode as u64);
        }
        enc.uint64(6, self.max_length);
        let (most, least) = self.secret_key_id.as_u64_pair();
        let mut uuid = Encoder::default();
        uuid.int64(1, most as i64);
        uuid.int64(2, least as i64);
        enc.bytes(7, &uuid.finish());
        enc.finish()
    }

    pub fn decode(bytes: &[u8]) -> Result<Self> {
        Self::decode_fields(bytes).map_err(malformed)
    }

    fn decode_fields(bytes: &[u8]) -> Result<Self, String> {
        let text = |b: &[u8]| String::from_utf8(b.to_vec()).map_err(|_| "string not UTF-8");
        let mut owner = String::new();
        let mut block = None;
        let mut expiry_ms = None;
        let mut om_cert_serial = String::new();
        let mut modes = Vec::new();
        let mut max_length = 0;
        let mut secret_key_id = None;
        let mut dec = Decoder::new(bytes);
        while let Some((field, value)) = dec.next_field()? {
            match (field, value) {
                (1, Value::Bytes(b)) => owner = text(b)?,
                (2, Value::Bytes(b)) => {
                    block = Some(parse_block_service(&text(b)?).ok_or("bad blockId")?);
                }
                (3, Value::Varint(v)) => expiry_ms = Some(v),
                (4, Value::Bytes(b)) => om_cert_serial = text(b)?,
                (5, Value::Varint(v)) => modes.extend(AccessMode::from_wire(v)),
                // Accept the packed form too, as any protobuf parser must.
                (5, Value::Bytes(b)) => modes.extend(
                    Decoder::packed_varints(b)?
                        .into_iter()
                        .filter_map(AccessMode::from_wire),
                ),
                (6, Value::Varint(v)) => max_length = v,
                (7, Value::Bytes(b)) => secret_key_id = Some(decode_uuid(b)?),
                _ => {}
            }
        }
        Ok(Self {
            owner,
            block: block.ok_or("no blockId")?,
            expiry_ms: expiry_ms.ok_or("no expiryDate")?,
            om_cert_serial,
            modes,
            max_length,
            secret_key_id: secret_key_id.ok_or("no secretKeyId")?,
        })
    }
}

fn decode_uuid(bytes: &[u8]) -> Result<Uuid, String> {
    let (mut most, mut least) = (0u64, 0u64);
    let mut dec = Decoder::new(bytes);
    while let Some((field, value)) = dec.next_field()? {
        match (field, value) {
            (1, Value::Varint(v)) => most = v,
            (2, Value::Varint(v)) => least = v,
            _ => {}
        }
    }
    Ok(Uuid::from_u64_pair(most, least))
}

fn mac(key: &SecretKey) -> Hmac<Sha256> {
    // HMAC accepts keys of any length, so this cannot fail.
    <Hmac<Sha256> as Mac>::new_from_slice(key.bytes()).expect("HMAC takes any key length")
}

/// Signs a token for `block` with `key`.
pub fn issue(
    key: &SecretKey,
    owner: &str,
    block: BlockId,
    modes: &[AccessMode],
    max_length: u64,
    expiry_ms: u64,
) -> BlockToken {
    let identifier = TokenIdentifier {
        owner: owner.to_owned(),
        block,
        expiry_ms,
        om_cert_serial: String::new(),
        modes: modes.to_vec(),
        max_length,
        secret_key_id: key.id(),
    }
    .encode();
    let mut mac = mac(key);
    mac.update(&identifier);
    BlockToken {
        password: mac.finalize().into_bytes().to_vec(),
        identifier,
        kind: BLOCK_TOKEN_KIND.to_owned(),
        service: block_service(block),
    }
}

/// What a DN is about to do, for [`verify`].
#[derive(Clone, Copy, Debug)]
pub struct Access {
    pub block: BlockId,
    pub mode: AccessMode,
    /// One past the last byte of the block touched.
    pub end: u64,
}

/// The DN's check, in Ozone's order: decode, find the secret key, key not
/// expired, HMAC, token not expired, block, mode (and length).
pub fn verify(
    keys: &KeyRing,
    token: Option<&BlockToken>,
    access: Access,
    now_ms: u64,
) -> Result<TokenIdentifier> {
    let refuse = |reason: &str| Err(StorageError::TokenRefused(reason.to_owned()));
    let Some(token) = token else {
        return refuse("no block token");
    };
    if token.kind != BLOCK_TOKEN_KIND {
        return refuse("not a block token");
    }
    let id = TokenIdentifier::decode(&token.identifier)?;
    let Some(key) = keys.get(id.secret_key_id) else {
        return refuse("unknown secret key");
    };
    if key.expires_ms() <= now_ms {
        return refuse("secret key expired");
    }
    let mut mac = mac(&key);
    mac.update(&token.identifier);
    // `verify_slice` compares in constant time.
    if mac.verify_slice(&token.password).is_err() {
        return refuse("signature does not match");
    }
    if id.expiry_ms <= now_ms {
        return refuse("token expired");
    }
    if id.block != access.block || token.service != block_service(access.block) {
        return refuse("token is for another block");
    }
    if !id.modes.contains(&access.mode) {
        return refuse("token does not allow this access mode");
    }
    if access.end > id.max_length {
        return refuse("access beyond the token's length");
    }
    Ok(id)
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: u64 = 1_800_000_000_000;
    const BLOCK: BlockId = BlockId {
        container: 3,
        local: 42,
    };

    fn ring() -> (KeyRing, SecretKey) {
        let key = SecretKey::generate(NOW - 1000, NOW + 100_000);
        (KeyRing::new(vec![key.clone()]), key)
    }

    fn read(end: u64) -> Access {
        Access {
            block: BLOCK,
            mode: AccessMode::Read,
            end,
        }
    }

    fn refusal(result: Result<TokenIdentifier>) -> String {
        match result {
            Err(StorageError::TokenRefused(reason)) => reason,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn identifier_round_trips() {
        let id = TokenIdentifier {
            owner: "alice".into(),
            block: BLOCK,
            expiry_ms: NOW,
            om_cert_serial: "7".into(),
            modes: vec![AccessMode::Read, AccessMode::Write],
            max_length: 1 << 28,
            secret_key_id: Uuid::from_u64_pair(u64::MAX, 5),
        };
        assert_eq!(TokenIdentifier::decode(&id.encode()).unwrap(), id);
    }

    #[test]
    fn identifier_uses_ozone_field_numbers() {
        let key = SecretKey::generate(NOW, NOW + 1);
        let token = issue(&key, "o", BLOCK, &[AccessMode::Read], 9, 10);
        // ownerId=1 "o", then blockId=2 as Ozone's string form.
        assert_eq!(&token.identifier[..3], &[0x0a, 1, b'o']);
        let service = b"conID: 3 locID: 42";
        assert_eq!(token.identifier[3], 0x12);
        assert_eq!(&token.identifier[5..5 + service.len()], service);
        assert_eq!(token.service, "conID: 3 locID: 42");
        assert_eq!(token.kind, "HDDS_BLOCK_TOKEN");
    }

    #[test]
    fn url_encoding_round_trips() {
        let (_, key) = ring();
        let token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW + 10);
        assert_eq!(BlockToken::decode_url(&token.encode_url()).unwrap(), token);
    }

    #[test]
    fn accepts_a_valid_token() {
        let (ring, key) = ring();
        let token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW + 10);
        let id = verify(&ring, Some(&token), read(100), NOW).unwrap();
        assert_eq!(id.owner, "alice");
    }

    #[test]
    fn refuses_a_missing_token() {
        let (ring, _) = ring();
        assert_eq!(refusal(verify(&ring, None, read(1), NOW)), "no block token");
    }

    #[test]
    fn refuses_a_forged_token() {
        let (ring, key) = ring();
        let mut token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW + 10);
        token.password[0] ^= 1;
        assert_eq!(
            refusal(verify(&ring, Some(&token), read(1), NOW)),
            "signature does not match"
        );
    }

    #[test]
    fn refuses_an_identifier_changed_after_signing() {
        let (ring, key) = ring();
        let token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW + 10);
        let mut id = TokenIdentifier::decode(&token.identifier).unwrap();
        id.modes.push(AccessMode::Write);
        let tampered = BlockToken {
            identifier: id.encode(),
            ..token
        };
        assert_eq!(
            refusal(verify(&ring, Some(&tampered), read(1), NOW)),
            "signature does not match"
        );
    }

    #[test]
    fn refuses_an_unknown_secret_key() {
        let (ring, _) = ring();
        let stranger = SecretKey::generate(NOW, NOW + 100_000);
        let token = issue(
            &stranger,
            "alice",
            BLOCK,
            &[AccessMode::Read],
            100,
            NOW + 10,
        );
        assert_eq!(
            refusal(verify(&ring, Some(&token), read(1), NOW)),
            "unknown secret key"
        );
    }

    #[test]
    fn refuses_an_expired_secret_key() {
        let key = SecretKey::generate(NOW - 10, NOW - 1);
        let ring = KeyRing::new(vec![key.clone()]);
        let token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW + 10);
        assert_eq!(
            refusal(verify(&ring, Some(&token), read(1), NOW)),
            "secret key expired"
        );
    }

    #[test]
    fn refuses_an_expired_token() {
        let (ring, key) = ring();
        let token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW);
        assert_eq!(
            refusal(verify(&ring, Some(&token), read(1), NOW)),
            "token expired"
        );
    }

    #[test]
    fn refuses_a_token_for_another_block() {
        let (ring, key) = ring();
        let other = BlockId {
            container: 3,
            local: 43,
        };
        let token = issue(&key, "alice", other, &[AccessMode::Read], 100, NOW + 10);
        assert_eq!(
            refusal(verify(&ring, Some(&token), read(1), NOW)),
            "token is for another block"
        );
    }

    #[test]
    fn refuses_the_wrong_mode() {
        let (ring, key) = ring();
        let token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW + 10);
        let write = Access {
            mode: AccessMode::Write,
            ..read(1)
        };
        assert_eq!(
            refusal(verify(&ring, Some(&token), write, NOW)),
            "token does not allow this access mode"
        );
    }

    #[test]
    fn refuses_access_beyond_max_length() {
        let (ring, key) = ring();
        let token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW + 10);
        assert_eq!(
            refusal(verify(&ring, Some(&token), read(101), NOW)),
            "access beyond the token's length"
        );
    }

    #[test]
    fn refuses_garbage_identifier() {
        let (ring, key) = ring();
        let mut token = issue(&key, "alice", BLOCK, &[AccessMode::Read], 100, NOW + 10);
        token.identifier = vec![0xff; 3];
        assert!(refusal(verify(&ring, Some(&token), read(1), NOW)).starts_with("malformed"));
    }
}

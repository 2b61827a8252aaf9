//! The block-token decoders a datanode runs on every access: the URL form
//! (Hadoop `Token.encodeToUrlString`), the identifier protobuf, and
//! `verify`. Checked: what decodes re-encodes to the same token, and a
//! token accepted for a block is byte for byte the one issued for it.
#![no_main]

use std::sync::LazyLock;

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use storage_client::fuzzing::{
    Access, AccessMode, KeyRing, SecretKey, TokenIdentifier, issue, verify,
};
use storage_client::{BlockId, BlockToken};

const NOW_MS: u64 = 1_700_000_000_000;
const BLOCK: BlockId = BlockId {
    container: 7,
    local: 42,
};

static KEY: LazyLock<SecretKey> =
    LazyLock::new(|| SecretKey::new(uuid::Uuid::from_u128(1), 0, u64::MAX, [9; 32]));
static ISSUED: LazyLock<BlockToken> = LazyLock::new(|| {
    issue(
        &KEY,
        "owner",
        BLOCK,
        &[AccessMode::Read],
        4096,
        NOW_MS + 60_000,
    )
});

#[derive(Arbitrary, Debug)]
enum Input {
    Url(String),
    Identifier(Vec<u8>),
    /// The issued token with some of its bytes changed.
    Tampered {
        identifier: Vec<(u8, u8)>,
        password: Vec<(u8, u8)>,
        service: Option<String>,
    },
}

fuzz_target!(|input: Input| {
    match input {
        Input::Url(encoded) => {
            if let Ok(token) = BlockToken::decode_url(&encoded) {
                assert_eq!(
                    BlockToken::decode_url(&token.encode_url()).ok(),
                    Some(token)
                );
            }
        }
        Input::Identifier(bytes) => {
            if let Ok(id) = TokenIdentifier::decode(&bytes) {
                assert_eq!(TokenIdentifier::decode(&id.encode()).ok(), Some(id));
            }
        }
        Input::Tampered {
            identifier,
            password,
            service,
        } => {
            let mut token = ISSUED.clone();
            tamper(&mut token.identifier, &identifier);
            tamper(&mut token.password, &password);
            if let Some(service) = service {
                token.service = service;
            }
            let keys = KeyRing::default();
            keys.replace(vec![KEY.clone()]);
            let access = Access {
                block: BLOCK,
                mode: AccessMode::Read,
                end: 4096,
            };
            if verify(&keys, Some(&token), access, NOW_MS).is_ok() {
                assert_eq!(token.identifier, ISSUED.identifier);
                assert_eq!(token.password, ISSUED.password);
            }
        }
    }
});

fn tamper(bytes: &mut [u8], changes: &[(u8, u8)]) {
    if bytes.is_empty() {
        return;
    }
    for &(at, xor) in changes {
        let at = usize::from(at) % bytes.len();
        bytes[at] ^= xor;
    }
}

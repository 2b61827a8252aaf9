//! Checks the encoders and decoders against `hadoop-vectors.txt`, which the
//! real Hadoop/Ozone classes wrote (`conformance-tests/ozone/token-vectors`).
//! The file's header documents the record format.

use uuid::Uuid;

use super::{TokenParts, decode_url, encode_url, read_vlong, write_vlong};
use crate::BlockId;
use crate::BlockToken;
use crate::token::{AccessMode, SecretKey, TokenIdentifier, issue};

const VECTORS: &str = include_str!("hadoop-vectors.txt");

/// One `KIND key=value ...` line.
struct Record {
    kind: String,
    fields: Vec<(String, String)>,
}

impl Record {
    fn get(&self, key: &str) -> &str {
        self.fields.iter().find(|(k, _)| k == key).map_or_else(
            || panic!("{} record without {key}", self.kind),
            |(_, v)| v.as_str(),
        )
    }

    fn name(&self) -> &str {
        self.get("name")
    }

    fn bytes(&self, key: &str) -> Vec<u8> {
        hex::decode(self.get(key))
            .unwrap_or_else(|e| panic!("{}: bad hex in {key}: {e}", self.name()))
    }

    fn text(&self, key: &str) -> String {
        String::from_utf8(self.bytes(key))
            .unwrap_or_else(|_| panic!("{}: {key} not UTF-8", self.name()))
    }

    fn number<T: std::str::FromStr>(&self, key: &str) -> T {
        self.get(key)
            .parse()
            .unwrap_or_else(|_| panic!("{}: bad number in {key}", self.name()))
    }
}

fn records(kind: &str) -> Vec<Record> {
    let all: Vec<Record> = VECTORS
        .lines()
        .filter(|line| !line.starts_with('#') && !line.trim().is_empty())
        .map(|line| {
            let mut words = line.split_whitespace();
            let kind = words.next().unwrap_or_default().to_owned();
            let fields = words
                .map(|word| {
                    let (k, v) = word
                        .split_once('=')
                        .unwrap_or_else(|| panic!("not key=value: {word}"));
                    (k.to_owned(), v.to_owned())
                })
                .collect();
            Record { kind, fields }
        })
        .collect();
    for record in &all {
        assert!(
            ["vint", "token", "block", "reject"].contains(&record.kind.as_str()),
            "unknown record kind {}",
            record.kind
        );
    }
    let wanted: Vec<Record> = all.into_iter().filter(|r| r.kind == kind).collect();
    assert!(!wanted.is_empty(), "no {kind} records in the vector file");
    wanted
}

#[test]
fn vints_match_writable_utils() {
    for record in records("vint") {
        let value: i64 = record.number("value");
        let expected = record.bytes("hex");
        let mut written = Vec::new();
        write_vlong(&mut written, value);
        assert_eq!(written, expected, "writeVLong({value})");
        let mut input = expected.as_slice();
        assert_eq!(read_vlong(&mut input), Ok(value), "readVLong of {value}");
        assert!(input.is_empty(), "readVLong of {value} left bytes");
    }
}

/// Both plain tokens and block tokens carry the four parts and the URL form.
fn check_token_parts(record: &Record) {
    let name = record.name();
    let identifier = record.bytes("identifier");
    let password = record.bytes("password");
    let kind = record.text("kind");
    let service = record.text("service");
    let url = record.get("url");
    let parts = TokenParts {
        identifier: &identifier,
        password: &password,
        kind: &kind,
        service: &service,
    };
    assert_eq!(encode_url(&parts), url, "{name}: encodeToUrlString");
    let decoded = decode_url(url).unwrap_or_else(|e| panic!("{name}: decode failed: {e}"));
    assert_eq!(decoded.identifier, identifier, "{name}: identifier");
    assert_eq!(decoded.password, password, "{name}: password");
    assert_eq!(decoded.kind, kind, "{name}: kind");
    assert_eq!(decoded.service, service, "{name}: service");
}

#[test]
fn tokens_match_encode_to_url_string() {
    for record in records("token").iter().chain(&records("block")) {
        check_token_parts(record);
    }
}

fn access_mode(name: &str) -> AccessMode {
    match name {
        "READ" => AccessMode::Read,
        "WRITE" => AccessMode::Write,
        "COPY" => AccessMode::Copy,
        "DELETE" => AccessMode::Delete,
        other => panic!("unknown access mode {other}"),
    }
}

#[test]
fn block_tokens_match_ozone_secret_manager() {
    for record in records("block") {
        let name = record.name();
        let block = BlockId {
            container: record.number("container"),
            local: record.number("local"),
        };
        let modes: Vec<AccessMode> = record
            .get("modes")
            .split(',')
            .filter(|m| !m.is_empty())
            .map(access_mode)
            .collect();
        let expected_id = TokenIdentifier {
            owner: record.text("owner"),
            block,
            expiry_ms: record.number("expiry"),
            om_cert_serial: String::new(),
            modes: modes.clone(),
            max_length: record.number("maxlength"),
            secret_key_id: record.number::<Uuid>("keyid"),
        };
        let identifier = record.bytes("identifier");
        assert_eq!(
            TokenIdentifier::decode(&identifier).ok().as_ref(),
            Some(&expected_id),
            "{name}: decoding Ozone's identifier"
        );

        let secret: [u8; 32] = record
            .bytes("secret")
            .try_into()
            .unwrap_or_else(|_| panic!("{name}: secret is not 32 bytes"));
        let key = SecretKey::new(expected_id.secret_key_id, 0, 0, secret);
        let issued = issue(
            &key,
            &expected_id.owner,
            block,
            &modes,
            expected_id.max_length,
            expected_id.expiry_ms,
        );
        let expected = BlockToken {
            identifier,
            password: record.bytes("password"),
            kind: record.text("kind"),
            service: record.text("service"),
        };
        // Ozone's DN re-serialises the identifier before checking the HMAC,
        // so the bytes must match exactly, not just decode alike.
        assert_eq!(
            hex::encode(&issued.identifier),
            hex::encode(&expected.identifier),
            "{name}: identifier bytes as OzoneBlockTokenIdentifier.getBytes() writes them"
        );
        assert_eq!(issued, expected, "{name}: token as Ozone's OM signs it");
        assert_eq!(issued.encode_url(), record.get("url"), "{name}: URL form");
    }
}

#[test]
fn urls_hadoop_rejects_are_rejected() {
    for record in records("reject") {
        assert!(
            decode_url(record.get("url")).is_err(),
            "{}: Hadoop fails with {}, we accepted it",
            record.name(),
            record.get("java")
        );
    }
}

//! Hadoop's `Writable` encoding of a token, as `Token.encodeToUrlString`
//! produces it: the form Ozone datanodes accept in `encodedToken`.
//!
//! Hadoop's `WritableUtils.writeVInt` is not a protobuf varint: values in
//! -112..=127 take one byte; anything else is a first byte giving the sign
//! and the number of big-endian bytes that follow.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;

pub(crate) fn write_vlong(out: &mut Vec<u8>, value: i64) {
    if (-112..=127).contains(&value) {
        out.push(value as u8);
        return;
    }
    let (magnitude, mut marker) = if value < 0 {
        (!value, -120i64)
    } else {
        (value, -112i64)
    };
    let byte_count = 8 - (magnitude.leading_zeros() / 8) as usize;
    marker -= byte_count as i64;
    out.push(marker as u8);
    out.extend_from_slice(&magnitude.to_be_bytes()[8 - byte_count..]);
}

pub(crate) fn read_vlong(input: &mut &[u8]) -> Result<i64, String> {
    let (&first, rest) = input.split_first().ok_or("truncated vint")?;
    *input = rest;
    let first = first as i8;
    if first >= -112 {
        return Ok(i64::from(first));
    }
    let negative = first < -120;
    let byte_count = if negative {
        usize::from((-120 - first) as u8)
    } else {
        usize::from((-112 - first) as u8)
    };
    if byte_count > input.len() {
        return Err("truncated vint".into());
    }
    let (digits, rest) = input.split_at(byte_count);
    *input = rest;
    let magnitude = digits
        .iter()
        .fold(0i64, |acc, &b| (acc << 8) | i64::from(b));
    Ok(if negative { !magnitude } else { magnitude })
}

fn write_bytes(out: &mut Vec<u8>, bytes: &[u8]) {
    write_vlong(out, bytes.len() as i64);
    out.extend_from_slice(bytes);
}

fn read_bytes<'a>(input: &mut &'a [u8]) -> Result<&'a [u8], String> {
    let len = read_vlong(input)?;
    let len = usize::try_from(len).map_err(|_| "negative length")?;
    if len > input.len() {
        return Err("truncated field".into());
    }
    let (head, rest) = input.split_at(len);
    *input = rest;
    Ok(head)
}

/// The four parts of a Hadoop token, in `Token.write` order.
pub(crate) struct TokenParts<'a> {
    pub(crate) identifier: &'a [u8],
    pub(crate) password: &'a [u8],
    pub(crate) kind: &'a str,
    pub(crate) service: &'a str,
}

pub(crate) fn encode_url(parts: &TokenParts<'_>) -> String {
    let mut out = Vec::with_capacity(
        parts.identifier.len() + parts.password.len() + parts.kind.len() + parts.service.len() + 8,
    );
    write_bytes(&mut out, parts.identifier);
    write_bytes(&mut out, parts.password);
    // Hadoop `Text` is the same length-prefixed form, holding UTF-8.
    write_bytes(&mut out, parts.kind.as_bytes());
    write_bytes(&mut out, parts.service.as_bytes());
    URL_SAFE_NO_PAD.encode(out)
}

/// Owned parts decoded from a URL string.
pub(crate) struct DecodedToken {
    pub(crate) identifier: Vec<u8>,
    pub(crate) password: Vec<u8>,
    pub(crate) kind: String,
    pub(crate) service: String,
}

pub(crate) fn decode_url(encoded: &str) -> Result<DecodedToken, String> {
    // Hadoop's decoder accepts padded input too; so do we.
    let raw = URL_SAFE_NO_PAD
        .decode(encoded.trim_end_matches('='))
        .map_err(|e| format!("bad base64: {e}"))?;
    let mut input = raw.as_slice();
    let identifier = read_bytes(&mut input)?.to_vec();
    let password = read_bytes(&mut input)?.to_vec();
    let kind = String::from_utf8(read_bytes(&mut input)?.to_vec()).map_err(|_| "kind not UTF-8")?;
    let service =
        String::from_utf8(read_bytes(&mut input)?.to_vec()).map_err(|_| "service not UTF-8")?;
    if !input.is_empty() {
        return Err("trailing bytes after token".into());
    }
    Ok(DecodedToken {
        identifier,
        password,
        kind,
        service,
    })
}

#[cfg(test)]
#[path = "hadoop_vectors.rs"]
mod vectors;

#[cfg(test)]
mod tests {
    use super::*;

    fn encoded(value: i64) -> Vec<u8> {
        let mut out = Vec::new();
        write_vlong(&mut out, value);
        out
    }

    #[test]
    fn vint_matches_hadoop_byte_layout() {
        assert_eq!(encoded(0), [0x00]);
        assert_eq!(encoded(127), [0x7f]);
        assert_eq!(encoded(-112), [0x90]);
        // 128 needs one extra byte: marker -113 (0x8f) then 0x80.
        assert_eq!(encoded(128), [0x8f, 0x80]);
        assert_eq!(encoded(255), [0x8f, 0xff]);
        assert_eq!(encoded(256), [0x8e, 0x01, 0x00]);
        // -113 is stored as its complement 112 with marker -121 (0x87).
        assert_eq!(encoded(-113), [0x87, 0x70]);
    }

    #[test]
    fn vint_round_trips_across_ranges() {
        for value in [
            0,
            1,
            -1,
            127,
            128,
            -112,
            -113,
            255,
            256,
            65_535,
            1 << 31,
            i64::MAX,
            i64::MIN,
        ] {
            let bytes = encoded(value);
            let mut input = bytes.as_slice();
            assert_eq!(read_vlong(&mut input).unwrap(), value);
            assert!(input.is_empty());
        }
    }

    #[test]
    fn url_form_round_trips() {
        let identifier = vec![7u8; 300];
        let parts = TokenParts {
            identifier: &identifier,
            password: b"secret",
            kind: "HDDS_BLOCK_TOKEN",
            service: "conID: 1 locID: 2",
        };
        let url = encode_url(&parts);
        assert!(!url.contains(['=', '+', '/']));
        let back = decode_url(&url).unwrap();
        assert_eq!(back.identifier, identifier);
        assert_eq!(back.password, b"secret");
        assert_eq!(back.kind, "HDDS_BLOCK_TOKEN");
        assert_eq!(back.service, "conID: 1 locID: 2");
    }

    #[test]
    fn truncated_url_form_is_an_error() {
        let url = encode_url(&TokenParts {
            identifier: b"id",
            password: b"pw",
            kind: "k",
            service: "s",
        });
        assert!(decode_url(&url[..url.len() - 2]).is_err());
        assert!(decode_url("!!!").is_err());
    }
}

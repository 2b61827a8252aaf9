//! The aws-chunked decoder in its four modes (unsigned, signed, each with
//! or without trailers). Either raw framing from the fuzzer, or a body
//! encoded as a client would, possibly damaged, pushed in arbitrary pieces.
//! Checked: a signed body never releases a byte its signature does not
//! cover, and an undamaged body decodes to exactly what was encoded.
#![no_main]

use arbitrary::Arbitrary;
use libfuzzer_sys::fuzz_target;
use s3_gateway::auth::fuzzing::{ChunkedMode, decode, encode};

#[derive(Arbitrary, Debug)]
enum Mode {
    Unsigned,
    Signed,
    UnsignedTrailer,
    SignedTrailer,
}

#[derive(Arbitrary, Debug)]
enum Body {
    /// Framing written by the fuzzer, with the declared decoded length.
    Raw { wire: Vec<u8>, decoded_length: u32 },
    /// A client's body, then `damage` (offset, xor) applied to it.
    Encoded {
        chunks: Vec<Vec<u8>>,
        trailers: Vec<(u8, String)>,
        damage: Vec<(u16, u8)>,
    },
}

#[derive(Arbitrary, Debug)]
struct Input {
    mode: Mode,
    body: Body,
    /// Where the body is cut into the pieces the network delivers.
    cuts: Vec<u16>,
}

/// Trailer names the request declares; index 3 is undeclared.
const NAMES: [&str; 4] = [
    "x-amz-checksum-crc32",
    "x-amz-checksum-sha256",
    "x-amz-trailer-signature",
    "x-undeclared",
];

fuzz_target!(|input: Input| {
    let mode = match input.mode {
        Mode::Unsigned => ChunkedMode::Unsigned,
        Mode::Signed => ChunkedMode::Signed,
        Mode::UnsignedTrailer => ChunkedMode::UnsignedTrailer,
        Mode::SignedTrailer => ChunkedMode::SignedTrailer,
    };
    let signed = matches!(mode, ChunkedMode::Signed | ChunkedMode::SignedTrailer);
    let with_trailers = matches!(
        mode,
        ChunkedMode::UnsignedTrailer | ChunkedMode::SignedTrailer
    );
    match input.body {
        Body::Raw {
            wire,
            decoded_length,
        } => {
            let declared: &[&str] = if with_trailers { &NAMES[..2] } else { &[] };
            let cuts = cuts(&input.cuts, wire.len());
            let decoded = decode(mode, declared, decoded_length.into(), &wire, &cuts);
            if decoded.outcome.is_ok() {
                assert_eq!(decoded.data.len() as u64, u64::from(decoded_length));
            }
        }
        Body::Encoded {
            chunks,
            trailers,
            damage,
        } => {
            // Empty chunks would end the body early; clients never send them.
            let chunks: Vec<&[u8]> = chunks
                .iter()
                .map(Vec::as_slice)
                .filter(|c| !c.is_empty())
                .collect();
            // Sorted, as the trailer signature covers them.
            let mut trailers: Vec<(&str, &str)> = trailers
                .iter()
                .map(|(name, value)| (NAMES[usize::from(*name) % NAMES.len()], value.as_str()))
                .collect();
            trailers.sort_unstable();
            // The request declares the known names it sends.
            let mut declared: Vec<&str> = Vec::new();
            if with_trailers {
                for (name, _) in &trailers {
                    if NAMES[..2].contains(name) && !declared.contains(name) {
                        declared.push(name);
                    }
                }
            }
            let expected: Vec<u8> = chunks.concat();
            let mut wire = encode(mode, &chunks, &trailers);
            let damaged = !damage.is_empty() && !wire.is_empty();
            for (offset, xor) in damage {
                let at = usize::from(offset) % wire.len();
                wire[at] ^= xor;
            }
            let cuts = cuts(&input.cuts, wire.len());
            let decoded = decode(mode, &declared, expected.len() as u64, &wire, &cuts);
            if signed {
                assert!(
                    expected.starts_with(&decoded.data),
                    "a signed body released bytes its signatures do not cover"
                );
            }
            let well_formed = trailers.is_empty()
                || (with_trailers
                    && trailers.iter().all(|(name, value)| {
                        NAMES[..2].contains(name)
                            && !value.contains(['\r', '\n'])
                            && value.trim() == *value
                            && http::HeaderValue::from_str(value).is_ok()
                    })
                    && trailers.len() <= 16
                    && trailers
                        .iter()
                        .map(|(n, v)| n.len() + v.len() + 3)
                        .sum::<usize>()
                        < 8 * 1024
                    && !has_duplicates(&trailers));
            if !damaged && well_formed {
                let headers = decoded
                    .outcome
                    .unwrap_or_else(|error| panic!("an undamaged body was refused: {error:?}"));
                assert_eq!(decoded.data, expected);
                assert_eq!(headers.len(), trailers.len());
            }
        }
    }
});

fn cuts(raw: &[u16], len: usize) -> Vec<usize> {
    let mut cuts: Vec<usize> = raw.iter().map(|&c| usize::from(c).min(len)).collect();
    cuts.sort_unstable();
    cuts
}

fn has_duplicates(trailers: &[(&str, &str)]) -> bool {
    trailers
        .iter()
        .enumerate()
        .any(|(i, (name, _))| trailers[..i].iter().any(|(seen, _)| seen == name))
}

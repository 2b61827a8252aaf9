//! PostObject's multipart/form-data reader and POST policy checks: a form
//! body from the fuzzer, cut into arbitrary pieces as the network delivers
//! it, read field by field; a `policy` field is decoded and its conditions
//! checked against the other fields. Checked: the fields before the file
//! never exceed their budget, whatever the pieces.
#![no_main]

use std::time::{Duration, SystemTime};

use arbitrary::Arbitrary;
use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use s3_gateway::ops::fuzzing::read_post_form;

#[derive(Arbitrary, Debug)]
struct Input {
    boundary: String,
    body: Vec<u8>,
    /// Where the body is cut into the pieces the network delivers.
    cuts: Vec<u16>,
    /// Seconds after the epoch the policy's expiration is checked at.
    now: u32,
}

/// What PostObject allows the fields before the file, together.
const FIELDS_BUDGET: usize = 64 * 1024;

fuzz_target!(|input: Input| {
    // The operation takes only such boundaries from the Content-Type.
    if !(1..=70).contains(&input.boundary.len()) {
        return;
    }
    let mut cuts: Vec<usize> = input
        .cuts
        .iter()
        .map(|&cut| usize::from(cut) % (input.body.len() + 1))
        .collect();
    cuts.extend([0, input.body.len()]);
    cuts.sort_unstable();
    let pieces: Vec<Bytes> = cuts
        .windows(2)
        .map(|w| Bytes::copy_from_slice(&input.body[w[0]..w[1]]))
        .collect();
    let now = SystemTime::UNIX_EPOCH + Duration::from_secs(u64::from(input.now));
    // The body reader times out silent clients, so it needs the time driver.
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .expect("a runtime");
    if let Ok((fields, _)) = runtime.block_on(read_post_form(pieces, &input.boundary, now)) {
        let held: usize = fields.iter().skip(1).map(|(_, value)| value.len()).sum();
        assert!(held <= FIELDS_BUDGET, "{held} bytes of fields accepted");
    }
});

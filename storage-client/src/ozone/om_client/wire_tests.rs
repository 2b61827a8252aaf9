//! Every command encodes with the field numbers of Ozone's own protocol.

use prost::Message;

use super::*;

/// The field key of a length-delimited protobuf field, as varint bytes.
fn field_key(field: u32) -> Vec<u8> {
    let mut key = Vec::new();
    prost::encoding::encode_varint(u64::from(field << 3 | 2), &mut key);
    key
}

fn encoded(command: Command) -> Vec<u8> {
    OmRequest {
        command: Some(command),
        ..Default::default()
    }
    .encode_to_vec()
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn commands_use_ozones_field_numbers() {
    let args = || key_args("b", "k");
    let cases = [
        (
            Command::GetKeyInfo(ozone::GetKeyInfoRequest {
                key_args: args(),
                assume_s3_context: None,
            }),
            111,
        ),
        (
            Command::GetObjectTagging(ozone::GetObjectTaggingRequest { key_args: args() }),
            140,
        ),
        (
            Command::PutObjectTagging(ozone::PutObjectTaggingRequest { key_args: args() }),
            141,
        ),
        (
            Command::ListUploads(ozone::ListUploadsRequest::default()),
            83,
        ),
    ];
    for (command, field) in cases {
        assert!(
            contains(&encoded(command), &field_key(field)),
            "field {field}"
        );
    }
}

//! Our datanode client and block-token encoding against a security-on Ozone
//! cluster, whose datanodes check the token of every block command.
//!
//! Run against the dev cluster's secure profile
//! (`conformance-tests/ozone/ozone-dev --profile secure start`):
//! `OZONE_OM_ADDRESS=127.0.0.1:8981 OZONE_DEV_WORK=<its work dir> cargo test -p storage-client --test ozone_secure -- --ignored`.
//!
//! The block and its READ token come from the OM (GetKeyInfo on the key the
//! launcher's readiness probe wrote, `/ozone-dev/probe/key`, whose bytes are
//! in `$OZONE_DEV_WORK/data/client/probe.sent`). The request carries no S3
//! signature: on a security-on cluster the OM's gRPC server serves a request
//! without `s3Authentication` as its own user (see the "Security-on cluster"
//! section of conformance-tests/ozone/README.md); the gateway itself does not
//! work there yet. What is tested is the datanode side: the OM's token,
//! carried by our encoder and datanode client, is accepted; the same token
//! with one byte changed, or none, is refused.

use std::path::PathBuf;

use futures::TryStreamExt;
use storage_client::ozone::dn_client::{DnClient, DnConfig};
use storage_client::ozone::proto::hadoop::ozone::om_request::Command;
use storage_client::ozone::proto::hadoop::ozone::om_response::Answer;
use storage_client::ozone::proto::hadoop::ozone::ozone_manager_service_client::OzoneManagerServiceClient;
use storage_client::ozone::proto::hadoop::ozone::{
    GetKeyInfoRequest, KeyArgs, KeyLocation, OmRequest, Type,
};
use storage_client::ozone::{Datanode, OzoneBlock};
use storage_client::token::BlockToken;
use storage_client::{BlockId, StorageError};

fn env(name: &str) -> String {
    std::env::var(name).unwrap_or_else(|_| panic!("set {name} (see the module documentation)"))
}

/// The probe key's only block as the OM describes it to a reader.
async fn probe_block() -> KeyLocation {
    let channel =
        tonic::transport::Endpoint::from_shared(format!("http://{}", env("OZONE_OM_ADDRESS")))
            .unwrap()
            .connect()
            .await
            .expect("connect to the OM");
    let mut om = OzoneManagerServiceClient::new(channel);
    let request = OmRequest {
        cmd_type: Type::GetKeyInfo as i32,
        client_id: "s3gw-secure-test".into(),
        version: Some(3),
        command: Some(Command::GetKeyInfo(GetKeyInfoRequest {
            key_args: KeyArgs {
                volume_name: "ozone-dev".into(),
                bucket_name: "probe".into(),
                key_name: "key".into(),
                latest_version_location: Some(true),
                ..Default::default()
            },
            assume_s3_context: Some(false),
        })),
        ..Default::default()
    };
    let response = om
        .submit_request(request)
        .await
        .expect("GetKeyInfo")
        .into_inner();
    assert!(response.success(), "GetKeyInfo: {:?}", response.message);
    let Some(Answer::GetKeyInfo(answer)) = response.answer else {
        panic!("GetKeyInfo answered {:?}", response.answer);
    };
    let mut locations = answer
        .key_info
        .expect("keyInfo")
        .key_location_list
        .pop()
        .expect("a location list")
        .key_locations;
    assert_eq!(locations.len(), 1, "the probe key is one block");
    locations.pop().unwrap()
}

fn block(location: &KeyLocation, token: Option<BlockToken>) -> OzoneBlock {
    let pipeline = location.pipeline.as_ref().expect("a pipeline");
    let datanodes = pipeline
        .members
        .iter()
        .map(|member| {
            let port = member
                .ports
                .iter()
                .find(|p| p.name == "STANDALONE")
                .expect("a STANDALONE port")
                .value;
            Datanode {
                uuid: member.uuid.clone().expect("a uuid"),
                address: format!("{}:{port}", member.ip_address),
            }
        })
        .collect();
    let id = &location.block_id.container_block_id;
    OzoneBlock {
        id: BlockId {
            container: id.container_id as u64,
            local: id.local_id as u64,
        },
        commit_sequence_id: location.block_id.block_commit_sequence_id(),
        offset: 0,
        length: location.length,
        token,
        datanodes,
        part_number: None,
        pipeline: None,
    }
}

async fn read(block: &OzoneBlock) -> Result<Vec<u8>, StorageError> {
    let dn = DnClient::new(DnConfig::default());
    let pieces: Vec<_> = dn.read(block, 0..block.length).await?.try_collect().await?;
    Ok(pieces.concat())
}

#[tokio::test]
#[ignore = "needs the secure dev cluster: set OZONE_OM_ADDRESS and OZONE_DEV_WORK, run with --ignored"]
async fn a_secure_datanode_takes_the_oms_token_and_refuses_any_other() {
    let location = probe_block().await;
    let proto = location
        .token
        .clone()
        .expect("a READ token: is security on?");
    let token = BlockToken {
        identifier: proto.identifier,
        password: proto.password,
        kind: proto.kind,
        service: proto.service,
    };
    let written =
        std::fs::read(PathBuf::from(env("OZONE_DEV_WORK")).join("data/client/probe.sent"))
            .expect("the probe's bytes");

    let got = read(&block(&location, Some(token.clone())))
        .await
        .expect("read with the OM's token");
    assert!(got == written, "the datanode served other bytes");

    let mut forged_password = token.clone();
    forged_password.password[0] ^= 1;
    // The password signs the identifier's fields (owner, block, expiry,
    // modes, key id), which the datanode parses and serialises again before
    // it checks the signature: a change must be one of meaning, not of
    // encoding (a non-canonical varint passes). Here: the owner's name,
    // field 1, which Ozone writes first.
    let mut forged_identifier = token.clone();
    assert!(
        forged_identifier.identifier[0] == 0x0a && forged_identifier.identifier[1] > 0,
        "the identifier starts with a non-empty owner"
    );
    forged_identifier.identifier[2] ^= 1;
    for (what, forged) in [
        ("a changed password", Some(forged_password)),
        ("a changed identifier", Some(forged_identifier)),
        ("no token", None),
    ] {
        match read(&block(&location, forged)).await {
            Err(StorageError::TokenRefused(reason)) => {
                assert!(
                    reason.contains("BLOCK_TOKEN_VERIFICATION_FAILED"),
                    "{what}: {reason}"
                );
            }
            other => panic!("{what}: the datanode answered {other:?}"),
        }
    }
}

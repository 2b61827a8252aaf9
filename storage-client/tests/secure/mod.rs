//! The storage suite on a security-on cluster, where the OM checks the S3
//! signature of every request: with `S3GW_OZONE_SYSTEM_SECRET_FILE` set (as
//! `ozone-dev --profile secure env` prints it) the back end gets the
//! system identity's secret from that file, and the identities the suite
//! acts as get fresh secrets in the OM's own store, once per test process.

use storage_client::test_support::proto::hadoop::ozone::om_request::Command;
use storage_client::test_support::proto::hadoop::ozone::om_response::Answer;
use storage_client::test_support::proto::hadoop::ozone::ozone_manager_service_client::OzoneManagerServiceClient;
use storage_client::test_support::proto::hadoop::ozone::{
    GetS3SecretRequest, OmRequest, OmResponse, RevokeS3SecretRequest, Type,
};
use storage_client::test_support::{DnConfig, OmClient, OmConfig, RatisConfig};
use storage_client::{OzoneTls, RecordsKey, SystemSecret};
use tokio::sync::OnceCell;

/// The system identity's secret, and each identity's.
type Secrets = Option<(String, Vec<(String, String)>)>;

static SECRETS: OnceCell<Secrets> = OnceCell::const_new();

/// What the back end signs with: the system identity's secret and those
/// of `identities`; nothing on a cluster without security.
pub async fn secrets(
    om: &str,
    identities: &[&str],
) -> (Option<SystemSecret>, Vec<(String, SystemSecret)>) {
    let secrets = SECRETS
        .get_or_init(|| async {
            let file = std::env::var("S3GW_OZONE_SYSTEM_SECRET_FILE").ok()?;
            // One process, one set of identities: the first caller's.
            let text = std::fs::read_to_string(&file).expect("the system secret file");
            let system = text
                .lines()
                .find_map(|line| line.trim().strip_prefix("awsSecret="))
                .expect("an awsSecret= line, as `ozone s3 getsecret` prints");
            let mut issued = Vec::new();
            for id in identities {
                issued.push((id.to_string(), fresh_secret(om, id).await));
            }
            Some((system.to_owned(), issued))
        })
        .await
        .clone();
    secrets.map_or((None, Vec::new()), |(system, issued)| {
        let issued = issued
            .into_iter()
            .map(|(id, secret)| (id, SystemSecret::new(secret)))
            .collect();
        (Some(SystemSecret::new(system)), issued)
    })
}

/// The records key: the file `S3GW_OZONE_RECORDS_KEY_FILE` names (as
/// `ozone-dev env` prints it), else a fixed one for tests.
#[allow(dead_code, reason = "not every test binary asks")]
pub fn records_key() -> RecordsKey {
    let key = match std::env::var("S3GW_OZONE_RECORDS_KEY_FILE") {
        Ok(file) => std::fs::read_to_string(&file)
            .expect("the records key file")
            .trim()
            .to_owned(),
        Err(_) => "storage-client tests: a records key of 32+ bytes".to_owned(),
    };
    RecordsKey::new(key.into_bytes())
}

/// The secret `secrets` made for `access_id` in this process, if any.
#[allow(dead_code, reason = "not every test binary asks")]
pub fn secret_of(access_id: &str) -> Option<String> {
    let (_, issued) = SECRETS.get()?.as_ref()?;
    issued
        .iter()
        .find(|(id, _)| id == access_id)
        .map(|(_, secret)| secret.clone())
}

/// TLS to the cluster's servers, on a cluster with gRPC TLS: the files
/// `S3GW_OZONE_TLS_CA_FILE` and `S3GW_OZONE_TLS_SERVER_NAME` name (as
/// `ozone-dev --profile secure-tls env` prints them, the gateway's own
/// settings), else `None`.
#[allow(dead_code, reason = "not every test binary asks")]
pub fn tls() -> Option<OzoneTls> {
    let ca = std::env::var("S3GW_OZONE_TLS_CA_FILE").ok()?;
    let pem = std::fs::read(&ca).expect("the Ozone CA file");
    let name = std::env::var("S3GW_OZONE_TLS_SERVER_NAME").ok();
    Some(OzoneTls::new(pem, name).expect("a PEM CA certificate"))
}

/// A datanode reader's configuration for the cluster under test.
#[allow(dead_code, reason = "not every test binary asks")]
pub fn dn_config() -> DnConfig {
    DnConfig {
        tls: tls(),
        ..DnConfig::default()
    }
}

/// A Ratis writer's configuration for the cluster under test.
#[allow(dead_code, reason = "not every test binary asks")]
pub fn ratis_config() -> RatisConfig {
    RatisConfig {
        tls: tls(),
        ..RatisConfig::default()
    }
}

/// Whether the cluster under test has security on.
#[allow(dead_code, reason = "not every test binary asks")]
pub fn enabled() -> bool {
    std::env::var_os("S3GW_OZONE_SYSTEM_SECRET_FILE").is_some()
}

/// An OM client of `addresses` that signs as the system identity and
/// `identities` on a security-on cluster.
#[allow(dead_code, reason = "not every test binary asks")]
pub async fn om_client(addresses: Vec<String>, identities: &[&str]) -> OmClient {
    let secrets = secrets(&addresses.join(","), identities).await;
    let config = OmConfig {
        tls: tls(),
        ..OmConfig::new(addresses)
    };
    let om = OmClient::new(&config).expect("valid OM addresses");
    match secrets {
        (Some(system), issued) => om.signing_with(system, issued),
        (None, _) => om,
    }
}

/// Drops the access id's secret in the OM and has a new one made. Both
/// unsigned: over gRPC the OM takes the caller to be the access id named
/// (conformance-tests/ozone/README.md, "Security-on cluster").
async fn fresh_secret(om: &str, access_id: &str) -> String {
    let revoke = Command::RevokeS3Secret(RevokeS3SecretRequest {
        kerberos_id: access_id.into(),
    });
    let revoked = unsigned(om, Type::RevokeS3Secret, revoke).await;
    assert!(
        revoked.success(),
        "RevokeS3Secret {access_id}: {:?}",
        revoked.message
    );
    let issue = Command::GetS3Secret(GetS3SecretRequest {
        kerberos_id: access_id.into(),
        create_if_not_exist: Some(true),
    });
    match unsigned(om, Type::GetS3Secret, issue).await.answer {
        Some(Answer::GetS3Secret(answer)) => answer.s3_secret.expect("a secret").aws_secret,
        other => panic!("GetS3Secret {access_id} answered {other:?}"),
    }
}

/// The OM's answer to `request`, whether or not it reports success, or the
/// gRPC status of an exception in the OM. `om` is one gRPC address or a
/// ring's, comma-separated (`OZONE_OM_ADDRESS` on the ha-secure profile):
/// the request goes to each in turn until one is not a follower (a
/// follower refuses with `OMNotLeaderException`, an OM that is down does
/// not connect). With the caller's address in the gRPC headers, as the
/// gateway sends it: without them the OM acts as its own user whatever
/// `s3Authentication` says.
pub async fn submit(om: &str, request: OmRequest) -> Result<OmResponse, tonic::Status> {
    let mut refusal = None;
    for address in om.split(',') {
        let Ok(channel) = endpoint(address).connect().await else {
            continue;
        };
        let mut call = tonic::Request::new(request.clone());
        let headers = call.metadata_mut();
        headers.insert("client_hostname", "localhost".parse().unwrap());
        headers.insert("client_ip_address", "127.0.0.1".parse().unwrap());
        match OzoneManagerServiceClient::new(channel)
            .submit_request(call)
            .await
        {
            Err(status) if status.message().contains("OMNotLeaderException") => {
                refusal = Some(status);
            }
            answer => return answer.map(tonic::Response::into_inner),
        }
    }
    Err(refusal.unwrap_or_else(|| tonic::Status::unavailable(format!("no OM of {om} connects"))))
}

/// The OM's gRPC endpoint at `address`, over TLS on a TLS cluster.
fn endpoint(address: &str) -> tonic::transport::Endpoint {
    let plain = |scheme: &str| {
        tonic::transport::Endpoint::from_shared(format!("{scheme}://{address}"))
            .expect("an OM address is HOST:PORT")
    };
    let Ok(ca) = std::env::var("S3GW_OZONE_TLS_CA_FILE") else {
        return plain("http");
    };
    let pem = std::fs::read(ca).expect("the Ozone CA file");
    let mut tls = tonic::transport::ClientTlsConfig::new()
        .ca_certificate(tonic::transport::Certificate::from_pem(pem));
    if let Ok(name) = std::env::var("S3GW_OZONE_TLS_SERVER_NAME") {
        tls = tls.domain_name(name);
    }
    plain("https").tls_config(tls).expect("a TLS configuration")
}

/// `command`, unsigned.
async fn unsigned(om: &str, cmd: Type, command: Command) -> OmResponse {
    let request = OmRequest {
        cmd_type: cmd as i32,
        client_id: "s3gw-secure-suite".into(),
        version: Some(3),
        command: Some(command),
        ..Default::default()
    };
    submit(om, request).await.expect("an OM answer")
}

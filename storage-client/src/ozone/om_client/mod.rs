//! The Ozone Manager client: every metadata command goes through
//! `hadoop.ozone.OzoneManagerService/submitRequest` on one reused HTTP/2
//! channel per OM, with failover to the next OM when one is down or not the
//! Raft leader.
//!
//! A command is sent again after a failure only where that cannot apply it
//! twice or misreport it: Ozone's gRPC server gives every call a fresh Raft
//! client id, so its retry cache never recognises a resend. The OM itself
//! refuses a commit whose open key, part or upload is gone, so a resent
//! commit cannot be applied twice; but after an attempt that may have been
//! applied, that refusal says nothing about whether ours was, and the
//! client answers `Unavailable` rather than a wrong error (see
//! [`repeat_status`]).
//!
//! Each request names the acting S3 access key in `s3Authentication.accessId`
//! and carries the `client_hostname` / `client_ip_address` gRPC headers: over
//! gRPC the OM has no Hadoop RPC caller, and without both it either fails
//! S3-context lookups or attributes the request to its own process user.
//! On a security-on cluster (see [`OmClient::security_enabled`]) the OM
//! also checks a SigV4 signature under the key's S3 secret from its own
//! store: with a [`Keyring`] every request is signed ([`s3_signature`]).

use std::future::Future;
use std::net::UdpSocket;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use prost::Message;

use tonic::metadata::AsciiMetadataValue;
use tonic::transport::Channel;

use crate::calls::CallTable;
use crate::{Namespace, Result, StorageError};

use super::grpc_tls;
use super::keyring::{Keyring, Signer};
use super::model::OzoneOpenKey;
use super::proto::hadoop::ozone;
use super::s3_signature;
use crate::ozone_tls::OzoneTls;
use ozone::om_request::Command;
use ozone::ozone_manager_service_client::OzoneManagerServiceClient;
use ozone::{KeyArgs, OmRequest, OmResponse, Status, Type};

/// The body of an OM answer if it is the `$variant` one.
macro_rules! answer {
    ($response:expr, $variant:ident) => {
        match $response.answer {
            Some($crate::ozone::proto::hadoop::ozone::om_response::Answer::$variant(body)) => {
                Some(body)
            }
            _ => None,
        }
    };
}
pub(super) use answer;

/// The volume that holds every S3 bucket.
pub const S3_VOLUME: &str = "s3v";

/// The Ozone volume and bucket a bucket path names: `volume/bucket` for a
/// bucket outside [`S3_VOLUME`] (the gateway's records), a bare name for
/// one in it (S3 bucket names have no `/`, and the metadata role never
/// passes one: see `OzoneMetadata::ozone_name`).
pub(super) fn volume_and_bucket(path: &str) -> (&str, &str) {
    path.split_once('/').unwrap_or((S3_VOLUME, path))
}

/// The client protocol version Ozone 2.x clients announce.
const CLIENT_VERSION: u32 = 3;

/// Slots in the call table: OM command numbers are below this (Ozone's
/// highest is 142).
const OM_COMMANDS: usize = 256;

/// OM answers can be large (a listing of 1000 keys with locations); the OM
/// itself allows 128 MiB.
const MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;

/// Connection and retry settings of the OM client.
#[derive(Clone, Debug)]
pub struct OmConfig {
    /// `host:port` of each OM's gRPC server (`ozone.om.grpc.port`, 8981).
    pub addresses: Vec<String>,
    pub connect_timeout: Duration,
    /// Deadline of one attempt of one command.
    pub request_timeout: Duration,
    /// Attempts per command over all OMs before giving up as unavailable.
    pub max_attempts: usize,
    /// Pause before another round over the OMs, so that a leader election
    /// can finish.
    pub retry_backoff: Duration,
    /// Sent as `client_hostname`; this machine's host name when `None`.
    pub client_hostname: Option<String>,
    /// TLS to the OMs, on a cluster with `hdds.grpc.tls.enabled`.
    pub tls: Option<OzoneTls>,
}

impl OmConfig {
    pub fn new(addresses: Vec<String>) -> Self {
        Self {
            addresses,
            connect_timeout: Duration::from_secs(5),
            request_timeout: Duration::from_secs(30),
            max_attempts: 6,
            retry_backoff: Duration::from_millis(500),
            client_hostname: None,
            tls: None,
        }
    }
}

struct OmNode {
    address: String,
    rpc: OzoneManagerServiceClient<Channel>,
    /// Our address as this OM sees it: the local end of a route to it.
    client_ip: AsciiMetadataValue,
    /// The OM's node id in its ring (`om1`), as its last write answer
    /// named it: not-leader answers name the leader by node id, and OMs
    /// sharing a host cannot be told apart by its address.
    node_id: Mutex<Option<String>>,
}

/// A client of one Ozone Manager ring.
pub struct OmClient {
    nodes: Vec<OmNode>,
    /// Index of the OM believed to be the leader.
    leader: AtomicUsize,
    client_id: String,
    client_hostname: AsciiMetadataValue,
    request_timeout: Duration,
    max_attempts: usize,
    retry_backoff: Duration,
    calls: Arc<CallTable>,
    /// The secrets to sign with, on a security-on cluster.
    keyring: Option<Keyring>,
}

/// What one attempt at one OM came to.
enum Attempt {
    /// Boxed: an answer is large next to the other outcomes.
    Done(Result<Box<OmResponse>>),
    /// Try another OM (this one is down or not the leader), preferably
    /// `hint`. With `maybe_applied` the OM may have carried the command out
    /// all the same: the request may have reached it before the answer was
    /// lost, or it was a leader stepping down, which answers not-leader for
    /// commands it had already put in its log (the new leader applies them).
    Failover {
        reason: String,
        hint: Option<usize>,
        maybe_applied: bool,
    },
    /// Ask the same OM again after a pause (it is the leader but not ready).
    Wait(String),
}

impl OmClient {
    /// Sets up one lazily connected channel per OM; nothing is sent yet.
    pub fn new(config: &OmConfig) -> Result<Self> {
        if config.addresses.is_empty() {
            return Err(StorageError::InvalidArgument(
                "no Ozone Manager address given".into(),
            ));
        }
        let nodes = config
            .addresses
            .iter()
            .map(|address| connect(address, config))
            .collect::<Result<Vec<_>>>()?;
        let hostname = config
            .client_hostname
            .clone()
            .unwrap_or_else(local_hostname);
        Ok(Self {
            nodes,
            leader: AtomicUsize::new(0),
            client_id: format!("s3gw-{}", uuid::Uuid::new_v4()),
            client_hostname: ascii_header(&hostname, "localhost"),
            request_timeout: config.request_timeout,
            max_attempts: config.max_attempts.max(1),
            retry_backoff: config.retry_backoff,
            calls: Arc::new(CallTable::new("om", OM_COMMANDS, om_command_name)),
            keyring: None,
        })
    }

    /// Signs every request from now on with the secrets of `keyring`.
    pub(super) fn sign_with(mut self, keyring: Keyring) -> Self {
        self.keyring = Some(keyring);
        self
    }

    /// Signs every request from now on as the system identity or one of
    /// `others` with these secrets, or as an access id whose secret this
    /// client issued.
    #[cfg(feature = "test-support")]
    pub fn signing_with(
        self,
        system: crate::SystemSecret,
        others: Vec<(String, crate::SystemSecret)>,
    ) -> Self {
        // No credential store: a lookup finds nothing that opens.
        let mut key = vec![0u8; crate::RecordsKey::MIN_BYTES];
        rand::RngCore::fill_bytes(&mut rand::rng(), &mut key);
        let place = super::keyring::CredentialRecords {
            bucket: super::records::records_bucket("s3gw-none"),
            sealer: Arc::new(super::records::Sealer::new(&crate::RecordsKey::new(key))),
        };
        let system = (super::keyring::SYSTEM_OWNER, system);
        // Secrets this client issues are remembered for the test's length.
        let kept = Duration::from_secs(3600);
        self.sign_with(Keyring::new(system, others, place, kept, 1000))
    }

    /// Whether the cluster has security on, and so checks signatures: the
    /// OM's service list carries the SCM's CA certificate then, and only
    /// then (`ServiceInfoProvider`). Asked unsigned, which any OM answers.
    pub async fn security_enabled(&self) -> Result<bool> {
        let command = Command::ServiceList(ozone::ServiceListRequest {});
        let response = self.submit("", Type::ServiceList, command).await?;
        Ok(answer!(response, ServiceList).is_some_and(|list| list.ca_certificate.is_some()))
    }

    /// Whether the OM's store holds `secret` for `access_id`: one service
    /// list asked with a signature under it. `AccessDenied` if not.
    pub async fn check_secret(&self, access_id: &str, secret: &str) -> Result<()> {
        let mut request = self.request(
            Type::ServiceList,
            Command::ServiceList(ozone::ServiceListRequest {}),
        );
        request.s3_authentication = Some(s3_signature::sign(
            access_id,
            secret,
            SystemTime::now(),
            &request.encode_to_vec(),
        ));
        let response = self.send_request(Type::ServiceList, request).await?;
        if response.success() {
            Ok(())
        } else {
            Err(failure(response))
        }
    }

    /// Whether requests are signed (the cluster has security on).
    /// Every OM's address, in the order configured.
    pub fn addresses(&self) -> Vec<String> {
        self.nodes.iter().map(|n| n.address.clone()).collect()
    }

    /// The address of the OM believed to lead: the last one that took a
    /// command (the first configured until one has).
    pub fn leader_address(&self) -> &str {
        &self.nodes[self.leader.load(Ordering::Relaxed) % self.nodes.len()].address
    }

    pub(super) fn signs(&self) -> bool {
        self.keyring.is_some()
    }

    /// Remembers the secret of `access_id` (read or made elsewhere), so
    /// that requests by it need no lookup.
    pub(super) async fn remember_secret(&self, access_id: &str, secret: &str) {
        if let Some(keyring) = &self.keyring {
            keyring.remember(access_id, secret).await;
        }
    }

    /// Latency and failures of the commands sent so far.
    pub(crate) fn calls(&self) -> Arc<CallTable> {
        Arc::clone(&self.calls)
    }

    /// Sends one command; a `success=false` answer becomes the matching
    /// [`StorageError`].
    pub(super) async fn submit(
        &self,
        access_id: &str,
        cmd: Type,
        command: Command,
    ) -> Result<OmResponse> {
        let response = self.send(access_id, cmd, command).await?;
        if response.success() {
            Ok(response)
        } else {
            Err(failure(response))
        }
    }

    /// Sends one command, failing over between OMs, and returns the OM's
    /// answer whether or not it reports success.
    async fn send(&self, access_id: &str, cmd: Type, command: Command) -> Result<OmResponse> {
        let mut request = self.request(cmd, command);
        request.s3_authentication = self.authentication(access_id, cmd, &request).await?;
        self.send_request(cmd, request).await
    }

    async fn send_request(&self, cmd: Type, request: OmRequest) -> Result<OmResponse> {
        let command_number = usize::try_from(cmd as i32).unwrap_or(usize::MAX);
        self.calls
            .time(command_number, self.fail_over(cmd, request))
            .await
    }

    fn request(&self, cmd: Type, command: Command) -> OmRequest {
        OmRequest {
            cmd_type: cmd as i32,
            client_id: self.client_id.clone(),
            version: Some(CLIENT_VERSION),
            s3_authentication: None,
            command: Some(command),
            trace_id: None,
        }
    }

    /// The `s3Authentication` of `request` by `access_id`: the access id
    /// alone with security off; with it, signed under the access id's
    /// secret. Two commands go without: ServiceList, asked before the
    /// client knows whether to sign, and, with security on, GetS3Secret,
    /// whose access id has no secret yet (over gRPC the OM takes the
    /// caller to be the access id the command names).
    async fn authentication(
        &self,
        access_id: &str,
        cmd: Type,
        request: &OmRequest,
    ) -> Result<Option<ozone::S3Authentication>> {
        let Some(keyring) = &self.keyring else {
            return Ok((cmd != Type::ServiceList).then(|| ozone::S3Authentication {
                access_id: Some(access_id.to_owned()),
                ..Default::default()
            }));
        };
        if matches!(cmd, Type::ServiceList | Type::GetS3Secret) {
            return Ok(None);
        }
        let signer = match keyring.known(access_id).await {
            Some(signer) => signer,
            None => match self.look_up_secret(keyring, access_id).await {
                Ok(secret) => Signer::Secret(secret),
                Err(StorageError::AccessDenied) => {
                    keyring.remember_as_system(access_id).await;
                    Signer::System
                }
                Err(e) => return Err(e),
            },
        };
        let now = SystemTime::now();
        Ok(Some(match signer {
            Signer::Secret(secret) => {
                s3_signature::sign(access_id, &secret, now, &request.encode_to_vec())
            }
            Signer::Vouched(proof) => (*proof).clone(),
            Signer::System => s3_signature::sign(
                keyring.system_id(),
                &keyring.system_secret(),
                now,
                &request.encode_to_vec(),
            ),
        }))
    }

    /// Whether the OM vouches for `signature` of `string_to_sign` by
    /// `access_id` (a request its client signed under the secret the OM
    /// holds): asked as GetS3VolumeContext carrying them as the request's
    /// own authentication, which is what Ozone's S3 gateway asks first for
    /// each request. Vouched, the signature then signs every command by
    /// `access_id` until a newer one or the credentials' bound replaces it,
    /// and the answer names the volume the key's buckets live in: [`S3_VOLUME`]
    /// (the shared namespace) or, for a tenant's access id (`tenant$user`),
    /// the tenant's. `Ok(None)` for a signature the OM refuses (a wrong
    /// one, an access id it has no secret for: it does not say which).
    pub(super) async fn vouch(
        &self,
        access_id: &str,
        string_to_sign: &str,
        signature: &str,
    ) -> Result<Option<Namespace>> {
        let Some(keyring) = &self.keyring else {
            return Ok(None);
        };
        let proof = ozone::S3Authentication {
            string_to_sign: Some(string_to_sign.to_owned()),
            signature: Some(signature.to_owned()),
            access_id: Some(access_id.to_owned()),
        };
        let mut request = self.request(
            Type::GetS3VolumeContext,
            Command::GetS3VolumeContext(ozone::GetS3VolumeContextRequest {}),
        );
        request.s3_authentication = Some(proof.clone());
        let response = self.send_request(Type::GetS3VolumeContext, request).await?;
        if !response.success() {
            return match failure(response) {
                StorageError::AccessDenied => Ok(None),
                other => Err(other),
            };
        }
        let volume = answer!(response, GetS3VolumeContext)
            .and_then(|context| context.volume_info)
            .map(|volume| volume.volume)
            .ok_or_else(|| missing("GetS3VolumeContext", "volumeInfo"))?;
        let namespace = match volume.as_str() {
            S3_VOLUME => Namespace::Shared,
            tenant if is_volume_name(tenant) => Namespace::Tenant(tenant.into()),
            other => {
                return Err(StorageError::Internal(format!(
                    "the OM named {other:?} as the volume of access key {access_id}, \
                     which is not an Ozone volume name"
                )));
            }
        };
        keyring.remember_vouched(access_id, proof).await;
        Ok(Some(namespace))
    }

    /// The secret of `access_id` from the gateway's credential store, read
    /// as the system identity (whose secret is always known, so this never
    /// recurses twice; boxed because it recurses at all). `AccessDenied`
    /// for an access id without a credential.
    fn look_up_secret<'a>(
        &'a self,
        keyring: &'a Keyring,
        access_id: &'a str,
    ) -> Pin<Box<dyn Future<Output = Result<Arc<str>>> + Send + 'a>> {
        Box::pin(async move {
            let place = keyring.place();
            let key = self
                .get_key_info(keyring.system_id(), &place.bucket, access_id, true)
                .await
                .map_err(|e| match e {
                    StorageError::NoSuchKey => StorageError::AccessDenied,
                    other => other,
                })?;
            // A record that fails its seal is no credential.
            let secret = place
                .read(access_id, &key.metadata)
                .map(|credential| credential.secret_key)
                .filter(|secret| !secret.is_empty())
                .ok_or(StorageError::AccessDenied)?;
            keyring.remember(access_id, &secret).await;
            Ok(Arc::from(secret.as_str()))
        })
    }

    async fn fail_over(&self, cmd: Type, request: OmRequest) -> Result<OmResponse> {
        let mut index = self.leader.load(Ordering::Relaxed) % self.nodes.len();
        let mut last_failure = String::new();
        let mut maybe_applied = false;
        for attempt in 0..self.max_attempts {
            // Pause once every OM has been tried, not between failovers.
            if attempt > 0 && attempt % self.nodes.len() == 0 {
                tokio::time::sleep(self.retry_backoff).await;
            }
            match self.attempt(&self.nodes[index], request.clone()).await {
                Attempt::Done(result) => {
                    self.leader.store(index, Ordering::Relaxed);
                    let response = *result?;
                    self.learn_node_id(index, &response);
                    return settle(cmd, response, maybe_applied, &last_failure);
                }
                Attempt::Failover {
                    reason,
                    hint,
                    maybe_applied: this_one,
                } => {
                    tracing::debug!(om = %self.nodes[index].address, %reason, "OM failover");
                    last_failure = reason;
                    maybe_applied |= this_one;
                    index = hint.unwrap_or((index + 1) % self.nodes.len());
                }
                Attempt::Wait(reason) => {
                    last_failure = reason;
                    tokio::time::sleep(self.retry_backoff).await;
                }
            }
        }
        Err(StorageError::Unavailable(format!(
            "no Ozone Manager answered {cmd:?} after {} attempts: {last_failure}",
            self.max_attempts
        )))
    }

    async fn attempt(&self, node: &OmNode, request: OmRequest) -> Attempt {
        let mut call = tonic::Request::new(request);
        let headers = call.metadata_mut();
        headers.insert("client_hostname", self.client_hostname.clone());
        headers.insert("client_ip_address", node.client_ip.clone());
        let mut rpc = node.rpc.clone();
        match tokio::time::timeout(self.request_timeout, rpc.submit_request(call)).await {
            Ok(Ok(response)) => Attempt::Done(Ok(Box::new(response.into_inner()))),
            Ok(Err(status)) => self.classify(node, status),
            Err(_) => Attempt::Failover {
                reason: format!(
                    "{}: no answer within {:?}",
                    node.address, self.request_timeout
                ),
                hint: None,
                maybe_applied: true,
            },
        }
    }

    /// Remembers which node id the OM at `index` has: a write answer names
    /// the leader that applied it, which is the OM that answered.
    fn learn_node_id(&self, index: usize, response: &OmResponse) {
        if let Some(id) = response.leader_om_node_id.as_deref()
            && let Ok(mut known) = self.nodes[index].node_id.lock()
            && known.as_deref() != Some(id)
        {
            *known = Some(id.to_owned());
        }
    }

    /// Sorts a gRPC failure into retry or give up. The OM reports server
    /// exceptions as INTERNAL with `<exception class>: <message>` as text.
    fn classify(&self, node: &OmNode, status: tonic::Status) -> Attempt {
        let text = status.message();
        let reason = format!("{}: {:?} {text}", node.address, status.code());
        match status.code() {
            tonic::Code::Internal if text.contains("OMNotLeaderException") => Attempt::Failover {
                hint: self.suggested_leader(text),
                reason,
                maybe_applied: true,
            },
            tonic::Code::Internal if text.contains("OMLeaderNotReadyException") => {
                Attempt::Wait(reason)
            }
            tonic::Code::Unavailable
            | tonic::Code::DeadlineExceeded
            | tonic::Code::Cancelled
            | tonic::Code::Unknown => Attempt::Failover {
                maybe_applied: !never_sent(&status),
                reason,
                hint: None,
            },
            _ => Attempt::Done(Err(StorageError::Internal(format!(
                "Ozone Manager {reason}"
            )))),
        }
    }

    /// The OM a not-leader answer names ("Suggested leader is
    /// OM:om2[host:port]"): the one known to have that node id, else the only
    /// one on that host (the port is the OM's Raft or RPC port, never gRPC).
    fn suggested_leader(&self, text: &str) -> Option<usize> {
        let (_, rest) = text.split_once("Suggested leader is OM:")?;
        let (id, rest) = rest.split_once('[')?;
        let by_id = self.nodes.iter().position(|node| {
            node.node_id
                .lock()
                .is_ok_and(|known| known.as_deref() == Some(id))
        });
        if by_id.is_some() {
            return by_id;
        }
        // "host:port", or "host/ip" when the OM names its RPC address.
        let inside = rest.split_once(']')?.0;
        let host = inside.split_once('/').map_or_else(
            || inside.rsplit_once(':').map_or(inside, |(h, _)| h),
            |(h, _)| h,
        );
        let mut on_host = self
            .nodes
            .iter()
            .enumerate()
            .filter(|(_, node)| node.address.rsplit_once(':').map(|(h, _)| h) == Some(host));
        match (on_host.next(), on_host.next()) {
            (Some((index, _)), None) => Some(index),
            _ => None,
        }
    }
}

fn connect(address: &str, config: &OmConfig) -> Result<OmNode> {
    let endpoint = grpc_tls::endpoint(address, config.tls.as_ref(), config.connect_timeout)?;
    let rpc = OzoneManagerServiceClient::new(endpoint.connect_lazy())
        .max_decoding_message_size(MAX_MESSAGE_BYTES)
        .max_encoding_message_size(MAX_MESSAGE_BYTES);
    Ok(OmNode {
        address: address.to_owned(),
        rpc,
        client_ip: ascii_header(&local_ip_towards(address), "127.0.0.1"),
        node_id: Mutex::new(None),
    })
}

/// Whether a failed call certainly never reached the OM: the connection
/// could not be made (tonic reports that as Unavailable "tcp connect
/// error"). Any other transport failure may have come after the OM read
/// the request.
fn never_sent(status: &tonic::Status) -> bool {
    status.code() == tonic::Code::Unavailable && status.message().contains("connect error")
}

/// The OM's `response` to `cmd`, unless it is the refusal of a repeat
/// ([`repeat_status`]) after an attempt that may have been applied: then
/// whether the command took effect is unknown, and the caller is told so.
fn settle(
    cmd: Type,
    response: OmResponse,
    maybe_applied: bool,
    last_failure: &str,
) -> Result<OmResponse> {
    if maybe_applied && repeat_status(cmd) == Some(response.status()) {
        return Err(StorageError::Unavailable(format!(
            "{cmd:?} may have been applied by an attempt whose answer was lost \
             ({last_failure}); sent again, the OM answered {}",
            response.status().as_str_name()
        )));
    }
    Ok(response)
}

/// What the OM answers a command sent again after it was carried out: the
/// open key or part it committed is gone, the upload it completed or
/// aborted is gone, the secret it issued cannot be issued twice. After an
/// attempt that may have been applied this answer cannot say whether ours
/// was, so the command's outcome is unknown. Left out are commands whose
/// repeat refusal is already the answer S3 gives a retry: DeleteKey (a
/// missing key is a successful delete), CreateBucket (the caller tells
/// BucketAlreadyOwnedByYou by the owner), DeleteBucket (NoSuchBucket).
fn repeat_status(cmd: Type) -> Option<Status> {
    match cmd {
        Type::CommitKey | Type::CommitMultipartUpload => Some(Status::KeyNotFound),
        Type::CompleteMultipartUpload | Type::AbortMultipartUpload => {
            Some(Status::NoSuchMultipartUploadError)
        }
        Type::GetS3Secret => Some(Status::S3SecretAlreadyExists),
        _ => None,
    }
}

/// An OM command's name as the call table shows it (`GET_KEY_INFO`).
fn om_command_name(number: usize) -> Option<&'static str> {
    let number = i32::try_from(number).ok()?;
    Type::try_from(number).ok().map(|cmd| cmd.as_str_name())
}

/// The local address the OS would use to reach `address`. Connecting a UDP
/// socket only picks a route; no packet is sent.
fn local_ip_towards(address: &str) -> String {
    UdpSocket::bind("0.0.0.0:0")
        .and_then(|socket| {
            socket.connect(address)?;
            socket.local_addr()
        })
        .map_or_else(|_| "127.0.0.1".into(), |local| local.ip().to_string())
}

fn local_hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .or_else(|_| std::fs::read_to_string("/etc/hostname"))
        .map(|name| name.trim().to_owned())
        .ok()
        .filter(|name| !name.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

fn ascii_header(value: &str, fallback: &'static str) -> AsciiMetadataValue {
    value
        .parse()
        .unwrap_or_else(|_| AsciiMetadataValue::from_static(fallback))
}

/// The request of both ListKeys and ListKeysLight.
fn list_keys_command(bucket: &str, prefix: &str, start_after: &str, count: usize) -> Command {
    let (volume, bucket) = volume_and_bucket(bucket);
    Command::ListKeys(ozone::ListKeysRequest {
        volume_name: volume.into(),
        bucket_name: bucket.into(),
        start_key: non_empty(start_after),
        prefix: non_empty(prefix),
        count: Some(wire_count(count)),
    })
}

/// `bucket` is a [`volume_and_bucket`] path.
pub(super) fn key_args(bucket: &str, key: &str) -> KeyArgs {
    let (volume, bucket) = volume_and_bucket(bucket);
    KeyArgs {
        volume_name: volume.into(),
        bucket_name: bucket.into(),
        key_name: key.into(),
        ..Default::default()
    }
}

/// Key arguments naming an open key (and its upload and part, for a
/// part) and repeating its replication.
pub(super) fn open_key_args(open: &OzoneOpenKey) -> KeyArgs {
    KeyArgs {
        r#type: Some(open.replication.kind),
        factor: Some(open.replication.factor),
        is_multipart_key: open.part.as_ref().map(|_| true),
        multipart_upload_id: open.part.as_ref().map(|p| p.upload_id.clone()),
        multipart_number: open.part.as_ref().map(|p| p.number),
        ..key_args(&open.bucket, &open.key)
    }
}

pub(super) fn non_empty(text: &str) -> Option<String> {
    (!text.is_empty()).then(|| text.to_owned())
}

pub(super) fn wire_count(count: usize) -> i32 {
    i32::try_from(count).unwrap_or(i32::MAX)
}

fn failure(response: OmResponse) -> StorageError {
    status_error(response.status, response.message.unwrap_or_default())
}

/// Whether `name` is one Ozone allows for a volume (3 to 63 of lower-case
/// letters, digits, `-` and `.`): above all, no `/`, so a tenant's
/// volume can stand before a bucket's name in a path unambiguously.
fn is_volume_name(name: &str) -> bool {
    (3..=63).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-' || b == b'.')
}

pub(super) fn missing(command: &str, field: &str) -> StorageError {
    StorageError::Internal(format!("the OM's {command} answer has no {field}"))
}

/// The [`StorageError`] for an OM `status` code (`OMResponse.status`).
pub fn status_error(status: i32, message: String) -> StorageError {
    let Ok(status) = Status::try_from(status) else {
        return StorageError::Internal(format!("OM status {status}: {message}"));
    };
    match status {
        Status::VolumeNotFound | Status::BucketNotFound => StorageError::NoSuchBucket,
        Status::KeyNotFound | Status::FileNotFound | Status::DirectoryNotFound => {
            StorageError::NoSuchKey
        }
        // Deleting a directory of a FILE_SYSTEM_OPTIMIZED bucket that still
        // has keys below it deletes nothing: the folder object lasts as long
        // as they do, and S3 answers such a delete 204 (as Ozone's S3 gateway does).
        Status::DirectoryNotEmpty => StorageError::NoSuchKey,
        // In a FILE_SYSTEM_OPTIMIZED bucket a key is a path: `a/b` cannot be
        // written below the file `a`, nor `a` over the directory `a/`.
        Status::NotAFile | Status::FileAlreadyExists | Status::DirectoryAlreadyExists => {
            StorageError::InvalidArgument(format!(
                "the key is a path in a FILE_SYSTEM_OPTIMIZED bucket and conflicts with an \
                 existing file or directory: {message}"
            ))
        }
        Status::BucketAlreadyExists => StorageError::BucketAlreadyExists,
        Status::BucketNotEmpty => StorageError::BucketNotEmpty,
        Status::AccessDenied
        | Status::PermissionDenied
        | Status::UserMismatch
        | Status::InvalidToken
        | Status::TokenExpired
        | Status::Unauthorized
        | Status::S3SecretNotFound
        | Status::AccessIdNotFound => StorageError::AccessDenied,
        Status::NoSuchMultipartUploadError => StorageError::NoSuchUpload,
        Status::InvalidPart
        | Status::InvalidPartOrder
        | Status::MismatchMultipartList
        | Status::MissingUploadParts => StorageError::InvalidPart(message),
        Status::EtagMismatch
        | Status::EtagNotAvailable
        | Status::KeyAlreadyExists
        | Status::AtomicWriteConflict => StorageError::PreconditionFailed,
        Status::InvalidKeyName
        | Status::InvalidBucketName
        | Status::InvalidRequest
        | Status::EntityTooSmall => StorageError::InvalidArgument(message),
        Status::OmNotInitialized | Status::ScmInSafeMode | Status::Timeout | Status::RatisError => {
            StorageError::Unavailable(format!("{}: {message}", status.as_str_name()))
        }
        // The SCM has no healthy datanode for a new block (e.g. all are
        // down); the OM passes that on as an internal error.
        Status::InternalError if is_allocation_failure(&message) => {
            StorageError::Unavailable(format!("no datanode takes new blocks: {message}"))
        }
        _ => StorageError::Internal(format!("{}: {message}", status.as_str_name())),
    }
}

fn is_allocation_failure(message: &str) -> bool {
    message.contains("Unable to allocate") || message.contains("Cannot create pipeline")
}

mod buckets;
mod keys;
mod secrets;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod wire_tests;

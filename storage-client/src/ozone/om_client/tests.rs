//! The OM client against stand-in OMs: failover, lost answers, signing.

use super::*;

#[test]
fn maps_om_statuses_to_storage_errors() {
    let err = |s: Status| status_error(s as i32, "text".into());
    assert!(matches!(
        err(Status::BucketNotFound),
        StorageError::NoSuchBucket
    ));
    assert!(matches!(err(Status::KeyNotFound), StorageError::NoSuchKey));
    assert!(matches!(
        err(Status::BucketAlreadyExists),
        StorageError::BucketAlreadyExists
    ));
    assert!(matches!(
        err(Status::BucketNotEmpty),
        StorageError::BucketNotEmpty
    ));
    assert!(matches!(
        err(Status::PermissionDenied),
        StorageError::AccessDenied
    ));
    assert!(matches!(
        err(Status::ScmInSafeMode),
        StorageError::Unavailable(_)
    ));
    assert!(matches!(
        status_error(62, "partial".into()),
        StorageError::Internal(m) if m.contains("62")
    ));
    let no_datanode = "Unable to allocate a container to the block of size: 1048576, \
        replicationConfig: RATIS/ONE. Cannot create pipeline RATIS/ONE using 0 nodes.";
    assert!(matches!(
        status_error(Status::InternalError as i32, no_datanode.into()),
        StorageError::Unavailable(_)
    ));
    assert!(matches!(
        status_error(Status::InternalError as i32, "NullPointerException".into()),
        StorageError::Internal(_)
    ));
}

#[test]
fn refuses_an_empty_address_list() {
    assert!(matches!(
        OmClient::new(&OmConfig::new(Vec::new())),
        Err(StorageError::InvalidArgument(_))
    ));
}

#[tokio::test]
async fn picks_the_suggested_leader_by_host() {
    let config = OmConfig::new(vec!["om-a:8981".into(), "om-b:8981".into()]);
    let client = OmClient::new(&config).unwrap();
    let text = "org.apache.hadoop.ozone.om.exceptions.OMNotLeaderException: \
                OM:om1 is not the leader. Suggested leader is OM:om2[om-b:9862].";
    assert_eq!(client.suggested_leader(text), Some(1));
    assert_eq!(
        client.suggested_leader("OMNotLeaderException: no hint"),
        None
    );
}

#[tokio::test]
async fn picks_the_suggested_leader_by_node_id_where_oms_share_a_host() {
    let addresses = ["127.0.0.1:11981", "127.0.0.1:12981", "127.0.0.1:13981"];
    let config = OmConfig::new(addresses.map(String::from).to_vec());
    let client = OmClient::new(&config).unwrap();
    let text = "OMNotLeaderException: OM:om1 is not the leader. \
                Suggested leader is OM:om2[127.0.0.1:12872].";
    // The host names all three: no guess.
    assert_eq!(client.suggested_leader(text), None);
    let answer = OmResponse {
        leader_om_node_id: Some("om2".into()),
        ..Default::default()
    };
    client.learn_node_id(1, &answer);
    assert_eq!(client.suggested_leader(text), Some(1));
    // "host/ip" is how the OM names its RPC address in read answers.
    let config = OmConfig::new(vec!["om-a:8981".into(), "om-b:8981".into()]);
    let client = OmClient::new(&config).unwrap();
    let text = "OM:om1 is not the leader. Suggested leader is OM:om2[om-b/10.0.0.2].";
    assert_eq!(client.suggested_leader(text), Some(1));
}

#[tokio::test]
async fn tells_a_connection_never_made_from_an_answer_lost() {
    let client = OmClient::new(&OmConfig::new(vec!["127.0.0.1:1".into()])).unwrap();
    let node = &client.nodes[0];
    let maybe_applied = |status: tonic::Status| match client.classify(node, status) {
        Attempt::Failover { maybe_applied, .. } => Some(maybe_applied),
        _ => None,
    };
    assert_eq!(
        maybe_applied(tonic::Status::unavailable("tcp connect error")),
        Some(false)
    );
    // What tonic reported for calls in flight when an OM was killed.
    assert_eq!(
        maybe_applied(tonic::Status::unknown("transport error")),
        Some(true)
    );
    assert_eq!(
        maybe_applied(tonic::Status::unavailable("connection reset")),
        Some(true)
    );
    assert_eq!(maybe_applied(tonic::Status::cancelled("")), Some(true));
    // A stepping-down leader answers not-leader for commands it logged.
    let stepping_down = "org.apache.hadoop.ozone.om.exceptions.OMNotLeaderException: \
                         om3@group-D66704EFC61C is stepping down";
    assert_eq!(
        maybe_applied(tonic::Status::internal(stepping_down)),
        Some(true)
    );
    let not_ready = "org.apache.hadoop.ozone.om.exceptions.OMLeaderNotReadyException: om1";
    assert!(matches!(
        client.classify(node, tonic::Status::internal(not_ready)),
        Attempt::Wait(_)
    ));
}

#[test]
fn a_repeat_refused_after_a_lost_answer_is_unavailable() {
    let refusal = |status: Status| OmResponse {
        success: Some(false),
        status: status as i32,
        ..Default::default()
    };
    let unknown_outcome = [
        (Type::CommitKey, Status::KeyNotFound),
        (Type::CommitMultipartUpload, Status::KeyNotFound),
        (
            Type::CompleteMultipartUpload,
            Status::NoSuchMultipartUploadError,
        ),
        (
            Type::AbortMultipartUpload,
            Status::NoSuchMultipartUploadError,
        ),
        (Type::GetS3Secret, Status::S3SecretAlreadyExists),
    ];
    for (cmd, status) in unknown_outcome {
        let settled = settle(cmd, refusal(status), true, "transport error");
        assert!(
            matches!(settled, Err(StorageError::Unavailable(_))),
            "{cmd:?} {status:?}: {settled:?}"
        );
        // Without a lost answer the refusal is the truth.
        let settled = settle(cmd, refusal(status), false, "");
        assert_eq!(settled.unwrap().status(), status, "{cmd:?}");
    }
    // A read, or a command whose refusal is what S3 answers a retry,
    // keeps its answer.
    let kept = [
        (Type::GetKeyInfo, Status::KeyNotFound),
        (Type::DeleteKey, Status::KeyNotFound),
        (Type::CreateBucket, Status::BucketAlreadyExists),
        (Type::DeleteBucket, Status::BucketNotFound),
    ];
    for (cmd, status) in kept {
        let settled = settle(cmd, refusal(status), true, "transport error");
        assert_eq!(settled.unwrap().status(), status, "{cmd:?}");
    }
}

/// With security off every request names the access id alone; with a
/// keyring every one is signed under the acting key's secret, except
/// ServiceList (asked before signing starts) and GetS3Secret (a new key
/// has no secret yet).
#[tokio::test]
async fn signs_each_request_once_security_is_on() {
    let info = || Command::InfoBucket(ozone::InfoBucketRequest::default());
    let issue = || Command::GetS3Secret(ozone::GetS3SecretRequest::default());
    let list = || Command::ServiceList(ozone::ServiceListRequest {});
    let config = OmConfig {
        max_attempts: 1,
        ..OmConfig::new(vec!["127.0.0.1:1".into()])
    };
    let client = OmClient::new(&config).unwrap();
    async fn auth(
        client: &OmClient,
        who: &str,
        cmd: Type,
        command: Command,
    ) -> Result<Option<ozone::S3Authentication>> {
        let request = client.request(cmd, command);
        client.authentication(who, cmd, &request).await
    }
    let plain = auth(&client, "alice", Type::InfoBucket, info())
        .await
        .unwrap();
    assert_eq!(
        plain,
        Some(ozone::S3Authentication {
            access_id: Some("alice".into()),
            ..Default::default()
        })
    );
    assert_eq!(
        auth(&client, "", Type::ServiceList, list()).await.unwrap(),
        None
    );

    let place = super::super::keyring::CredentialRecords {
        bucket: "s3gw-records/s3gw-credentials".into(),
        sealer: Arc::new(super::super::records::Sealer::new(&crate::RecordsKey::new(
            vec![1; 32],
        ))),
    };
    let keyring = Keyring::new(
        (".s3gw", crate::SystemSecret::new("system-secret".into())),
        Vec::new(),
        place,
        Duration::from_secs(60),
        10,
    );
    keyring.remember("alice", "alice-secret").await;
    let client = client.sign_with(keyring);
    for (who, secret) in [("alice", "alice-secret"), (".s3gw", "system-secret")] {
        let request = client.request(Type::InfoBucket, info());
        let signed = client
            .authentication(who, Type::InfoBucket, &request)
            .await
            .unwrap()
            .expect("signed");
        assert_eq!(signed.access_id.as_deref(), Some(who));
        let string_to_sign = signed.string_to_sign.clone().unwrap();
        // The same pair as the signing module makes for this request at that time.
        let stamp = string_to_sign.lines().nth(1).unwrap();
        let at = time::PrimitiveDateTime::parse(
            stamp,
            time::macros::format_description!("[year][month][day]T[hour][minute][second]Z"),
        )
        .unwrap()
        .assume_utc();
        let at = std::time::UNIX_EPOCH + Duration::from_secs(at.unix_timestamp() as u64);
        assert_eq!(
            signed,
            s3_signature::sign(who, secret, at, &request.encode_to_vec())
        );
    }
    assert_eq!(
        auth(&client, "bob", Type::GetS3Secret, issue())
            .await
            .unwrap(),
        None
    );
    assert_eq!(
        auth(&client, "", Type::ServiceList, list()).await.unwrap(),
        None
    );
    // An access id without a known secret is looked up in the credential
    // store, here an OM that refuses connections.
    assert!(matches!(
        auth(&client, "bob", Type::InfoBucket, info()).await,
        Err(StorageError::Unavailable(_))
    ));
}

#[tokio::test]
async fn an_unreachable_om_is_unavailable() {
    // Port 1 on localhost refuses connections at once.
    let config = OmConfig {
        max_attempts: 2,
        retry_backoff: Duration::from_millis(1),
        ..OmConfig::new(vec!["127.0.0.1:1".into()])
    };
    let client = OmClient::new(&config).unwrap();
    let result = client.info_bucket("alice", "b").await;
    assert!(
        matches!(result, Err(StorageError::Unavailable(_))),
        "{result:?}"
    );
}

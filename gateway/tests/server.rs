//! The real server, in process on a free port: probes, request ids on errors,
//! the admin API round trip, and first-start root key generation.

#[path = "support/signing.rs"]
mod signing;

use std::path::Path;

use aws_sigv4::http_request::SignableBody;

use s3_gateway::admin::bootstrap::{ROOT_CREDENTIALS_FILE, RootKeys};
use s3_gateway::admin::client::{AdminClient, ClientError, Trust};
use s3_gateway::config::{Config, TlsFiles};
use s3_gateway::credentials_file::{self, KeyEntry};
use s3_gateway::server::Gateway;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

const ROOT_ACCESS_KEY: &str = "TESTROOTACCESSKEY001";
const ROOT_SECRET_KEY: &str = "testrootsecretkeytestrootsecretkey000001";

fn config(data_dir: &Path, root: Option<KeyEntry>) -> Config {
    Config {
        root_key: root,
        ..Config::for_tests(data_dir)
    }
}

fn root_entry() -> KeyEntry {
    KeyEntry {
        name: "root".into(),
        access_key: ROOT_ACCESS_KEY.into(),
        secret_key: ROOT_SECRET_KEY.into(),
        root: true,
    }
}

/// A served gateway; `stop` shuts it down gracefully and waits.
struct Running {
    endpoint: String,
    stop: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Running {
    async fn start(config: &Config) -> Self {
        let gateway = Gateway::open(config).await.expect("gateway starts");
        let endpoint = gateway.endpoint();
        let (stop, stopped) = oneshot::channel::<()>();
        let task = tokio::spawn(gateway.serve(async {
            let _ = stopped.await;
        }));
        Self {
            endpoint,
            stop,
            task,
        }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        self.task.await.expect("server task ends cleanly");
    }

    fn admin(&self, access_key: &str, secret_key: &str) -> AdminClient {
        AdminClient::new(
            &self.endpoint,
            "us-east-1",
            access_key,
            secret_key,
            &Trust::BuiltIn,
        )
        .expect("client")
    }
}

/// The Prometheus page the server answers on `/metrics`.
async fn metrics_text(http: &reqwest::Client, endpoint: &str) -> String {
    http.get(format!("{endpoint}/metrics"))
        .send()
        .await
        .expect("metrics")
        .text()
        .await
        .expect("body")
}

fn assert_request_id(response: &reqwest::Response) -> String {
    let id = response
        .headers()
        .get("x-amz-request-id")
        .expect("x-amz-request-id on every response")
        .to_str()
        .expect("ascii")
        .to_string();
    assert_eq!(id.len(), 16, "{id}");
    assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
    assert!(response.headers().contains_key("x-amz-id-2"));
    assert_eq!(response.headers()["server"], "s3-gateway");
    id
}

#[tokio::test]
async fn health_and_errors_carry_request_ids() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Running::start(&config(dir.path(), Some(root_entry()))).await;
    let http = reqwest::Client::new();

    let health = http
        .get(format!("{}/health", server.endpoint))
        .send()
        .await
        .expect("health");
    assert_eq!(health.status(), 200);
    let first = assert_request_id(&health);
    assert_eq!(health.text().await.expect("body").trim(), "ok");

    let ready = http
        .get(format!("{}/ready", server.endpoint))
        .send()
        .await
        .expect("ready");
    assert_eq!(ready.status(), 200);

    // Load balancers probe with HEAD: the GET answer without its body.
    for (path, body) in [("/health", "ok\n"), ("/ready", "ready\n")] {
        let head = http
            .head(format!("{}{path}", server.endpoint))
            .send()
            .await
            .expect("head probe");
        assert_eq!(head.status(), 200, "HEAD {path}");
        assert_request_id(&head);
        assert_eq!(
            head.headers()["content-length"],
            body.len().to_string().as_str(),
            "HEAD {path}"
        );
        assert!(
            head.bytes().await.expect("no body").is_empty(),
            "HEAD {path}"
        );
    }

    // An unsigned request for a bucket is an S3 error with an XML body that
    // names the same request id as the header.
    let error = http
        .get(format!("{}/no-such-bucket", server.endpoint))
        .send()
        .await
        .expect("error response");
    assert!(error.status().is_client_error(), "{}", error.status());
    let id = assert_request_id(&error);
    assert_ne!(id, first, "ids are unique");
    let body = error.text().await.expect("body");
    assert!(body.contains("<Error>"), "{body}");
    assert!(
        body.contains(&format!("<RequestId>{id}</RequestId>")),
        "{body}"
    );
    assert!(
        body.contains("<Resource>/no-such-bucket</Resource>"),
        "{body}"
    );

    let head = http
        .head(format!("{}/no-such-bucket", server.endpoint))
        .send()
        .await
        .expect("head error");
    assert!(head.status().is_client_error());
    assert_request_id(&head);
    assert!(
        head.bytes().await.expect("body").is_empty(),
        "HEAD has no body"
    );

    let metrics = metrics_text(&http, &server.endpoint).await;
    assert!(metrics.contains("s3gw_requests_total{"), "{metrics}");
    assert!(metrics.contains("s3gw_requests_in_flight"), "{metrics}");
    // The storage caches' counters are on the same page.
    for cache in [
        "credentials",
        "access_keys",
        "buckets",
        "bucket_documents",
        "lookups",
    ] {
        for what in ["hits", "misses", "evictions"] {
            let line = format!("s3gw_cache_{what}_total{{cache=\"{cache}\"}} ");
            assert!(metrics.contains(&line), "{line} missing: {metrics}");
        }
    }

    server.stop().await;
}

#[tokio::test]
async fn admin_keys_round_trip() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Running::start(&config(dir.path(), Some(root_entry()))).await;
    let root = server.admin(ROOT_ACCESS_KEY, ROOT_SECRET_KEY);

    let alice = root.create_key("alice").await.expect("create");
    assert_eq!(alice.name, "alice");
    assert!(alice.access_key.starts_with("S3GW"));
    assert_eq!(alice.secret_key.len(), 40);

    let keys = root.list_keys().await.expect("list");
    let listed = keys
        .iter()
        .find(|k| k.access_key == alice.access_key)
        .expect("alice is listed");
    assert_eq!(listed.name, "alice");
    assert!(!listed.is_root);
    assert!(
        keys.iter()
            .any(|k| k.access_key == ROOT_ACCESS_KEY && k.is_root)
    );

    // A non-root key authenticates but may not manage keys.
    let as_alice = server.admin(&alice.access_key, &alice.secret_key);
    match as_alice.list_keys().await {
        Err(ClientError::Refused { status, code, .. }) => {
            assert_eq!((status.as_u16(), code.as_str()), (403, "AccessDenied"));
        }
        other => panic!("non-root admin call: {other:?}"),
    }

    assert!(root.delete_key(&alice.access_key).await.expect("delete"));
    assert!(
        !root
            .delete_key(&alice.access_key)
            .await
            .expect("delete again")
    );
    let keys = root.list_keys().await.expect("list");
    assert!(keys.iter().all(|k| k.access_key != alice.access_key));

    // The deleted key is refused at once: it no longer authenticates at all.
    match as_alice.list_keys().await {
        Err(ClientError::Refused { status, code, .. }) => {
            assert_eq!(
                (status.as_u16(), code.as_str()),
                (403, "InvalidAccessKeyId")
            );
        }
        other => panic!("deleted key: {other:?}"),
    }

    // The last root key cannot be deleted.
    match root.delete_key(ROOT_ACCESS_KEY).await {
        Err(ClientError::Refused { status, .. }) => assert_eq!(status.as_u16(), 409),
        other => panic!("deleting the last root key: {other:?}"),
    }

    server.stop().await;
}

#[tokio::test]
async fn first_start_generates_and_saves_a_root_key() {
    let dir = tempfile::tempdir().expect("temp dir");
    let gateway = Gateway::open(&config(dir.path(), None))
        .await
        .expect("first start");
    let RootKeys::Generated { credential, file } = gateway.root_keys() else {
        panic!(
            "expected a generated root key, got {:?}",
            gateway.root_keys()
        );
    };
    assert_eq!(file, &dir.path().join(ROOT_CREDENTIALS_FILE));
    let saved = credentials_file::load(file).expect("saved file parses");
    assert_eq!(saved.len(), 1);
    assert_eq!(saved[0].access_key, credential.access_key);
    assert_eq!(saved[0].secret_key, credential.secret_key);
    assert!(saved[0].root);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(file).expect("stat").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let generated = credential.access_key.clone();
    drop(gateway);

    let again = Gateway::open(&config(dir.path(), None))
        .await
        .expect("second start");
    match again.root_keys() {
        RootKeys::Existing { access_keys } => assert_eq!(access_keys, &vec![generated]),
        other => panic!("second start generated again: {other:?}"),
    }
}

#[tokio::test]
async fn serves_https_with_the_configured_certificate() {
    // A test CA and a certificate it issued for localhost / 127.0.0.1, both
    // valid for a century.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures");
    let dir = tempfile::tempdir().expect("temp dir");
    let mut tls_config = config(dir.path(), Some(root_entry()));
    tls_config.tls = Some(TlsFiles {
        cert: fixtures.join("tls-cert.pem"),
        key: fixtures.join("tls-key.pem"),
    });
    let server = Running::start(&tls_config).await;
    assert!(
        server.endpoint.starts_with("https://"),
        "{}",
        server.endpoint
    );

    let pem = std::fs::read(fixtures.join("test-ca.pem")).expect("CA certificate");
    let http = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&pem).expect("pem"))
        .build()
        .expect("client");
    let health = http
        .get(format!("{}/health", server.endpoint))
        .send()
        .await
        .expect("https health");
    assert_eq!(health.status(), 200);
    let root = server.admin(ROOT_ACCESS_KEY, ROOT_SECRET_KEY);
    assert!(
        root.list_keys().await.is_err(),
        "the admin client does not trust the test CA"
    );
    server.stop().await;
}

#[tokio::test]
async fn unreadable_tls_files_are_a_configuration_error() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut tls_config = config(dir.path(), Some(root_entry()));
    tls_config.tls = Some(TlsFiles {
        cert: dir.path().join("missing-cert.pem"),
        key: dir.path().join("missing-key.pem"),
    });
    match Gateway::open(&tls_config).await {
        Err(e) => assert!(e.is_configuration(), "{e}"),
        Ok(_) => panic!("started without a certificate"),
    }
    assert!(
        !dir.path().join(ROOT_CREDENTIALS_FILE).exists(),
        "nothing is written before the configuration checks out"
    );
}

/// SigV4 headers for a request, signed with the root key.
fn signed_headers(method: &str, url: &str, payload: SignableBody<'_>) -> Vec<(String, String)> {
    signing::signed_headers((ROOT_ACCESS_KEY, ROOT_SECRET_KEY), method, url, payload)
}

#[tokio::test]
async fn shutdown_lets_an_in_flight_upload_finish() {
    let dir = tempfile::tempdir().expect("temp dir");
    let server = Running::start(&config(dir.path(), Some(root_entry()))).await;
    let http = reqwest::Client::new();

    let bucket_url = format!("{}/graceful", server.endpoint);
    let mut create = http.put(&bucket_url);
    for (name, value) in signed_headers("PUT", &bucket_url, SignableBody::Bytes(&[])) {
        create = create.header(name, value);
    }
    assert_eq!(create.send().await.expect("create bucket").status(), 200);

    // Start a PUT and send only half of its body.
    let object_url = format!("{bucket_url}/object");
    let host = server.endpoint.trim_start_matches("http://").to_string();
    let mut head =
        format!("PUT /graceful/object HTTP/1.1\r\nhost: {host}\r\ncontent-length: 8\r\n");
    for (name, value) in signed_headers("PUT", &object_url, SignableBody::UnsignedPayload) {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut upload = tokio::net::TcpStream::connect(&host)
        .await
        .expect("connect");
    upload.write_all(head.as_bytes()).await.expect("headers");
    upload.write_all(b"1234").await.expect("first half");

    // Wait until the server is handling it, then ask it to stop.
    loop {
        let metrics = metrics_text(&http, &server.endpoint).await;
        if metrics.contains("s3gw_requests_in_flight 1\n") {
            break;
        }
        tokio::task::yield_now().await;
    }
    let _ = server.stop.send(());
    // The test runtime has one thread: yielding lets the server act on the
    // signal, and a server that did not wait would be finished by now.
    for _ in 0..100 {
        tokio::task::yield_now().await;
    }
    assert!(
        !server.task.is_finished(),
        "the server waits for the upload"
    );

    upload.write_all(b"5678").await.expect("second half");
    let mut response = String::new();
    upload
        .read_to_string(&mut response)
        .await
        .expect("response");
    assert!(response.starts_with("HTTP/1.1 200"), "{response}");
    server.task.await.expect("server stops after the upload");
}

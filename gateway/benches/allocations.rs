//! Heap allocations per request: the real gateway (`Gateway::open` and
//! `serve`, the embedded back end in a temp dir) on a loopback port, driven
//! over one keep-alive connection by a client that allocates nothing while
//! it counts: every request is signed (SigV4, Authorization header) and
//! encoded before counting starts, and responses are read into one reused
//! buffer. What is counted is everything the process allocates between the
//! first byte of the first request and the last byte of the last response:
//! hyper, the router, auth, the operation, storage and its writer threads.
//!
//! Allocation counts are deterministic enough to compare on a busy machine
//! (timings are not). Run with
//! `cargo bench -p s3-gateway --bench allocations`; numbers in BENCHMARKS.md.

#[path = "../tests/support/signing.rs"]
mod signing;

use std::alloc::System;

use aws_sigv4::http_request::SignableBody;
use s3_gateway::config::Config;
use s3_gateway::credentials_file::KeyEntry;
use s3_gateway::server::Gateway;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const ACCESS_KEY: &str = "BENCHROOTACCESSKEY01";
const SECRET_KEY: &str = "benchrootsecretkeybenchrootsecretkey0001";
const BUCKET: &str = "bench";
/// Requests counted per operation.
const REQUESTS: usize = 1000;
/// Requests sent before counting, to fill caches and grow buffers.
const WARM_UP: usize = 100;
/// Objects in the listed prefix.
const LISTED: usize = 10;

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(run());
}

async fn run() {
    let dir = tempfile::tempdir().expect("temp dir");
    let config = Config {
        root_key: Some(KeyEntry {
            name: "root".into(),
            access_key: ACCESS_KEY.into(),
            secret_key: SECRET_KEY.into(),
            root: true,
        }),
        ..Config::for_tests(dir.path())
    };
    let gateway = Gateway::open(&config).await.expect("gateway starts");
    let host = gateway.local_addr().to_string();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(gateway.serve(async {
        let _ = stopped.await;
    }));
    let mut client = Client::connect(&host).await;

    client
        .send(&request(&host, "PUT", &format!("/{BUCKET}"), &[]))
        .await;
    let body = vec![b'x'; 1024];
    for i in 0..LISTED {
        let put = request(&host, "PUT", &format!("/{BUCKET}/list/{i:02}"), &body);
        client.send(&put).await;
    }

    let keys = |prefix: &str| -> Vec<String> {
        (0..WARM_UP + REQUESTS)
            .map(|i| format!("/{BUCKET}/{prefix}{i:05}"))
            .collect()
    };
    let puts: Vec<Vec<u8>> = keys("object-")
        .iter()
        .map(|path| request(&host, "PUT", path, &body))
        .collect();
    let gets: Vec<Vec<u8>> = keys("object-")
        .iter()
        .map(|path| request(&host, "GET", path, &[]))
        .collect();
    let heads: Vec<Vec<u8>> = keys("object-")
        .iter()
        .map(|path| request(&host, "HEAD", path, &[]))
        .collect();
    let list_path = format!("/{BUCKET}?list-type=2&prefix=list%2F");
    let lists: Vec<Vec<u8>> = (0..WARM_UP + REQUESTS)
        .map(|_| request(&host, "GET", &list_path, &[]))
        .collect();

    println!(
        "{REQUESTS} requests each, after {WARM_UP} to warm up; \
         SigV4 header auth, one keep-alive HTTP/1.1 connection"
    );
    println!();
    println!(
        "| operation | allocations per request | reallocations per request | bytes allocated per request |"
    );
    println!("|---|---|---|---|");
    for (name, requests) in [
        ("PUT 1 KiB", &puts),
        ("GET 1 KiB", &gets),
        ("HEAD 1 KiB", &heads),
        ("ListObjectsV2, 10 keys", &lists),
    ] {
        let (warm_up, counted) = requests.split_at(WARM_UP);
        for request in warm_up {
            client.send(request).await;
        }
        let region = Region::new(GLOBAL);
        for request in counted {
            client.send(request).await;
        }
        let change = region.change();
        let per = |n: usize| n as f64 / REQUESTS as f64;
        let bytes = change.bytes_allocated + change.bytes_reallocated.max(0).unsigned_abs();
        println!(
            "| {name} | {:.1} | {:.1} | {:.0} |",
            per(change.allocations),
            per(change.reallocations),
            per(bytes),
        );
    }

    drop(client);
    let _ = stop.send(());
    server.await.expect("server stops");
}

/// One HTTP/1.1 request, signed the way an AWS SDK signs it (the payload's
/// SHA-256 in `x-amz-content-sha256`), ready to write.
fn request(host: &str, method: &str, path: &str, body: &[u8]) -> Vec<u8> {
    let url = format!("http://{host}{path}");
    let payload = SignableBody::Bytes(body);
    let signed = signing::signed_headers((ACCESS_KEY, SECRET_KEY), method, &url, payload);
    let mut head = format!("{method} {path} HTTP/1.1\r\nhost: {host}\r\n");
    if method == "PUT" {
        head.push_str(&format!("content-length: {}\r\n", body.len()));
    }
    for (name, value) in signed {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    let mut bytes = head.into_bytes();
    bytes.extend_from_slice(body);
    bytes
}

/// A keep-alive connection that reads each response into one buffer.
struct Client {
    stream: TcpStream,
    buffer: Vec<u8>,
}

impl Client {
    async fn connect(host: &str) -> Self {
        let stream = TcpStream::connect(host).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        Self {
            stream,
            buffer: vec![0; 64 * 1024],
        }
    }

    /// Sends one request and reads its whole response; panics unless 200.
    async fn send(&mut self, request: &[u8]) {
        self.stream.write_all(request).await.expect("write");
        let head_request = request.starts_with(b"HEAD ");
        let mut filled = self.read_more(0).await;
        let end = loop {
            match find(&self.buffer[..filled], b"\r\n\r\n") {
                Some(end) => break end,
                None => filled = self.read_more(filled).await,
            }
        };
        let head = &self.buffer[..end];
        assert!(
            head.starts_with(b"HTTP/1.1 200 "),
            "{}",
            String::from_utf8_lossy(&self.buffer[..filled])
        );
        let length = match (head_request, content_length(head)) {
            (true, _) => Some(0),
            (false, length) => length,
        };
        match length {
            Some(length) => {
                let total = end + 4 + length;
                while filled < total {
                    filled = self.read_more(filled).await;
                }
                assert_eq!(filled, total, "one response at a time");
            }
            // Chunked (a listing): read to the last chunk.
            None => {
                while !self.buffer[..filled].ends_with(b"0\r\n\r\n") {
                    filled = self.read_more(filled).await;
                }
            }
        }
    }

    /// Reads more of a response into the buffer after its first `filled`
    /// bytes; returns how many it holds now.
    async fn read_more(&mut self, filled: usize) -> usize {
        let free = &mut self.buffer[filled..];
        assert!(!free.is_empty(), "response too large");
        let read = self.stream.read(free).await.expect("read");
        assert!(read > 0, "the server closed the connection");
        filled + read
    }
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn content_length(head: &[u8]) -> Option<usize> {
    head.split(|&b| b == b'\n').find_map(|line| {
        let line = std::str::from_utf8(line).ok()?.trim_end();
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

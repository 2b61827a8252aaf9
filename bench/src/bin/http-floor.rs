//! `http-floor`: the HTTP stack s3-gateway is built on, with no S3 work.
//!
//! The same tokio multi-thread runtime (one worker per core), the same
//! hyper-util `auto` connection builder and an axum router, answering every
//! GET and HEAD with one fixed body and the headers an S3 GET carries. No
//! signature, no lookup, no storage: what a request costs here is the floor
//! under any handler on this machine, measured beside nginx and the gateway
//! by `bench/run.sh --servers nginx,http-floor,s3gw` (BENCHMARKS.md).

use std::net::SocketAddr;
use std::process::ExitCode;

use axum::Router;
use axum::body::Body;
use axum::http::{HeaderValue, Method, Response, StatusCode, header};
use bytes::Bytes;
use clap::Parser;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

#[derive(Parser)]
#[command(
    name = "http-floor",
    about = "A fixed body over tokio + hyper + axum: the floor under s3-gateway's handlers"
)]
struct Cli {
    /// Where to listen (loopback)
    #[arg(long, default_value = "127.0.0.1:39899")]
    listen: SocketAddr,
    /// The body every GET answers with, in bytes
    #[arg(long, default_value_t = 1024)]
    size: usize,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    if !cli.listen.ip().is_loopback() {
        eprintln!("http-floor: --listen must be a loopback address");
        return ExitCode::FAILURE;
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("http-floor: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(serve(cli.listen, Bytes::from(vec![b'x'; cli.size]))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("http-floor: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn serve(listen: SocketAddr, body: Bytes) -> std::io::Result<()> {
    let app = Router::new().fallback(move |method: Method| {
        let body = body.clone();
        async move { answer(&method, body) }
    });
    let listener = TcpListener::bind(listen).await?;
    loop {
        let (stream, _) = listener.accept().await?;
        // As the gateway does: small answers leave at once.
        stream.set_nodelay(true)?;
        let service = TowerToHyperService::new(app.clone());
        tokio::spawn(async move {
            // A client that goes away mid-request is no error of the floor's.
            let _ = auto::Builder::new(TokioExecutor::new())
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// The status and headers of an S3 GetObject answer (the values fixed).
fn answer(method: &Method, body: Bytes) -> Response<Body> {
    if method != Method::GET && method != Method::HEAD {
        return status(StatusCode::METHOD_NOT_ALLOWED);
    }
    let length = body.len();
    let mut response = Response::new(if method == Method::HEAD {
        Body::empty()
    } else {
        Body::from(body)
    });
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("binary/octet-stream"),
    );
    headers.insert(
        header::ETAG,
        HeaderValue::from_static("\"0f343b0931126a20f133d67c2b018a3b\""),
    );
    headers.insert(
        header::LAST_MODIFIED,
        HeaderValue::from_static("Sun, 06 Dec 2026 19:00:00 GMT"),
    );
    headers.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    headers.insert(
        "x-amz-request-id",
        HeaderValue::from_static("0000000000000001"),
    );
    response
}

fn status(code: StatusCode) -> Response<Body> {
    let mut response = Response::new(Body::empty());
    *response.status_mut() = code;
    response
}

//! Where an accepted connection is served (`connection_runtime`): on the
//! shared runtime's workers, which steal tasks from each other and wake
//! each other to do so, or on one of as many single-threaded runtimes as
//! there are cores, for the connection's whole life, so that its requests,
//! their I/O and their timers stay on one thread.
//!
//! Connections are handed over one per accept, not one per request: the
//! accept loop stays where it is, and a keep-alive connection crosses
//! threads once.

use std::future::Future;
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::net::TcpStream;
use tokio::runtime::Handle;

/// The runtimes connections are spawned on.
pub(super) enum ConnectionThreads {
    /// `tokio::spawn` on the runtime that accepted.
    Shared,
    /// Round-robin over these single-threaded runtimes.
    PerThread {
        runtimes: Vec<Handle>,
        next: AtomicUsize,
    },
}

impl ConnectionThreads {
    /// `threads` single-threaded runtimes, each driven by a thread of its
    /// own for the life of the process.
    pub(super) fn per_thread(threads: usize, stack_bytes: usize) -> std::io::Result<Self> {
        let mut runtimes = Vec::with_capacity(threads);
        for index in 0..threads {
            let (handle_tx, handle_rx) = std::sync::mpsc::channel();
            std::thread::Builder::new()
                .name(format!("s3gw-conn-{index}"))
                .stack_size(stack_bytes)
                .spawn(move || {
                    let runtime = tokio::runtime::Builder::new_current_thread()
                        .enable_all()
                        .build();
                    match runtime {
                        Ok(runtime) => {
                            let _ = handle_tx.send(Ok(runtime.handle().clone()));
                            // A current-thread runtime runs its tasks only
                            // while a thread blocks on it: this one does.
                            runtime.block_on(std::future::pending::<()>());
                        }
                        Err(e) => {
                            let _ = handle_tx.send(Err(e));
                        }
                    }
                })?;
            let handle = handle_rx
                .recv()
                .map_err(|_| std::io::Error::other("a connection thread ended at start"))??;
            runtimes.push(handle);
        }
        Ok(Self::PerThread {
            runtimes,
            next: AtomicUsize::new(0),
        })
    }

    /// Serves `stream` with `serve` on the next runtime.
    pub(super) fn spawn<F, Fut>(&self, stream: TcpStream, serve: F)
    where
        F: FnOnce(TcpStream) -> Fut + Send + 'static,
        Fut: Future<Output = ()> + Send + 'static,
    {
        match self {
            Self::Shared => {
                tokio::spawn(serve(stream));
            }
            Self::PerThread { runtimes, next } => {
                // The socket leaves this runtime's reactor for the other's.
                let stream = match stream.into_std() {
                    Ok(stream) => stream,
                    Err(e) => {
                        tracing::debug!(error = %e, "cannot hand a connection over");
                        return;
                    }
                };
                let index = next.fetch_add(1, Ordering::Relaxed) % runtimes.len();
                runtimes[index].spawn(async move {
                    match TcpStream::from_std(stream) {
                        Ok(stream) => serve(stream).await,
                        Err(e) => tracing::debug!(error = %e, "cannot take a connection over"),
                    }
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use tokio::net::TcpListener;

    /// Each accepted connection is served on a connection thread, in turn.
    #[tokio::test]
    async fn connections_are_served_on_the_connection_threads_in_turn() {
        let threads = ConnectionThreads::per_thread(2, 2 * 1024 * 1024).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let mut names = Vec::new();
        for _ in 0..4 {
            let mut client = TcpStream::connect(addr).await.unwrap();
            let (stream, _) = listener.accept().await.unwrap();
            threads.spawn(stream, |mut stream| async move {
                let name = std::thread::current().name().unwrap_or("").to_owned();
                stream.write_all(name.as_bytes()).await.unwrap();
            });
            let mut name = String::new();
            client.read_to_string(&mut name).await.unwrap();
            names.push(name);
        }
        assert_eq!(
            names,
            ["s3gw-conn-0", "s3gw-conn-1", "s3gw-conn-0", "s3gw-conn-1"]
        );
    }
}

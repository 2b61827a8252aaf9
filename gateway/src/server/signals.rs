//! The signals the server acts on: SIGTERM and SIGINT stop it (draining
//! first), SIGHUP reloads its TLS certificate. Each handler is installed
//! when its listener is made, so making them before the slow parts of
//! start-up (opening storage, reaching Ozone) means a signal that comes
//! meanwhile is kept for the listener instead of killing the process.

use tokio::signal::unix::{Signal, SignalKind, signal};

/// Resolves when the process is told to stop.
pub struct Shutdown {
    terminate: Signal,
    interrupt: Signal,
}

impl Shutdown {
    /// Installs the SIGTERM and SIGINT handlers (inside a Tokio runtime).
    pub fn install() -> std::io::Result<Self> {
        Ok(Self {
            terminate: signal(SignalKind::terminate())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }

    pub async fn requested(mut self) {
        tokio::select! {
            _ = self.terminate.recv() => {}
            _ = self.interrupt.recv() => {}
        }
    }
}

/// Yields once per SIGHUP.
pub struct Reload(Signal);

impl Reload {
    /// Installs the SIGHUP handler (inside a Tokio runtime).
    pub fn install() -> std::io::Result<Self> {
        signal(SignalKind::hangup()).map(Self)
    }

    pub async fn requested(&mut self) {
        self.0.recv().await;
    }
}

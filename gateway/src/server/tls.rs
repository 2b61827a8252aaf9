//! HTTPS: a rustls configuration built from PEM files, offering HTTP/2 and
//! HTTP/1.1 through ALPN, that can be reloaded from the same files (SIGHUP)
//! while serving: each handshake takes the configuration current when it
//! starts, so open connections keep theirs and new ones get the new one.

use std::sync::{Arc, RwLock};

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::TlsFiles;

#[derive(Debug, thiserror::Error)]
#[error("TLS: {0}")]
pub struct TlsError(String);

/// The certificate and key being served, and where they came from.
pub struct Certificates {
    files: TlsFiles,
    current: RwLock<Arc<ServerConfig>>,
}

impl Certificates {
    pub fn load(files: &TlsFiles) -> Result<Self, TlsError> {
        Ok(Self {
            current: RwLock::new(server_config(files)?),
            files: files.clone(),
        })
    }

    /// An acceptor for one handshake, with the configuration current now.
    pub fn acceptor(&self) -> TlsAcceptor {
        let current = self
            .current
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        TlsAcceptor::from(Arc::clone(&current))
    }

    /// Reads the files again; on any error the configuration in use stays.
    pub fn reload(&self) -> Result<(), TlsError> {
        let fresh = server_config(&self.files)?;
        *self
            .current
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = fresh;
        Ok(())
    }
}

fn server_config(files: &TlsFiles) -> Result<Arc<ServerConfig>, TlsError> {
    let certs = CertificateDer::pem_file_iter(&files.cert)
        .and_then(|certs| certs.collect::<Result<Vec<_>, _>>())
        .map_err(|e| TlsError(format!("certificate file {}: {e}", files.cert.display())))?;
    if certs.is_empty() {
        return Err(TlsError(format!(
            "certificate file {} holds no certificate",
            files.cert.display()
        )));
    }
    let key = PrivateKeyDer::from_pem_file(&files.key)
        .map_err(|e| TlsError(format!("key file {}: {e}", files.key.display())))?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| TlsError(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| TlsError(format!("certificate and key do not fit: {e}")))?;
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Arc::new(config))
}

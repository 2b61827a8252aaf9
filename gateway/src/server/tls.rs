//! HTTPS: a rustls acceptor built from PEM files, offering HTTP/2 and
//! HTTP/1.1 through ALPN.

use std::sync::Arc;

use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use crate::config::TlsFiles;

#[derive(Debug, thiserror::Error)]
#[error("TLS: {0}")]
pub struct TlsError(String);

pub fn acceptor(files: &TlsFiles) -> Result<TlsAcceptor, TlsError> {
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
    Ok(TlsAcceptor::from(Arc::new(config)))
}

//! gRPC over TLS to a cluster with `hdds.grpc.tls.enabled`: the OM's gRPC
//! server, the datanodes' gRPC (reads) and their Ratis client port (writes)
//! then speak TLS with certificates the SCM's CA issued. None of the three
//! asks a client for a certificate (server-side TLS only; Ozone's own
//! clients send none either), so trusting the CA is all a client needs.

use std::time::Duration;

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

use crate::{Result, StorageError};

/// What the gateway trusts of a TLS cluster: the SCM's CA certificates
/// (PEM: its root CA, so that any certificate its sub-CA issued verifies),
/// and optionally the name every server's certificate is checked against
/// instead of the host of the address dialled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OzoneTls {
    ca_pem: Vec<u8>,
    server_name: Option<String>,
}

impl OzoneTls {
    pub fn new(ca_pem: Vec<u8>, server_name: Option<String>) -> Result<Self> {
        let text = String::from_utf8_lossy(&ca_pem);
        if !text.contains("-----BEGIN CERTIFICATE-----") {
            return Err(StorageError::InvalidArgument(
                "the Ozone CA file holds no PEM certificate".into(),
            ));
        }
        Ok(Self {
            ca_pem,
            server_name,
        })
    }
}

/// A lazily connected gRPC endpoint of `address` (`host:port`): TLS
/// trusting `tls` when given, plaintext otherwise.
pub(super) fn endpoint(
    address: &str,
    tls: Option<&OzoneTls>,
    connect_timeout: Duration,
) -> Result<Endpoint> {
    let bad = |e: &dyn std::fmt::Display| {
        StorageError::InvalidArgument(format!("gRPC address {address:?}: {e}"))
    };
    let scheme = if tls.is_some() { "https" } else { "http" };
    let mut endpoint = Endpoint::from_shared(format!("{scheme}://{address}"))
        .map_err(|e| bad(&e))?
        .connect_timeout(connect_timeout)
        .tcp_nodelay(true);
    if let Some(tls) = tls {
        let mut config = ClientTlsConfig::new().ca_certificate(Certificate::from_pem(&tls.ca_pem));
        if let Some(name) = &tls.server_name {
            config = config.domain_name(name.clone());
        }
        endpoint = endpoint.tls_config(config).map_err(|e| bad(&e))?;
    }
    Ok(endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_certificate_is_refused() {
        assert!(OzoneTls::new(b"not a certificate".to_vec(), None).is_err());
    }

    #[test]
    fn plaintext_and_tls_endpoints_differ_by_scheme() {
        let plain = endpoint("127.0.0.1:8981", None, Duration::from_secs(1)).unwrap();
        assert_eq!(plain.uri().scheme_str(), Some("http"));
    }
}

//! gRPC over TLS to a cluster with `hdds.grpc.tls.enabled`: the OM's gRPC
//! server, the datanodes' gRPC (reads) and their Ratis client port (writes)
//! then speak TLS with certificates the SCM's CA issued. None of the three
//! asks a client for a certificate (server-side TLS only; Ozone's own
//! clients send none either), so trusting the CA is all a client needs.

use std::time::Duration;

use tonic::transport::{Certificate, ClientTlsConfig, Endpoint};

use crate::ozone_tls::OzoneTls;
use crate::{Result, StorageError};

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
    fn plaintext_and_tls_endpoints_differ_by_scheme() {
        let plain = endpoint("127.0.0.1:8981", None, Duration::from_secs(1)).unwrap();
        assert_eq!(plain.uri().scheme_str(), Some("http"));
    }
}

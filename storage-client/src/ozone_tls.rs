//! What the gateway trusts of an Ozone cluster with gRPC TLS
//! (`hdds.grpc.tls.enabled`); `ozone::grpc_tls` dials with it.

use crate::{Result, StorageError};

/// What the gateway trusts of a TLS cluster: the SCM's CA certificates
/// (PEM: its root CA, so that any certificate its sub-CA issued verifies),
/// and optionally the name every server's certificate is checked against
/// instead of the host of the address dialled.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OzoneTls {
    pub(crate) ca_pem: Vec<u8>,
    pub(crate) server_name: Option<String>,
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_a_certificate_is_refused() {
        assert!(OzoneTls::new(b"not a certificate".to_vec(), None).is_err());
    }
}

//! What the admin client trusts with `--ca-cert` (or `SSL_CERT_FILE`): the
//! built-in roots, the file's certificates as CAs, and each of them as
//! itself. The last is what `aws --ca-bundle` and curl accept and webpki
//! alone refuses: a plain self-signed certificate (`openssl req -x509`,
//! which marks it a CA) served as the gateway's own is `CaUsedAsEndEntity`
//! to webpki. A certificate trusted as itself must still be within its
//! validity period and carry the name the client dialled.

use std::sync::Arc;

use tokio_rustls::rustls::client::WebPkiServerVerifier;
use tokio_rustls::rustls::client::danger::{
    HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier,
};
use tokio_rustls::rustls::client::verify_server_name;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use tokio_rustls::rustls::server::ParsedCertificate;
use tokio_rustls::rustls::{
    CertificateError, ClientConfig, DigitallySignedStruct, Error, RootCertStore, SignatureScheme,
};

/// A TLS client configuration trusting the built-in roots and `file`'s
/// certificates, as CAs and as themselves.
pub(super) fn client_config(file: Vec<CertificateDer<'static>>) -> Result<ClientConfig, String> {
    let provider = Arc::new(ring::default_provider());
    let mut roots = RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    for certificate in &file {
        roots.add(certificate.clone()).map_err(|e| e.to_string())?;
    }
    let webpki = WebPkiServerVerifier::builder_with_provider(Arc::new(roots), provider.clone())
        .build()
        .map_err(|e| e.to_string())?;
    let verifier = AlsoItself { webpki, file };
    let mut config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| e.to_string())?
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(verifier))
        .with_no_client_auth();
    // The admin client speaks HTTP/1.1 only (reqwest without http2).
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(config)
}

#[derive(Debug)]
struct AlsoItself {
    webpki: Arc<WebPkiServerVerifier>,
    file: Vec<CertificateDer<'static>>,
}

/// Whether webpki refused the certificate for its dates or its names,
/// which trusting it as itself does not excuse. (webpki checks the dates
/// first, so any other refusal of a certificate it parsed came after
/// they held.)
fn dates_or_names(error: &Error) -> bool {
    use CertificateError as E;
    matches!(
        error,
        Error::InvalidCertificate(
            E::Expired
                | E::ExpiredContext { .. }
                | E::NotValidYet
                | E::NotValidYetContext { .. }
                | E::NotValidForName
                | E::NotValidForNameContext { .. }
        )
    )
}

impl ServerCertVerifier for AlsoItself {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, Error> {
        let verdict = self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        );
        match verdict {
            Err(error)
                if !dates_or_names(&error)
                    && self.file.iter().any(|c| c.as_ref() == end_entity.as_ref()) =>
            {
                verify_server_name(&ParsedCertificate::try_from(end_entity)?, server_name)?;
                Ok(ServerCertVerified::assertion())
            }
            verdict => verdict,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

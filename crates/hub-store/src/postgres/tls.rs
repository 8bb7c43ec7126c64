//! TLS to PostgreSQL: reads libpq's `sslmode` and `sslrootcert` from a connection URL
//! and builds the rustls connector that every connection of the backend uses (primary
//! and replica pools, the admin connection that creates databases).
//!
//! Owns the TLS policy per `sslmode`. Must not touch queries, pools or read routing.
//!
//! Why the parameters are taken out of the URL before tokio-postgres parses it:
//! tokio-postgres 0.7 knows only `disable`, `prefer` and `require` and rejects
//! `sslrootcert`, while operators write libpq URLs. [`split_tls_params`] is the one
//! place that reads them; the rest of the URL (hosts, `target_session_attrs`, …) goes
//! to tokio-postgres unchanged.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::{CertificateError, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio_postgres::tls::{ChannelBinding, MakeTlsConnect, TlsConnect};

/// libpq's `sslmode` values Hub supports (`allow` is not: it prefers plaintext).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    /// No TLS.
    Disable,
    /// TLS when the server offers it, plaintext otherwise (libpq's and Hub's default).
    Prefer,
    /// TLS or no connection.
    Require,
    /// TLS with the server's certificate chain verified, not its host name.
    VerifyCa,
    /// TLS with the chain and the host name verified.
    VerifyFull,
}

/// The TLS settings read from a connection URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TlsParams {
    pub mode: SslMode,
    /// `sslrootcert`: a PEM file of trusted CA certificates, or `system` for the
    /// built-in Mozilla root set.
    pub root_cert: Option<String>,
}

impl TlsParams {
    /// Whether the server's certificate chain is verified. As in libpq, `prefer` and
    /// `require` verify the chain only when `sslrootcert` is given.
    pub fn verifies_chain(&self) -> bool {
        match self.mode {
            SslMode::Disable => false,
            SslMode::Prefer | SslMode::Require => self.root_cert.is_some(),
            SslMode::VerifyCa | SslMode::VerifyFull => true,
        }
    }

    /// The mode tokio-postgres applies while negotiating (it only decides whether TLS
    /// is attempted and whether it is mandatory; verification is the connector's).
    pub fn wire_mode(&self) -> tokio_postgres::config::SslMode {
        match self.mode {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => {
                tokio_postgres::config::SslMode::Require
            }
        }
    }
}

/// Splits `sslmode` and `sslrootcert` out of a `postgres://` / `postgresql://` URL:
/// returns the URL without them and the TLS settings (`prefer` when `sslmode` is
/// absent, the last value when repeated, as libpq does). A key=value connection
/// string is returned unchanged with the mode tokio-postgres would read from it.
pub fn split_tls_params(url: &str) -> Result<(String, TlsParams), String> {
    let mut params = TlsParams {
        mode: SslMode::Prefer,
        root_cert: None,
    };
    let is_url = url.starts_with("postgres://") || url.starts_with("postgresql://");
    if !is_url {
        return Ok((url.to_string(), params));
    }
    let Some((base, query)) = url.split_once('?') else {
        return Ok((url.to_string(), params));
    };
    let mut kept = Vec::new();
    for pair in query.split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        match key {
            "sslmode" => {
                params.mode = match percent_decode(value)?.as_str() {
                    "disable" => SslMode::Disable,
                    "prefer" => SslMode::Prefer,
                    "require" => SslMode::Require,
                    "verify-ca" => SslMode::VerifyCa,
                    "verify-full" => SslMode::VerifyFull,
                    other => {
                        return Err(format!(
                            "sslmode={other} is not supported \
                             (use disable, prefer, require, verify-ca or verify-full)"
                        ))
                    }
                }
            }
            "sslrootcert" => {
                let path = percent_decode(value)?;
                if path.is_empty() {
                    return Err("sslrootcert is empty".into());
                }
                params.root_cert = Some(path);
            }
            _ => kept.push(pair),
        }
    }
    let rest = if kept.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", kept.join("&"))
    };
    Ok((rest, params))
}

fn percent_decode(value: &str) -> Result<String, String> {
    let bytes = value.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = value
                .get(i + 1..i + 3)
                .and_then(|h| u8::from_str_radix(h, 16).ok())
                .ok_or_else(|| format!("bad percent-encoding in {value:?}"))?;
            out.push(hex);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("{value:?} is not UTF-8"))
}

/// The connector handed to tokio-postgres and deadpool for every connection.
#[derive(Clone)]
pub struct TlsConnector {
    config: Arc<rustls::ClientConfig>,
}

impl TlsConnector {
    /// Builds the connector for `params`, reading the `sslrootcert` file now so that a
    /// missing or unreadable file is a startup error, not a failure per connection.
    pub fn new(params: &TlsParams) -> Result<Self, String> {
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let verifier: Arc<dyn ServerCertVerifier> = if params.verifies_chain() {
            let roots = Arc::new(root_store(params.root_cert.as_deref())?);
            let webpki = WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
                .build()
                .map_err(|e| format!("sslrootcert: {e}"))?;
            if params.mode == SslMode::VerifyFull {
                webpki
            } else {
                Arc::new(ChainOnly { webpki })
            }
        } else {
            Arc::new(EncryptOnly {
                provider: provider.clone(),
            })
        };
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| format!("TLS: {e}"))?
            .dangerous()
            .with_custom_certificate_verifier(verifier)
            .with_no_client_auth();
        Ok(Self {
            config: Arc::new(config),
        })
    }
}

/// The trust anchors: the CA certificates of the `sslrootcert` file, or the built-in
/// Mozilla set when the file is not given or is `system`.
fn root_store(root_cert: Option<&str>) -> Result<RootCertStore, String> {
    let Some(path) = root_cert.filter(|p| *p != "system") else {
        return Ok(RootCertStore {
            roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
        });
    };
    let mut store = RootCertStore::empty();
    let certs =
        CertificateDer::pem_file_iter(path).map_err(|e| format!("sslrootcert {path}: {e}"))?;
    for cert in certs {
        let cert = cert.map_err(|e| format!("sslrootcert {path}: {e}"))?;
        store
            .add(cert)
            .map_err(|e| format!("sslrootcert {path}: {e}"))?;
    }
    if store.is_empty() {
        return Err(format!("sslrootcert {path}: no certificate in the file"));
    }
    Ok(store)
}

/// `verify-ca` (and `prefer`/`require` with `sslrootcert`): the full WebPKI check
/// except the host name. rustls checks the chain before the name, so a name mismatch
/// means the chain was verified.
#[derive(Debug)]
struct ChainOnly {
    webpki: Arc<WebPkiServerVerifier>,
}

impl ServerCertVerifier for ChainOnly {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.webpki.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(
                CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. },
            )) => Ok(ServerCertVerified::assertion()),
            other => other,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.webpki.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.webpki.supported_verify_schemes()
    }
}

/// `prefer` and `require` without `sslrootcert` (libpq semantics): the connection is
/// encrypted and the handshake signature must match the presented certificate, but
/// the certificate itself is not checked against any CA.
#[derive(Debug)]
struct EncryptOnly {
    provider: Arc<CryptoProvider>,
}

impl ServerCertVerifier for EncryptOnly {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

impl<S> MakeTlsConnect<S> for TlsConnector
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = TlsStream<S>;
    type TlsConnect = TlsHandshake;
    type Error = io::Error;

    fn make_tls_connect(&mut self, host: &str) -> Result<TlsHandshake, io::Error> {
        // A Unix-socket host has no name; tokio-postgres never starts TLS there, so
        // the name is only required once a handshake actually starts.
        Ok(TlsHandshake {
            config: self.config.clone(),
            server_name: ServerName::try_from(host.to_string()).ok(),
        })
    }
}

/// One connection's pending TLS handshake.
pub struct TlsHandshake {
    config: Arc<rustls::ClientConfig>,
    server_name: Option<ServerName<'static>>,
}

type HandshakeFuture<S> = Pin<Box<dyn Future<Output = io::Result<TlsStream<S>>> + Send>>;

impl<S> TlsConnect<S> for TlsHandshake
where
    S: AsyncRead + AsyncWrite + Unpin + Send + 'static,
{
    type Stream = TlsStream<S>;
    type Error = io::Error;
    type Future = HandshakeFuture<S>;

    fn connect(self, stream: S) -> HandshakeFuture<S> {
        Box::pin(async move {
            let name = self.server_name.ok_or_else(|| {
                io::Error::new(
                    io::ErrorKind::InvalidInput,
                    "the host is not a valid TLS server name",
                )
            })?;
            let tls = tokio_rustls::TlsConnector::from(self.config)
                .connect(name, stream)
                .await?;
            Ok(TlsStream(tls))
        })
    }
}

/// An encrypted connection to PostgreSQL.
pub struct TlsStream<S>(tokio_rustls::client::TlsStream<S>);

impl<S: AsyncRead + AsyncWrite + Unpin> tokio_postgres::tls::TlsStream for TlsStream<S> {
    fn channel_binding(&self) -> ChannelBinding {
        // SCRAM channel binding is not offered; SCRAM itself still works.
        ChannelBinding::none()
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncRead for TlsStream<S> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> AsyncWrite for TlsStream<S> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn params(mode: SslMode, root_cert: Option<&str>) -> TlsParams {
        TlsParams {
            mode,
            root_cert: root_cert.map(str::to_string),
        }
    }

    #[test]
    fn tls_parameters_are_split_from_the_url() {
        use SslMode::*;
        let ok = |url: &str, rest: &str, expected: TlsParams| {
            assert_eq!(
                split_tls_params(url).unwrap(),
                (rest.to_string(), expected),
                "{url}"
            );
        };
        ok(
            "postgres://u@h/db",
            "postgres://u@h/db",
            params(Prefer, None),
        );
        ok(
            "postgres://u@h/db?sslmode=disable",
            "postgres://u@h/db",
            params(Disable, None),
        );
        ok(
            "postgres://u@h/db?sslmode=require&application_name=hub",
            "postgres://u@h/db?application_name=hub",
            params(Require, None),
        );
        ok(
            "postgresql://h1,h2/db?target_session_attrs=read-write&sslmode=verify-ca&sslrootcert=%2Fetc%2Fca.pem",
            "postgresql://h1,h2/db?target_session_attrs=read-write",
            params(VerifyCa, Some("/etc/ca.pem")),
        );
        ok(
            "postgres://h/db?sslmode=verify-full&sslrootcert=certs/ca.pem&connect_timeout=3",
            "postgres://h/db?connect_timeout=3",
            params(VerifyFull, Some("certs/ca.pem")),
        );
        ok(
            "postgres://h/db?sslmode=require&sslmode=verify-full&sslrootcert=system",
            "postgres://h/db",
            params(VerifyFull, Some("system")),
        );
        ok(
            "host=h dbname=db sslmode=require",
            "host=h dbname=db sslmode=require",
            params(Prefer, None),
        );
        for bad in [
            "postgres://h/db?sslmode=allow",
            "postgres://h/db?sslmode=verify_full",
            "postgres://h/db?sslmode=verify-full&sslrootcert=",
            "postgres://h/db?sslrootcert=%zz",
        ] {
            assert!(split_tls_params(bad).is_err(), "{bad} should be refused");
        }
    }

    #[test]
    fn chain_is_verified_only_when_libpq_would() {
        use SslMode::*;
        assert!(!params(Disable, Some("ca.pem")).verifies_chain());
        assert!(!params(Prefer, None).verifies_chain());
        assert!(!params(Require, None).verifies_chain());
        assert!(params(Require, Some("ca.pem")).verifies_chain());
        assert!(params(VerifyCa, None).verifies_chain());
        assert!(params(VerifyFull, Some("ca.pem")).verifies_chain());
    }

    #[test]
    fn a_missing_or_empty_root_file_is_a_startup_error() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("missing.pem");
        let err = TlsConnector::new(&params(
            SslMode::VerifyFull,
            Some(missing.to_str().unwrap()),
        ))
        .err()
        .unwrap();
        assert!(err.contains("sslrootcert"), "{err}");
        let empty = dir.path().join("empty.pem");
        std::fs::write(&empty, "not a certificate\n").unwrap();
        let err = TlsConnector::new(&params(SslMode::VerifyCa, Some(empty.to_str().unwrap())))
            .err()
            .unwrap();
        assert!(err.contains("no certificate"), "{err}");
        assert!(TlsConnector::new(&params(SslMode::VerifyFull, Some("system"))).is_ok());
        assert!(TlsConnector::new(&params(SslMode::Require, None)).is_ok());
    }
}

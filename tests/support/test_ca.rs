//! A test CA made with rcgen, and rustls server configurations whose leaf
//! it signs: shared by the TLS tests (`#[path = "support/test_ca.rs"]`).

use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, KeyPair};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use rustls::ServerConfig;
use std::sync::Arc;

/// A CA that can sign server certificates.
pub struct Ca {
    pub cert: rcgen::Certificate,
    key: KeyPair,
}

impl Ca {
    pub fn new(name: &str) -> Ca {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        let key = KeyPair::generate().unwrap();
        let cert = params.self_signed(&key).unwrap();
        Ca { cert, key }
    }

    /// A server configuration whose certificate (signed by this CA) names
    /// `names` (DNS names or IP addresses), with rcgen's validity.
    #[allow(dead_code)]
    pub fn server(&self, names: &[&str]) -> Arc<ServerConfig> {
        self.server_with(names, |_| {})
    }

    /// The same, valid from the start of year `from` to the start of year
    /// `to`.
    #[allow(dead_code)]
    pub fn server_valid(&self, names: &[&str], from: i32, to: i32) -> Arc<ServerConfig> {
        self.server_with(names, |p| {
            p.not_before = rcgen::date_time_ymd(from, 1, 1);
            p.not_after = rcgen::date_time_ymd(to, 1, 1);
        })
    }

    fn server_with(
        &self,
        names: &[&str],
        edit: impl FnOnce(&mut CertificateParams),
    ) -> Arc<ServerConfig> {
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, "server");
        edit(&mut params);
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.cert, &self.key).unwrap();
        let chain = vec![cert.der().clone(), self.cert.der().clone()];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .unwrap();
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Arc::new(config)
    }
}

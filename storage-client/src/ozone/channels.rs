//! One reused gRPC client per datanode address: HTTP/2 multiplexes every
//! request of the gateway to that datanode over one connection.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tonic::transport::Channel;

use super::grpc_tls;
use crate::ozone_tls::OzoneTls;
use crate::{Result, StorageError};

/// Clients of type `C` by `host:port`, created unconnected on first use.
pub(super) struct Channels<C> {
    clients: Arc<Mutex<HashMap<String, C>>>,
    connect_timeout: Duration,
    tls: Option<OzoneTls>,
}

impl<C> Clone for Channels<C> {
    fn clone(&self) -> Self {
        Self {
            clients: Arc::clone(&self.clients),
            connect_timeout: self.connect_timeout,
            tls: self.tls.clone(),
        }
    }
}

impl<C: Clone> Channels<C> {
    pub fn new(connect_timeout: Duration, tls: Option<OzoneTls>) -> Self {
        Self {
            clients: Arc::default(),
            connect_timeout,
            tls,
        }
    }

    /// The client for `address`; `make` wraps a new lazily connected
    /// channel in the service client (and sets its message limits).
    pub fn get(&self, address: &str, make: impl FnOnce(Channel) -> C) -> Result<C> {
        let mut clients = self
            .clients
            .lock()
            .map_err(|_| StorageError::Internal("datanode channel map poisoned".into()))?;
        if let Some(client) = clients.get(address) {
            return Ok(client.clone());
        }
        let endpoint = grpc_tls::endpoint(address, self.tls.as_ref(), self.connect_timeout)?;
        let client = make(endpoint.connect_lazy());
        clients.insert(address.to_owned(), client.clone());
        Ok(client)
    }
}

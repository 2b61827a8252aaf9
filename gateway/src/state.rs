//! What every request handler can reach.

use std::sync::Arc;

use storage_client::Storage;

use crate::auth::Verifier;

pub struct AppState {
    pub storage: Arc<Storage>,
    pub verifier: Arc<Verifier>,
    /// The region this gateway answers for (GetBucketLocation, SigV4 scope).
    pub region: String,
    /// Base domain for virtual-host style requests (`bucket.<domain>`), if any.
    pub domain: Option<String>,
}

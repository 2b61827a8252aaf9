//! The metadata calls the gateway makes as they are, as [`crate::Storage`]
//! offers them (it dereferences to [`MetadataFacade`]): each role's
//! `facade` calls, whose methods the role declarations make here (see
//! [`super::role`]), on the back end's roles with the cache in front.

use std::sync::Arc;

use super::Metadata;

/// The back end's metadata roles with the cache in front, and every
/// role's `facade` calls on them (`storage.lookup(object)`, ...).
pub struct MetadataFacade {
    roles: Arc<dyn Metadata>,
}

impl MetadataFacade {
    pub(crate) fn new(roles: Arc<dyn Metadata>) -> Self {
        Self { roles }
    }

    /// The roles, for the calls the facade composes.
    pub(crate) fn roles(&self) -> &Arc<dyn Metadata> {
        &self.roles
    }
}

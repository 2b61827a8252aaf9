//! S3 Object Lock, on back ends that keep versions (the embedded one; on
//! Ozone every object lock request is `501 NotImplemented`). A bucket's
//! lock ([`bucket`], [`configuration`]) makes each version written to it
//! carry the retention and legal hold its write asked for or the
//! bucket's default ([`write`]), changed later by [`retention`] and
//! [`legal_hold`]. Both live in the version's reserved metadata entries
//! (see `storage_client::VersionLock`), and storage itself refuses to
//! delete a locked version, in the delete's own transaction: DeleteObject
//! and DeleteObjects with a `versionId`, lifecycle expiration and an
//! admin's forced bucket delete all meet the same check. A delete
//! without a `versionId` only adds a delete marker and is allowed.

mod bucket;
mod configuration;
mod legal_hold;
mod retention;
mod write;

use http::{HeaderMap, HeaderName};
use storage_client::{KeyInfo, LEGAL_HOLD_ENTRY, RETENTION_ENTRY, Retention};

use super::authorise::LockHeaders;
use super::headers::insert;
use crate::xml;

pub use bucket::{
    enable_at_creation, get_object_lock_configuration, put_object_lock_configuration,
    refuse_suspending, requested_at_creation,
};
pub use legal_hold::{get_object_legal_hold, put_object_legal_hold};
pub use retention::{get_object_retention, put_object_retention};
pub use write::{Write, record};

#[cfg(feature = "fuzzing")]
pub use configuration::Configuration;
#[cfg(feature = "fuzzing")]
pub use legal_hold::requested_status;
#[cfg(feature = "fuzzing")]
pub use retention::requested_retention;

/// Whether a user metadata entry is one of the lock's, which no response
/// shows as user metadata.
pub fn is_lock_entry(name: &str) -> bool {
    name == RETENTION_ENTRY || name == LEGAL_HOLD_ENTRY
}

/// GET and HEAD's lock headers for a version that has a lock, those the
/// caller may see (`shown`). An entry that cannot be read shows nothing
/// here; deletes still refuse it.
pub(super) fn response_headers(out: &mut HeaderMap, info: &KeyInfo, shown: LockHeaders) {
    let user = &info.meta.user;
    if let Some(retention) = user
        .get(RETENTION_ENTRY)
        .and_then(|t| Retention::from_entry(t))
        .filter(|_| shown.retention)
    {
        let mode = HeaderName::from_static("x-amz-object-lock-mode");
        insert(out, mode, retention.mode.name());
        let until = HeaderName::from_static("x-amz-object-lock-retain-until-date");
        insert(out, until, &xml::iso8601(retention.until));
    }
    if let Some(status) = user.get(LEGAL_HOLD_ENTRY).filter(|_| shown.legal_hold) {
        let hold = HeaderName::from_static("x-amz-object-lock-legal-hold");
        insert(out, hold, status);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_client_can_name_a_lock_entry() {
        for entry in [RETENTION_ENTRY, LEGAL_HOLD_ENTRY] {
            assert!(is_lock_entry(entry));
            let header = format!("x-amz-meta-{entry}");
            assert!(HeaderName::from_bytes(header.as_bytes()).is_err());
        }
        assert!(!is_lock_entry("retention"));
    }
}

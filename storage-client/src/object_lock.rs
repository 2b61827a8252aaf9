//! A version's S3 object lock as storage keeps it: two reserved user
//! metadata entries of the version's record, whose names no client can
//! send (a space is not allowed in a header name) and which the gateway
//! shows no one as user metadata. Storage reads them itself so that a
//! version's delete checks its lock in the same transaction that deletes
//! it ([`crate::Storage::delete_version`]): a retention or legal hold put
//! concurrently either lands first and stops the delete, or finds the
//! version gone.

use std::collections::BTreeMap;
use std::time::{Duration, SystemTime};

use crate::StorageError;

/// The entry holding a version's retention: `<MODE> <retain-until, in
/// milliseconds since the Unix epoch>`.
pub const RETENTION_ENTRY: &str = "s3gw retention";
/// The entry holding a version's legal hold, once one was put: `ON` or
/// `OFF` (S3 answers a hold put OFF, and tells it from none ever put).
pub const LEGAL_HOLD_ENTRY: &str = "s3gw legal-hold";
pub const LEGAL_HOLD_ON: &str = "ON";
pub const LEGAL_HOLD_OFF: &str = "OFF";

/// S3's two retention modes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RetentionMode {
    /// Shortened or removed only by a caller allowed to bypass it.
    Governance,
    /// Never shortened or removed by anyone until it passes.
    Compliance,
}

impl RetentionMode {
    /// The name S3 uses, in headers and documents.
    pub fn name(self) -> &'static str {
        match self {
            Self::Governance => "GOVERNANCE",
            Self::Compliance => "COMPLIANCE",
        }
    }

    /// The mode S3 names `name` (exactly, as S3 spells it).
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "GOVERNANCE" => Some(Self::Governance),
            "COMPLIANCE" => Some(Self::Compliance),
            _ => None,
        }
    }
}

/// A version's retention: its mode and the instant it ends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Retention {
    pub mode: RetentionMode,
    pub until: SystemTime,
}

impl Retention {
    /// The text of [`RETENTION_ENTRY`] (milliseconds: S3 dates carry no
    /// finer precision).
    pub fn to_entry(&self) -> String {
        let millis = self
            .until
            .duration_since(SystemTime::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        format!("{} {millis}", self.mode.name())
    }

    /// The retention an entry holds; `None` if it is not one this version
    /// of the code wrote.
    pub fn from_entry(text: &str) -> Option<Self> {
        let (mode, millis) = text.split_once(' ')?;
        let millis: u64 = millis.parse().ok()?;
        Some(Self {
            mode: RetentionMode::parse(mode)?,
            until: SystemTime::UNIX_EPOCH.checked_add(Duration::from_millis(millis))?,
        })
    }

    /// Whether it still holds at `now`.
    pub fn in_force(&self, now: SystemTime) -> bool {
        self.until > now
    }
}

/// The lock of one version, as its user metadata records it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct VersionLock {
    pub retention: Option<Retention>,
    pub legal_hold: bool,
}

impl VersionLock {
    /// The lock `user` (a version's user metadata) records. An entry that
    /// cannot be read is `Corrupt`: a lock is never taken for absent.
    pub fn of(user: &BTreeMap<String, String>) -> crate::Result<Self> {
        let retention = match user.get(RETENTION_ENTRY) {
            Some(text) => Some(Retention::from_entry(text).ok_or_else(|| {
                StorageError::Corrupt(format!("unreadable object retention {text:?}"))
            })?),
            None => None,
        };
        let legal_hold = match user.get(LEGAL_HOLD_ENTRY).map(String::as_str) {
            None | Some(LEGAL_HOLD_OFF) => false,
            Some(LEGAL_HOLD_ON) => true,
            Some(other) => {
                return Err(StorageError::Corrupt(format!(
                    "unreadable object legal hold {other:?}"
                )));
            }
        };
        Ok(Self {
            retention,
            legal_hold,
        })
    }

    /// `ObjectLocked` if the version may not be deleted at `now`: while on
    /// legal hold, or while its retention holds (GOVERNANCE gives way to a
    /// caller that may bypass it and asked to).
    pub fn check_delete(&self, now: SystemTime, bypass_governance: bool) -> crate::Result<()> {
        let retained = self.retention.is_some_and(|r| {
            r.in_force(now) && !(r.mode == RetentionMode::Governance && bypass_governance)
        });
        match self.legal_hold || retained {
            true => Err(StorageError::ObjectLocked),
            false => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn user(entries: &[(&str, &str)]) -> BTreeMap<String, String> {
        entries
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    #[test]
    fn a_retention_entry_reads_back() {
        let until = SystemTime::UNIX_EPOCH + Duration::from_millis(1_800_000_000_123);
        for mode in [RetentionMode::Governance, RetentionMode::Compliance] {
            let retention = Retention { mode, until };
            assert_eq!(
                Retention::from_entry(&retention.to_entry()),
                Some(retention)
            );
        }
        for bad in ["", "GOVERNANCE", "governance 1", "COMPLIANCE x", "X 1"] {
            assert_eq!(Retention::from_entry(bad), None, "{bad:?}");
        }
        let corrupt = VersionLock::of(&user(&[(RETENTION_ENTRY, "nonsense")]));
        assert!(matches!(corrupt, Err(StorageError::Corrupt(_))));
    }

    #[test]
    fn what_a_lock_lets_delete() {
        let now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let later = now + Duration::from_secs(1);
        let locked = |mode, until| VersionLock {
            retention: Some(Retention { mode, until }),
            legal_hold: false,
        };
        let refused = |lock: VersionLock, bypass| lock.check_delete(now, bypass).is_err();
        assert!(!refused(VersionLock::default(), false));
        assert!(refused(locked(RetentionMode::Governance, later), false));
        assert!(!refused(locked(RetentionMode::Governance, later), true));
        assert!(refused(locked(RetentionMode::Compliance, later), true));
        assert!(!refused(locked(RetentionMode::Compliance, now), false));
        let held = VersionLock {
            legal_hold: true,
            ..VersionLock::default()
        };
        assert!(refused(held, true));
        let read = VersionLock::of(&user(&[(LEGAL_HOLD_ENTRY, LEGAL_HOLD_ON)])).unwrap();
        assert_eq!(read, held);
        let off = VersionLock::of(&user(&[(LEGAL_HOLD_ENTRY, LEGAL_HOLD_OFF)])).unwrap();
        assert_eq!(off, VersionLock::default());
        assert!(VersionLock::of(&user(&[(LEGAL_HOLD_ENTRY, "on")])).is_err());
    }
}

//! The console's sessions: kept in this replica's memory only, each a
//! random 256-bit id (the cookie) mapping to the key it signs as, its
//! CSRF token and its clocks. The secret stays here, never in the browser.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rand::Rng;
use subtle::ConstantTimeEq;

/// Most sessions kept at once; past them, expired ones are dropped and, if
/// none is, a sign-in is refused rather than another session forgotten.
const CAPACITY: usize = 10_000;

/// What a session signs as.
#[derive(Clone)]
pub struct Session {
    pub access_key: String,
    pub secret_key: String,
    pub csrf_token: String,
}

struct Entry {
    session: Session,
    created: Instant,
    used: Instant,
}

pub struct Sessions {
    idle: Duration,
    max: Duration,
    entries: Mutex<HashMap<String, Entry>>,
}

/// 256 random bits from the thread's CSPRNG, as hex.
fn random_id() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill(&mut bytes);
    hex::encode(bytes)
}

impl Sessions {
    pub fn new(idle: Duration, max: Duration) -> Self {
        Self {
            idle,
            max,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// How long a session lives at most.
    pub fn max(&self) -> Duration {
        self.max
    }

    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, Entry>> {
        // A panic while holding the lock leaves a map still worth using.
        self.entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn live(&self, entry: &Entry, now: Instant) -> bool {
        now.duration_since(entry.used) < self.idle && now.duration_since(entry.created) < self.max
    }

    /// Starts a session (always a new id: a sign-in never reuses one) and
    /// returns its id; `None` if this replica holds as many live sessions
    /// as it may.
    pub fn create(&self, access_key: &str, secret_key: &str) -> Option<(String, Session)> {
        let now = Instant::now();
        let mut entries = self.entries();
        if entries.len() >= CAPACITY {
            entries.retain(|_, entry| self.live(entry, now));
            if entries.len() >= CAPACITY {
                return None;
            }
        }
        let id = random_id();
        let session = Session {
            access_key: access_key.to_owned(),
            secret_key: secret_key.to_owned(),
            csrf_token: random_id(),
        };
        entries.insert(
            id.clone(),
            Entry {
                session: session.clone(),
                created: now,
                used: now,
            },
        );
        Some((id, session))
    }

    /// The live session with this id, now marked used; an expired one is
    /// dropped.
    pub fn get(&self, id: &str) -> Option<Session> {
        let now = Instant::now();
        let mut entries = self.entries();
        let entry = entries.get_mut(id)?;
        if !self.live(entry, now) {
            entries.remove(id);
            return None;
        }
        entry.used = now;
        Some(entry.session.clone())
    }

    pub fn remove(&self, id: &str) {
        self.entries().remove(id);
    }

    /// Ends every session of this access key (a deleted or rotated key).
    pub fn remove_key(&self, access_key: &str) {
        self.entries()
            .retain(|_, entry| entry.session.access_key != access_key);
    }
}

/// Whether `given` is the session's CSRF token, compared in constant time.
pub fn csrf_matches(session: &Session, given: &str) -> bool {
    session.csrf_token.as_bytes().ct_eq(given.as_bytes()).into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sign_ins_get_new_ids_and_sign_outs_end_them() {
        let sessions = Sessions::new(Duration::from_secs(60), Duration::from_secs(600));
        let (a, first) = sessions.create("AK", "SK").expect("room");
        let (b, _) = sessions.create("AK", "SK").expect("room");
        assert_ne!(a, b);
        assert_eq!(a.len(), 64);
        assert!(csrf_matches(&first, &first.csrf_token));
        assert!(!csrf_matches(&first, ""));
        assert!(sessions.get(&a).is_some());
        sessions.remove(&a);
        assert!(sessions.get(&a).is_none());
        sessions.remove_key("AK");
        assert!(sessions.get(&b).is_none());
    }

    #[test]
    fn expired_sessions_are_refused() {
        let sessions = Sessions::new(Duration::ZERO, Duration::from_secs(600));
        let (id, _) = sessions.create("AK", "SK").expect("room");
        assert!(sessions.get(&id).is_none());
        let sessions = Sessions::new(Duration::from_secs(60), Duration::ZERO);
        let (id, _) = sessions.create("AK", "SK").expect("room");
        assert!(sessions.get(&id).is_none());
    }
}

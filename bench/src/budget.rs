//! When the timed phase ends: at a deadline, or after a number of
//! operations, whichever comes first. Workers claim each operation before
//! starting it, so exactly `ops` operations start when a count is given.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

pub struct Budget {
    deadline: Instant,
    remaining: Option<AtomicU64>,
}

impl Budget {
    pub fn new(duration: Duration, ops: Option<u64>) -> Self {
        Self {
            deadline: Instant::now() + duration,
            remaining: ops.map(AtomicU64::new),
        }
    }

    /// True if one more operation may start.
    pub fn claim(&self) -> bool {
        if Instant::now() >= self.deadline {
            return false;
        }
        match &self.remaining {
            None => true,
            Some(remaining) => remaining
                .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
                .is_ok(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_operation_count_is_claimed_exactly() {
        let budget = Budget::new(Duration::from_secs(3600), Some(3));
        assert!(budget.claim());
        assert!(budget.claim());
        assert!(budget.claim());
        assert!(!budget.claim());
        assert!(!budget.claim());
    }

    #[test]
    fn a_passed_deadline_ends_the_phase_even_with_ops_left() {
        let budget = Budget::new(Duration::ZERO, Some(10));
        assert!(!budget.claim());
        let unlimited = Budget::new(Duration::ZERO, None);
        assert!(!unlimited.claim());
    }
}

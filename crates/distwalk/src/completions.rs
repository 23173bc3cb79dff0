//! When a rank reports finished imports to the ranks they came from: not one message per directory
//! as it finishes, but once the rank is idle, one message per peer with everything due to it.
//!
//! A completion only lets the origin run its post-order work for the directory (du's totals, rm's
//! rmdir), which can wait until this rank has nothing else to do; meanwhile more completions for the
//! same peer accumulate. Termination stays exact: a rank with completions due is not passive (it
//! would send a basic message), and an idle rank sends them before it passes the token or replies to
//! a wave.

use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct Completions {
    /// Export ids due to each peer.
    due: BTreeMap<u32, Vec<u64>>,
}

impl Completions {
    /// Work imported from `peer` under export id `id` is done here.
    pub fn finished(&mut self, peer: u32, id: u64) {
        self.due.entry(peer).or_default().push(id);
    }

    /// The messages to send now: none while the rank is busy; once idle, one per peer.
    pub fn take(&mut self, idle: bool) -> Vec<(u32, Vec<u64>)> {
        if !idle {
            return Vec::new();
        }
        std::mem::take(&mut self.due).into_iter().collect()
    }

    /// Whether nothing is due (a rank is passive only then).
    pub fn is_empty(&self) -> bool {
        self.due.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn held_while_busy_then_one_message_per_peer() {
        let mut c = Completions::default();
        c.finished(3, 10);
        c.finished(1, 11);
        c.finished(3, 12);
        assert!(c.take(false).is_empty(), "busy: nothing goes yet");
        assert!(!c.is_empty());
        assert_eq!(c.take(true), vec![(1, vec![11]), (3, vec![10, 12])]);
        assert!(c.is_empty());
        assert!(c.take(true).is_empty());
    }
}

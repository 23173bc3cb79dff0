//! How many workers a rank's node needs: as many as its file system serves at once, and no more.
//!
//! The engine's adaptive policy doubles the pool while calls are slow and work is queued. On a mount
//! that serves S requests at once, workers beyond S only wait in the mount's line — calls get slower,
//! which the policy reads as a reason to grow further — and each of them holds a directory that an
//! idle peer could have read. The governor watches the same mean call latency: the fastest mean seen
//! is the mount's service time; a mean well above it while every worker is busy means requests queue,
//! and `workers × fastest / mean` estimates S (the throughput the mount sustains, in calls in flight).
//! The governor then caps the workers that take tasks at that estimate (a little above, to keep the
//! mount full); the rest stay parked and their directories stay queued, where they can be exported.
//!
//! Pure: the caller feeds samples and applies the cap (an engine pool that parks workers above it).

use std::time::Duration;

/// A mean latency this much above the fastest seen means requests wait for the mount (not just the
/// jitter of the service time, or a few requests of its own the pool does not wait for).
const QUEUEING: f64 = 1.5;
/// Headroom above the estimated slots.
const HEADROOM: f64 = 1.1;

#[derive(Clone, Debug, Default)]
pub struct PoolGovernor {
    fastest: Option<Duration>,
    /// The most workers seen busy while calls did not wait.
    unqueued: usize,
    cap: Option<usize>,
}

impl PoolGovernor {
    /// One sample of the pool: `busy` workers were running tasks (all of the active ones when the
    /// pool is saturated), `latency` is the mean call latency since the last sample.
    pub fn sample(&mut self, active: usize, busy: usize, latency: Option<Duration>) {
        let Some(latency) = latency.filter(|l| !l.is_zero()) else { return };
        let fastest = *self.fastest.get_or_insert(latency);
        if latency < fastest {
            self.fastest = Some(latency);
        }
        if latency.as_secs_f64() < fastest.as_secs_f64() * QUEUEING {
            self.unqueued = self.unqueued.max(busy);
            return;
        }
        if busy < active {
            return; // idle workers: the slowness is not theirs
        }
        let slots = busy as f64 * fastest.as_secs_f64() / latency.as_secs_f64();
        let cap = ((slots * HEADROOM).ceil() as usize).max(self.unqueued);
        self.cap = Some(self.cap.map_or(cap, |c| c.min(cap)).max(1));
    }

    /// Workers that may take tasks: `workers` started, at most the estimated need.
    pub fn active(&self, workers: usize) -> usize {
        self.cap.map_or(workers, |cap| workers.min(cap))
    }

    /// The pool size to grow to when the engine's policy wants `wanted`: no growth past the cap.
    pub fn target(&self, wanted: usize) -> usize {
        self.cap.map_or(wanted, |cap| wanted.min(cap))
    }

    /// The estimated requests the node's mount serves at once, once measured.
    pub fn cap(&self) -> Option<usize> {
        self.cap
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn us(n: u64) -> Option<Duration> {
        Some(Duration::from_micros(n))
    }

    #[test]
    fn a_mount_that_keeps_up_sets_no_cap() {
        let mut g = PoolGovernor::default();
        g.sample(16, 16, us(500));
        g.sample(32, 32, us(520));
        g.sample(64, 64, us(480));
        assert_eq!(g.cap(), None);
        assert_eq!(g.target(128), 128);
        assert_eq!(g.active(128), 128);
    }

    #[test]
    fn queueing_on_the_mount_caps_the_pool_at_its_slots() {
        let mut g = PoolGovernor::default();
        g.sample(16, 16, us(500));
        g.sample(32, 32, us(500));
        g.sample(64, 64, us(500));
        g.sample(128, 128, us(1000)); // 64 slots: half the workers wait
        assert_eq!(g.cap(), Some(71), "64 slots and 10 % headroom");
        assert_eq!(g.active(128), 71);
        assert_eq!(g.target(256), 71, "no growth past the need");
        assert_eq!(g.active(16), 16);
    }

    #[test]
    fn only_a_busy_pool_says_anything_about_the_mount() {
        let mut g = PoolGovernor::default();
        g.sample(16, 16, us(500));
        g.sample(64, 10, us(900));
        assert_eq!(g.cap(), None, "idle workers: the slowness is not theirs");
        g.sample(64, 64, None);
        assert_eq!(g.cap(), None, "no calls, no evidence");
    }

    #[test]
    fn never_below_what_ran_without_waiting() {
        let mut g = PoolGovernor::default();
        g.sample(64, 64, us(500));
        g.sample(128, 128, us(1600)); // something else loads the mount too
        assert_eq!(g.cap(), Some(64), "64 ran without waiting");
        g.sample(64, 64, us(640));
        assert_eq!(g.cap(), Some(64), "a little waiting at the cap is not queueing");
    }

    #[test]
    fn waiting_from_the_start_is_measured_against_the_fastest_calls() {
        let mut g = PoolGovernor::default();
        g.sample(16, 1, us(500)); // the root alone
        g.sample(16, 16, us(1000));
        assert_eq!(g.cap(), Some(9), "8 slots and 10 % headroom");
        g.sample(9, 9, us(560));
        assert_eq!(g.cap(), Some(9), "nine workers on eight slots barely wait: the cap stays");
    }
}

//! How long an idle rank waits before its next work request after fruitless ones: exponential
//! back-off with a cap, reset by a success.
//!
//! A refusal doubles the pause, up to `cap`; half of each pause is random ("equal jitter"), so ranks
//! refused at the same moment — every rank at the end of a walk — do not ask again in lockstep. Work
//! that appears meanwhile does not wait for the pause to end: a rank that refused remembers who
//! asked and offers work as soon as it has some ([`crate::export`]), so the cap bounds the flood of
//! requests without delaying the recovery from it.

use std::time::Duration;

#[derive(Clone, Debug)]
pub struct Backoff {
    base: Duration,
    cap: Duration,
    /// Refusals since the last success.
    failures: u32,
}

/// The longest pause for a job of `ranks` ranks: 5 ms, or 10 µs per rank in bigger jobs, so that
/// idle ranks together ask at most ~100,000 times a second however many there are.
pub fn cap_for(ranks: u32) -> Duration {
    Duration::from_millis(5).max(Duration::from_micros(10) * ranks)
}

impl Backoff {
    /// Pauses of `base`, 2×`base`, 4×`base`… up to `cap`.
    pub fn new(base: Duration, cap: Duration) -> Self {
        Backoff { base, cap: cap.max(base), failures: 0 }
    }

    /// A request was refused: the pause before the next one.
    pub fn refused(&mut self, rng: &mut fastrand::Rng) -> Duration {
        let full = self.base.saturating_mul(1u32 << self.failures.min(31)).min(self.cap);
        if full < self.cap {
            self.failures += 1;
        }
        let half = full / 2;
        half + half.mul_f64(rng.f64())
    }

    /// A request brought work: the next refusal starts from `base` again.
    pub fn succeeded(&mut self) {
        self.failures = 0;
    }

    /// Refusals in a row so far.
    pub fn failures(&self) -> u32 {
        self.failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const US: Duration = Duration::from_micros(1);

    #[test]
    fn doubles_up_to_the_cap_with_half_of_each_pause_random() {
        let mut b = Backoff::new(100 * US, 1000 * US);
        let mut rng = fastrand::Rng::with_seed(3);
        let full = [100, 200, 400, 800, 1000, 1000, 1000];
        for (i, &f) in full.iter().enumerate() {
            let pause = b.refused(&mut rng);
            assert!(
                pause >= f * US / 2 && pause <= f * US,
                "refusal {i}: {pause:?} not within [{f}/2, {f}] µs"
            );
        }
        assert_eq!(b.failures(), 4, "the count stops growing at the cap");
    }

    #[test]
    fn a_success_starts_over() {
        let mut b = Backoff::new(100 * US, 10_000 * US);
        let mut rng = fastrand::Rng::with_seed(1);
        for _ in 0..5 {
            b.refused(&mut rng);
        }
        b.succeeded();
        assert_eq!(b.failures(), 0);
        assert!(b.refused(&mut rng) <= 100 * US);
    }

    #[test]
    fn jitter_spreads_ranks_refused_together() {
        let pauses: std::collections::BTreeSet<Duration> = (0..64u64)
            .map(|rank| {
                let mut rng = fastrand::Rng::with_seed(rank);
                let mut b = Backoff::new(1000 * US, 1000 * US);
                b.refused(&mut rng)
            })
            .collect();
        assert!(pauses.len() > 32, "64 ranks should not retry at a handful of instants: {}", pauses.len());
    }

    #[test]
    fn the_cap_grows_with_the_job() {
        assert_eq!(cap_for(16), Duration::from_millis(5));
        assert_eq!(cap_for(10_000), Duration::from_millis(100));
    }

    #[test]
    fn huge_counts_do_not_overflow() {
        let mut b = Backoff::new(Duration::from_secs(1), Duration::MAX);
        let mut rng = fastrand::Rng::with_seed(0);
        for _ in 0..100 {
            b.refused(&mut rng);
        }
        assert!(b.refused(&mut rng) > Duration::from_secs(1));
    }
}

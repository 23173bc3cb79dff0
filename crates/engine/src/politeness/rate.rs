//! A rate limit shared by many threads without a lock: the generic cell rate algorithm (GCRA).
//! One atomic holds the time at which the next call may start; each caller takes the next free
//! slot with a compare-and-swap and sleeps until it. Idle time is not banked, so a walk that pauses
//! does not burst afterwards: over any window of `w` nanoseconds at most `w / interval + 1` calls
//! start, whatever the number of threads.

use std::sync::atomic::{AtomicU64, Ordering};

pub(crate) struct RateLimit {
    /// Nanoseconds between two calls; a walk's share may change while it runs ([`RateLimit::set`]).
    interval_ns: AtomicU64,
    /// When the next call may start, in nanoseconds of the limiter's clock.
    pub(super) next_free_ns: AtomicU64,
}

impl RateLimit {
    /// `per_second` calls a second, at most one every `1e9 / per_second` ns (at least 1 ns).
    pub(crate) fn new(per_second: f64) -> RateLimit {
        RateLimit { interval_ns: AtomicU64::new(interval_ns(per_second)), next_free_ns: AtomicU64::new(0) }
    }

    /// From now on `per_second`. A slower rate spaces the slots after those already taken. A
    /// faster one forgets the taken slots still to come, so that the next call may start one new
    /// interval from `now_ns`: their callers must take new ones (true is returned), or a rank that
    /// gets its budget back would wait out the times it booked while it had little.
    pub(crate) fn set(&self, per_second: f64, now_ns: u64) -> bool {
        let interval = interval_ns(per_second);
        let faster = interval < self.interval_ns.swap(interval, Ordering::Relaxed);
        if faster {
            self.next_free_ns.fetch_min(now_ns + interval, Ordering::AcqRel);
        }
        faster
    }

    /// Takes the next free slot for a call wanting to start at `now_ns`; returns how long the caller
    /// must wait before it starts (0 if the slot is now).
    pub(crate) fn reserve(&self, now_ns: u64) -> u64 {
        let mut next_free = self.next_free_ns.load(Ordering::Relaxed);
        loop {
            let slot = next_free.max(now_ns);
            match self.next_free_ns.compare_exchange_weak(
                next_free,
                slot + self.interval_ns.load(Ordering::Relaxed),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return slot - now_ns,
                Err(current) => next_free = current,
            }
        }
    }
}

fn interval_ns(per_second: f64) -> u64 {
    (1e9 / per_second).round().max(1.0) as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn calls_at_one_instant_are_spaced_one_interval_apart() {
        let limit = RateLimit::new(1000.0); // 1 ms apart
        let waits: Vec<u64> = (0..5).map(|_| limit.reserve(7_000_000)).collect();
        assert_eq!(waits, [0, 1_000_000, 2_000_000, 3_000_000, 4_000_000]);
    }

    #[test]
    fn a_slower_rate_spaces_the_slots_after_those_taken() {
        let limit = RateLimit::new(1000.0); // 1 ms apart
        assert_eq!(limit.reserve(0), 0);
        assert_eq!(limit.reserve(0), 1_000_000);
        assert!(!limit.set(250.0, 0)); // 4 ms apart from the next slot on
        assert_eq!(limit.reserve(0), 2_000_000, "the slot booked at the old rate stands");
        assert_eq!(limit.reserve(0), 6_000_000);
    }

    #[test]
    fn a_faster_rate_forgets_the_slots_booked_ahead() {
        let limit = RateLimit::new(4.0); // 250 ms apart
        for booked in [0, 250_000_000, 500_000_000] {
            assert_eq!(limit.reserve(0), booked);
        }
        assert!(limit.set(1000.0, 1_000_000));
        assert_eq!(limit.reserve(1_000_000), 1_000_000, "one new interval after the change, not 750 ms");
        assert_eq!(limit.reserve(1_000_000), 2_000_000);
        assert!(!limit.set(1000.0, 1_000_000), "the same rate again changes nothing");
        assert_eq!(limit.reserve(1_000_000), 3_000_000);
    }

    #[test]
    fn idle_time_is_not_banked() {
        let limit = RateLimit::new(100.0); // 10 ms apart
        assert_eq!(limit.reserve(0), 0);
        // A second of silence, then three calls at once: the first goes now, the others wait their turn.
        assert_eq!(limit.reserve(1_000_000_000), 0);
        assert_eq!(limit.reserve(1_000_000_000), 10_000_000);
        assert_eq!(limit.reserve(1_000_000_000), 20_000_000);
    }

    #[test]
    fn a_caller_after_its_slot_waits_nothing_and_moves_the_schedule() {
        let limit = RateLimit::new(1000.0);
        assert_eq!(limit.reserve(0), 0);
        assert_eq!(limit.reserve(2_500_000), 0, "the slot at 1 ms has passed");
        assert_eq!(limit.reserve(2_500_000), 1_000_000, "next slot 3.5 ms");
    }

    #[test]
    fn threads_share_one_schedule_with_every_slot_taken_once() {
        // On a fake clock standing still at 0, 8 threads x 1,000 calls must get exactly the slots
        // 0, i, 2i, ... (8,000 distinct start times, none lost or doubled by a race).
        let limit = Arc::new(RateLimit::new(250_000.0)); // 4 µs apart
        let threads: Vec<_> = (0..8)
            .map(|_| {
                let limit = Arc::clone(&limit);
                std::thread::spawn(move || (0..1000).map(|_| limit.reserve(0)).collect::<Vec<u64>>())
            })
            .collect();
        let mut starts: Vec<u64> = threads.into_iter().flat_map(|t| t.join().unwrap()).collect();
        starts.sort_unstable();
        let expected: Vec<u64> = (0..8000).map(|k| k * 4_000).collect();
        assert_eq!(starts, expected);
    }

    #[test]
    fn any_window_holds_at_most_its_share_of_calls() {
        // Callers arriving at irregular fake times: count the calls starting in every window of
        // 10 intervals; none may exceed 10 + 1.
        let limit = RateLimit::new(1000.0);
        let mut rng = 0x2545_f491_4f6c_dd1du64;
        let mut now = 0u64;
        let mut starts = Vec::new();
        for _ in 0..5000 {
            rng ^= rng << 13;
            rng ^= rng >> 7;
            rng ^= rng << 17;
            now += rng % 1_500_000; // 0-1.5 ms between arrivals: sometimes early, sometimes late
            starts.push(now + limit.reserve(now));
        }
        assert!(starts.windows(2).all(|w| w[1] >= w[0] + 1_000_000), "one interval apart at least");
        let window = 10_000_000;
        for (i, &from) in starts.iter().enumerate() {
            let in_window = starts[i..].iter().take_while(|&&t| t < from + window).count();
            assert!(in_window <= 11, "{in_window} calls in 10 ms from {from}");
        }
    }
}

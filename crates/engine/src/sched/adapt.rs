//! Thread-count adaptation. A warm local walk is CPU-bound: about one thread per core is best and
//! more only add contention. On NFS, Lustre or any FUSE file system each metadata call waits
//! 0.2–2 ms on a server, and throughput grows with the calls in flight — far more threads than
//! cores. Rather than ask the user, the engine watches the mean latency of its own metadata calls
//! (openat, getdents64, statx): microseconds on a cached local file system, whatever the machine's
//! load (a thread is rarely preempted inside a call that short), and hundreds of microseconds when
//! a server answers. While every worker is busy, work is queued and calls are that slow, the pool
//! doubles. Known network file systems start high at once.

use std::time::Duration;

/// How many worker threads a walk uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadPolicy {
    /// Exactly this many (`-j N`).
    Fixed(usize),
    /// Start with `initial`, grow up to `max` while the workers wait on the file system.
    Adaptive { initial: usize, max: usize },
}

/// Threads to start with on a latency-bound (remote) file system.
pub const REMOTE_INITIAL_THREADS: usize = 16;
/// Upper bound for adaptive growth; past this the server side, not the client, is the limit.
pub const ADAPTIVE_MAX_THREADS: usize = 128;
/// How often the controller samples.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(20);
/// Mean metadata-call latency above which more threads overlap more waiting. A cold local SSD
/// (~100 µs per call) qualifies too, and benefits the same way.
pub const SLOW_CALL: Duration = Duration::from_micros(50);

impl ThreadPolicy {
    /// The default: one worker per core, growing when the file system turns out to be slow.
    pub fn adaptive_default() -> Self {
        ThreadPolicy::Adaptive { initial: cores(), max: ADAPTIVE_MAX_THREADS }
    }

    pub fn initial(self) -> usize {
        match self {
            ThreadPolicy::Fixed(n) => n.max(1),
            ThreadPolicy::Adaptive { initial, .. } => initial.max(1),
        }
    }

    pub fn max(self) -> usize {
        match self {
            ThreadPolicy::Fixed(n) => n.max(1),
            ThreadPolicy::Adaptive { initial, max } => max.max(initial).max(1),
        }
    }

    /// The same policy with no more than `limit` threads ever.
    pub fn clamped(self, limit: usize) -> Self {
        let limit = limit.max(1);
        match self {
            ThreadPolicy::Fixed(n) => ThreadPolicy::Fixed(n.min(limit)),
            ThreadPolicy::Adaptive { initial, max } => {
                ThreadPolicy::Adaptive { initial: initial.min(limit), max: max.min(limit) }
            }
        }
    }

    /// The starting count once the root's file system is known to be remote.
    pub fn for_remote_fs(self) -> Self {
        match self {
            ThreadPolicy::Adaptive { initial, max } => {
                ThreadPolicy::Adaptive { initial: initial.max(REMOTE_INITIAL_THREADS).min(max), max }
            }
            fixed => fixed,
        }
    }

    /// How many workers to have after a sample, given the workers started, how many of them are
    /// parked, how many tasks wait in queues, and the mean latency of the metadata calls made since
    /// the last sample (`None` if none finished).
    pub fn target(self, started: usize, idle: usize, queued: usize, call_latency: Option<Duration>) -> usize {
        let ThreadPolicy::Adaptive { max, .. } = self else {
            return started;
        };
        let waiting_on_fs = call_latency.is_some_and(|l| l >= SLOW_CALL);
        if idle == 0 && queued > 0 && waiting_on_fs { (started * 2).min(max) } else { started }
    }
}

/// Cores available to this process.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Turns running totals of call time and call count into the mean latency since the last sample.
#[derive(Default)]
pub struct IoSampler {
    last_ns: u64,
    last_calls: u64,
}

impl IoSampler {
    pub fn sample(&mut self, total_ns: u64, total_calls: u64) -> Option<Duration> {
        let (ns, calls) =
            (total_ns.saturating_sub(self.last_ns), total_calls.saturating_sub(self.last_calls));
        (self.last_ns, self.last_calls) = (total_ns, total_calls);
        (calls > 0).then(|| Duration::from_nanos(ns / calls))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SLOW: Option<Duration> = Some(Duration::from_micros(500));
    const FAST: Option<Duration> = Some(Duration::from_micros(2));

    #[test]
    fn grows_only_when_calls_are_slow_with_work_waiting() {
        let p = ThreadPolicy::Adaptive { initial: 2, max: 64 };
        assert_eq!(p.target(2, 0, 10, SLOW), 4, "slow calls with queued work grow");
        assert_eq!(p.target(2, 0, 10, FAST), 2, "fast calls (a cached local disk, however loaded) do not");
        assert_eq!(p.target(2, 1, 10, SLOW), 2, "an idle worker means there is no shortage");
        assert_eq!(p.target(2, 0, 0, SLOW), 2, "nothing queued, nothing to overlap");
        assert_eq!(p.target(2, 0, 10, None), 2, "no calls finished, no evidence");
        assert_eq!(p.target(64, 0, 10, SLOW), 64, "capped");
        assert_eq!(ThreadPolicy::Fixed(3).target(3, 0, 10, SLOW), 3, "-j is exact");
    }

    #[test]
    fn sampler_gives_the_mean_since_the_last_sample() {
        let mut s = IoSampler::default();
        assert_eq!(s.sample(1_000, 10), Some(Duration::from_nanos(100)));
        assert_eq!(s.sample(1_000, 10), None);
        assert_eq!(s.sample(61_000, 12), Some(Duration::from_micros(30)));
    }

    #[test]
    fn clamping_bounds_every_count() {
        assert_eq!(ThreadPolicy::Fixed(100_000).clamped(4096), ThreadPolicy::Fixed(4096));
        assert_eq!(ThreadPolicy::Fixed(3).clamped(4096), ThreadPolicy::Fixed(3));
        let p = ThreadPolicy::Adaptive { initial: 8, max: 128 }.clamped(4);
        assert_eq!((p.initial(), p.max()), (4, 4));
        assert_eq!(ThreadPolicy::Fixed(5).clamped(0).max(), 1);
    }

    #[test]
    fn remote_fs_starts_high_but_respects_fixed() {
        let p = ThreadPolicy::Adaptive { initial: 2, max: 128 }.for_remote_fs();
        assert_eq!(p.initial(), REMOTE_INITIAL_THREADS);
        assert_eq!(ThreadPolicy::Fixed(4).for_remote_fs().initial(), 4);
    }
}

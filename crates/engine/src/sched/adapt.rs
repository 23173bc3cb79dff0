//! Thread-count adaptation. A warm local walk is CPU-bound: about one thread per core is best and more
//! only add contention. On NFS, Lustre or any FUSE file system each metadata call waits 0.2–2 ms on a
//! server, and throughput grows with the calls in flight — far more threads than cores. Rather than ask
//! the user, the engine watches how busy its threads really are: if the process uses much less CPU
//! than its busy workers could, the workers are blocked in system calls, and more of them will overlap
//! more waits. Known network file systems start high at once.

use rustix::time::{ClockId, clock_gettime};
use std::time::{Duration, Instant};

/// How many worker threads a walk uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThreadPolicy {
    /// Exactly this many (`-j N`).
    Fixed(usize),
    /// Start with `initial`, grow up to `max` while the workers are blocked on I/O.
    Adaptive { initial: usize, max: usize },
}

/// Threads to start with on a latency-bound (remote) file system.
pub const REMOTE_INITIAL_THREADS: usize = 16;
/// Upper bound for adaptive growth; past this the server side, not the client, is the limit.
pub const ADAPTIVE_MAX_THREADS: usize = 128;
/// How often the controller samples utilisation.
pub const SAMPLE_INTERVAL: Duration = Duration::from_millis(20);

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
    /// parked, how many tasks wait in queues and how many cores the process kept busy.
    pub fn target(self, started: usize, idle: usize, queued: usize, busy_cores: f64) -> usize {
        let ThreadPolicy::Adaptive { max, .. } = self else {
            return started;
        };
        let working = started.saturating_sub(idle);
        // Grow only when every worker is busy, work is waiting, and the busy workers use less than
        // half the CPU they could: they are waiting on the file system, not computing.
        let cpu_capacity = working.min(cores()) as f64;
        if idle == 0 && queued > 0 && busy_cores < 0.5 * cpu_capacity {
            (started * 2).min(max)
        } else {
            started
        }
    }
}

/// Cores available to this process.
pub fn cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Measures how many cores the process kept busy between samples.
pub struct UtilizationSampler {
    last_cpu: Duration,
    last_wall: Instant,
}

impl Default for UtilizationSampler {
    fn default() -> Self {
        UtilizationSampler { last_cpu: process_cpu_time(), last_wall: Instant::now() }
    }
}

impl UtilizationSampler {
    /// Busy cores since the previous sample (CPU time / wall time).
    pub fn sample(&mut self) -> f64 {
        let (cpu, wall) = (process_cpu_time(), Instant::now());
        let used = cpu.saturating_sub(self.last_cpu).as_secs_f64();
        let elapsed = wall.duration_since(self.last_wall).as_secs_f64();
        (self.last_cpu, self.last_wall) = (cpu, wall);
        if elapsed > 0.0 { used / elapsed } else { 0.0 }
    }
}

fn process_cpu_time() -> Duration {
    let t = clock_gettime(ClockId::ProcessCPUTime);
    Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn grows_only_when_blocked_with_work_waiting() {
        let p = ThreadPolicy::Adaptive { initial: 2, max: 64 };
        assert_eq!(p.target(2, 0, 10, 0.05), 4, "blocked workers with queued work grow");
        assert_eq!(p.target(2, 0, 10, 1.9), 2, "CPU-bound workers do not");
        assert_eq!(p.target(2, 1, 10, 0.05), 2, "an idle worker means there is no shortage");
        assert_eq!(p.target(2, 0, 0, 0.05), 2, "nothing queued, nothing to overlap");
        assert_eq!(p.target(64, 0, 10, 0.05), 64, "capped");
        assert_eq!(ThreadPolicy::Fixed(3).target(3, 0, 10, 0.0), 3, "-j is exact");
    }

    #[test]
    fn remote_fs_starts_high_but_respects_fixed() {
        let p = ThreadPolicy::Adaptive { initial: 2, max: 128 }.for_remote_fs();
        assert_eq!(p.initial(), REMOTE_INITIAL_THREADS);
        assert_eq!(ThreadPolicy::Fixed(4).for_remote_fs().initial(), 4);
    }
}

//! How many worker threads this system allows one walk. `-j 100000` used to start threads until
//! `pthread_create` failed or memory ran out; the count is now clamped to the smallest of the
//! engine's ceiling, the user's process limit, the kernel's thread limit, the memory available and
//! the fd limit (each worker holds a few fds at once: a directory it reads, one it reopens through,
//! a tool's files — so under `ulimit -n 20` a few workers share what there is instead of failing
//! with EMFILE). Threads can still be refused later (other processes take the room): the pool then
//! keeps the workers it has.

use crate::sys::fd_limit;
use rustix::process::{Resource, getrlimit};

/// The most workers one walk runs, whatever is asked: far past what any file system's servers
/// answer in parallel (the adaptive default stops at 128), while each thread costs a stack and a
/// directory buffer.
pub const MAX_THREADS: usize = 4096;

/// Fds one worker may hold at once (engine and tool together), and those kept for the process's
/// own use (standard streams, outputs); the fd limit less these, divided by that, bounds the pool.
const FDS_PER_THREAD: usize = 4;
const FDS_RESERVED: usize = 8;

/// Memory one worker needs: its 64 KiB directory buffer, the stack pages it touches, its share of
/// the queues and the tool's per-thread state. The available memory is divided by this.
const MEMORY_PER_THREAD: u64 = 1 << 20;

/// The most threads a walk may start, and what sets that bound (for the warning).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ThreadLimit {
    pub max: usize,
    pub reason: &'static str,
}

/// The bound for this process now.
pub fn thread_limit() -> ThreadLimit {
    let mut limit = ThreadLimit { max: MAX_THREADS, reason: "the engine's ceiling" };
    let mut consider = |bound: Option<u64>, reason: &'static str| {
        let Some(bound) = bound else { return };
        let bound = usize::try_from(bound).unwrap_or(usize::MAX).max(1);
        if bound < limit.max {
            limit = ThreadLimit { max: bound, reason };
        }
    };
    // RLIMIT_NPROC counts every thread of the user (the calling one too); root is not held to it.
    if !rustix::process::geteuid().is_root() {
        consider(getrlimit(Resource::Nproc).current.map(|n| n.saturating_sub(1)), "RLIMIT_NPROC");
    }
    consider(read_number("/proc/sys/kernel/threads-max", "").map(|n| n / 2), "kernel.threads-max");
    let fds = fd_limit().saturating_sub(FDS_RESERVED) / FDS_PER_THREAD;
    consider(u64::try_from(fds).ok(), "RLIMIT_NOFILE");
    consider(
        read_number("/proc/meminfo", "MemAvailable:").map(|kib| kib * 1024 / MEMORY_PER_THREAD),
        "the available memory",
    );
    limit
}

/// The number after `label` in a /proc file (the file's first number when `label` is empty).
fn read_number(path: &str, label: &str) -> Option<u64> {
    let text = std::fs::read_to_string(path).ok()?;
    let rest = if label.is_empty() { text.as_str() } else { &text[text.find(label)? + label.len()..] };
    rest.split_whitespace().next()?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limit_is_at_least_one_and_at_most_the_ceiling() {
        let limit = thread_limit();
        assert!((1..=MAX_THREADS).contains(&limit.max), "{limit:?}");
    }

    #[test]
    fn reads_proc_numbers() {
        assert!(read_number("/proc/meminfo", "MemAvailable:").is_some_and(|kib| kib > 0));
        assert!(read_number("/proc/sys/kernel/threads-max", "").is_some_and(|n| n > 0));
        assert_eq!(read_number("/proc/meminfo", "NoSuchField:"), None);
    }
}

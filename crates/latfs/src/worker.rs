//! One-time setup of each FUSE worker thread, done on its first request.

use std::cell::Cell;
use std::num::NonZeroU64;

thread_local! {
    static PREPARED: Cell<bool> = const { Cell::new(false) };
}

/// Prepares the calling worker thread once:
/// - timer slack 1 ns, so a 500 µs delay sleeps ~500 µs instead of the default slack's +50 µs;
/// - its own umask of 0 (after `unshare(CLONE_FS)`, so the rest of the process keeps its umask): the
///   kernel has already applied the caller's umask to the modes it sends, and applying ours again
///   would create files with fewer permission bits than asked.
pub(crate) fn prepare_thread() {
    if PREPARED.get() {
        return;
    }
    PREPARED.set(true);
    // Both are best effort: a failure costs timing precision or mode bits, never correctness of reads.
    let _ = rustix::thread::set_current_timer_slack(NonZeroU64::new(1));
    // SAFETY: CLONE_FS only separates this thread's cwd, root and umask; no file descriptor table is
    // unshared, so fds stay valid across threads.
    if unsafe { rustix::thread::unshare_unsafe(rustix::thread::UnshareFlags::FS) }.is_ok() {
        rustix::process::umask(rustix::fs::Mode::empty());
    }
}

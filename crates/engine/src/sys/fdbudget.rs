//! The fd budget: directory fds kept open for children and chunks are counted, and once the budget is
//! spent new directories are not cached (children reopen through the ancestor chain instead). The
//! budget is half of `RLIMIT_NOFILE` after raising the soft limit to the hard one, which leaves room for
//! the tools' own files (copies, outputs, `-exec`).

use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

static OPEN_CACHED: AtomicUsize = AtomicUsize::new(0);
static ORIGINAL_LIMIT: OnceLock<Rlimit> = OnceLock::new();

/// `RLIMIT_NOFILE` as the process found it, before the budget raised it: what child processes
/// (`find -exec`) must get back.
pub fn original_nofile_limit() -> Rlimit {
    fd_budget();
    ORIGINAL_LIMIT.get().copied().unwrap_or_else(|| getrlimit(Resource::Nofile))
}

/// How many directory fds the engine may keep open at once.
pub fn fd_budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| {
        let limit = getrlimit(Resource::Nofile);
        let _ = ORIGINAL_LIMIT.set(limit);
        let mut soft = limit.current.unwrap_or(1 << 20);
        if let Some(hard) = limit.maximum.or(Some(1 << 20)) {
            let raised = Rlimit { current: Some(hard), maximum: limit.maximum };
            if hard > soft && setrlimit(Resource::Nofile, raised).is_ok() {
                soft = hard;
            }
        }
        let soft = usize::try_from(soft).unwrap_or(usize::MAX).min(1 << 20);
        (soft.saturating_sub(64) / 2).max(16)
    })
}

/// Directory fds currently cached by the engine.
pub fn open_cached_fds() -> usize {
    OPEN_CACHED.load(Ordering::Relaxed)
}

/// A directory fd that counts against the budget while it lives.
#[derive(Debug)]
pub struct CachedFd(OwnedFd);

impl CachedFd {
    /// Takes ownership of `fd` if the budget allows; gives it back otherwise.
    pub fn try_new(fd: OwnedFd) -> Result<Self, OwnedFd> {
        let budget = fd_budget();
        let previous = OPEN_CACHED.fetch_add(1, Ordering::Relaxed);
        if previous >= budget {
            OPEN_CACHED.fetch_sub(1, Ordering::Relaxed);
            return Err(fd);
        }
        Ok(CachedFd(fd))
    }
}

impl AsFd for CachedFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.0.as_fd()
    }
}

impl Drop for CachedFd {
    fn drop(&mut self) {
        OPEN_CACHED.fetch_sub(1, Ordering::Relaxed);
    }
}

//! The cache of open directory fds, least recently used first out (bfs's `bftw.c` cache).
//!
//! A directory's fd is kept open while its children and chunks still need it, so they are opened
//! and stat'ed relative to it. At most [`fd_budget`] stay open; past that, or when the system says
//! `EMFILE`, the least recently used fd that nobody is using right now is closed, and whoever
//! needs that directory again reopens it through its nearest cached ancestor. A fd in use is
//! *pinned* ([`PinnedFd`]) and never closed under its user. So a walk completes under any fd
//! limit above a handful — slower, never incomplete.

use super::fdbudget::fd_budget;
use rustix::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, Weak};

/// Cached fds open now.
static OPEN: AtomicUsize = AtomicUsize::new(0);

/// The unpinned cached fds by the time they were last released: the first is the one to close.
static LRU: Mutex<Lru> = Mutex::new(Lru { unpinned: BTreeMap::new(), clock: 0 });

struct Lru {
    unpinned: BTreeMap<u64, Weak<CachedFd>>,
    clock: u64,
}

/// Directory fds the engine holds open in its cache.
pub fn open_cached_fds() -> usize {
    OPEN.load(Ordering::Relaxed)
}

/// A directory fd in the cache. It may be closed by eviction whenever it is not pinned; then
/// [`CachedFd::pin`] says so and the directory is reopened.
#[derive(Debug)]
pub struct CachedFd {
    slot: Mutex<Slot>,
}

#[derive(Debug)]
struct Slot {
    fd: Option<OwnedFd>,
    pins: usize,
    /// Its key in the LRU while unpinned.
    stamp: u64,
    /// Its directory is done: close when the last pin goes.
    retired: bool,
}

/// A cached fd in use: it stays open until this is dropped.
#[derive(Debug)]
pub struct PinnedFd {
    cached: Arc<CachedFd>,
    raw: RawFd,
}

impl CachedFd {
    /// Puts `fd` in the cache, pinned for the caller, closing the least recently used fd if the
    /// cache is full; gives `fd` back if every cached fd is in use.
    pub fn cache(fd: OwnedFd) -> Result<PinnedFd, OwnedFd> {
        if !reserve_room() {
            return Err(fd);
        }
        let raw = fd.as_raw_fd();
        let slot = Slot { fd: Some(fd), pins: 1, stamp: 0, retired: false };
        Ok(PinnedFd { cached: Arc::new(CachedFd { slot: Mutex::new(slot) }), raw })
    }

    /// Pins the fd for use, or `None` if it was closed (evicted or retired).
    pub fn pin(self: &Arc<Self>) -> Option<PinnedFd> {
        let mut slot = self.lock();
        let raw = slot.fd.as_ref()?.as_raw_fd();
        if slot.retired {
            return None;
        }
        if slot.pins == 0 {
            lock_lru().unpinned.remove(&slot.stamp);
        }
        slot.pins += 1;
        Some(PinnedFd { cached: Arc::clone(self), raw })
    }

    /// The directory no longer needs its fd: close it now, or when its last user is done.
    pub fn retire(&self) {
        let mut slot = self.lock();
        slot.retired = true;
        if slot.pins == 0 {
            close(&mut slot);
        }
    }

    fn lock(&self) -> MutexGuard<'_, Slot> {
        self.slot.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for CachedFd {
    fn drop(&mut self) {
        let slot = self.slot.get_mut().unwrap_or_else(|e| e.into_inner());
        close(slot);
    }
}

impl PinnedFd {
    /// The cache entry, for the directory to keep.
    pub fn cached(&self) -> &Arc<CachedFd> {
        &self.cached
    }
}

impl AsFd for PinnedFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        // SAFETY: a pinned fd is not closed until the pin is dropped (eviction and retirement
        // skip pinned fds), and the borrow lives no longer than the pin.
        unsafe { BorrowedFd::borrow_raw(self.raw) }
    }
}

impl Drop for PinnedFd {
    fn drop(&mut self) {
        let mut slot = self.cached.lock();
        slot.pins -= 1;
        if slot.pins > 0 || slot.fd.is_none() {
            return;
        }
        if slot.retired {
            close(&mut slot);
            return;
        }
        let mut lru = lock_lru();
        lru.clock += 1;
        slot.stamp = lru.clock;
        lru.unpinned.insert(slot.stamp, Arc::downgrade(&self.cached));
    }
}

/// Closes a cached fd (its slot locked, unpinned).
fn close(slot: &mut Slot) {
    if slot.fd.take().is_some() {
        OPEN.fetch_sub(1, Ordering::Relaxed);
        if slot.pins == 0 {
            lock_lru().unpinned.remove(&slot.stamp);
        }
    }
}

/// Counts one more cached fd if the budget allows, evicting to make room.
fn reserve_room() -> bool {
    let budget = fd_budget();
    loop {
        let open = OPEN.load(Ordering::Relaxed);
        if open >= budget {
            if evict_one() {
                continue;
            }
            return false;
        }
        if OPEN.compare_exchange(open, open + 1, Ordering::Relaxed, Ordering::Relaxed).is_ok() {
            return true;
        }
    }
}

/// Closes the least recently used cached fd that is not in use; false if there is none. Called
/// when the cache is full and when the system runs out of fds (`EMFILE`).
pub fn evict_one() -> bool {
    loop {
        let Some((stamp, entry)) = lock_lru().unpinned.pop_first() else { return false };
        let Some(cached) = entry.upgrade() else { continue };
        let mut slot = cached.lock();
        // Pinned since, or released again (then it is the most recent, under a newer stamp).
        if slot.pins > 0 || slot.stamp != stamp || slot.fd.is_none() {
            continue;
        }
        slot.fd = None;
        OPEN.fetch_sub(1, Ordering::Relaxed);
        return true;
    }
}

fn lock_lru() -> MutexGuard<'static, Lru> {
    LRU.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir_fd() -> OwnedFd {
        super::super::open_path(b"/", true).unwrap()
    }

    fn is_open(cached: &CachedFd) -> bool {
        cached.lock().fd.is_some()
    }

    #[test]
    fn eviction_closes_released_fds_and_never_a_pinned_one() {
        let first = CachedFd::cache(dir_fd()).unwrap();
        let second = CachedFd::cache(dir_fd()).unwrap();
        let (a, b) = (Arc::clone(first.cached()), Arc::clone(second.cached()));
        drop(first);
        drop(second);
        let pinned = a.pin().expect("still open");
        // Other tests' released fds may be older than `b`: evict until `b` goes.
        while is_open(&b) {
            assert!(evict_one(), "an unpinned fd is there to evict");
        }
        assert!(b.pin().is_none(), "an evicted fd is reopened by its user, not pinned");
        assert!(is_open(&a) && rustix::fs::fstat(&pinned).is_ok(), "the pinned fd stays open");
        drop(pinned);
        a.retire();
        assert!(!is_open(&a) && a.pin().is_none(), "a retired fd is closed");
    }

    #[test]
    fn retiring_a_pinned_fd_closes_it_when_the_pin_goes() {
        let pinned = CachedFd::cache(dir_fd()).unwrap();
        let cached = Arc::clone(pinned.cached());
        cached.retire();
        assert!(is_open(&cached) && rustix::fs::fstat(&pinned).is_ok(), "still open while pinned");
        drop(pinned);
        assert!(!is_open(&cached) && cached.pin().is_none());
    }
}

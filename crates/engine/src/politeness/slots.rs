//! A cap on the calls in progress at once, shared by many threads: a counting semaphore.

use std::sync::{Condvar, Mutex};

pub(crate) struct Slots {
    free: Mutex<usize>,
    freed: Condvar,
}

/// A slot held until dropped.
pub(crate) struct Slot<'a>(&'a Slots);

impl Slots {
    pub(crate) fn new(count: usize) -> Slots {
        Slots { free: Mutex::new(count), freed: Condvar::new() }
    }

    /// Waits for a free slot and takes it.
    pub(crate) fn take(&self) -> Slot<'_> {
        let mut free = self.free.lock().unwrap_or_else(|e| e.into_inner());
        while *free == 0 {
            free = self.freed.wait(free).unwrap_or_else(|e| e.into_inner());
        }
        *free -= 1;
        Slot(self)
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        *self.0.free.lock().unwrap_or_else(|e| e.into_inner()) += 1;
        self.0.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn never_more_holders_than_slots_and_every_taker_gets_one() {
        let slots = Slots::new(3);
        let holding = AtomicUsize::new(0);
        let most = AtomicUsize::new(0);
        let done = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..2000 {
                        let _slot = slots.take();
                        let now = holding.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(now, Ordering::SeqCst);
                        std::thread::yield_now();
                        holding.fetch_sub(1, Ordering::SeqCst);
                        done.fetch_add(1, Ordering::SeqCst);
                    }
                });
            }
        });
        assert_eq!(done.load(Ordering::SeqCst), 16_000);
        assert!(most.load(Ordering::SeqCst) <= 3, "{} held at once", most.load(Ordering::SeqCst));
        assert_eq!(*slots.free.lock().unwrap(), 3, "every slot given back");
    }
}

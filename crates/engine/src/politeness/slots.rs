//! A cap on the calls in progress at once, shared by many threads: a counting semaphore whose
//! count may change while it is held (a rank's share of the budget moves with its work).

use std::sync::{Condvar, Mutex};

pub(crate) struct Slots {
    count: Mutex<Count>,
    freed: Condvar,
}

struct Count {
    capacity: usize,
    taken: usize,
}

/// A slot held until dropped.
pub(crate) struct Slot<'a>(&'a Slots);

impl Slots {
    pub(crate) fn new(capacity: usize) -> Slots {
        Slots { count: Mutex::new(Count { capacity, taken: 0 }), freed: Condvar::new() }
    }

    /// Waits for a free slot and takes it.
    pub(crate) fn take(&self) -> Slot<'_> {
        let mut count = self.lock();
        while count.taken >= count.capacity {
            count = self.freed.wait(count).unwrap_or_else(|e| e.into_inner());
        }
        count.taken += 1;
        Slot(self)
    }

    /// From now on at most `capacity` at once: a smaller one lets no new call start until enough
    /// of those in progress have ended.
    pub(crate) fn set_capacity(&self, capacity: usize) {
        self.lock().capacity = capacity;
        self.freed.notify_all();
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Count> {
        self.count.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Drop for Slot<'_> {
    fn drop(&mut self) {
        self.0.lock().taken -= 1;
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
        assert_eq!(slots.lock().taken, 0, "every slot given back");
    }

    #[test]
    fn a_smaller_capacity_holds_new_calls_until_enough_have_ended() {
        let slots = Slots::new(3);
        let mut held: Vec<Slot> = (0..3).map(|_| slots.take()).collect();
        slots.set_capacity(1);
        held.truncate(1);
        let would_wait = |slots: &Slots| {
            let count = slots.lock();
            count.taken >= count.capacity
        };
        assert!(would_wait(&slots), "two of three ended, one still in progress: all a capacity of 1 allows");
        held.clear();
        assert!(!would_wait(&slots));
        let _one = slots.take();
        assert!(would_wait(&slots));
        slots.set_capacity(4);
        let more: Vec<Slot> = (0..3).map(|_| slots.take()).collect();
        assert_eq!(more.len() + 1, 4, "a larger capacity admits more at once");
        assert!(would_wait(&slots));
    }
}

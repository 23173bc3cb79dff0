//! A mount: a fixed number of request slots serving file-system requests first come, first served —
//! latfs's worker threads, or the RPCs in flight a parallel file system's client allows.

use crate::model::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

pub struct Mount {
    /// When each slot is next free.
    free_at: BinaryHeap<Reverse<Time>>,
}

impl Mount {
    pub fn new(slots: u32) -> Self {
        Mount { free_at: (0..slots.max(1)).map(|_| Reverse(0)).collect() }
    }

    /// A request arriving at `now` that takes `service`: when it completes. Requests must arrive in
    /// time order (the simulation's events do).
    pub fn request(&mut self, now: Time, service: Time) -> Time {
        let Reverse(free) = self.free_at.pop().expect("a mount has slots");
        let done = free.max(now) + service;
        self.free_at.push(Reverse(done));
        done
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_beyond_the_slots_wait_in_line() {
        let mut m = Mount::new(2);
        assert_eq!(m.request(0, 10), 10);
        assert_eq!(m.request(0, 10), 10);
        assert_eq!(m.request(0, 10), 20, "the third waits for a slot");
        assert_eq!(m.request(5, 10), 20);
        assert_eq!(m.request(30, 10), 40, "an idle mount serves at once");
    }
}

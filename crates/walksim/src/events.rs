//! The event queue: events in time order, and in the order they were scheduled at equal times, so
//! that a run is a function of its seed.

use crate::model::Time;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Event {
    /// A worker thread's file-system request completed.
    RequestDone { rank: u32, thread: u32 },
    /// A message reached its destination rank.
    Arrive { message: u32 },
    /// A rank's communication thread wakes up.
    Poll { rank: u32 },
    /// A rank's pool controller samples (the engine's `Driver::tick`).
    Tick { rank: u32 },
}

#[derive(Default)]
pub struct Events {
    heap: BinaryHeap<Reverse<(Time, u64, Event)>>,
    scheduled: u64,
}

impl Events {
    pub fn push(&mut self, at: Time, event: Event) {
        self.heap.push(Reverse((at, self.scheduled, event)));
        self.scheduled += 1;
    }

    pub fn pop(&mut self) -> Option<(Time, Event)> {
        self.heap.pop().map(|Reverse((at, _, event))| (at, event))
    }

    /// Events handled or pending so far.
    pub fn scheduled(&self) -> u64 {
        self.scheduled
    }
}

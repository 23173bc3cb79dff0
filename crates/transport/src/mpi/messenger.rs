//! The MPI side of [`crate::Messenger`]: its own tag, so its messages never mix with the walk's.

use super::LAYER;
use super::Transport;
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use std::time::{Duration, Instant};

pub struct MpiMessenger<'w> {
    world: &'w SimpleCommunicator,
    transport: Transport<'w>,
}

impl<'w> MpiMessenger<'w> {
    pub fn new(world: &'w SimpleCommunicator) -> Self {
        MpiMessenger { world, transport: Transport::new(world) }
    }

    pub fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    pub fn size(&self) -> u32 {
        self.world.size() as u32
    }

    pub fn send(&mut self, to: u32, bytes: Vec<u8>) -> Result<(), String> {
        if to >= self.size() {
            return Err(format!("no process {to} (there are {})", self.size()));
        }
        self.transport.send(to, LAYER, bytes);
        Ok(())
    }

    pub fn receive(&mut self, deadline: Option<Instant>) -> Option<(u32, Vec<u8>)> {
        let mut pause = Duration::from_micros(20);
        loop {
            self.transport.progress();
            if let Some(m) = self.transport.poll_tag(LAYER) {
                return Some((m.from, m.bytes));
            }
            if deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }

    /// Drops whatever arrives while it waits. That is safe only because a process has one messenger
    /// exchange (the group layer's, in `canopy_group::launch`) and exits after it: a second exchange
    /// would need what the walk's quiesce does, a second barrier, or a rank that left first could
    /// send the next exchange's messages to one still dropping them here.
    pub fn finish(&mut self, deadline: Option<Instant>) -> bool {
        let mut barrier = self.world.immediate_barrier();
        let mut pause = Duration::from_micros(20);
        loop {
            self.transport.progress();
            while self.transport.poll_tag(LAYER).is_some() {}
            barrier = match barrier.test() {
                Ok(_) => return true,
                Err(pending) => pending,
            };
            if deadline.is_some_and(|d| Instant::now() >= d) {
                // The barrier can never complete now; MPI keeps it until the job is aborted.
                std::mem::forget(barrier);
                return false;
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(1));
        }
    }
}

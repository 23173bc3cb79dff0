//! Nonblocking point-to-point messages on the world communicator. A send never blocks: its buffer
//! is handed to `MPI_Isend` and reclaimed once the request completes, so two ranks sending to each
//! other at once cannot deadlock (libcircle's bug, hpc/libcircle#45). Receives are polled with a
//! matched probe on any source and tag.

use mpi::Tag;
use mpi::point_to_point::{Destination, MatchedReceiveVec, Source};
use mpi::request::{Request, StaticScope};
use mpi::topology::{Communicator, SimpleCommunicator};
use std::time::{Duration, Instant};

/// A message's size class: 0 for an empty message (a work request, a refusal), else `c` for sizes
/// in [2^(c-1), 2^c) bytes.
pub fn size_class(bytes: usize) -> usize {
    (usize::BITS - bytes.leading_zeros()) as usize
}

pub struct Incoming {
    pub from: u32,
    pub tag: Tag,
    pub bytes: Vec<u8>,
}

struct InFlight {
    request: Request<'static, [u8], StaticScope>,
    /// The buffer behind `request`, leaked while MPI owns it.
    buffer: *mut [u8],
}

pub struct Transport<'w> {
    world: &'w SimpleCommunicator,
    in_flight: Vec<InFlight>,
    pub messages_to: Vec<u64>,
    pub bytes_to: Vec<u64>,
    /// Messages sent by size class ([`size_class`]).
    pub message_sizes: Vec<u64>,
    /// Time spent inside MPI calls.
    pub comm: Duration,
}

impl<'w> Transport<'w> {
    pub fn new(world: &'w SimpleCommunicator) -> Self {
        let size = world.size() as usize;
        Transport {
            world,
            in_flight: Vec::new(),
            messages_to: vec![0; size],
            bytes_to: vec![0; size],
            message_sizes: Vec::new(),
            comm: Duration::ZERO,
        }
    }

    pub fn send(&mut self, to: u32, tag: Tag, bytes: Vec<u8>) {
        let started = Instant::now();
        self.messages_to[to as usize] += 1;
        self.bytes_to[to as usize] += bytes.len() as u64;
        let class = size_class(bytes.len());
        if self.message_sizes.len() <= class {
            self.message_sizes.resize(class + 1, 0);
        }
        self.message_sizes[class] += 1;
        let buffer: *mut [u8] = Box::into_raw(bytes.into_boxed_slice());
        // SAFETY: the buffer is leaked until the request completes (see `progress`), so it outlives
        // the send as StaticScope requires.
        let data: &'static [u8] = unsafe { &*buffer };
        let request = self.world.process_at_rank(to as i32).immediate_send_with_tag(StaticScope, data, tag);
        self.in_flight.push(InFlight { request, buffer });
        self.comm += started.elapsed();
        self.progress();
    }

    /// Frees the buffers of completed sends.
    pub fn progress(&mut self) {
        let started = Instant::now();
        let mut still = Vec::with_capacity(self.in_flight.len());
        for send in self.in_flight.drain(..) {
            match send.request.test() {
                // SAFETY: the request is complete; MPI no longer reads the buffer.
                Ok(_) => drop(unsafe { Box::from_raw(send.buffer) }),
                Err(request) => still.push(InFlight { request, buffer: send.buffer }),
            }
        }
        self.in_flight = still;
        self.comm += started.elapsed();
    }

    /// The next message that has arrived, if any.
    pub fn poll(&mut self) -> Option<Incoming> {
        let started = Instant::now();
        let probed = self.world.any_process().immediate_matched_probe();
        let incoming = probed.map(|(message, status)| {
            let (bytes, status) = (message, status).matched_receive_vec::<u8>();
            Incoming { from: status.source_rank() as u32, tag: status.tag(), bytes }
        });
        self.comm += started.elapsed();
        incoming
    }

    /// The next message with `tag` that has arrived, if any (others stay queued).
    pub fn poll_tag(&mut self, tag: Tag) -> Option<Incoming> {
        let started = Instant::now();
        let probed = self.world.any_process().immediate_matched_probe_with_tag(tag);
        let incoming = probed.map(|(message, status)| {
            let (bytes, status) = (message, status).matched_receive_vec::<u8>();
            Incoming { from: status.source_rank() as u32, tag: status.tag(), bytes }
        });
        self.comm += started.elapsed();
        incoming
    }

    /// Blocks until every send has completed.
    pub fn flush(&mut self) {
        while !self.in_flight.is_empty() {
            self.progress();
            if !self.in_flight.is_empty() {
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }
}

impl Drop for Transport<'_> {
    fn drop(&mut self) {
        self.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::size_class;

    #[test]
    fn size_classes_are_empty_then_powers_of_two() {
        let classes: Vec<usize> = [0, 1, 2, 3, 4, 1023, 1024, 1025].iter().map(|&b| size_class(b)).collect();
        assert_eq!(classes, [0, 1, 2, 2, 3, 10, 11, 11]);
    }
}

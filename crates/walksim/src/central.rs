//! CP, the seed's Algorithm 1, per directory: rank 0 is a master that holds the queue of directories
//! and walks nothing; a worker asks it for work, gets one directory, reads it (stats its entries,
//! shares a big one's chunks among its own threads), sends the subdirectories it found back, and asks
//! again. Three messages per directory. The master knows when the walk is over — its queue is empty
//! and every directory it handed out has come back — and tells every worker to stop.

use crate::model::Time;
use crate::outcome::shape;
use crate::pool::{Task, Work};
use crate::sim::{Body, Protocol, Sim};
use canopy_distwalk::termination::Signal;
use std::collections::VecDeque;

#[derive(Default)]
pub(crate) struct Master {
    pub queue: VecDeque<Work>,
    /// Workers that asked and got nothing yet, in the order they asked.
    waiting: VecDeque<u32>,
    /// Directories handed out and not yet returned.
    outstanding: u32,
}

#[derive(Default)]
pub(crate) struct Worker {
    /// A request is on its way or waiting at the master.
    requested: bool,
    /// Working on a directory whose results are due.
    busy: bool,
}

impl Sim<'_> {
    fn master(&mut self, rank: u32) -> &mut Master {
        match &mut self.ranks[rank as usize].protocol {
            Protocol::Master(master) => master,
            _ => unreachable!("rank {rank} is not CP's master"),
        }
    }

    fn worker(&mut self, rank: u32) -> &mut Worker {
        match &mut self.ranks[rank as usize].protocol {
            Protocol::Worker(worker) => worker,
            _ => unreachable!("rank {rank} is not a CP worker"),
        }
    }

    pub(crate) fn poll_master(&mut self, rank: u32, inbox: Vec<usize>, clock: &mut Time) -> Option<Time> {
        for id in inbox {
            let message = self.receive(id, clock);
            match message.body {
                Body::WorkRequest(_) => self.master(rank).waiting.push_back(message.from),
                Body::Results(found) => {
                    let master = self.master(rank);
                    master.queue.extend(found);
                    master.outstanding -= 1;
                }
                _ => unreachable!("only requests and results reach the master"),
            }
        }
        loop {
            let master = self.master(rank);
            if master.queue.is_empty() {
                break;
            }
            let Some(worker) = master.waiting.pop_front() else { break };
            let work = master.queue.pop_front().expect("checked non-empty");
            master.outstanding += 1;
            let bytes = self.wire.batch(rank, 1, self.wire.task(shape(self.tree, work)));
            self.send(rank, worker, Body::Directory(work), bytes, clock);
        }
        let master = self.master(rank);
        if master.queue.is_empty() && master.outstanding == 0 && !self.ranks[rank as usize].stopped {
            self.detected(*clock);
            for worker in 1..self.config.ranks {
                let bytes = self.wire.signal(&Signal::Stop);
                self.send(rank, worker, Body::Signal(Signal::Stop), bytes, clock);
            }
        }
        None
    }

    pub(crate) fn poll_worker(&mut self, rank: u32, inbox: Vec<usize>, clock: &mut Time) -> Option<Time> {
        for id in inbox {
            let message = self.receive(id, clock);
            match message.body {
                Body::Directory(work) => {
                    let worker = self.worker(rank);
                    (worker.requested, worker.busy) = (false, true);
                    self.ranks[rank as usize].stats.requests_fruitful += 1;
                    self.push(rank, Task { work, group: None });
                }
                Body::Signal(Signal::Stop) => self.stopped(rank, *clock),
                _ => unreachable!("only directories and the stop reach a CP worker"),
            }
        }
        if self.ranks[rank as usize].pool.pending() > 0 || self.ranks[rank as usize].stopped {
            return None;
        }
        if self.worker(rank).busy {
            self.worker(rank).busy = false;
            let found = self.ranks[rank as usize].pool.results.replace(Vec::new()).unwrap_or_default();
            let task_bytes: usize = found.iter().map(|&w| self.wire.task(shape(self.tree, w))).sum();
            let bytes = self.wire.batch(rank, found.len(), task_bytes);
            self.send(rank, 0, Body::Results(found), bytes, clock);
        }
        if !self.worker(rank).requested {
            self.worker(rank).requested = true;
            self.ranks[rank as usize].stats.requests_sent += 1;
            self.send(rank, 0, Body::WorkRequest(0), 0, clock);
        }
        None
    }
}

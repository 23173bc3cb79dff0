//! What both walk loops share on a rank's communication thread: counted (basic) sends for Safra,
//! completions going back to where their directories' parents live, the token, stopping, and the
//! quiet exit that leaves no message behind.

use super::forward::{self, Forwarder};
use super::protocol::{
    COMPLETE, NO_WORK, OFFER, OUTPUT, OUTPUT_END, STOP, TOKEN, WORK, WORK_REQUEST, decode, encode,
};
use crate::budget::BudgetShare;
use crate::safra::{Safra, Step};
use crate::stats::{PeerTraffic, RankStats, TOP_PEERS};
use canopy_engine::remote::{Completion, RemoteTask};
use canopy_engine::{DistributedVisitor, Driver, Politeness};
use canopy_transport::mpi::{Incoming, Transport};
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::{Deserialize, Serialize};
use std::time::{Duration, Instant};

/// Work on the wire.
#[derive(Serialize, Deserialize)]
pub struct WorkBatch<J, D> {
    /// The rank whose directories the tasks belong to (completions go there).
    pub origin: u32,
    /// The sender's pool size: H-DRQS grows the receiver's to it
    /// ([`crate::export::ExportPolicy::pool_for_import`]).
    pub sender_threads: u32,
    pub tasks: Vec<RemoteTask<J, D>>,
    /// Politeness budget that goes with the work ([`crate::budget::Budget::half`]).
    pub budget: Option<BudgetShare>,
}

impl<J, D> WorkBatch<J, D> {
    /// `tasks` of `origin`'s, sent by the rank `driver` runs.
    pub fn new<V: DistributedVisitor>(
        origin: u32,
        tasks: Vec<RemoteTask<J, D>>,
        driver: &Driver<'_, '_, '_, V>,
    ) -> Self {
        WorkBatch {
            origin,
            sender_threads: u32::try_from(driver.workers()).unwrap_or(u32::MAX),
            tasks,
            budget: None,
        }
    }
}

/// What a work request carries: under H-DRQS the asker's pending tasks, and under a politeness
/// budget what an asker out of work gives away ([`crate::budget::Budget::spare`]). No bytes when neither.
#[derive(Default, Serialize, Deserialize)]
pub struct WorkRequest {
    pub pending: Option<u32>,
    pub budget: Option<BudgetShare>,
}

impl WorkRequest {
    fn to_bytes(&self) -> Vec<u8> {
        if self.pending.is_none() && self.budget.is_none() { Vec::new() } else { encode(self) }
    }

    pub fn from_bytes(bytes: &[u8]) -> WorkRequest {
        if bytes.is_empty() { WorkRequest::default() } else { decode(bytes) }
    }
}

/// What came with imported work.
pub struct Imported {
    /// The sender's pool size.
    pub sender_threads: usize,
    pub budget: Option<BudgetShare>,
}

pub struct Comm<'w> {
    pub world: &'w SimpleCommunicator,
    pub rank: u32,
    pub size: u32,
    pub transport: Transport<'w>,
    pub safra: Safra,
    pub stopping: bool,
    /// The rank asked for work and not yet answered.
    pub asked: Option<u32>,
    pub stats: RankStats,
    idle_since: Option<Instant>,
    pub rng: fastrand::Rng,
}

impl<'w> Comm<'w> {
    pub fn new(world: &'w SimpleCommunicator) -> Self {
        let (rank, size) = (world.rank() as u32, world.size() as u32);
        Comm {
            world,
            rank,
            size,
            transport: Transport::new(world),
            safra: Safra::new(rank, size),
            stopping: false,
            asked: None,
            stats: RankStats::default(),
            idle_since: None,
            rng: fastrand::Rng::with_seed(0xd15c ^ u64::from(rank)),
        }
    }

    /// Sends a message that carries work (counted for termination).
    pub fn send_basic(&mut self, to: u32, tag: mpi::Tag, bytes: Vec<u8>) {
        self.safra.sent_basic(1);
        self.transport.send(to, tag, bytes);
    }

    /// Asks `victim` for work.
    pub fn ask(&mut self, victim: u32, request: &WorkRequest) {
        self.transport.send(victim, WORK_REQUEST, request.to_bytes());
        self.asked = Some(victim);
        self.stats.work_requests_sent += 1;
    }

    /// Sends the work in `batch` to `to` (or a refusal if there is none).
    pub fn give<J: Serialize, D: Serialize>(&mut self, to: u32, batch: &WorkBatch<J, D>) {
        if batch.tasks.is_empty() {
            self.transport.send(to, NO_WORK, Vec::new());
        } else {
            self.stats.tasks_exported += batch.tasks.len() as u64;
            self.send_basic(to, WORK, encode(batch));
        }
    }

    /// Sends work to `to` unasked.
    pub fn offer<J: Serialize, D: Serialize>(&mut self, to: u32, batch: &WorkBatch<J, D>) {
        self.stats.tasks_exported += batch.tasks.len() as u64;
        self.stats.work_offers_sent += 1;
        self.send_basic(to, OFFER, encode(batch));
    }

    /// Imports a batch of work (a basic message).
    pub fn take_work<V: DistributedVisitor>(
        &mut self,
        driver: &Driver<'_, '_, '_, V>,
        bytes: &[u8],
    ) -> Imported {
        self.safra.received_basic();
        let batch: WorkBatch<V::Job, V::DirData> = decode(bytes);
        self.stats.tasks_imported += batch.tasks.len() as u64;
        if !self.stopping {
            driver.import(batch.origin, batch.tasks);
        }
        Imported { sender_threads: batch.sender_threads as usize, budget: batch.budget }
    }

    /// Handles the messages both schedulers share; returns the message back if it is not one.
    pub fn handle_common<V: DistributedVisitor>(
        &mut self,
        driver: &Driver<'_, '_, '_, V>,
        forwarder: &Forwarder,
        message: Incoming,
    ) -> Option<Incoming> {
        match message.tag {
            COMPLETE => {
                self.safra.received_basic();
                let completion: Completion<V::DirData> = decode(&message.bytes);
                driver.complete(completion);
            }
            TOKEN => self.safra.receive_token(decode(&message.bytes)),
            STOP => self.stopping = true,
            OUTPUT => forwarder.print(&message.bytes),
            OUTPUT_END => forwarder.note_end(),
            NO_WORK => {
                self.asked = None;
            }
            _ => return Some(message),
        }
        None
    }

    /// Reports imported directories finished here to the ranks they came from.
    pub fn report_completions<V: DistributedVisitor>(&mut self, driver: &Driver<'_, '_, '_, V>) -> bool {
        let finished = driver.take_finished_imports();
        let any = !finished.is_empty();
        for done in finished {
            // Same layout as `Completion { id, data }`, without moving the data out of the node.
            let bytes = encode(&(done.id, &done.node.data));
            self.send_basic(done.peer, COMPLETE, bytes);
        }
        any
    }

    /// Once passive: passes the token on, or — rank 0 — detects termination and stops everyone.
    pub fn on_passive(&mut self) {
        match self.safra.on_passive() {
            Step::Wait => {}
            Step::Forward(token) => {
                let next = self.safra.next_rank();
                self.transport.send(next, TOKEN, encode(&token));
            }
            Step::Terminate => self.broadcast_stop(),
        }
    }

    /// Tells every rank to stop (termination detected, or a visitor quit).
    pub fn broadcast_stop(&mut self) {
        if self.stopping {
            return;
        }
        self.stopping = true;
        for r in (0..self.size).filter(|&r| r != self.rank) {
            self.transport.send(r, STOP, Vec::new());
        }
    }

    /// Tracks idle time (no local work) for the statistics.
    pub fn note_idle(&mut self, idle: bool) {
        match (idle, self.idle_since) {
            (true, None) => self.idle_since = Some(Instant::now()),
            (false, Some(since)) => {
                self.stats.idle_secs += since.elapsed().as_secs_f64();
                self.idle_since = None;
            }
            _ => {}
        }
    }

    /// Leaves the walk without leaving a message behind: answers work requests with refusals until
    /// this rank's own request is answered and every rank has got that far (a nonblocking barrier),
    /// so no rank can be left waiting on one that is gone.
    ///
    /// Then a second barrier, during which only output is read. A barrier lets no rank out before
    /// all are in, but one rank may see it complete before another does: the first may start the
    /// next walk and send its messages — the termination token among them — to one still answering
    /// late messages of this walk, which would drop them, and the next walk would never end. Once
    /// every rank has entered the second barrier, none reads this walk's messages any more.
    pub fn quiesce(&mut self, forwarder: &Forwarder) {
        self.note_idle(false);
        while self.asked.is_some() {
            self.answer_late_messages(forwarder);
        }
        self.barrier_while(forwarder, Self::answer_late_messages);
        self.barrier_while(forwarder, Self::pass_output_on);
        self.transport.flush();
    }

    /// Waits in a nonblocking barrier over every rank, doing `meanwhile` until it completes.
    fn barrier_while(&mut self, forwarder: &Forwarder, meanwhile: fn(&mut Self, &Forwarder)) {
        let mut barrier = self.world.immediate_barrier();
        loop {
            match barrier.test() {
                Ok(_) => return,
                Err(pending) => barrier = pending,
            }
            meanwhile(self, forwarder);
        }
    }

    /// Rank 0 prints output forwarded to it, the others ship theirs; no other message is read, so
    /// whatever a rank already in the next walk sends stays queued for that walk.
    fn pass_output_on(&mut self, forwarder: &Forwarder) {
        if self.rank == 0
            && let Some(m) = self.transport.poll_tag(OUTPUT)
        {
            forwarder.print(&m.bytes);
            return;
        }
        if self.rank != 0 {
            forward::ship(&mut self.transport, forwarder);
        }
        self.transport.progress();
        std::thread::sleep(Duration::from_micros(50));
    }

    fn answer_late_messages(&mut self, forwarder: &Forwarder) {
        match self.transport.poll() {
            Some(m) if m.tag == WORK_REQUEST => self.transport.send(m.from, NO_WORK, Vec::new()),
            Some(m) if m.tag == NO_WORK || m.tag == WORK => self.asked = None,
            Some(m) if m.tag == OUTPUT => forwarder.print(&m.bytes),
            Some(m) if m.tag == OUTPUT_END => forwarder.note_end(),
            Some(_) => {}
            None => {
                if self.rank != 0 {
                    forward::ship(&mut self.transport, forwarder);
                }
                std::thread::sleep(Duration::from_micros(50));
            }
        }
    }

    /// Final statistics of this rank, whose politeness limits in force at the end were `limits`.
    pub fn finish_stats(mut self, walk: &canopy_engine::WalkStats, limits: &Politeness) -> RankStats {
        self.transport.flush();
        let mut stats = std::mem::take(&mut self.stats);
        let transport = &self.transport;
        stats.messages_sent = transport.messages_to.iter().sum();
        stats.bytes_sent = transport.bytes_to.iter().sum();
        stats.top_peers = PeerTraffic::top(&transport.messages_to, &transport.bytes_to, TOP_PEERS);
        stats.message_sizes = transport.message_sizes.clone();
        stats.comm_secs = self.transport.comm.as_secs_f64();
        stats.threads = walk.threads;
        stats.tasks = walk.tasks;
        stats.entries = walk.entries;
        stats.dirs = walk.dirs;
        stats.readdir_secs = walk.readdir_secs;
        stats.stat_secs = walk.stat_secs;
        stats.metadata_calls = walk.metadata_calls;
        stats.max_rate_end = limits.max_rate;
        stats.max_in_flight_end = limits.max_in_flight;
        stats.elapsed_secs = walk.elapsed_secs;
        stats
    }
}

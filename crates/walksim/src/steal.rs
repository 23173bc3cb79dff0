//! The work-stealing schedulers' communication loop: DRQS, DEQS, PA-DRQS and H-DRQS as
//! `canopy-distwalk`'s `mpi/steal.rs` runs them, and the balancing H-DRQS on `canopy-distwalk`'s policies.
//!
//! Each poll: handle what arrived (answer work requests, import work, fold in completions, pass
//! termination signals), report finished imports, (balancing) offer work to peers owed it, and, when
//! the rank is idle, ask a victim once the back-off allows and let the detector act.

use crate::model::{MICROSECOND, Time};
use crate::sched::Sched;
use crate::sim::{Body, Config, Protocol, Sim};
use canopy_distwalk::backoff::Backoff;
use canopy_distwalk::completions::Completions;
use canopy_distwalk::export::{ExportPolicy, Load};
use canopy_distwalk::governor::PoolGovernor;
use canopy_distwalk::termination::{Detector, Signal};
use canopy_distwalk::victims::{Topology, Victims};
use canopy_engine::SplitMode;
use std::time::Duration;

pub(crate) struct StealState {
    victims: Victims,
    detector: Detector,
    /// The rank asked and not yet answered.
    asked: Option<u32>,
    retry_at: Time,
    rules: Rules,
    rng: fastrand::Rng,
}

enum Rules {
    /// canopy's loop today: a share of the queue split as `split` says, a pause of 2^f µs after the
    /// f-th refusal in a row (f ≤ 10), one message per completion.
    Seed { split: SplitMode, failures: u32 },
    /// The export policy decides shares and offers, a capped exponential back-off paces requests,
    /// completions wait until the rank is idle and go one message per peer, the governor keeps the
    /// pool at what the mount serves.
    Balanced { policy: ExportPolicy, backoff: Backoff, governor: PoolGovernor, completions: Completions },
}

impl StealState {
    pub fn new(config: &Config, topology: &Topology, seed: u64) -> Self {
        let victims = match config.sched {
            Sched::Drqs | Sched::Deqs | Sched::Cp => Victims::random(topology.rank, topology.size()),
            Sched::PaDrqs | Sched::HDrqs => Victims::proximity(topology),
            Sched::Balanced => Victims::hierarchical(topology),
        };
        let rules = match config.sched {
            Sched::Balanced => {
                let b = &config.balancing;
                Rules::Balanced {
                    policy: ExportPolicy::new(b.export),
                    backoff: Backoff::new(
                        Duration::from_nanos(b.backoff_base),
                        Duration::from_nanos(b.backoff_cap),
                    ),
                    governor: PoolGovernor::default(),
                    completions: Completions::default(),
                }
            }
            sched => Rules::Seed { split: sched.split(), failures: 0 },
        };
        StealState {
            victims,
            detector: Detector::new(config.detector(), topology.rank, topology.size()),
            asked: None,
            retry_at: 0,
            rules,
            rng: fastrand::Rng::with_seed(seed),
        }
    }

    /// A sample of the pool (the engine's tick): the pool size to grow to when the engine's
    /// policy wants `wanted` workers.
    pub fn thread_target(&mut self, load: Load, latency: Option<Duration>, wanted: usize) -> usize {
        match &mut self.rules {
            Rules::Balanced { policy, governor, .. } => {
                governor.sample(governor.active(load.threads), load.running, latency);
                governor.target(policy.thread_target(load, wanted))
            }
            Rules::Seed { .. } => wanted,
        }
    }

    /// The pool size to have on receiving work from a peer with `sender_threads` workers.
    pub fn pool_for_import(&self, load: Load, sender_threads: usize) -> usize {
        match &self.rules {
            Rules::Balanced { policy, governor, .. } => {
                governor.target(policy.pool_for_import(load, sender_threads))
            }
            Rules::Seed { .. } => load.threads,
        }
    }

    /// Workers that may take tasks out of `threads` started.
    pub fn active(&self, threads: usize) -> usize {
        match &self.rules {
            Rules::Balanced { governor, .. } => governor.active(threads),
            Rules::Seed { .. } => threads,
        }
    }

    /// Queued tasks idle workers leave for the communication thread to offer.
    pub fn reserve(&self, load: Load, now: Time) -> usize {
        match &self.rules {
            Rules::Balanced { policy, .. } => policy.reserve(load, Duration::from_nanos(now)),
            Rules::Seed { .. } => 0,
        }
    }

    /// Whether a rank with `load` asks for work: when idle (canopy today), or as soon as workers
    /// are idle with nothing queued (balancing).
    pub fn wants_work(&self, load: Load) -> bool {
        match &self.rules {
            Rules::Balanced { .. } => load.wants_work(),
            Rules::Seed { .. } => load.pending() == 0,
        }
    }

    fn refused(&mut self, now: Time) {
        self.asked = None;
        let pause = match &mut self.rules {
            Rules::Seed { failures, .. } => {
                *failures = (*failures + 1).min(10);
                (1 << *failures) * MICROSECOND
            }
            Rules::Balanced { backoff, .. } => backoff.refused(&mut self.rng).as_nanos() as Time,
        };
        self.retry_at = now + pause;
    }

    fn succeeded(&mut self) {
        match &mut self.rules {
            Rules::Seed { failures, .. } => *failures = 0,
            Rules::Balanced { backoff, .. } => backoff.succeeded(),
        }
        self.victims.succeeded();
    }
}

impl Sim<'_> {
    fn state(&mut self, rank: u32) -> &mut StealState {
        match &mut self.ranks[rank as usize].protocol {
            Protocol::Steal(state) => state,
            _ => unreachable!("rank {rank} does not steal"),
        }
    }

    /// One poll; returns when the loop wants to run again even if nothing arrives (a retry).
    pub(crate) fn poll_steal(&mut self, rank: u32, inbox: Vec<usize>, clock: &mut Time) -> Option<Time> {
        let mut signals = Vec::new();
        for id in inbox {
            let message = self.receive(id, clock);
            let from = message.from;
            match message.body {
                Body::WorkRequest(pending) => self.answer(rank, from, pending as usize, clock),
                Body::Work { tasks, answer, threads } => {
                    self.state(rank).detector.received_basic();
                    debug_assert!(!self.ranks[rank as usize].stopped, "work after the end");
                    let load = self.ranks[rank as usize].pool.load();
                    let state = self.state(rank);
                    let target = state.pool_for_import(load, threads as usize);
                    let active = state.active(target.max(load.threads));
                    self.ranks[rank as usize].pool.resize(target, active);
                    self.import(rank, from, tasks);
                    if answer {
                        self.state(rank).asked = None;
                        self.ranks[rank as usize].stats.requests_fruitful += 1;
                    }
                    self.state(rank).succeeded();
                }
                Body::NoWork => self.state(rank).refused(*clock),
                Body::Complete(ids) => {
                    self.state(rank).detector.received_basic();
                    for id in ids {
                        self.completed(rank, id);
                    }
                }
                Body::Signal(signal) => {
                    if self.state(rank).detector.receive(signal, &mut signals) {
                        self.stopped(rank, *clock);
                    }
                    self.send_signals(rank, &mut signals, clock);
                }
                Body::Directory(_) | Body::Results(_) => unreachable!("CP messages in a stealing walk"),
            }
        }
        self.report_completions(rank, clock);
        self.offer(rank, clock);
        if self.ranks[rank as usize].stopped {
            return None;
        }
        let load = self.ranks[rank as usize].pool.load();
        let state = self.state(rank);
        let wants_work = state.wants_work(load);
        if wants_work
            && state.asked.is_none()
            && *clock >= state.retry_at
            && let Some(victim) = state.victims.pick()
        {
            state.asked = Some(victim);
            let balancing = matches!(state.rules, Rules::Balanced { .. });
            self.ranks[rank as usize].stats.requests_sent += 1;
            // The balancing scheduler's requests carry the asker's load (a varint).
            let pending = load.pending() as u32;
            let bytes = if balancing { self.wire.count(u64::from(pending)) } else { 0 };
            self.send(rank, victim, Body::WorkRequest(pending), bytes, clock);
        }
        if load.pending() == 0 && self.state(rank).detector.on_passive(&mut signals) {
            self.detected(*clock);
        }
        self.send_signals(rank, &mut signals, clock);
        // A retry only when a pause is running (with no victim to ask, there is nothing to retry).
        let stopped = self.ranks[rank as usize].stopped;
        let state = self.state(rank);
        (wants_work && state.asked.is_none() && !stopped && state.retry_at > *clock).then_some(state.retry_at)
    }

    /// A work request from `from`: a share of the queue, or a refusal.
    fn answer(&mut self, rank: u32, from: u32, from_pending: usize, clock: &mut Time) {
        let load = self.ranks[rank as usize].pool.load();
        let stopped = self.ranks[rank as usize].stopped;
        let state = self.state(rank);
        let share = match &mut state.rules {
            _ if stopped => 0,
            Rules::Seed { split, .. } => split.portion(load.queued, &mut state.rng),
            Rules::Balanced { policy, .. } => {
                policy.on_request(from, from_pending, load, Duration::from_nanos(*clock))
            }
        };
        self.send_work(rank, from, share, true, clock);
    }

    /// Sends `share` tasks from the front of the queue to `to` (a refusal if `share` is 0 and this
    /// answers a request).
    fn send_work(&mut self, rank: u32, to: u32, share: usize, answer: bool, clock: &mut Time) {
        let balancing = matches!(self.state(rank).rules, Rules::Balanced { .. });
        if share == 0 {
            if answer {
                self.send(rank, to, Body::NoWork, 0, clock);
            }
            return;
        }
        let (tasks, mut bytes) = self.export(rank, share);
        let threads = self.ranks[rank as usize].pool.threads() as u32;
        self.state(rank).detector.sent_basic(1);
        if balancing {
            bytes += self.wire.count(u64::from(threads));
        }
        if !answer {
            self.ranks[rank as usize].stats.pushes += 1;
        }
        self.send(rank, to, Body::Work { tasks, answer, threads }, bytes, clock);
    }

    /// Balancing: work for the peers owed it, and the backlog kept for them.
    fn offer(&mut self, rank: u32, clock: &mut Time) {
        loop {
            let load = self.ranks[rank as usize].pool.load();
            let Rules::Balanced { policy, .. } = &mut self.state(rank).rules else { return };
            match policy.offer(load, Duration::from_nanos(*clock)) {
                Some((peer, share)) => self.send_work(rank, peer, share, false, clock),
                None => {
                    self.dispatch(rank);
                    return;
                }
            }
        }
    }

    /// Finished imports go back to where they came from: one message each as they finish (canopy
    /// today), or (balancing) one per peer once the rank is idle.
    fn report_completions(&mut self, rank: u32, clock: &mut Time) {
        let finished = std::mem::take(&mut self.ranks[rank as usize].finished_imports);
        let mut due = Vec::new();
        for g in finished {
            let import = self.ranks[rank as usize].imports.remove(g);
            match &mut self.state(rank).rules {
                Rules::Balanced { completions, .. } => {
                    completions.finished(import.from, u64::from(import.export_id))
                }
                Rules::Seed { .. } => due.push((import.from, vec![u64::from(import.export_id)])),
            }
        }
        let idle = self.ranks[rank as usize].pool.pending() == 0;
        if let Rules::Balanced { completions, .. } = &mut self.state(rank).rules {
            due = completions.take(idle);
        }
        let batched = matches!(self.state(rank).rules, Rules::Balanced { .. });
        for (peer, ids) in due {
            self.state(rank).detector.sent_basic(1);
            let bytes = self.wire.completions(ids.len(), batched);
            let ids = ids.into_iter().map(|id| id as usize).collect();
            self.send(rank, peer, Body::Complete(ids), bytes, clock);
        }
    }

    /// Completions this rank has not sent yet.
    pub fn unsent_completions(&self, rank: u32) -> bool {
        let r = &self.ranks[rank as usize];
        !r.finished_imports.is_empty()
            || matches!(&r.protocol, Protocol::Steal(s) if matches!(&s.rules, Rules::Balanced { completions, .. } if !completions.is_empty()))
    }

    fn send_signals(&mut self, rank: u32, signals: &mut Vec<(u32, Signal)>, clock: &mut Time) {
        for (to, signal) in std::mem::take(signals) {
            let bytes = self.wire.signal(&signal);
            self.send(rank, to, Body::Signal(signal), bytes, clock);
        }
    }
}

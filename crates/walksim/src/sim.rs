//! The simulation: ranks with their pools and communication threads, the mounts, the network, and
//! the event loop that drives them in virtual time.
//!
//! What runs here is the walk's logic, not a model of it: the victim choice, back-off, export policy
//! and termination detectors are `canopy-distwalk`'s state machines, the thread growth is the engine's
//! `ThreadPolicy::target`, the split sizes the engine's `SplitMode::portion`. What is modelled is
//! time: file-system requests (a fixed service time on a mount with limited slots), messages
//! (latency, bandwidth, and the communication thread's time per message), and the communication
//! loop's polling (it sleeps 50 µs when its rank is idle and 1 ms when busy, and is woken when the
//! pool runs dry or an import finishes, as the engine's driver is).

use crate::events::{Event, Events};
use crate::model::{MILLISECOND, Model, Time};
use crate::mount::Mount;
use crate::outcome::{Kind, Outcome};
use crate::pool::{Pool, Task, Work};
use crate::sched::{Balancing, Sched};
use crate::tree::Tree;
use crate::wire::Wire;
use crate::{central, steal};
use canopy_distwalk::termination::{DetectorKind, Signal};
use canopy_distwalk::victims::Topology;
use canopy_engine::ThreadPolicy;
use slab::Slab;

/// One simulated walk.
#[derive(Clone, Debug)]
pub struct Config {
    pub sched: Sched,
    pub ranks: u32,
    pub model: Model,
    pub balancing: Balancing,
    /// The termination detector, if not the scheduler's own.
    pub detector: Option<DetectorKind>,
    /// A fixed number of worker threads per rank, if not the scheduler's own policy.
    pub threads: Option<usize>,
    pub seed: u64,
}

impl Config {
    pub fn new(sched: Sched, ranks: u32) -> Self {
        Config {
            sched,
            ranks,
            model: Model::default(),
            balancing: Balancing::for_ranks(ranks),
            detector: None,
            threads: None,
            seed: 1,
        }
    }

    pub fn detector(&self) -> DetectorKind {
        self.detector.unwrap_or(self.sched.detector(self.ranks))
    }

    pub fn threads(&self) -> ThreadPolicy {
        self.threads.map_or(self.sched.threads(self.model.cores), ThreadPolicy::Fixed)
    }
}

/// Gives up on a run that has not ended after this much virtual time (a scheduler that never
/// terminates is reported, not waited for).
const TIME_LIMIT: Time = 3_600_000 * MILLISECOND;
/// Gives up on a run once this many messages were sent (a flood of requests is reported, not
/// simulated to its end).
pub const MESSAGE_LIMIT: u64 = 40_000_000;

/// Runs one walk of `tree`.
pub fn run(tree: &Tree, config: &Config) -> Outcome {
    assert!(config.ranks >= 1, "a walk needs a rank");
    assert!(config.model.stat_requests >= 1, "the walk stats every entry");
    let started = std::time::Instant::now();
    let mut sim = Sim::new(tree, config);
    sim.start();
    while let Some((at, event)) = sim.events.pop() {
        if at > TIME_LIMIT || sim.totals.messages.iter().sum::<u64>() > MESSAGE_LIMIT {
            break;
        }
        sim.now = at;
        match event {
            Event::RequestDone { rank, thread } => sim.request_done(rank, thread),
            Event::Arrive { message } => sim.arrive(message),
            Event::Poll { rank } => sim.poll(rank, at),
            Event::Tick { rank } => sim.tick(rank),
        }
    }
    Outcome::new(&sim, started.elapsed())
}

pub(crate) struct Sim<'a> {
    pub tree: &'a Tree,
    pub config: &'a Config,
    pub model: &'a Model,
    pub wire: Wire,
    pub now: Time,
    pub events: Events,
    pub ranks: Vec<Rank>,
    pub mounts: Vec<Mount>,
    pub messages: Slab<Message>,
    pub rng: fastrand::Rng,
    pub totals: Totals,
}

/// What the whole run keeps count of.
#[derive(Default)]
pub(crate) struct Totals {
    /// Reads of each directory (each must be read exactly once).
    pub reads: Vec<u8>,
    pub entries: u64,
    /// Tasks that exist: queued, running, or travelling in a message.
    pub tasks_alive: u64,
    /// Basic messages (work, completions) sent and not yet handled.
    pub basic_in_flight: i64,
    pub work_done_at: Time,
    pub detected_at: Option<Time>,
    /// What was left when termination was declared, if anything (a detector bug).
    pub early_termination: Option<String>,
    pub stopped: u32,
    pub all_stopped_at: Option<Time>,
    pub messages: [u64; Kind::COUNT],
    pub bytes: [u64; Kind::COUNT],
    pub in_flight: u64,
}

pub(crate) struct Rank {
    pub node: u32,
    pub start: Time,
    pub pool: Pool,
    pub comm: Comm,
    pub protocol: Protocol,
    /// Work imported from peers: who sent it, under which export id, and its tasks still pending.
    pub imports: Slab<Import>,
    /// Work sent to peers: the import its task belonged to here, until the peer reports it done.
    pub exports: Slab<Option<usize>>,
    /// Imports finished and not yet reported.
    pub finished_imports: Vec<usize>,
    pub stopped: bool,
    pub stats: RankStats,
}

pub(crate) struct Import {
    pub from: u32,
    pub export_id: u32,
    pub pending: u32,
}

pub(crate) enum Protocol {
    Steal(Box<steal::StealState>),
    Master(central::Master),
    Worker(central::Worker),
}

#[derive(Clone, Debug, Default)]
pub(crate) struct RankStats {
    pub entries: u64,
    /// When the rank first and last ran a task.
    pub first_task: Option<Time>,
    pub last_task: Time,
    pub dirs: u64,
    pub tasks: u64,
    pub messages_sent: u64,
    pub bytes_sent: u64,
    pub messages_received: u64,
    pub requests_sent: u64,
    pub requests_fruitful: u64,
    pub pushes: u64,
    pub tasks_exported: u64,
    pub tasks_imported: u64,
}

/// A rank's communication thread: messages arrive in its inbox and are handled when it polls.
#[derive(Default)]
pub(crate) struct Comm {
    pub inbox: Vec<usize>,
    pub next_poll: Option<Time>,
    /// Since when it sleeps, in steps of `interval`.
    pub asleep_since: Time,
    pub interval: Time,
    /// Busy handling messages until then.
    pub busy_until: Time,
}

pub(crate) struct Message {
    pub from: u32,
    pub to: u32,
    pub body: Body,
    pub bytes: usize,
}

pub(crate) enum Body {
    /// With the asker's load (tasks queued or running), which the balancing scheduler sends.
    WorkRequest(u32),
    NoWork,
    /// Tasks, each with the sender's export id; `answer` tells a reply from an unasked offer;
    /// `threads`: the sender's pool size (the balancing scheduler sends it).
    Work {
        tasks: Vec<(usize, Work)>,
        answer: bool,
        threads: u32,
    },
    /// Export ids whose work is done.
    Complete(Vec<usize>),
    Signal(Signal),
    /// CP: the master hands out one directory.
    Directory(Work),
    /// CP: a worker returns the subdirectories it found.
    Results(Vec<Work>),
}

impl Body {
    /// Whether the termination detector counts it (it carries work or reports work done).
    pub fn is_basic(&self) -> bool {
        matches!(self, Body::Work { .. } | Body::Complete(_))
    }

    fn kind(&self) -> Kind {
        match self {
            Body::WorkRequest(_) => Kind::Request,
            Body::NoWork => Kind::Refusal,
            Body::Work { answer: true, .. } | Body::Directory(_) => Kind::Work,
            Body::Work { answer: false, .. } => Kind::Offer,
            Body::Complete(_) => Kind::Completion,
            Body::Signal(_) => Kind::Termination,
            Body::Results(_) => Kind::Results,
        }
    }
}

impl<'a> Sim<'a> {
    fn new(tree: &'a Tree, config: &'a Config) -> Self {
        let model = &config.model;
        let mut rng = fastrand::Rng::with_seed(config.seed);
        let nodes = config.ranks.div_ceil(model.ranks_per_node.max(1));
        let mut topology = Topology { rank: 0, node: (0..config.ranks).map(|r| model.node_of(r)).collect() };
        let ranks = (0..config.ranks)
            .map(|id| {
                let start = if id == 0 { 0 } else { rng.u64(0..=model.start_skew) };
                topology.rank = id;
                let protocol = Protocol::new(config, &topology, &mut rng);
                let mut pool = Pool::new(config.threads());
                if matches!(protocol, Protocol::Worker(_)) {
                    pool.results = Some(Vec::new());
                }
                Rank {
                    node: model.node_of(id),
                    start,
                    pool,
                    comm: Comm { asleep_since: start, interval: model.poll_idle, ..Comm::default() },
                    protocol,
                    imports: Slab::new(),
                    exports: Slab::new(),
                    finished_imports: Vec::new(),
                    stopped: false,
                    stats: RankStats::default(),
                }
            })
            .collect();
        Sim {
            tree,
            config,
            model,
            wire: Wire::default(),
            now: 0,
            events: Events::default(),
            ranks,
            mounts: (0..nodes).map(|_| Mount::new(model.mount_slots)).collect(),
            messages: Slab::new(),
            rng,
            totals: Totals { reads: vec![0; tree.dirs() as usize], ..Totals::default() },
        }
    }

    fn start(&mut self) {
        let root = Task { work: Work::Root, group: None };
        self.totals.tasks_alive = 1;
        match &mut self.ranks[0].protocol {
            Protocol::Master(master) => master.queue.push_back(root.work),
            _ => self.ranks[0].pool.queue.push_back(root),
        }
        for r in 0..self.config.ranks {
            let start = self.ranks[r as usize].start;
            self.wake(r, start);
        }
        self.dispatch(0);
    }

    fn poll(&mut self, rank: u32, at: Time) {
        let comm = &mut self.ranks[rank as usize].comm;
        if comm.next_poll != Some(at) {
            return; // superseded by an earlier wake-up
        }
        comm.next_poll = None;
        let mut clock = at.max(comm.busy_until);
        let inbox = std::mem::take(&mut comm.inbox);
        let retry = match self.ranks[rank as usize].protocol {
            Protocol::Steal(_) => self.poll_steal(rank, inbox, &mut clock),
            Protocol::Master(_) => self.poll_master(rank, inbox, &mut clock),
            Protocol::Worker(_) => self.poll_worker(rank, inbox, &mut clock),
        };
        let idle = self.ranks[rank as usize].pool.pending() == 0;
        let comm = &mut self.ranks[rank as usize].comm;
        comm.busy_until = clock;
        comm.asleep_since = clock;
        comm.interval = if idle { self.model.poll_idle } else { self.model.poll_busy };
        if let Some(at) = retry {
            let at = self.next_poll_after(rank, at);
            self.wake(rank, at);
        }
    }

    /// Wakes `rank`'s communication thread at `at` unless it wakes earlier anyway.
    pub fn wake(&mut self, rank: u32, at: Time) {
        let comm = &mut self.ranks[rank as usize].comm;
        if comm.next_poll.is_none_or(|p| at < p) {
            comm.next_poll = Some(at);
            self.events.push(at, Event::Poll { rank });
        }
    }

    /// The engine's driver is woken at once when its pool runs dry or an import finishes.
    pub fn notify(&mut self, rank: u32) {
        let at = self.now.max(self.ranks[rank as usize].comm.busy_until);
        self.wake(rank, at);
    }

    /// The first poll of a sleeping communication thread at or after `at`.
    pub fn next_poll_after(&self, rank: u32, at: Time) -> Time {
        let comm = &self.ranks[rank as usize].comm;
        if at <= comm.asleep_since {
            return comm.asleep_since;
        }
        let interval = comm.interval.max(1);
        comm.asleep_since + (at - comm.asleep_since).div_ceil(interval) * interval
    }

    /// Sends a message at `clock` (the sender's communication thread spends its handling time).
    pub fn send(&mut self, from: u32, to: u32, body: Body, bytes: usize, clock: &mut Time) {
        debug_assert_ne!(from, to, "a rank messaged itself");
        *clock += self.model.handling(bytes);
        let kind = body.kind() as usize;
        self.totals.messages[kind] += 1;
        self.totals.bytes[kind] += bytes as u64;
        self.totals.in_flight += 1;
        if body.is_basic() {
            self.totals.basic_in_flight += 1;
        }
        let stats = &mut self.ranks[from as usize].stats;
        stats.messages_sent += 1;
        stats.bytes_sent += bytes as u64;
        let arrival = *clock + self.model.transfer(from, to, bytes);
        let message = self.messages.insert(Message { from, to, body, bytes }) as u32;
        self.events.push(arrival, Event::Arrive { message });
    }

    fn arrive(&mut self, message: u32) {
        let to = self.messages[message as usize].to;
        self.ranks[to as usize].stats.messages_received += 1;
        self.ranks[to as usize].comm.inbox.push(message as usize);
        let at = self.next_poll_after(to, self.now);
        self.wake(to, at);
    }

    /// Takes a message out of the network for its receiver to handle; the receiver's clock advances
    /// by the handling time.
    pub fn receive(&mut self, message: usize, clock: &mut Time) -> Message {
        let message = self.messages.remove(message);
        *clock += self.model.handling(message.bytes);
        self.totals.in_flight -= 1;
        if message.body.is_basic() {
            self.totals.basic_in_flight -= 1;
        }
        message
    }

    /// Rank `rank` has learned that the walk is over.
    pub fn stopped(&mut self, rank: u32, at: Time) {
        let r = &mut self.ranks[rank as usize];
        if r.stopped {
            return;
        }
        r.stopped = true;
        self.totals.stopped += 1;
        if self.totals.stopped == self.config.ranks {
            self.totals.all_stopped_at = Some(at);
        }
    }

    /// Rank 0 declares termination: records what, if anything, was still going on.
    pub fn detected(&mut self, at: Time) {
        self.totals.detected_at = Some(at);
        let unreported = (0..self.config.ranks).filter(|&r| self.unsent_completions(r)).count();
        let t = &self.totals;
        if t.tasks_alive != 0 || t.basic_in_flight != 0 || unreported != 0 {
            self.totals.early_termination = Some(format!(
                "{} tasks alive, {} basic messages in flight, {unreported} ranks with completions unsent",
                t.tasks_alive, t.basic_in_flight
            ));
        }
        self.stopped(0, at);
    }
}

impl Protocol {
    fn new(config: &Config, topology: &Topology, rng: &mut fastrand::Rng) -> Protocol {
        match config.sched {
            // One rank has no master to talk to: it simply walks.
            Sched::Cp if config.ranks > 1 => {
                if topology.rank == 0 {
                    Protocol::Master(central::Master::default())
                } else {
                    Protocol::Worker(central::Worker::default())
                }
            }
            _ => Protocol::Steal(Box::new(steal::StealState::new(config, topology, rng.u64(..)))),
        }
    }
}

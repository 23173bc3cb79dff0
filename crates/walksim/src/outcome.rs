//! What a simulated walk measured: the seed's figures (time, messages, bytes, the balance of work
//! over ranks and its histogram), termination latency, and the checks of the simulation itself.

use crate::pool::Work;
use crate::sim::{Protocol, Sim};
use crate::tree::{FILE_NAME_LEN, Tree};
use crate::wire::TaskShape;
use serde::Serialize;

/// Kinds of messages, counted apart.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Request,
    Refusal,
    /// Work in answer to a request (CP: a directory from the master).
    Work,
    /// Work offered unasked.
    Offer,
    Completion,
    /// Tokens, waves and stops.
    Termination,
    /// CP: subdirectories returned to the master.
    Results,
}

impl Kind {
    pub const COUNT: usize = 7;
    pub const ALL: [Kind; Kind::COUNT] = [
        Kind::Request,
        Kind::Refusal,
        Kind::Work,
        Kind::Offer,
        Kind::Completion,
        Kind::Termination,
        Kind::Results,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Refusal => "refusal",
            Kind::Work => "work",
            Kind::Offer => "offer",
            Kind::Completion => "completion",
            Kind::Termination => "termination",
            Kind::Results => "results",
        }
    }
}

/// Bins of the work histogram (the seed's Fig. 6), as a share of the mean entries per rank: below
/// 50 %, 50–80, 80–95, 95–105, 105–120, 120–200, 200 % and more.
pub const HISTOGRAM_EDGES: [f64; 6] = [0.5, 0.8, 0.95, 1.05, 1.2, 2.0];

#[derive(Clone, Debug, Serialize)]
pub struct Outcome {
    pub sched: String,
    pub ranks: u32,
    pub tree: String,
    pub entries: u64,
    /// Seconds until every rank knew the walk was over.
    pub time: f64,
    /// Seconds until the last task finished.
    pub work_done: f64,
    /// From the last task to the detection, and to the last rank stopping (seconds).
    pub detection_latency: f64,
    pub termination_latency: f64,
    pub messages: u64,
    pub bytes: u64,
    /// (kind, messages, bytes) for every kind that occurred.
    pub by_kind: Vec<(String, u64, u64)>,
    pub requests_sent: u64,
    pub requests_fruitful: u64,
    pub offers: u64,
    pub tasks_exported: u64,
    /// Entries visited by each rank that walks (CP's master excluded).
    pub entries_per_rank: Vec<u64>,
    /// max/min of `entries_per_rank` (infinite if a rank visited nothing).
    pub balance: f64,
    /// Ranks per bin of [`HISTOGRAM_EDGES`].
    pub histogram: [u32; 7],
    /// Messages received by the busiest rank, as a share of all messages (the heat map's hot spot).
    pub hottest_share: f64,
    pub max_threads: usize,
    /// The run was stopped after [`crate::sim::MESSAGE_LIMIT`] messages: a flood, not a walk.
    pub flooded: bool,
    pub per_rank: Vec<RankSummary>,
    pub events: u64,
    /// Seconds the simulation itself took.
    pub wall: f64,
    pub checks: Checks,
}

/// One rank's part.
#[derive(Clone, Debug, Serialize)]
pub struct RankSummary {
    pub entries: u64,
    pub threads: usize,
    /// Workers allowed to take tasks at the end (the governor's cap).
    pub active: usize,
    /// Seconds from the start to its first task, and to the end of its last.
    pub first_task: Option<f64>,
    pub last_task: f64,
    pub requests_sent: u64,
    pub offers: u64,
    pub messages_received: u64,
}

/// The simulation's own invariants.
#[derive(Clone, Debug, Serialize)]
pub struct Checks {
    /// Every directory read exactly once.
    pub dirs_read_once: bool,
    /// Entries visited, which must equal the tree's.
    pub entries_visited: u64,
    /// Termination was detected, and every rank learned of it.
    pub terminated: bool,
    /// What was still going on when termination was declared (`None`: nothing, as it must be).
    pub early_termination: Option<String>,
    /// Messages sent and never handled.
    pub undelivered: u64,
    /// Requests sent = answers received (work or refusal), over all ranks, for the stealing
    /// schedulers; CP's last requests are answered by the stop.
    pub requests_answered: bool,
}

impl Checks {
    /// Every check passed.
    pub fn ok(&self, tree: &Tree) -> bool {
        self.dirs_read_once
            && self.entries_visited == tree.entries()
            && self.terminated
            && self.early_termination.is_none()
            && self.undelivered == 0
            && self.requests_answered
    }
}

/// How a piece of work travels.
pub(crate) fn shape(tree: &Tree, work: Work) -> TaskShape {
    let dir = |d: u32| {
        let d = tree.dir(d);
        TaskShape { path_len: d.path_len, name_len: d.name_len, depth: d.depth, chunk: None }
    };
    match work {
        Work::Root => dir(0),
        Work::Read(d) => dir(d),
        Work::Chunk { dir: d, len, .. } => TaskShape { chunk: Some((len, FILE_NAME_LEN)), ..dir(d) },
    }
}

const NS: f64 = 1e-9;

impl Outcome {
    pub(crate) fn new(sim: &Sim<'_>, wall: std::time::Duration) -> Outcome {
        let t = &sim.totals;
        let walkers: Vec<u64> = sim
            .ranks
            .iter()
            .filter(|r| !matches!(r.protocol, Protocol::Master(_)))
            .map(|r| r.stats.entries)
            .collect();
        let (min, max) =
            (walkers.iter().copied().min().unwrap_or(0), walkers.iter().copied().max().unwrap_or(0));
        let mean = walkers.iter().sum::<u64>() as f64 / walkers.len().max(1) as f64;
        let mut histogram = [0u32; 7];
        for &e in &walkers {
            let share = if mean > 0.0 { e as f64 / mean } else { 1.0 };
            histogram[HISTOGRAM_EDGES.iter().filter(|&&edge| share >= edge).count()] += 1;
        }
        let messages: u64 = t.messages.iter().sum();
        let sum = |f: fn(&crate::sim::RankStats) -> u64| sim.ranks.iter().map(|r| f(&r.stats)).sum::<u64>();
        let requests_sent = sum(|s| s.requests_sent);
        let answers = t.messages[Kind::Refusal as usize] + t.messages[Kind::Work as usize];
        let is_cp = sim.ranks.iter().any(|r| matches!(r.protocol, Protocol::Master(_)));
        let end = t.all_stopped_at.unwrap_or(sim.now);
        Outcome {
            sched: sim.config.sched.name().to_string(),
            ranks: sim.config.ranks,
            tree: sim.tree.spec().to_string(),
            entries: sim.tree.entries(),
            time: end as f64 * NS,
            work_done: t.work_done_at as f64 * NS,
            detection_latency: t.detected_at.unwrap_or(end).saturating_sub(t.work_done_at) as f64 * NS,
            termination_latency: end.saturating_sub(t.work_done_at) as f64 * NS,
            messages,
            bytes: t.bytes.iter().sum(),
            by_kind: Kind::ALL
                .iter()
                .filter(|k| t.messages[**k as usize] > 0)
                .map(|k| (k.name().to_string(), t.messages[*k as usize], t.bytes[*k as usize]))
                .collect(),
            requests_sent,
            requests_fruitful: sum(|s| s.requests_fruitful),
            offers: sum(|s| s.pushes),
            tasks_exported: sum(|s| s.tasks_exported),
            balance: if min == 0 { f64::INFINITY } else { max as f64 / min as f64 },
            entries_per_rank: walkers,
            histogram,
            hottest_share: sim.ranks.iter().map(|r| r.stats.messages_received).max().unwrap_or(0) as f64
                / messages.max(1) as f64,
            max_threads: sim.ranks.iter().map(|r| r.pool.threads()).max().unwrap_or(0),
            flooded: messages > crate::sim::MESSAGE_LIMIT,
            per_rank: sim
                .ranks
                .iter()
                .map(|r| RankSummary {
                    entries: r.stats.entries,
                    threads: r.pool.threads(),
                    active: r.pool.active(),
                    first_task: r.stats.first_task.map(|t| t as f64 * NS),
                    last_task: r.stats.last_task as f64 * NS,
                    requests_sent: r.stats.requests_sent,
                    offers: r.stats.pushes,
                    messages_received: r.stats.messages_received,
                })
                .collect(),
            events: sim.events.scheduled(),
            wall: wall.as_secs_f64(),
            checks: Checks {
                dirs_read_once: t.reads.iter().all(|&n| n == 1),
                entries_visited: t.entries,
                terminated: t.all_stopped_at.is_some(),
                early_termination: t.early_termination.clone(),
                undelivered: t.in_flight,
                requests_answered: if is_cp {
                    requests_sent == answers + u64::from(sim.config.ranks - 1)
                } else {
                    requests_sent == answers
                },
            },
        }
    }
}

//! `canopy dirsvc bench`: the seed's modified metarates, i.e. mdtest's single-shared-directory
//! mode (`mdtest -F -n K`). P clients each create K files in one shared directory, then stat them,
//! then remove them; phases are separated by barriers; a phase's rate is P×K divided by the
//! slowest client's time for it. Repeated for several iterations (a fresh directory each), then
//! summarised like mdtest's `SUMMARY rate` table. With `links`, each file also gets a hard link
//! (then removed again) between stat and removal; `layout` gives mdtest's -u, -z, -b and -L.

pub mod layout;
mod rates;
pub mod targets;
pub mod team;

use std::time::Instant;

use serde::{Deserialize, Serialize};

pub use self::layout::Layout;
pub use self::rates::{BenchReport, PhaseSummary};
use self::targets::{Session, Target};
use self::team::{Member, Team};
use crate::client::stats::ProbeHistogram;
use crate::error::{Error, Result};
use crate::server::core::process_cpu;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Phase {
    Create,
    Stat,
    /// A hard link to each file (`NAME.link` beside it).
    Link,
    /// The hard links removed again: each file back to one name.
    Unlink,
    Remove,
}

/// Seconds per phase, in `Phase` order.
pub type PhaseSeconds = [f64; 5];

impl Phase {
    pub const ALL: [Phase; 5] = [Phase::Create, Phase::Stat, Phase::Link, Phase::Unlink, Phase::Remove];

    pub(crate) fn slot(self) -> usize {
        self as usize
    }

    /// mdtest's operation names (and ours for the links).
    pub fn label(self) -> &'static str {
        match self {
            Phase::Create => "File creation",
            Phase::Stat => "File stat",
            Phase::Link => "Hard link creation",
            Phase::Unlink => "Hard link removal",
            Phase::Remove => "File removal",
        }
    }
}

#[derive(Clone, Copy, Debug)]
pub struct BenchPlan {
    pub files_per_client: usize,
    pub iterations: usize,
    /// Like mdtest -C: only create, and keep the files (for tools to run on).
    pub create_only: bool,
    /// Also time a hard link to each file and its removal.
    pub links: bool,
    pub layout: Layout,
}

impl BenchPlan {
    pub fn phases(&self) -> &'static [Phase] {
        match (self.create_only, self.links) {
            (true, _) => &[Phase::Create],
            (false, true) => &Phase::ALL,
            (false, false) => &[Phase::Create, Phase::Stat, Phase::Remove],
        }
    }
}

/// Entries per active partition right after the creation phase.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Balance {
    pub entries: Vec<u64>,
    /// Partitions with a split still in progress when counted.
    pub splitting: usize,
}

impl Balance {
    pub fn new(entries: Vec<u64>, splitting: usize) -> Self {
        Self { entries, splitting }
    }

    pub fn max(&self) -> u64 {
        self.entries.iter().copied().max().unwrap_or(0)
    }

    pub fn min(&self) -> u64 {
        self.entries.iter().copied().min().unwrap_or(0)
    }
}

/// What the servers did during a run (summed over servers).
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ServerCounters {
    pub servers: usize,
    /// Group commits, one journal fsync each.
    pub commits: u64,
    /// Requests those commits applied.
    pub requests: u64,
    /// Time the writers spent committing (mostly fsync).
    pub sync_seconds: f64,
    /// CPU time of the server processes.
    pub cpu_seconds: f64,
}

impl ServerCounters {
    fn since(&self, before: &ServerCounters) -> ServerCounters {
        ServerCounters {
            servers: self.servers,
            commits: self.commits - before.commits,
            requests: self.requests - before.requests,
            sync_seconds: self.sync_seconds - before.sync_seconds,
            cpu_seconds: self.cpu_seconds - before.cpu_seconds,
        }
    }
}

/// What one client measured: seconds per phase per iteration, its probes, and (rank 0) balance.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RankReport {
    pub rank: usize,
    /// `seconds[iteration][phase slot]`.
    pub seconds: Vec<PhaseSeconds>,
    pub probes: Option<ProbeHistogram>,
    pub balance: Vec<Balance>,
    pub error: Option<String>,
}

/// mdtest's file names: unique per rank.
pub fn file_name(rank: usize, index: usize) -> String {
    format!("file.mdtest.{rank}.{index}")
}

/// The name of a file's hard link, beside it.
pub fn link_name(name: &str) -> String {
    format!("{name}.link")
}

/// A client's file `index`: the directory it goes in (an index into the client's file
/// directories) and its name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FileSlot {
    pub dir: usize,
    pub name: String,
}

/// Runs the workload on `target` with the members of `team`; `None` on non-reporting members.
pub fn run(target: &dyn Target, team: &dyn Team, plan: BenchPlan) -> Result<Option<BenchReport>> {
    let servers_before = target.server_counters()?;
    let cpu_before = process_cpu();
    let started = Instant::now();
    let Some(reports) = team.run(&|member| run_member(target, member, plan)) else {
        return Ok(None);
    };
    let wall_seconds = started.elapsed().as_secs_f64();
    let client_cpu_seconds = (process_cpu() - cpu_before).as_secs_f64();
    if let Some(failed) = reports.iter().find_map(|r| r.error.clone()) {
        return Err(Error::io(format!("benchmark client failed: {failed}")));
    }
    let servers = match (servers_before, target.server_counters()?) {
        (Some(before), Some(after)) => Some(after.since(&before)),
        _ => None,
    };
    let mut report = BenchReport::new(target.describe(), plan, &reports, servers, wall_seconds);
    report.client_cpu_seconds = client_cpu_seconds;
    Ok(Some(report))
}

/// One client's run. A failure is recorded and the client keeps meeting the barriers (without
/// working), so the others never wait forever.
fn run_member(target: &dyn Target, member: &dyn Member, plan: BenchPlan) -> RankReport {
    let rank = member.rank();
    let mut report = RankReport { rank, ..RankReport::default() };
    let mut failure: Option<Error> = None;
    let directories = plan.layout.file_directories(rank).len();
    let files: Vec<FileSlot> = (0..plan.files_per_client)
        .map(|index| FileSlot { dir: index % directories, name: file_name(rank, index) })
        .collect();
    let mut session: Option<Box<dyn Session>> = None;
    attempt(&mut failure, || {
        session = Some(target.connect(rank)?);
        Ok(())
    });
    for iteration in 0..plan.iterations {
        if rank == 0 {
            attempt(&mut failure, || target.prepare(iteration));
        }
        member.barrier();
        attempt(&mut failure, || session_mut(&mut session)?.open(iteration));
        member.barrier();
        let mut seconds = [0.0; 5];
        for &phase in plan.phases() {
            let start = Instant::now();
            attempt(&mut failure, || session_mut(&mut session)?.run(phase, &files));
            seconds[phase.slot()] = start.elapsed().as_secs_f64();
            member.barrier();
            if phase == Phase::Create && rank == 0 {
                attempt(&mut failure, || {
                    if let Some(balance) = target.balance(iteration)? {
                        report.balance.push(balance);
                    }
                    Ok(())
                });
            }
            member.barrier();
        }
        report.seconds.push(seconds);
        if rank == 0 && !plan.create_only {
            attempt(&mut failure, || target.finish(iteration));
        }
    }
    report.probes = session.as_ref().and_then(|s| s.probes());
    report.error = failure.map(|e| format!("client {rank}: {e}"));
    report
}

/// Runs `step` unless an earlier step failed; keeps the first failure.
fn attempt(failure: &mut Option<Error>, step: impl FnOnce() -> Result<()>) {
    if failure.is_none()
        && let Err(e) = step()
    {
        *failure = Some(e);
    }
}

fn session_mut(session: &mut Option<Box<dyn Session>>) -> Result<&mut Box<dyn Session>> {
    session.as_mut().ok_or_else(|| Error::io("client has no session"))
}

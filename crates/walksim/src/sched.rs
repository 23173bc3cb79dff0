//! The schedulers the simulator runs: the seed paper's four and its CP baseline as canopy runs them
//! (`canopy-distwalk`'s MPI loops), and the balancing H-DRQS built on `canopy-distwalk`'s pure policies.

use crate::model::{MICROSECOND, Time};
use canopy_distwalk::export::ExportConfig;
use canopy_distwalk::termination::DetectorKind;
use canopy_engine::sched::ADAPTIVE_MAX_THREADS;
use canopy_engine::{SplitMode, ThreadPolicy};
use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sched {
    /// Algorithm 1, per directory: rank 0 holds the queue and walks nothing; a worker asks it for
    /// one directory, reads it, sends back the subdirectories it found, and asks again.
    Cp,
    /// Algorithm 2: an idle rank asks a random rank, which answers with a random share of its queue.
    Drqs,
    /// DRQS with equal (half) splits.
    Deqs,
    /// Algorithm 3: victims in the seed's proximity order.
    PaDrqs,
    /// Algorithm 4 as canopy runs it today: one rank per node with the engine's adaptive pool,
    /// proximity order, random splits, a 2 µs–1 ms retry back-off, Safra's ring.
    HDrqs,
    /// H-DRQS with `canopy-distwalk`'s balancing policies: owed work pushed to refused peers, a backlog
    /// for them, no pool growth while peers starve, per-rank random hierarchical victims, capped
    /// exponential back-off, completions batched per peer, tree termination.
    Balanced,
}

impl Sched {
    pub const ALL: [Sched; 6] =
        [Sched::Cp, Sched::Drqs, Sched::Deqs, Sched::PaDrqs, Sched::HDrqs, Sched::Balanced];
    pub const NAMES: &'static str = "cp, drqs, deqs, pa-drqs, h-drqs, h-drqs+";

    pub fn name(self) -> &'static str {
        match self {
            Sched::Cp => "cp",
            Sched::Drqs => "drqs",
            Sched::Deqs => "deqs",
            Sched::PaDrqs => "pa-drqs",
            Sched::HDrqs => "h-drqs",
            Sched::Balanced => "h-drqs+",
        }
    }

    /// Worker threads per rank: the seed's single-threaded processes, or the engine's adaptive
    /// pool (what canopy picks by default on a remote file system) for the hybrid schedulers.
    pub fn threads(self, cores: usize) -> ThreadPolicy {
        match self {
            Sched::HDrqs | Sched::Balanced => {
                ThreadPolicy::Adaptive { initial: cores, max: ADAPTIVE_MAX_THREADS }.for_remote_fs()
            }
            _ => ThreadPolicy::Fixed(1),
        }
    }

    pub fn split(self) -> SplitMode {
        if self == Sched::Deqs { SplitMode::Equal } else { SplitMode::Random }
    }

    /// Safra's ring for the seed's schedulers (what canopy runs today); the balancing scheduler
    /// picks by job size.
    pub fn detector(self, ranks: u32) -> DetectorKind {
        if self == Sched::Balanced { DetectorKind::for_size(ranks) } else { DetectorKind::Ring }
    }
}

/// The balancing scheduler's settings.
#[derive(Clone, Copy, Debug)]
pub struct Balancing {
    pub export: ExportConfig,
    /// First and longest pause after fruitless requests.
    pub backoff_base: Time,
    pub backoff_cap: Time,
}

impl Balancing {
    /// The defaults for a job of `ranks` ranks ([`ExportConfig::for_ranks`], the back-off cap of
    /// `canopy_distwalk::backoff::cap_for`).
    pub fn for_ranks(ranks: u32) -> Self {
        Balancing {
            export: ExportConfig::for_ranks(ranks),
            backoff_base: 500 * MICROSECOND,
            backoff_cap: canopy_distwalk::backoff::cap_for(ranks).as_nanos() as Time,
        }
    }
}

impl FromStr for Sched {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Sched::ALL
            .into_iter()
            .find(|k| k.name() == s)
            .ok_or_else(|| format!("unknown scheduler {s:?} (expected one of {})", Sched::NAMES))
    }
}

//! The work-distribution schemes of the seed paper (§IV), selected with `--sched`.

use std::str::FromStr;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum SchedKind {
    /// Distributed random queue splitting: an idle rank asks a random rank, which answers with a
    /// random share of its queue. One worker thread per rank unless `-j` says otherwise.
    Drqs,
    /// As DRQS, with equal (half) splits.
    Deqs,
    /// Proximity-aware DRQS: ranks on the same node are asked first; a node's local root asks
    /// remote ranks first.
    PaDrqs,
    /// Hybrid: one rank per node with many threads sharing work; the rank's communication thread
    /// asks other ranks (its node's first, in its own random order) as soon as workers are idle
    /// with nothing queued, and balances load with the export policy, a capped back-off and the
    /// pool governor (`mpi/balance.rs`). The default.
    #[default]
    HDrqs,
    /// The centralised master/worker baseline: rank 0 holds the queue, workers ask it for one
    /// task at a time and send every directory they discover back to it.
    Cp,
}

impl SchedKind {
    pub const NAMES: &'static str = "drqs, deqs, pa-drqs, h-drqs, cp";

    pub fn name(self) -> &'static str {
        match self {
            SchedKind::Drqs => "drqs",
            SchedKind::Deqs => "deqs",
            SchedKind::PaDrqs => "pa-drqs",
            SchedKind::HDrqs => "h-drqs",
            SchedKind::Cp => "cp",
        }
    }

    /// Whether each rank runs the seed's single-threaded process (unless threads are given).
    pub fn single_threaded_ranks(self) -> bool {
        !matches!(self, SchedKind::HDrqs)
    }
}

impl FromStr for SchedKind {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "drqs" => SchedKind::Drqs,
            "deqs" => SchedKind::Deqs,
            "pa-drqs" | "pa" => SchedKind::PaDrqs,
            "h-drqs" | "hybrid" => SchedKind::HDrqs,
            "cp" | "central" => SchedKind::Cp,
            _ => return Err(format!("unknown scheduler '{s}' (expected one of {})", Self::NAMES)),
        })
    }
}

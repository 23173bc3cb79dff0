use canopy_engine::sched::ADAPTIVE_MAX_THREADS;
use canopy_engine::{SplitMode, ThreadPolicy, WalkOptions};
use clap::Args;

/// Flags every tree tool takes: thread count and the work-splitting policy.
#[derive(Args, Clone, Debug, Default)]
pub struct WalkArgs {
    /// Worker threads. Default: one per core, growing (up to 128) while the file system keeps the
    /// workers waiting — a warm local disk stays at the core count, NFS/Lustre/FUSE grow.
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<usize>,

    /// How an idle worker splits a victim's queue: `equal` halves (DEQS) or `random` (DRQS).
    #[arg(long, value_name = "MODE", default_value = "random")]
    pub split: SplitMode,
}

impl WalkArgs {
    pub fn options(&self) -> WalkOptions {
        let threads = match self.threads {
            Some(n) => ThreadPolicy::Fixed(n.max(1)),
            None => ThreadPolicy::adaptive_default(),
        };
        WalkOptions { threads, split: self.split, ..WalkOptions::default() }
    }

    /// The most threads a walk may use (for sizing per-thread resources).
    pub fn max_threads(&self) -> usize {
        self.threads.unwrap_or(ADAPTIVE_MAX_THREADS)
    }
}

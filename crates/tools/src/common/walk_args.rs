use canopy_distwalk::{Plan, SchedKind};
use canopy_engine::sched::thread_limit;
use canopy_engine::{Politeness, SplitMode, ThreadPolicy, WalkOptions};
use clap::Args;
use std::path::PathBuf;
use std::time::Duration;

/// Flags every tree tool takes: threads, work splitting, and (under mpirun) the scheduler.
#[derive(Args, Clone, Debug)]
pub struct WalkArgs {
    /// Worker threads. Default (or 0): one per core, growing (up to 128) while the file system
    /// keeps the workers waiting — a warm local disk stays at the core count, NFS/Lustre/FUSE grow.
    /// More than the system allows (process limit, memory, at most 4096) is reduced with a warning.
    #[arg(short = 'j', long = "threads", value_name = "N")]
    pub threads: Option<usize>,

    /// How an idle worker splits a victim's queue: `equal` halves (DEQS) or `random` (DRQS).
    #[arg(long, value_name = "MODE", default_value = "random")]
    pub split: SplitMode,

    /// Under mpirun/srun: how ranks share work — h-drqs (default: threads per rank, proximity-aware
    /// stealing between ranks), drqs, deqs, pa-drqs, or the centralised cp baseline.
    #[arg(long, value_name = "SCHEDULER", default_value = "h-drqs")]
    pub sched: SchedKind,

    /// Write per-rank statistics (work, messages and bytes between ranks, idle and I/O time) as
    /// JSON to FILE; draw them with `canopy report`.
    #[arg(long, value_name = "FILE")]
    pub stats: Option<PathBuf>,

    /// Under mpirun/srun: a rank that does not answer for SECONDS (stopped, partitioned or dead)
    /// ends the job with a message naming it and exit status 1; 0 waits forever. A busy rank
    /// still answers, however long its directories take.
    #[arg(long, value_name = "SECONDS", default_value_t = 60.0, value_parser = parse_timeout)]
    pub timeout: f64,

    /// Politeness: start at most OPS file-system calls per second (opening and reading
    /// directories, stat, and the tool's own calls per entry: unlink, opening a file to read or
    /// copy), shared by all threads and, under mpirun/srun, by the ranks (equal shares that then
    /// follow the work: idle ranks give theirs to busy ones). For
    /// scanning a production file system without hurting its users. Default: no limit.
    #[arg(long, value_name = "OPS", value_parser = parse_rate)]
    pub max_rate: Option<f64>,

    /// Politeness: at most N file-system calls in progress at once, shared as --max-rate is
    /// (under mpirun/srun at least one per rank). Default: no limit.
    #[arg(long, value_name = "N", value_parser = parse_in_flight)]
    pub max_in_flight: Option<usize>,
}

/// Fewer than one call a minute is a typo, more than ten million a second no file system serves.
fn parse_rate(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(rate) if (1.0 / 60.0..=1e7).contains(&rate) => Ok(rate),
        _ => {
            Err(format!("'{text}' is not a number of calls per second from 0.017 (one a minute) to 10000000"))
        }
    }
}

fn parse_in_flight(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(count) if (1..=1_000_000).contains(&count) => Ok(count),
        _ => Err(format!("'{text}' is not a number of calls from 1 to 1000000")),
    }
}

fn parse_timeout(text: &str) -> Result<f64, String> {
    match text.parse::<f64>() {
        Ok(seconds) if seconds >= 0.0 && seconds.is_finite() => Ok(seconds),
        _ => Err(format!("'{text}' is not a number of seconds (0 or more)")),
    }
}

impl WalkArgs {
    pub fn options(&self) -> WalkOptions {
        let threads = match self.threads {
            Some(0) | None => ThreadPolicy::adaptive_default(),
            Some(asked) => {
                let limit = thread_limit();
                if asked > limit.max {
                    eprintln!(
                        "canopy: warning: -j {asked} is more threads than {} allows; using {}",
                        limit.reason, limit.max
                    );
                }
                ThreadPolicy::Fixed(asked.min(limit.max))
            }
        };
        let politeness = Politeness { max_rate: self.max_rate, max_in_flight: self.max_in_flight };
        WalkOptions { threads, split: self.split, politeness, ..WalkOptions::default() }
    }

    /// How the walk is spread over MPI ranks (a plain local walk otherwise).
    pub fn plan(&self) -> Plan {
        let timeout = (self.timeout > 0.0).then(|| Duration::from_secs_f64(self.timeout));
        Plan { sched: self.sched, stats_file: self.stats.clone(), timeout }
    }
}

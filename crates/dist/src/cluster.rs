//! The process group a tool runs in: one local process, or the ranks of an MPI job. Tools call
//! these methods the same way in both cases and never touch MPI themselves.

use crate::launch::{Launch, LaunchRefused};
use crate::sched_kind::SchedKind;
use crate::stats::{ClusterStats, RankStats, STATS_VERSION};
use canopy_engine::output::Sink;
use canopy_engine::{
    DistributedVisitor, ThreadPolicy, WalkFailure, WalkOptions, WalkOutcome, panic_message, walk,
};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::Any;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// Exit status of an MPI job aborted because a rank did not answer within [`Plan::timeout`] (the
/// group layer's for a hung rank too).
pub const NO_ANSWER_EXIT: u8 = 1;

/// How a walk is spread over the cluster.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub sched: SchedKind,
    /// Write per-rank statistics as JSON here (rank 0 writes).
    pub stats_file: Option<PathBuf>,
    /// Under MPI: a rank that does not answer for this long (stopped, partitioned, dead) aborts
    /// the job with exit status [`crate::NO_ANSWER_EXIT`], from the walk to the end of the job;
    /// `None` waits forever. A busy rank still answers.
    pub timeout: Option<std::time::Duration>,
}

pub struct Cluster {
    kind: Kind,
}

enum Kind {
    Local,
    #[cfg(feature = "mpi")]
    Mpi(crate::mpi::MpiWorld),
}

impl Cluster {
    /// Joins the MPI job when the process was started by an MPI launcher (mpirun, srun), and runs
    /// as a single local process otherwise. Call once per process. Refuses a launch of several
    /// tasks that would each run the whole job ([`crate::launch`]): a build without MPI, or MPI
    /// without a process manager (srun without `--mpi=pmix`).
    pub fn init() -> Result<Cluster, LaunchRefused> {
        let Some(launch) = Launch::from_env() else { return Ok(Cluster::local()) };
        #[cfg(feature = "mpi")]
        if launch.mpi_runtime
            && let Some(world) = crate::mpi::MpiWorld::init()
        {
            if world.size() == 1 && launch.is_parallel() {
                return Err(crate::launch::refuse_lone_world(&launch));
            }
            return Ok(Cluster { kind: Kind::Mpi(world) });
        }
        if !launch.is_parallel() {
            return Ok(Cluster::local());
        }
        if cfg!(feature = "mpi") {
            Err(crate::launch::refuse_lone_world(&launch))
        } else {
            Err(crate::launch::refuse_without_mpi(&launch))
        }
    }

    pub fn local() -> Cluster {
        Cluster { kind: Kind::Local }
    }

    pub fn rank(&self) -> u32 {
        match &self.kind {
            Kind::Local => 0,
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.rank(),
        }
    }

    /// Whether a launcher (mpirun, mpiexec, srun) started this process. Its stdout is then the
    /// launcher's (Open MPI gives each rank a pseudo-terminal whatever mpirun's own output is), so
    /// "is stdout a terminal" says nothing about where the output goes.
    pub fn launched() -> bool {
        crate::launch::Launch::from_env().is_some()
    }

    pub fn size(&self) -> u32 {
        match &self.kind {
            Kind::Local => 1,
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.size(),
        }
    }

    /// The node of every rank, by rank: ranks with equal numbers share a machine (a shared-memory
    /// split, or `CANOPY_RANKS_PER_NODE` consecutive ranks). Nodes are numbered from 0 in the order
    /// of their lowest rank.
    pub fn nodes(&self) -> Vec<u32> {
        match &self.kind {
            Kind::Local => vec![0],
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.nodes(),
        }
    }

    /// Ends every process of the job at once with exit status `code` (`MPI_Abort`), for when some
    /// rank hangs and a collective ending would wait for it forever. One process simply exits.
    pub fn abort(&self, code: u8) -> ! {
        match &self.kind {
            Kind::Local => std::process::exit(i32::from(code)),
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.abort(code),
        }
    }

    /// A panic reached the top of a tool (a bug), or a walk could not go on ([`WalkFailure`]):
    /// says so with the path being visited and gives the exit status — 70 (EX_SOFTWARE), 71 when
    /// the system refused every thread. Under MPI the whole job is aborted with that status, since
    /// its other ranks would wait for this one forever.
    pub fn fail(&self, payload: &(dyn Any + Send)) -> u8 {
        let (message, code) = match payload.downcast_ref::<WalkFailure>() {
            Some(failure) => (failure.to_string(), failure.exit_code()),
            None => (format!("internal error: {}", panic_message(payload)), 70),
        };
        if self.size() > 1 {
            // One write: MPI_Abort's own report must not cut through it.
            let line = format!("canopy: rank {}: {message}; aborting the MPI job\n", self.rank());
            let _ = std::io::stderr().write_all(line.as_bytes());
            self.abort(code);
        }
        eprintln!("canopy: {message}");
        code
    }

    /// Under MPI, from now on to the end of the job: a rank that does not answer for `timeout`
    /// (stopped, partitioned, dead) makes the job abort with a message naming it and exit status
    /// [`NO_ANSWER_EXIT`]. `None` leaves it as it is. Each rank answers from a thread of its own, so
    /// a busy rank never counts as silent. [`Cluster::walk`] calls it with [`Plan::timeout`]; call it
    /// earlier to cover collectives before the walk. One process: nothing to watch.
    #[cfg_attr(not(feature = "mpi"), allow(unused_variables))]
    pub fn watch(&self, timeout: Option<std::time::Duration>) {
        #[cfg(feature = "mpi")]
        if let Kind::Mpi(w) = &self.kind {
            w.watch(timeout);
        }
    }

    /// Whether this process prints results (rank 0).
    pub fn is_root(&self) -> bool {
        self.rank() == 0
    }

    /// Walks `roots` with every rank's workers; each rank gets its own workers' states back for
    /// the tool to merge (and then [`Cluster::reduce`]). Collective: every rank calls it.
    pub fn walk<V>(
        &self,
        roots: &[Vec<u8>],
        options: &WalkOptions,
        visitor: &V,
        plan: &Plan,
    ) -> WalkOutcome<V::State>
    where
        V: DistributedVisitor,
    {
        let mut options = options.clone();
        if plan.sched.single_threaded_ranks()
            && matches!(options.threads, ThreadPolicy::Adaptive { .. })
            && self.size() > 1
        {
            // The seed's DRQS/PA/CP ranks are single-threaded processes; -j still overrides.
            options.threads = ThreadPolicy::Fixed(1);
        }
        match &self.kind {
            Kind::Local => {
                let outcome = walk(roots, &options, visitor);
                if let Some(path) = &plan.stats_file {
                    let rank = local_rank_stats(&outcome.stats);
                    write_stats(
                        path,
                        &ClusterStats {
                            version: STATS_VERSION,
                            scheduler: "local".into(),
                            ranks: vec![rank],
                        },
                    );
                }
                outcome
            }
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.walk(roots, &options, visitor, plan),
        }
    }

    /// Combines a value from every rank with `merge` (which must be associative); rank 0 gets the
    /// result, the others `None`. Collective.
    #[cfg_attr(not(feature = "mpi"), allow(unused_variables))] // one process: nothing to merge
    pub fn reduce<T: Serialize + DeserializeOwned>(&self, value: T, merge: impl Fn(T, T) -> T) -> Option<T> {
        match &self.kind {
            Kind::Local => Some(value),
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.reduce(value, merge),
        }
    }

    /// The worst exit status over all ranks, known to every rank. Collective.
    pub fn agree_exit(&self, code: u8) -> u8 {
        match &self.kind {
            Kind::Local => code,
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.max_u8(code),
        }
    }

    /// Where results go: stdout and then each of `files` (created, truncated). On rank 0 these
    /// are the real ones; other ranks get sinks whose bytes are shipped to rank 0 and written
    /// there. Call [`Cluster::finish_output`] at the end. Collective.
    pub fn outputs(&self, files: &[PathBuf]) -> std::io::Result<Vec<Arc<Sink>>> {
        match &self.kind {
            Kind::Local => {
                let mut sinks = vec![Sink::stdout()];
                for path in files {
                    sinks.push(create_output(path)?);
                }
                Ok(sinks)
            }
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => w.outputs(files),
        }
    }

    /// Byte messages between this cluster's processes, for layers above the walk.
    pub fn messenger(&self) -> crate::Messenger<'_> {
        match &self.kind {
            Kind::Local => crate::Messenger::local(),
            #[cfg(feature = "mpi")]
            Kind::Mpi(w) => crate::Messenger::mpi(w.messenger()),
        }
    }

    /// Delivers every rank's remaining output to rank 0 and prints it there. Collective.
    pub fn finish_output(&self) {
        #[cfg(feature = "mpi")]
        if let Kind::Mpi(w) = &self.kind {
            w.finish_output();
        }
    }
}

/// Creates (truncates) an output file; the error names it, as find's `-fprint` reports it
/// (`'/x/out': No such file or directory`).
pub(crate) fn create_output(path: &std::path::Path) -> std::io::Result<Arc<Sink>> {
    Sink::create(path).map_err(|e| {
        let reason = match e.raw_os_error() {
            Some(code) => canopy_engine::errno_message(canopy_engine::Errno::from_raw_os_error(code)),
            None => e.to_string(),
        };
        std::io::Error::new(e.kind(), format!("'{}': {reason}", path.display()))
    })
}

fn local_rank_stats(stats: &canopy_engine::WalkStats) -> RankStats {
    RankStats {
        host: hostname(),
        threads: stats.threads,
        tasks: stats.tasks,
        entries: stats.entries,
        dirs: stats.dirs,
        messages_to: vec![0],
        bytes_to: vec![0],
        idle_secs: stats.idle_secs,
        readdir_secs: stats.readdir_secs,
        stat_secs: stats.stat_secs,
        elapsed_secs: stats.elapsed_secs,
        ..RankStats::default()
    }
}

pub(crate) fn hostname() -> String {
    rustix::system::uname().nodename().to_string_lossy().into_owned()
}

pub(crate) fn write_stats(path: &std::path::Path, stats: &ClusterStats) {
    let json = serde_json::to_vec_pretty(stats).expect("stats serialise");
    if let Err(e) = std::fs::write(path, json) {
        eprintln!("canopy: cannot write statistics to '{}': {e}", path.display());
    }
}

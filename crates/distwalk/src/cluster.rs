//! The process group a tool runs in: one local process, or the ranks of an MPI job. Tools call
//! these methods the same way in both cases and never touch MPI themselves.

use crate::budget::Budget;
use crate::sched_kind::SchedKind;
use crate::stats::{ClusterStats, RankStats, STATS_VERSION};
use canopy_engine::output::Sink;
use canopy_engine::{
    DistributedVisitor, Politeness, ThreadPolicy, WalkFailure, WalkOptions, WalkOutcome, panic_message, walk,
};
use canopy_transport::launch::LaunchRefused;
use canopy_transport::{World, hostname};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::any::Any;
use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

/// How a walk is spread over the cluster.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    pub sched: SchedKind,
    /// Write per-rank statistics as JSON here (rank 0 writes).
    pub stats_file: Option<PathBuf>,
    /// Under MPI: a rank that does not answer for this long (stopped, partitioned, dead) aborts
    /// the job with exit status [`canopy_transport::NO_ANSWER_EXIT`], from the walk to the end of
    /// the job ([`World::watch`]); `None` waits forever. A busy rank still answers.
    pub timeout: Option<std::time::Duration>,
}

/// The processes of the job ([`World`], whose methods — rank, size, nodes, abort, watch,
/// messenger — a cluster has too) with the distributed walk, the reductions and the output merged
/// on rank 0 on top.
pub struct Cluster {
    world: World,
    /// The walk's state on the MPI world; `None` for one local process.
    #[cfg(feature = "mpi")]
    mpi: Option<crate::mpi::MpiCluster>,
}

impl std::ops::Deref for Cluster {
    type Target = World;

    fn deref(&self) -> &World {
        &self.world
    }
}

impl Cluster {
    /// Joins the MPI job when started by an MPI launcher, as [`World::init`] does (refusing a
    /// launch that would run N copies of the job). Call once per process.
    pub fn init() -> Result<Cluster, LaunchRefused> {
        World::init().map(Cluster::on)
    }

    pub fn local() -> Cluster {
        Cluster::on(World::local())
    }

    fn on(world: World) -> Cluster {
        Cluster {
            #[cfg(feature = "mpi")]
            mpi: world.communicator().map(|_| crate::mpi::MpiCluster::new(world.rank(), world.nodes())),
            world,
        }
    }

    /// The MPI world communicator and the walk's state on it; `None` for one local process.
    #[cfg(feature = "mpi")]
    fn mpi(&self) -> Option<(&mpi::topology::SimpleCommunicator, &crate::mpi::MpiCluster)> {
        Some((self.world.communicator()?, self.mpi.as_ref()?))
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
        let budget = self.politeness_budget(&options.politeness);
        if let Some(budget) = &budget {
            options.politeness = budget.limits();
        }
        if plan.sched.single_threaded_ranks()
            && matches!(options.threads, ThreadPolicy::Adaptive { .. })
            && self.size() > 1
        {
            // The seed's DRQS/PA/CP ranks are single-threaded processes; -j still overrides.
            options.threads = ThreadPolicy::Fixed(1);
        }
        #[cfg(feature = "mpi")]
        if let Some((comm, mpi)) = self.mpi() {
            self.watch(plan.timeout);
            return mpi.walk(comm, roots, &options, visitor, plan, budget);
        }
        let outcome = walk(roots, &options, visitor);
        if let Some(path) = &plan.stats_file {
            let rank = local_rank_stats(&outcome.stats);
            write_stats(
                path,
                &ClusterStats { version: STATS_VERSION, scheduler: "local".into(), ranks: vec![rank] },
            );
        }
        outcome
    }

    /// This rank's starting part of the walk's politeness budget. Refused alike on every rank:
    /// rank 0 says why and ends the job with exit status 2 (the others wait for that end, a few
    /// seconds at most, then end it too).
    fn politeness_budget(&self, limits: &Politeness) -> Option<Budget> {
        match Budget::new(limits, self.rank() as usize, self.size() as usize) {
            Ok(budget) => budget,
            Err(refusal) => {
                if self.is_root() {
                    eprintln!("canopy: {refusal}");
                    self.abort(2);
                }
                std::thread::sleep(std::time::Duration::from_secs(5));
                self.abort(2)
            }
        }
    }

    /// Combines a value from every rank with `merge` (which must be associative); rank 0 gets the
    /// result, the others `None`. Collective.
    #[cfg_attr(not(feature = "mpi"), allow(unused_variables))] // one process: nothing to merge
    pub fn reduce<T: Serialize + DeserializeOwned>(&self, value: T, merge: impl Fn(T, T) -> T) -> Option<T> {
        #[cfg(feature = "mpi")]
        if let Some((comm, _)) = self.mpi() {
            return crate::mpi::reduce(comm, value, merge);
        }
        Some(value)
    }

    /// The worst exit status over all ranks, known to every rank. Collective.
    pub fn agree_exit(&self, code: u8) -> u8 {
        #[cfg(feature = "mpi")]
        if let Some((comm, _)) = self.mpi() {
            return crate::mpi::max_u8(comm, code);
        }
        code
    }

    /// Where results go: stdout and then each of `files` (created, truncated). On rank 0 these
    /// are the real ones; other ranks get sinks whose bytes are shipped to rank 0 and written
    /// there. Call [`Cluster::finish_output`] at the end. Collective.
    pub fn outputs(&self, files: &[PathBuf]) -> std::io::Result<Vec<Arc<Sink>>> {
        #[cfg(feature = "mpi")]
        if let Some((comm, mpi)) = self.mpi() {
            return mpi.outputs(comm, files);
        }
        let mut sinks = vec![Sink::stdout()];
        for path in files {
            sinks.push(create_output(path)?);
        }
        Ok(sinks)
    }

    /// Delivers every rank's remaining output to rank 0 and prints it there. Collective.
    pub fn finish_output(&self) {
        #[cfg(feature = "mpi")]
        if let Some((comm, mpi)) = self.mpi() {
            mpi.finish_output(comm);
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
        idle_secs: stats.idle_secs,
        readdir_secs: stats.readdir_secs,
        stat_secs: stats.stat_secs,
        metadata_calls: stats.metadata_calls,
        elapsed_secs: stats.elapsed_secs,
        ..RankStats::default()
    }
}

pub(crate) fn write_stats(path: &std::path::Path, stats: &ClusterStats) {
    let json = serde_json::to_vec_pretty(stats).expect("stats serialise");
    if let Err(e) = std::fs::write(path, json) {
        eprintln!("canopy: cannot write statistics to '{}': {e}", path.display());
    }
}

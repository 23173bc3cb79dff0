//! The MPI side of [`crate::Cluster`]: initialisation, topology, collectives, output forwarding,
//! and the walk loops ([`steal`] for DRQS/DEQS/PA-DRQS/H-DRQS, [`central`] for CP).

mod balance;
mod central;
mod comm;
mod forward;
mod messenger;
mod protocol;
mod steal;
mod transport;
mod watchdog;

use crate::cluster::{Plan, hostname, write_stats};
use crate::sched_kind::SchedKind;
use crate::stats::{ClusterStats, RankStats, STATS_VERSION};
use crate::victims::Topology;
use canopy_engine::output::Sink;
use canopy_engine::{DistributedVisitor, WalkOptions, WalkOutcome};
use forward::Forwarder;
pub use messenger::MpiMessenger;
use mpi::collective::{CommunicatorCollectives, Root, SystemOperation};
use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;
use watchdog::Watchdog;

pub struct MpiWorld {
    /// Dropped first: its thread stops before MPI is finalised. `None` when the MPI library cannot
    /// serve a second thread, or the job has one rank.
    watchdog: Option<Watchdog>,
    /// Said once that there is no watchdog.
    unwatched: std::sync::Once,
    /// Dropping the universe finalises MPI.
    _universe: Universe,
    world: SimpleCommunicator,
    topology: Topology,
    forwarder: Arc<Forwarder>,
}

impl MpiWorld {
    pub fn init() -> Option<MpiWorld> {
        // The walk makes its MPI calls from one thread; the watchdog's heartbeat thread is the other.
        let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Multiple)?;
        let world = universe.world();
        let topology = discover_topology(&world);
        let watchdog =
            (threading == mpi::Threading::Multiple && world.size() > 1).then(|| Watchdog::start(&world));
        Some(MpiWorld {
            watchdog,
            unwatched: std::sync::Once::new(),
            _universe: universe,
            world,
            topology,
            forwarder: Arc::new(Forwarder::default()),
        })
    }

    pub fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    pub fn size(&self) -> u32 {
        self.world.size() as u32
    }

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
        self.watch(plan.timeout);
        let roots: &[Vec<u8>] = if self.rank() == 0 { roots } else { &[] };
        let (outcome, mut rank_stats) = match plan.sched {
            SchedKind::Cp => central::walk(&self.world, roots, options, visitor, &self.forwarder),
            kind => steal::walk(&self.world, &self.topology, kind, roots, options, visitor, &self.forwarder),
        };
        rank_stats.rank = self.rank();
        rank_stats.node = self.topology.node[self.rank() as usize];
        rank_stats.host = hostname();
        if let Some(path) = &plan.stats_file {
            let all = self.reduce(vec![rank_stats], |mut a, b| {
                a.extend(b);
                a
            });
            if let Some(mut ranks) = all {
                ranks.sort_by_key(|r: &RankStats| r.rank);
                write_stats(
                    path,
                    &ClusterStats { version: STATS_VERSION, scheduler: plan.sched.name().into(), ranks },
                );
            }
        }
        outcome
    }

    /// See [`crate::Cluster::watch`].
    pub fn watch(&self, timeout: Option<std::time::Duration>) {
        let Some(timeout) = timeout else { return };
        match &self.watchdog {
            Some(watchdog) => watchdog.arm(timeout),
            None if self.size() > 1 && self.rank() == 0 => self.unwatched.call_once(|| {
                eprintln!(
                    "canopy: warning: this MPI library serves one thread only: --timeout is not enforced"
                )
            }),
            None => {}
        }
    }

    /// Gathers every rank's serialised value at rank 0 and folds them in rank order.
    pub fn reduce<T: Serialize + DeserializeOwned>(&self, value: T, merge: impl Fn(T, T) -> T) -> Option<T> {
        let bytes = protocol::encode(&value);
        let root = self.world.process_at_rank(0);
        let count = bytes.len() as i32;
        if self.rank() != 0 {
            root.gather_into(&count);
            root.gather_varcount_into(&bytes[..]);
            return None;
        }
        let mut counts = vec![0i32; self.size() as usize];
        root.gather_into_root(&count, &mut counts[..]);
        let displs: Vec<i32> = counts
            .iter()
            .scan(0, |acc, &c| {
                let d = *acc;
                *acc += c;
                Some(d)
            })
            .collect();
        let mut all = vec![0u8; counts.iter().sum::<i32>() as usize];
        {
            let mut partition = mpi::datatype::PartitionMut::new(&mut all[..], &counts[..], &displs[..]);
            root.gather_varcount_into_root(&bytes[..], &mut partition);
        }
        let mut values = counts
            .iter()
            .zip(&displs)
            .map(|(&c, &d)| protocol::decode::<T>(&all[d as usize..(d + c) as usize]));
        let first = values.next()?;
        Some(values.fold(first, merge))
    }

    pub fn max_u8(&self, value: u8) -> u8 {
        let mut max = 0i32;
        self.world.all_reduce_into(&i32::from(value), &mut max, SystemOperation::max());
        max as u8
    }

    /// Channel 0 is stdout; the others are `files`, created (truncated) on rank 0 only.
    pub fn outputs(&self, files: &[std::path::PathBuf]) -> std::io::Result<Vec<Arc<Sink>>> {
        let mut channels = 1usize..;
        if self.rank() != 0 {
            let stdout = Sink::new(Box::new(self.forwarder.writer(0)));
            let files = files
                .iter()
                .map(|_| Sink::new(Box::new(self.forwarder.writer(channels.next().unwrap_or(0) as u8))));
            return Ok(std::iter::once(stdout).chain(files).collect());
        }
        let mut sinks = vec![Sink::stdout()];
        for path in files {
            sinks.push(crate::cluster::create_output(path)?);
        }
        self.forwarder.set_sinks(sinks.clone());
        Ok(sinks)
    }

    pub fn nodes(&self) -> Vec<u32> {
        self.topology.node.clone()
    }

    pub fn abort(&self, code: u8) -> ! {
        self.world.abort(i32::from(code))
    }

    pub fn messenger(&self) -> MpiMessenger<'_> {
        MpiMessenger::new(&self.world)
    }

    pub fn finish_output(&self) {
        forward::finish(&self.world, &self.forwarder);
    }
}

/// Which ranks share a node: a shared-memory communicator split, then every rank learns every
/// rank's node (the lowest world rank on it). `CANOPY_RANKS_PER_NODE=K` instead groups K
/// consecutive ranks per node, to study proximity-aware scheduling with one machine.
fn discover_topology(world: &SimpleCommunicator) -> Topology {
    let rank = world.rank();
    let leader = match std::env::var("CANOPY_RANKS_PER_NODE")
        .ok()
        .and_then(|v| v.parse::<i32>().ok())
        .filter(|&k| k > 0)
    {
        Some(k) => rank / k * k,
        None => {
            let local = world.split_shared(rank);
            let mut leader = rank;
            local.process_at_rank(0).broadcast_into(&mut leader);
            leader
        }
    };
    let mut leaders = vec![0i32; world.size() as usize];
    world.all_gather_into(&leader, &mut leaders[..]);
    let mut nodes: Vec<i32> = leaders.clone();
    nodes.sort_unstable();
    nodes.dedup();
    let node = leaders.iter().map(|l| nodes.binary_search(l).unwrap_or(0) as u32).collect();
    Topology { rank: rank as u32, node }
}

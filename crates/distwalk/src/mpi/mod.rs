//! The MPI side of [`crate::Cluster`]: collectives, output forwarding, and the walk loops
//! ([`steal`] for DRQS/DEQS/PA-DRQS/H-DRQS, [`central`] for CP), on the world communicator of
//! `canopy_transport`'s `World`.

mod balance;
mod central;
mod comm;
mod forward;
mod protocol;
mod steal;

use crate::budget::Budget;
use crate::cluster::{Plan, write_stats};
use crate::sched_kind::SchedKind;
use crate::stats::{ClusterStats, RankStats, STATS_VERSION};
use crate::victims::Topology;
use canopy_engine::output::Sink;
use canopy_engine::{DistributedVisitor, WalkOptions, WalkOutcome};
use canopy_transport::hostname;
use forward::Forwarder;
use mpi::collective::{CommunicatorCollectives, SystemOperation};
use mpi::point_to_point::{Destination, Source};
use mpi::topology::{Communicator, SimpleCommunicator};
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// The walk's state on the world: which ranks share a node, and the output on its way to rank 0.
pub struct MpiCluster {
    topology: Topology,
    forwarder: Arc<Forwarder>,
}

impl MpiCluster {
    pub fn new(rank: u32, nodes: Vec<u32>) -> MpiCluster {
        MpiCluster { topology: Topology { rank, node: nodes }, forwarder: Arc::new(Forwarder::default()) }
    }

    pub fn walk<V>(
        &self,
        world: &SimpleCommunicator,
        roots: &[Vec<u8>],
        options: &WalkOptions,
        visitor: &V,
        plan: &Plan,
        budget: Option<Budget>,
    ) -> WalkOutcome<V::State>
    where
        V: DistributedVisitor,
    {
        let rank = world.rank() as u32;
        let roots: &[Vec<u8>] = if rank == 0 { roots } else { &[] };
        let (outcome, mut rank_stats) = match plan.sched {
            // CP's ranks keep their equal shares: the master hands out one directory at a time.
            SchedKind::Cp => central::walk(world, roots, options, visitor, &self.forwarder),
            kind => steal::walk(world, self, kind, roots, options, visitor, budget),
        };
        rank_stats.rank = rank;
        rank_stats.node = self.topology.node[rank as usize];
        rank_stats.host = hostname();
        if let Some(path) = &plan.stats_file {
            let all = reduce(world, vec![rank_stats], |mut a, b| {
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

    /// Channel 0 is stdout; the others are `files`, created (truncated) on rank 0 only.
    pub fn outputs(
        &self,
        world: &SimpleCommunicator,
        files: &[std::path::PathBuf],
    ) -> std::io::Result<Vec<Arc<Sink>>> {
        let mut channels = 1usize..;
        if world.rank() != 0 {
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

    pub fn finish_output(&self, world: &SimpleCommunicator) {
        forward::finish(world, &self.forwarder);
    }
}

/// Folds every rank's value into rank 0's, in rank order, up a binomial tree of point-to-point
/// messages: rank 0 receives log2(P) messages, each of a subtree's folded value, instead of P values
/// whose 32-bit gather counts and displacements overflow at 10⁴ ranks. The messages travel on a
/// duplicate of the world communicator, as a collective's would: a rank still polling the world for
/// the walk's last messages must not take them.
pub fn reduce<T: Serialize + DeserializeOwned>(
    world: &SimpleCommunicator,
    value: T,
    merge: impl Fn(T, T) -> T,
) -> Option<T> {
    let world = &world.duplicate();
    let (rank, size) = (world.rank(), world.size());
    let mut value = value;
    let mut step = 1;
    while step < size {
        if rank % (2 * step) != 0 {
            // This subtree's value goes to its parent, which folds it after its own lower ranks.
            world.process_at_rank(rank - step).send_with_tag(&protocol::encode(&value)[..], protocol::REDUCE);
            return None;
        }
        if rank + step < size {
            let (bytes, _) = world.process_at_rank(rank + step).receive_vec_with_tag::<u8>(protocol::REDUCE);
            value = merge(value, protocol::decode(&bytes));
        }
        step *= 2;
    }
    Some(value)
}

/// The largest `value` over all ranks, known to every rank.
pub fn max_u8(world: &SimpleCommunicator, value: u8) -> u8 {
    let mut max = 0i32;
    world.all_reduce_into(&i32::from(value), &mut max, SystemOperation::max());
    max as u8
}

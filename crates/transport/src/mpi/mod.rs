//! The MPI side of [`crate::World`]: initialisation, which ranks share a node, the nonblocking
//! point-to-point [`Transport`] every protocol on the world communicator uses, the
//! [`crate::Messenger`]'s MPI side and the heartbeat watchdog.

mod messenger;
mod transport;
mod watchdog;

pub use messenger::MpiMessenger;
pub use transport::{Incoming, Transport};

use mpi::Tag;
use mpi::collective::{CommunicatorCollectives, Root};
use mpi::environment::Universe;
use mpi::topology::{Communicator, SimpleCommunicator};
use watchdog::Watchdog;

/// The tag of [`crate::Messenger`]'s messages on the world communicator. Protocols above this
/// crate (the distributed walk's) use tags below it, so their messages never mix.
pub const LAYER: Tag = 20;

pub struct MpiWorld {
    /// Dropped first: its thread stops before MPI is finalised. `None` when the MPI library cannot
    /// serve a second thread, or the job has one rank.
    watchdog: Option<Watchdog>,
    /// Said once that there is no watchdog.
    unwatched: std::sync::Once,
    /// Dropping the universe finalises MPI.
    _universe: Universe,
    world: SimpleCommunicator,
    nodes: Vec<u32>,
}

impl MpiWorld {
    pub fn init() -> Option<MpiWorld> {
        // The tools make their MPI calls from one thread; the watchdog's heartbeat thread is the other.
        let (universe, threading) = mpi::initialize_with_threading(mpi::Threading::Multiple)?;
        let world = universe.world();
        let nodes = discover_nodes(&world);
        let watchdog =
            (threading == mpi::Threading::Multiple && world.size() > 1).then(|| Watchdog::start(&world));
        Some(MpiWorld { watchdog, unwatched: std::sync::Once::new(), _universe: universe, world, nodes })
    }

    pub fn rank(&self) -> u32 {
        self.world.rank() as u32
    }

    pub fn size(&self) -> u32 {
        self.world.size() as u32
    }

    pub fn nodes(&self) -> &[u32] {
        &self.nodes
    }

    pub fn communicator(&self) -> &SimpleCommunicator {
        &self.world
    }

    pub fn abort(&self, code: u8) -> ! {
        self.world.abort(i32::from(code))
    }

    /// See [`crate::World::watch`].
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
}

/// Which ranks share a node: a shared-memory communicator split, then every rank learns every
/// rank's node (the lowest world rank on it). `CANOPY_RANKS_PER_NODE=K` instead groups K
/// consecutive ranks per node, to study proximity-aware scheduling with one machine.
fn discover_nodes(world: &SimpleCommunicator) -> Vec<u32> {
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
    leaders.iter().map(|l| nodes.binary_search(l).unwrap_or(0) as u32).collect()
}

//! The distributed walk: the engine's walk spread over the ranks of an MPI job (the ranks and
//! their messages are `canopy_transport`'s).
//!
//! Each rank runs the engine's local worker pool; one communication thread per rank (the one that
//! called [`Cluster::walk`]) does all the MPI work with nonblocking point-to-point messages:
//! answering work requests with a share of the local queues, asking other ranks for work when the
//! whole rank is idle, reporting finished imported subtrees back to where their parents live, and
//! passing the termination token. The schedulers are the seed paper's (§IV): DRQS, DEQS, PA-DRQS,
//! H-DRQS (the default) and the centralised CP baseline — see [`SchedKind`]. Termination is
//! Safra's message-counting version of Dijkstra's token ring ([`safra`]). A rank that stops
//! answering ends the job within [`Plan::timeout`] instead of hanging it (the transport's watchdog,
//! armed by [`Cluster::walk`]).
//!
//! Without the `mpi` cargo feature (or when not started by an MPI launcher) a [`Cluster`] is a
//! single local process and every call is the plain engine's.

pub mod backoff;
pub mod budget;
mod cluster;
pub mod completions;
pub mod export;
pub mod governor;
pub mod kary;
#[cfg(feature = "mpi")]
mod mpi;
pub mod safra;
mod sched_kind;
pub mod stats;
pub mod termination;
pub mod victims;

pub use canopy_transport::{NO_ANSWER_EXIT, World, users_terminal};
pub use cluster::{Cluster, Plan};
pub use sched_kind::SchedKind;
pub use stats::{ClusterStats, PeerTraffic, RankStats};

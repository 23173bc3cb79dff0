//! Group file operations across hosts, aggregated in a tree: the idiom of TBON-FS (Brim and Miller), with
//! ClusterShell's NodeSet notation for hosts.
//!
//! A *group* is the set of files one path names on every host: a single file (`/proc/loadavg`: one member
//! per host), the files of a directory, or the matches of a glob. [`Runtime::gopen`] opens it once; each
//! operation ([`Group::read`], [`Group::pwrite`], [`Group::fstat`], ...) is then applied to every member and
//! the results are **aggregated in a tree** instead of being collected host by host:
//!
//! - the *status* of each member (bytes transferred, offset, 0) goes through a status aggregation (Table 2
//!   of the paper: sum for reads and writes, equal for lseek, zero otherwise);
//! - its *data* (bytes read, a stat) through a data aggregation, concatenation by default;
//! - failures never reach the aggregations: they come back as classes of members per error
//!   ([`Group::gstatus`], [`Outcome::failures`]), and a host that does not answer within the timeout is a
//!   named missing set ([`Outcome::missing`]), never a hang.
//!
//! Aggregations are built in ([`Builtin`]), written in Rust ([`Aggregation`], registered in a [`Registry`]),
//! or loaded from C shared libraries ([`gloadaggr`], `include/canopy_aggr.h`), and bound per operation with
//! [`Group::gbindaggr`]. Their merges are associative, so the result is the same for every tree shape.
//!
//! The tree ([`ReductionTree`]) is a k-ary tree over ranks with a per-node level. Ranks talk through a
//! [`Transport`]: [`ThreadTransport`] simulates hosts with threads ([`Simulation`]); a cluster's
//! [`Messenger`](canopy_transport::Messenger) carries it over MPI. Rank 0 runs the client ([`Runtime`]) and
//! every other rank [`serve`]s. Tools take their hosts from the command line with [`HostsArgs`], which
//! starts either.
//!
//! ```
//! use canopy_group::{OpenFlags, Simulation};
//!
//! let dir = tempfile::tempdir().unwrap();
//! for rank in 0..4 {
//!     std::fs::create_dir_all(dir.path().join(rank.to_string())).unwrap();
//!     std::fs::write(dir.path().join(format!("{rank}/motd")), "hello\n").unwrap();
//! }
//! let cluster = Simulation {
//!     hosts: 4,
//!     host_root: format!("{}/{{rank}}", dir.path().display()),
//!     ..Default::default()
//! }
//! .start()
//! .unwrap();
//! let mut group = cluster.runtime().gopen("/motd", OpenFlags::RDONLY).unwrap();
//! assert_eq!(group.gsize(), 4);
//! let outcome = group.read(100).unwrap();
//! assert_eq!(outcome.status_value().unwrap(), Some(24)); // 4 members × 6 bytes
//! ```

#![warn(missing_docs)]

pub mod aggr;
pub mod cli;
mod group;
mod host;
mod launch;
mod node;
mod ops;
mod protocol;
mod runtime;
mod sim;
mod status;
mod topology;
pub mod transport;
mod value;

pub use aggr::{AggrError, AggrResult, AggrSpec, Aggregation, Builtin, Registry, gloadaggr};
pub use group::{Failure, Group, GroupError, Member, OpenFailure, OpenReport, Outcome};
pub use host::HostConfig;
pub use launch::{Client, HostsArgs, SimulatedHosts};
pub use ops::{AggrType, FileOp, OpKind, OpenFlags, Piece, Whence};
pub use runtime::{Runtime, serve};
pub use sim::{Placeholders, SimulatedCluster, Simulation, expand_template};
pub use status::{Errno, MemberStatus};
pub use topology::{Fanout, Rank, ReductionTree};
pub use transport::{DynTransport, ThreadTransport, Transport, TransportError};
pub use value::{FileStat, Value};

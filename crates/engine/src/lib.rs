//! Canopy's traversal engine: one parallel tree walk under every tool.
//!
//! * **Scheduling** ([`sched`]): N workers, each with its own LIFO queue; an idle worker steals from a
//!   random victim, taking half of its queue ([`SplitMode::Equal`], the seed's DEQS) or a random share
//!   ([`SplitMode::Random`], DRQS); idle workers park; termination is exact. The worker count adapts to
//!   the latency the walk observes ([`ThreadPolicy`]).
//! * **Directory I/O** ([`sys`]): directories are opened relative to their parent's fd (`openat`,
//!   `O_NOFOLLOW`), read with `getdents64` into a 64 KiB buffer, and entries are stat'ed with `statx`
//!   relative to the directory fd only when a tool asks. Depth is unlimited (paths past `PATH_MAX` are
//!   fine); open fds stay within a budget derived from `RLIMIT_NOFILE`.
//! * **Big directories** are handed out in chunks while they are being read, so their entries are
//!   visited (and stat'ed) by several workers at once.
//! * **Tools** implement [`Visitor`]: per-entry logic with per-thread state merged after the walk, a
//!   post-order hook per directory, per-directory data set when a directory is visited, and follow-up
//!   jobs on the same pool (counted toward a directory's completion, or reserved now and scheduled
//!   later). Every entry knows its starting point ([`Entry::start_point`]). A visitor walked by
//!   several processes is also a [`DistributedVisitor`], whose hooks (all with defaults) lend a
//!   directory's data to a stand-in elsewhere and fold it back ([`remote`], [`Session::distributed`]).
//!
//! ```no_run
//! use canopy_engine::{walk, Action, Cx, Entry, Visitor, WalkOptions};
//!
//! struct CountFiles;
//! impl Visitor for CountFiles {
//!     type State = u64;
//!     type DirData = ();
//!     type Job = ();
//!     fn new_state(&self) -> u64 { 0 }
//!     fn visit(&self, _: &mut Cx<'_, Self>, n: &mut u64, e: &Entry<'_, ()>) -> Action {
//!         *n += 1;
//!         Action::Continue
//!     }
//! }
//! let outcome = walk(&[b"/usr".to_vec()], &WalkOptions::default(), &CountFiles);
//! let total: u64 = outcome.states.iter().sum();
//! ```

mod chunk;
mod cx;
mod entry;
mod error;
mod failure;
mod meta;
mod node;
mod once;
mod options;
pub mod output;
pub mod politeness;
pub mod remote;
pub mod sched;
mod session;
pub mod sys;
mod task;
mod visitor;
mod worker;

pub use cx::{Cx, Reservation};
pub use entry::Entry;
pub use error::{ErrorKind, Op, WalkError, errno_message};
pub use failure::{FailureKind, WalkFailure, panic_message};
pub use meta::{FileKind, Metadata, Timestamp};
pub use node::{DirFd, DirNode, Import, StartPoint, below_start};
pub use options::{Follow, ProgressFn, WalkOptions, WalkProgress};
pub use politeness::{Politeness, polite};
pub use rustix::io::Errno;
pub use sched::{SplitMode, ThreadPolicy};
pub use session::{Driver, PoolSample, Session, WalkOutcome, WalkStats, walk};
pub use visitor::{Action, DistributedVisitor, Visitor};

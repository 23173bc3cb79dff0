//! A discrete-event simulator of Canopy's distributed walk, for what one machine cannot show: how
//! the schedulers behave on thousands of ranks, each node with its own mount of a slow parallel file
//! system.
//!
//! It runs the real decision logic — `canopy-distwalk`'s victim choice, back-off, export policy and
//! termination detectors, the engine's thread-growth policy and split sizes — over virtual ranks,
//! and models only time: file-system requests on mounts with limited request slots, messages with
//! latency, bandwidth and handling cost, and the communication loop's polling. Message sizes come
//! from encodings of the walk's real wire types. Runs are deterministic for a seed.
//!
//! ```
//! use canopy_walksim::{Config, Sched, Tree, run};
//! let tree = Tree::deep(4, 3, 2);
//! let outcome = run(&tree, &Config::new(Sched::Balanced, 4));
//! assert!(outcome.checks.ok(&tree));
//! assert_eq!(outcome.entries_per_rank.iter().sum::<u64>(), tree.entries());
//! ```

mod central;
mod events;
pub mod model;
mod mount;
mod outcome;
mod pool;
mod sched;
mod sim;
mod steal;
pub mod table;
mod tree;
mod wire;

pub use model::Model;
pub use outcome::{Checks, HISTOGRAM_EDGES, Kind, Outcome};
pub use sched::{Balancing, Sched};
pub use sim::{Config, run};
pub use tree::Tree;

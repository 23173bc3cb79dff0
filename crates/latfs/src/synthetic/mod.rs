//! `canopy latfs --synthetic SPEC`: a generated tree served from memory through FUSE, with the
//! passthrough's latency and counters, for measuring tools at 10^7–10^9 entries without the disks.
//!
//! Nothing is stored per entry. Inodes number the tree in preorder, each directory's layout (file
//! slots, subdirectories, how entries are split among them) is a function of its place, and every
//! name, type, size and time is drawn from (seed, inode): lookup, getattr and readdir are arithmetic
//! over the path from the root (see `tree.rs`).

mod attributes;
mod describe;
mod draw;
mod filesystem;
mod layout;
mod names;
mod spec;
mod tree;

pub use describe::{Description, describe};
pub(crate) use filesystem::SyntheticFs;
pub use spec::{MAX_DEPTH, MAX_ENTRIES, Part, Shape, Share, Spec};

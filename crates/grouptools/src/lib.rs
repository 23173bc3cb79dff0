//! The group tools of TBON-FS §4 on Canopy's group layer: each is a thin program of group operations plus
//! an aggregation, run on the hosts of [`hosts::HostsArgs`]: threads, or one per rank under `mpirun`.
//!
//! | tool | group operations | aggregation |
//! |---|---|---|
//! | [`pcp`] | posted writes down the tree, rename | SHA-256 classes of the copies |
//! | [`pgrep`] | read | classes of the selected, stripped lines |
//! | [`psync`] | read, assemble (copy ranges + new bytes) on sub-groups | classes of block signatures |
//! | [`ptail`] | read, seek back over partial lines | line equivalence after stripping |
//! | [`ptop`] | read of `/proc/PID/stat*` | top-N and per-command totals |
//! | [`monitor`] | read of node_exporter's `/proc` files | each host's samples, or sum / count / min / max with where |

pub mod hosts;
pub mod interrupt;
#[cfg(feature = "monitor")]
pub mod monitor;
pub mod pcp;
pub mod pgrep;
pub mod problems;
pub mod psync;
pub mod ptail;
pub mod ptop;
pub mod units;
pub mod verify;

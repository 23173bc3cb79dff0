//! What Canopy's FUSE file systems (`canopy latfs`, `canopy dirsvc mount`) share: serving a mount
//! in the foreground or as a daemon, signal handling, unmounting (lazily when busy, stale mounts
//! too), tables of open handles, and durations on the command line.

pub mod daemon;
pub mod duration;
pub mod handles;
pub mod mounts;
pub mod serve;
pub mod signals;

pub use daemon::Daemon;
pub use handles::HandleTable;
pub use mounts::{Unmounted, is_mounted, unmount};
pub use serve::{Foreground, serve, write_atomically};

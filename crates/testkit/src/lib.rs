//! What the test suites share about the machine they run on: whether they run as root, whether
//! FUSE mounts can be made, and how a test that cannot run here says so instead of passing silently;
//! and the hostile test tree that every tree tool's suite builds.

mod hostile;
pub mod mpirun;
mod tree;

pub use hostile::{DEEP_LEVELS, ODD_NAMES, SIZES, hostile_tree, mkfifo, set_times};
pub use tree::deep_chain;

use std::io::Write;
use std::path::Path;

/// Says on the test run's output that the current test did not run, and why. libtest captures
/// `eprintln!` and shows it only for a failing test, so a skip written that way would pass
/// silently; a write to the stderr handle itself is not captured.
pub fn skip(why: &str) {
    let thread = std::thread::current();
    let test = thread.name().unwrap_or("a test");
    let _ = writeln!(std::io::stderr(), "SKIPPED {test}: {why}");
}

pub fn is_root() -> bool {
    rustix::process::geteuid().is_root()
}

/// Whether the test runs as root; when it does not, says it is skipped and why it needs root.
pub fn root_or_skip(needs_root_to: &str) -> bool {
    let root = is_root();
    if !root {
        skip(&format!("needs root to {needs_root_to}"));
    }
    root
}

/// Whether FUSE mounts can be made here; when they cannot, says the test is skipped.
pub fn fuse_available() -> bool {
    let available = Path::new("/dev/fuse").exists();
    if !available {
        skip("/dev/fuse does not exist on this machine, so nothing can be mounted");
    }
    available
}

//! `canopy latfs`: a latency-injecting passthrough FUSE file system.
//!
//! It mirrors a source directory and makes every metadata request (lookup, getattr, readdir, open,
//! create, …) sleep a fixed delay on its own worker thread, with the kernel's caches off: a local tree
//! on a 2-core machine then behaves like a parallel file system where each call costs 0.2–2 ms and
//! only concurrency wins time. Writes pass through too, so copy and remove tools can be measured.
//!
//! ```no_run
//! use canopy_latfs::{Mounted, Options};
//! let mut options = Options::new("/data", "/mnt/slow");
//! options.delay = std::time::Duration::from_millis(1);
//! let mount = Mounted::start(&options)?;
//! // … run a client on /mnt/slow …
//! println!("{}", mount.stats().snapshot().summary());
//! mount.unmount()?;
//! # Ok::<(), std::io::Error>(())
//! ```

mod args;
mod attr;
mod filesystem;
mod gate;
mod inodes;
mod latency;
mod location;
mod mount;
mod options;
mod passthrough;
mod run;
mod stats;
pub mod synthetic;
mod worker;

pub use args::Args;
pub use canopy_fusekit::duration::{format_duration, parse_duration};
pub use mount::Mounted;
pub use options::{MAX_THREADS, Options};
pub use run::run;
pub use stats::{Op, Snapshot, Stats};

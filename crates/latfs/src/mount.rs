//! Mounting: the FUSE session options, and a handle for mounts served in the background.

use std::io;
use std::sync::Arc;

use fuser::{BackgroundSession, Config, MountOption, Session, SessionACL};

use crate::filesystem::LatencyFs;
use crate::options::Options;
use crate::stats::Stats;

/// Mounts `options.source` at `options.mountpoint`, ready to be run in the foreground.
pub(crate) fn session(options: &Options) -> io::Result<(Session<LatencyFs>, Arc<Stats>)> {
    let stats = Arc::new(Stats::default());
    let filesystem = LatencyFs::new(options, Arc::clone(&stats))?;
    let session = Session::new(filesystem, &options.mountpoint, &config(options))?;
    Ok((session, stats))
}

fn config(options: &Options) -> Config {
    let mut mount_options =
        vec![MountOption::FSName("latfs".to_string()), MountOption::Subtype("latfs".to_string())];
    if options.read_only {
        mount_options.push(MountOption::RO);
    }
    let mut config = Config::default();
    if options.allow_other {
        // Other users' requests reach a server that may run as root: let the kernel check permissions.
        mount_options.push(MountOption::DefaultPermissions);
        config.acl = SessionACL::All;
    }
    config.mount_options = mount_options;
    config.n_threads = Some(options.threads);
    // One /dev/fuse fd per worker: requests are spread over the workers without a shared read lock.
    config.clone_fd = true;
    config
}

/// A mount served by worker threads of this process (for tests and embedding). Dropping it unmounts.
pub struct Mounted {
    session: BackgroundSession,
    stats: Arc<Stats>,
}

impl Mounted {
    /// Mounts and serves in background threads; returns once the kernel has completed the handshake.
    pub fn start(options: &Options) -> io::Result<Mounted> {
        let (session, stats) = session(options)?;
        Ok(Mounted { session: session.spawn()?, stats })
    }

    /// The mount's live request counters.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Unmounts and waits for the worker threads to finish.
    pub fn unmount(self) -> io::Result<()> {
        self.session.umount_and_join()
    }
}

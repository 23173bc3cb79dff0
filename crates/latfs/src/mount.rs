//! Mounting: the FUSE session options, and a handle for mounts served in the background.

use std::io;
use std::sync::Arc;

use fuser::{
    BackgroundSession, Config, Filesystem, InitFlags, KernelConfig, MountOption, Session, SessionACL,
};

use crate::filesystem::LatencyFs;
use crate::options::Options;
use crate::stats::Stats;
use crate::synthetic::SyntheticFs;

/// Mounts `filesystem` at `options.mountpoint`, ready to be run in the foreground.
pub(crate) fn session<FS: Filesystem>(filesystem: FS, options: &Options) -> io::Result<Session<FS>> {
    Session::new(filesystem, &options.mountpoint, &config(options))
}

/// What the kernel is asked for at the FUSE handshake, whatever serves the mount.
pub(crate) fn configure_kernel(config: &mut KernelConfig, readdirplus: bool, max_background: u16) {
    // Without PARALLEL_DIROPS the kernel serialises lookups and readdirs within one directory, and
    // concurrent clients would see one delay after another.
    if config.add_capabilities(InitFlags::FUSE_PARALLEL_DIROPS).is_err() {
        eprintln!(
            "canopy latfs: the kernel lacks FUSE_PARALLEL_DIROPS: lookups in one directory will not overlap"
        );
    }
    if readdirplus && config.add_capabilities(InitFlags::FUSE_DO_READDIRPLUS).is_err() {
        eprintln!("canopy latfs: the kernel lacks READDIRPLUS: --readdirplus has no effect");
    }
    // Background requests (readahead, async writes, releases) beyond this limit wait in the kernel.
    let _ = config.set_max_background(max_background);
    let _ = config.set_congestion_threshold((max_background / 4 * 3).max(1));
}

fn config(options: &Options) -> Config {
    let mut mount_options =
        vec![MountOption::FSName("latfs".to_string()), MountOption::Subtype("latfs".to_string())];
    // A generated tree has nowhere to write to.
    if options.read_only || options.synthetic.is_some() {
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
        let stats = Arc::new(Stats::default());
        let session = match &options.synthetic {
            None => session(LatencyFs::new(options, Arc::clone(&stats))?, options)?.spawn()?,
            Some(spec) => session(SyntheticFs::new(spec, options, Arc::clone(&stats)), options)?.spawn()?,
        };
        Ok(Mounted { session, stats })
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

//! `canopy dirsvc mount`: the distributed namespace as a FUSE file system, so every tool — ls,
//! GNU find, canopy find/du/walk, mdtest-style creators — works on it without knowing about it.
//!
//! Inode numbers are object ids. Each request runs as a task over the client library (which
//! finds each name's partition itself); file data lives on the servers. Names and attributes are
//! cached by the kernel for `ttl` (default 1 s): another client's change shows within that time.
//! Splits change neither ids nor names, so no kernel cache needs dropping when a partition splits;
//! the client's bitmap cache is corrected by the first redirect. The kernel checks permissions
//! against the attributes (`default_permissions`), with the caller's supplementary groups.
//!
//! A server that is down makes the operations on its partitions (and on directories whose
//! metadata object it holds) fail with EIO at once (its connection is refused) or after `timeout`
//! (it does not answer); nothing hangs, and the mount works again as soon as the server is back.

mod attr;
mod attributes;
mod core;
mod dirs;
mod entries;
mod file_ops;
mod fs;
mod nodes;
mod open_files;

use std::io;
use std::path::PathBuf;
use std::time::Duration;

use fuser::{Config, MountOption, Session, SessionACL};

use self::core::{MountCore, Settings};
use self::fs::DirsvcFs;
use crate::client::Client;
use crate::cluster::Cluster;

/// What a mount is made of.
#[derive(Clone, Debug)]
pub struct MountOptions {
    pub cluster: Cluster,
    pub mountpoint: PathBuf,
    /// How long the kernel may cache names and attributes.
    pub ttl: Duration,
    /// How long a request may wait for a server before failing with EIO.
    pub timeout: Duration,
    /// Threads reading requests from the kernel (the work runs on the runtime's threads).
    pub threads: usize,
    /// Runtime worker threads driving requests to the servers.
    pub workers: usize,
    /// Active partitions of directories made through the mount (0: all N; 1: grow by splits).
    pub initial_partitions: u32,
    /// Let other users in (root, or user_allow_other in /etc/fuse.conf).
    pub allow_other: bool,
}

/// Mounts the cluster's namespace at `options.mountpoint`, ready to be served.
pub fn session(options: &MountOptions) -> io::Result<Session<DirsvcFs>> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.workers.max(1))
        .thread_name("dirsvc-mount")
        .enable_all()
        .build()?;
    let client = {
        let _context = runtime.enter();
        Client::connect_with_timeout(&options.cluster, options.timeout)
    };
    let settings = Settings { ttl: options.ttl, initial_partitions: options.initial_partitions };
    let filesystem = DirsvcFs::new(MountCore::new(client, settings), runtime);
    Session::new(filesystem, &options.mountpoint, &config(options))
}

fn config(options: &MountOptions) -> Config {
    let mut config = Config::default();
    config.mount_options = vec![
        MountOption::FSName(format!("dirsvc:{}", options.cluster.dir.display())),
        MountOption::Subtype("dirsvc".to_string()),
        // The kernel checks mode, owner and group (and the caller's supplementary groups).
        MountOption::DefaultPermissions,
    ];
    if options.allow_other {
        config.acl = SessionACL::All;
    }
    config.n_threads = Some(options.threads.max(1));
    config.clone_fd = true;
    config
}

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
//! Before mounting, every server is asked once: a wrong secret, or no answer from the server
//! holding the root, fails the mount with the reason.

mod attr;
mod attributes;
mod core;
mod dirs;
mod entries;
mod file_ops;
mod fs;
mod nodes;

use std::path::PathBuf;
use std::time::Duration;

use fuser::{Config, MountOption, Session, SessionACL};

use self::core::{MountCore, Settings};
use self::fs::DirsvcFs;
use crate::client::Client;
use crate::cluster::ClusterDir;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ROOT_ID, home_server};

/// What a mount is made of.
#[derive(Clone, Debug)]
pub struct MountOptions {
    pub cluster: ClusterDir,
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

/// A mount ready to be served, and warnings about servers that did not answer.
pub struct Prepared {
    pub session: Session<DirsvcFs>,
    pub warnings: Vec<String>,
}

/// Checks the cluster (the secret, and that the root's server answers), then mounts its namespace
/// at `options.mountpoint`.
pub fn session(options: &MountOptions) -> Result<Prepared> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(options.workers.max(1))
        .thread_name("dirsvc-mount")
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start the runtime: {e}")))?;
    let client = {
        let _context = runtime.enter();
        Client::connect_with_timeout(&options.cluster, options.timeout)
    };
    let warnings = runtime.block_on(check_cluster(&client))?;
    let settings = Settings { ttl: options.ttl, initial_partitions: options.initial_partitions };
    let session_id = rand::random::<u64>().max(1);
    let filesystem = DirsvcFs::new(MountCore::new(client, settings, session_id), runtime);
    let session = Session::new(filesystem, &options.mountpoint, &config(options))
        .map_err(|e| Error::io(format!("cannot mount at {}: {e}", options.mountpoint.display())))?;
    Ok(Prepared { session, warnings })
}

/// Asks every server at once. A refused secret anywhere, or a root server that does not answer,
/// is an error; another server that does not answer is a warning (its partitions fail with EIO
/// until it is back).
async fn check_cluster(client: &Client) -> Result<Vec<String>> {
    let pings = (0..client.server_count()).map(|server| async move { (server, client.ping(server).await) });
    let mut warnings = Vec::new();
    for (server, answer) in futures_util::future::join_all(pings).await {
        match answer {
            Ok(_) => {}
            Err(e) if e.kind == ErrorKind::Unauthenticated => return Err(e),
            Err(e) if server == home_server(ROOT_ID) => {
                return Err(Error::new(e.kind, format!("{e} (it holds the root directory)")));
            }
            Err(e) => warnings.push(format!("{e}: its partitions answer EIO until it is back")),
        }
    }
    client.fetch_dir(ROOT_ID).await?;
    Ok(warnings)
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

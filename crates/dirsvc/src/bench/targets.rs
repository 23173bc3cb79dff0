//! What the benchmark's clients create, stat, link and remove files in: directories of the
//! distributed service, or of a file system (a local directory, the "vanilla" POSIX baseline, or a
//! dirsvc mount), laid out as the plan's `Layout` says.

use std::fs;
use std::path::PathBuf;

use std::sync::Arc;

use super::{Balance, FileSlot, Layout, Phase, ServerCounters, link_name};
use crate::client::stats::ProbeHistogram;
use crate::client::{Client, FileKind, MkdirOptions, Owner};
use crate::cluster::ClusterDir;
use crate::error::{Error, Result};

/// Shared set-up and tear-down, done by rank 0 between barriers.
pub trait Target: Sync {
    fn describe(&self) -> String;
    /// Client `rank`'s connection.
    fn connect(&self, rank: usize) -> Result<Box<dyn Session>>;
    fn prepare(&self, iteration: usize) -> Result<()>;
    /// Entries per partition once every client has created its files.
    fn balance(&self, iteration: usize) -> Result<Option<Balance>>;
    fn finish(&self, iteration: usize) -> Result<()>;
    /// The servers' counters so far (summed over servers).
    fn server_counters(&self) -> Result<Option<ServerCounters>>;
}

/// One client's connection.
pub trait Session {
    fn open(&mut self, iteration: usize) -> Result<()>;
    /// Performs `phase` on every file, one after the other (mdtest's synchronous client).
    fn run(&mut self, phase: Phase, files: &[FileSlot]) -> Result<()>;
    fn probes(&self) -> Option<ProbeHistogram>;
}

/// The shared directory of an iteration: `PREFIX.ITERATION`.
fn shared_dir_name(prefix: &str, iteration: usize) -> String {
    format!("{prefix}.{iteration}")
}

/// mdtest's default prefix: unique per run.
pub fn default_dir_prefix() -> String {
    format!("mdtest.{}", std::process::id())
}

fn runtime() -> Result<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start a runtime: {e}")))
}

/// The directory tree of one iteration, and whose files go where.
#[derive(Clone, Debug)]
pub struct Tree {
    pub prefix: String,
    pub layout: Layout,
    pub clients: usize,
}

impl Tree {
    fn root(&self, iteration: usize) -> String {
        shared_dir_name(&self.prefix, iteration)
    }

    /// `path` (relative to the iteration's directory) from the service's or a file system's root.
    fn path(&self, iteration: usize, path: &str) -> String {
        if path.is_empty() { self.root(iteration) } else { format!("{}/{path}", self.root(iteration)) }
    }
}

pub struct DirsvcTarget {
    cluster: ClusterDir,
    control: Client,
    runtime: tokio::runtime::Runtime,
    options: MkdirOptions,
    window: usize,
    tree: Tree,
}

impl DirsvcTarget {
    /// `window`: operations each client keeps in flight (1 is mdtest's synchronous client);
    /// `tree`: the directories' names and layout.
    pub fn new(
        cluster: &ClusterDir,
        (initial_partitions, split_threshold): (u32, u64),
        window: usize,
        tree: Tree,
    ) -> Result<Self> {
        let runtime = runtime()?;
        let control = {
            let _context = runtime.enter();
            Client::connect(cluster)
        };
        Ok(Self {
            control,
            cluster: cluster.clone(),
            runtime,
            options: MkdirOptions {
                owner: Owner::current(0o755),
                initial_partitions,
                split_threshold: Some(split_threshold),
            },
            window: window.max(1),
            tree,
        })
    }
}

impl Target for DirsvcTarget {
    fn describe(&self) -> String {
        let servers = self.cluster.config.servers.len();
        let initial = match self.options.initial_partitions {
            0 => servers as u32,
            n => n.min(servers as u32),
        };
        let split = match self.options.split_threshold {
            Some(0) | None => "never split".to_string(),
            Some(t) => format!("split above {t} entries"),
        };
        let window = if self.window > 1 {
            format!(", {} operations in flight per client", self.window)
        } else {
            String::new()
        };
        format!("dirsvc: {servers} servers, {initial} initial partitions, {split}{window}")
    }

    fn connect(&self, rank: usize) -> Result<Box<dyn Session>> {
        let runtime = runtime()?;
        let client = {
            let _context = runtime.enter();
            Client::connect(&self.cluster)
        };
        Ok(Box::new(DirsvcSession {
            client: Arc::new(client),
            runtime,
            dirs: Vec::new(),
            ids: Vec::new(),
            window: self.window,
            tree: self.tree.clone(),
            rank,
        }))
    }

    fn prepare(&self, iteration: usize) -> Result<()> {
        self.runtime.block_on(async {
            let root = self.control.root();
            self.control.mkdir(root, self.tree.root(iteration).as_bytes(), self.options).await?;
            for path in self.tree.layout.directories(self.tree.clients) {
                let path = self.tree.path(iteration, &path);
                let (parent, name) = self.control.resolve_parent(&path).await?;
                self.control.mkdir(parent, name.as_bytes(), self.options).await?;
            }
            Ok(())
        })
    }

    fn balance(&self, iteration: usize) -> Result<Option<Balance>> {
        if !self.tree.layout.is_flat() {
            return Ok(None);
        }
        self.runtime.block_on(async {
            let dir = self.control.resolve_dir(&self.tree.root(iteration)).await?;
            let stats = self.control.partition_stats(dir).await?;
            let entries: Vec<u64> = stats.iter().filter(|p| p.active).map(|p| p.entries).collect();
            let splitting = stats.iter().filter(|p| p.splitting).count();
            Ok(Some(Balance::new(entries, splitting)))
        })
    }

    fn finish(&self, iteration: usize) -> Result<()> {
        self.runtime.block_on(async {
            for path in self.tree.layout.directories(self.tree.clients).iter().rev() {
                let path = self.tree.path(iteration, path);
                let (parent, name) = self.control.resolve_parent(&path).await?;
                self.control.rmdir(parent, name.as_bytes()).await?;
            }
            let root = self.control.root();
            self.control.rmdir(root, self.tree.root(iteration).as_bytes()).await
        })
    }

    fn server_counters(&self) -> Result<Option<ServerCounters>> {
        self.runtime.block_on(async {
            let mut total =
                ServerCounters { servers: self.control.server_count() as usize, ..ServerCounters::default() };
            for server in 0..self.control.server_count() {
                let ping = self.control.ping(server).await?;
                total.commits += ping.commits;
                total.requests += ping.mutations;
                total.sync_seconds += ping.sync_micros as f64 / 1e6;
                total.cpu_seconds += ping.cpu_micros as f64 / 1e6;
            }
            Ok(Some(total))
        })
    }
}

struct DirsvcSession {
    client: Arc<Client>,
    runtime: tokio::runtime::Runtime,
    /// This client's file directories' ids.
    dirs: Vec<u64>,
    /// The files' ids (from their creation; a link names a file by id).
    ids: Vec<u64>,
    window: usize,
    tree: Tree,
    rank: usize,
}

/// One operation; a create answers the new file's id.
async fn dirsvc_op(client: &Client, dir: u64, phase: Phase, name: &str, id: u64) -> Result<u64> {
    let bytes = name.as_bytes();
    match phase {
        Phase::Create => client.create(dir, bytes, FileKind::File, Owner::current(0o644)).await.map(|e| e.id),
        Phase::Stat => client.lookup(dir, bytes).await.map(|e| e.id),
        Phase::Link => client.link(id, dir, link_name(name).as_bytes()).await.map(|e| e.id),
        Phase::Unlink => client.unlink(dir, link_name(name).as_bytes()).await.map(|e| e.id),
        Phase::Remove => client.unlink(dir, bytes).await.map(|e| e.id),
    }
}

impl Session for DirsvcSession {
    fn open(&mut self, iteration: usize) -> Result<()> {
        let (client, tree, rank) = (Arc::clone(&self.client), &self.tree, self.rank);
        self.dirs = self.runtime.block_on(async {
            let mut ids = Vec::new();
            for path in tree.layout.file_directories(rank) {
                ids.push(client.resolve_dir(&tree.path(iteration, &path)).await?);
            }
            Ok::<_, Error>(ids)
        })?;
        Ok(())
    }

    fn run(&mut self, phase: Phase, files: &[FileSlot]) -> Result<()> {
        let (client, window) = (Arc::clone(&self.client), self.window);
        let work: Vec<(usize, u64, String, u64)> = files
            .iter()
            .enumerate()
            .map(|(i, f)| (i, self.dirs[f.dir], f.name.clone(), self.ids.get(i).copied().unwrap_or(0)))
            .collect();
        let ids = self.runtime.block_on(async move {
            let mut ids = vec![0; work.len()];
            if window == 1 {
                for (i, dir, name, id) in work {
                    ids[i] = dirsvc_op(&client, dir, phase, &name, id).await?;
                }
                return Ok(ids);
            }
            let mut in_flight = tokio::task::JoinSet::new();
            for (i, dir, name, id) in work {
                if in_flight.len() == window
                    && let Some(done) = in_flight.join_next().await
                {
                    let (i, id) = done.map_err(|e| Error::io(format!("client task: {e}")))??;
                    ids[i] = id;
                }
                let client = Arc::clone(&client);
                in_flight
                    .spawn(async move { dirsvc_op(&client, dir, phase, &name, id).await.map(|id| (i, id)) });
            }
            while let Some(done) = in_flight.join_next().await {
                let (i, id) = done.map_err(|e| Error::io(format!("client task: {e}")))??;
                ids[i] = id;
            }
            Ok::<_, Error>(ids)
        })?;
        if phase == Phase::Create {
            self.ids = ids;
        }
        Ok(())
    }

    fn probes(&self) -> Option<ProbeHistogram> {
        Some(self.client.probe_histogram())
    }
}

/// The same workload through the file system: open(O_CREAT|O_EXCL)+close, lstat, unlink — on a
/// local directory, or on a mount. Several bases are several mounts of one file system (clients
/// on different nodes): client r works through base r mod N, in the directory made through the
/// first.
pub struct PosixTarget {
    pub bases: Vec<PathBuf>,
    pub tree: Tree,
}

impl PosixTarget {
    fn dir(&self, iteration: usize, path: &str) -> PathBuf {
        self.bases[0].join(self.tree.path(iteration, path))
    }
}

impl Target for PosixTarget {
    fn describe(&self) -> String {
        match self.bases.len() {
            1 => format!("posix: {}", self.bases[0].display()),
            n => format!("posix: {} and {} more mounts of it", self.bases[0].display(), n - 1),
        }
    }

    fn connect(&self, rank: usize) -> Result<Box<dyn Session>> {
        let base = self.bases[rank % self.bases.len()].clone();
        Ok(Box::new(PosixSession { base, dirs: Vec::new(), tree: self.tree.clone(), rank }))
    }

    fn prepare(&self, iteration: usize) -> Result<()> {
        let paths = std::iter::once(String::new()).chain(self.tree.layout.directories(self.tree.clients));
        for path in paths {
            let dir = self.dir(iteration, &path);
            fs::create_dir(&dir).map_err(|e| Error::io(format!("mkdir {}: {e}", dir.display())))?;
        }
        Ok(())
    }

    fn balance(&self, _iteration: usize) -> Result<Option<Balance>> {
        Ok(None)
    }

    fn finish(&self, iteration: usize) -> Result<()> {
        let paths = std::iter::once(String::new()).chain(self.tree.layout.directories(self.tree.clients));
        for path in paths.collect::<Vec<_>>().iter().rev() {
            let dir = self.dir(iteration, path);
            fs::remove_dir(&dir).map_err(|e| Error::io(format!("rmdir {}: {e}", dir.display())))?;
        }
        Ok(())
    }

    fn server_counters(&self) -> Result<Option<ServerCounters>> {
        Ok(None)
    }
}

struct PosixSession {
    base: PathBuf,
    /// This client's file directories.
    dirs: Vec<PathBuf>,
    tree: Tree,
    rank: usize,
}

impl Session for PosixSession {
    fn open(&mut self, iteration: usize) -> Result<()> {
        let paths = self.tree.layout.file_directories(self.rank);
        self.dirs = paths.iter().map(|path| self.base.join(self.tree.path(iteration, path))).collect();
        Ok(())
    }

    fn run(&mut self, phase: Phase, files: &[FileSlot]) -> Result<()> {
        for file in files {
            let path = self.dirs[file.dir].join(&file.name);
            let link = || self.dirs[file.dir].join(link_name(&file.name));
            let done = match phase {
                Phase::Create => fs::OpenOptions::new().write(true).create_new(true).open(&path).map(drop),
                Phase::Stat => fs::symlink_metadata(&path).map(drop),
                Phase::Link => fs::hard_link(&path, link()),
                Phase::Unlink => fs::remove_file(link()),
                Phase::Remove => fs::remove_file(&path),
            };
            done.map_err(|e| Error::io(format!("{:?} {}: {e}", phase, path.display())))?;
        }
        Ok(())
    }

    fn probes(&self) -> Option<ProbeHistogram> {
        None
    }
}

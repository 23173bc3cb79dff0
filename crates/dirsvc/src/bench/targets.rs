//! What the benchmark's clients create, stat and remove files in: one shared directory of the
//! distributed service, or of the local file system (the "vanilla" POSIX baseline).

use std::fs;
use std::path::PathBuf;

use std::sync::Arc;

use super::{Balance, Phase, ServerCounters};
use crate::client::stats::ProbeHistogram;
use crate::client::{Client, FileKind, MkdirOptions, Owner};
use crate::cluster::Cluster;
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
    /// Performs `phase` on every name, one after the other (mdtest's synchronous client).
    fn run(&mut self, phase: Phase, names: &[String]) -> Result<()>;
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

pub struct DirsvcTarget {
    cluster: Cluster,
    control: Client,
    runtime: tokio::runtime::Runtime,
    options: MkdirOptions,
    window: usize,
    prefix: String,
}

impl DirsvcTarget {
    /// `window`: operations each client keeps in flight (1 is mdtest's synchronous client);
    /// `prefix`: of the shared directories' names.
    pub fn new(
        cluster: &Cluster,
        (initial_partitions, split_threshold): (u32, u64),
        window: usize,
        prefix: String,
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
            prefix,
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

    fn connect(&self, _rank: usize) -> Result<Box<dyn Session>> {
        let runtime = runtime()?;
        let client = {
            let _context = runtime.enter();
            Client::connect(&self.cluster)
        };
        let prefix = self.prefix.clone();
        Ok(Box::new(DirsvcSession { client: Arc::new(client), runtime, dir: 0, window: self.window, prefix }))
    }

    fn prepare(&self, iteration: usize) -> Result<()> {
        let name = shared_dir_name(&self.prefix, iteration);
        let root = self.control.root();
        self.runtime.block_on(self.control.mkdir(root, name.as_bytes(), self.options)).map(|_| ())
    }

    fn balance(&self, iteration: usize) -> Result<Option<Balance>> {
        self.runtime.block_on(async {
            let dir = self.control.resolve_dir(&shared_dir_name(&self.prefix, iteration)).await?;
            let stats = self.control.partition_stats(dir).await?;
            let entries: Vec<u64> = stats.iter().filter(|p| p.active).map(|p| p.entries).collect();
            let splitting = stats.iter().filter(|p| p.splitting).count();
            Ok(Some(Balance::new(entries, splitting)))
        })
    }

    fn finish(&self, iteration: usize) -> Result<()> {
        let name = shared_dir_name(&self.prefix, iteration);
        let root = self.control.root();
        self.runtime.block_on(self.control.rmdir(root, name.as_bytes()))
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
    dir: u64,
    window: usize,
    prefix: String,
}

async fn dirsvc_op(client: &Client, dir: u64, phase: Phase, name: &str) -> Result<()> {
    let name = name.as_bytes();
    match phase {
        Phase::Create => client.create(dir, name, FileKind::File, Owner::current(0o644)).await.map(drop),
        Phase::Stat => client.lookup(dir, name).await.map(drop),
        Phase::Remove => client.unlink(dir, name).await.map(drop),
    }
}

impl Session for DirsvcSession {
    fn open(&mut self, iteration: usize) -> Result<()> {
        self.dir =
            self.runtime.block_on(self.client.resolve_dir(&shared_dir_name(&self.prefix, iteration)))?;
        Ok(())
    }

    fn run(&mut self, phase: Phase, names: &[String]) -> Result<()> {
        let (client, dir, window) = (Arc::clone(&self.client), self.dir, self.window);
        self.runtime.block_on(async move {
            if window == 1 {
                for name in names {
                    dirsvc_op(&client, dir, phase, name).await?;
                }
                return Ok(());
            }
            let mut in_flight = tokio::task::JoinSet::new();
            for name in names {
                if in_flight.len() == window
                    && let Some(done) = in_flight.join_next().await
                {
                    done.map_err(|e| Error::io(format!("client task: {e}")))??;
                }
                let (client, name) = (Arc::clone(&client), name.clone());
                in_flight.spawn(async move { dirsvc_op(&client, dir, phase, &name).await });
            }
            while let Some(done) = in_flight.join_next().await {
                done.map_err(|e| Error::io(format!("client task: {e}")))??;
            }
            Ok(())
        })
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
    pub prefix: String,
}

impl PosixTarget {
    fn dir(&self, iteration: usize) -> PathBuf {
        self.bases[0].join(shared_dir_name(&self.prefix, iteration))
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
        Ok(Box::new(PosixSession { base, dir: PathBuf::new(), prefix: self.prefix.clone() }))
    }

    fn prepare(&self, iteration: usize) -> Result<()> {
        let dir = self.dir(iteration);
        fs::create_dir(&dir).map_err(|e| Error::io(format!("mkdir {}: {e}", dir.display())))
    }

    fn balance(&self, _iteration: usize) -> Result<Option<Balance>> {
        Ok(None)
    }

    fn finish(&self, iteration: usize) -> Result<()> {
        let dir = self.dir(iteration);
        fs::remove_dir(&dir).map_err(|e| Error::io(format!("rmdir {}: {e}", dir.display())))
    }

    fn server_counters(&self) -> Result<Option<ServerCounters>> {
        Ok(None)
    }
}

struct PosixSession {
    base: PathBuf,
    dir: PathBuf,
    prefix: String,
}

impl Session for PosixSession {
    fn open(&mut self, iteration: usize) -> Result<()> {
        self.dir = self.base.join(shared_dir_name(&self.prefix, iteration));
        Ok(())
    }

    fn run(&mut self, phase: Phase, names: &[String]) -> Result<()> {
        for name in names {
            let path = self.dir.join(name);
            let done = match phase {
                Phase::Create => fs::OpenOptions::new().write(true).create_new(true).open(&path).map(drop),
                Phase::Stat => fs::symlink_metadata(&path).map(drop),
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

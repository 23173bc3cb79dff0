//! The client library: talks to every server directly, caches each directory's partition table
//! and bitmap, and routes each name to its partition itself (OrangeFS's design: the servers never
//! forward). A server that gets a name outside its hash space answers with its bitmap; the client
//! merges it with a fresh copy from the directory's metadata object and retries — two probes at
//! most unless another split intervenes.
//!
//! The API is async and works on directory ids, which is what a FUSE mount needs (inode = id);
//! `resolve` maps slash-separated paths onto ids for the CLI.

mod files;
mod namespace;
mod readdir;
pub mod stats;
pub mod types;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use crate::cluster::ClusterDir;
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ROOT_ID, home_server};
use crate::mapping::{Bitmap, name_hash, tree_height};
use crate::names::validate_name;
use crate::proto::{
    Attrs, CreateRequest, DirMeta, DirRequest, Entry, FailureKind, FenceLinkRequest, LookupRequest,
    PartitionRef, PartitionStat, PingReply, PingRequest, UnlinkRequest,
};
use crate::transport::{REQUEST_TIMEOUT, RpcClient, connect_lazy};

pub use self::readdir::DirLister;
use self::stats::{ProbeHistogram, ProbeStats};
pub use self::types::{
    Attributes, DirEntry, FileKind, Listed, MkdirOptions, NewNode, Owner, SetAttrs, Usage,
};

/// Redirects tolerated before giving up: each one means a split happened under the operation.
const MAX_PROBES: u32 = 16;

/// What the client knows about a directory: its metadata object, bitmap possibly behind.
#[derive(Clone, Debug)]
pub struct DirInfo {
    pub id: u64,
    pub parent: u64,
    pub attrs: Attributes,
    /// Partition index → server index.
    pub servers: Vec<u32>,
    pub bitmap: Bitmap,
    pub split_threshold: u64,
    pub initial_partitions: u32,
}

impl DirInfo {
    fn from_meta(meta: &DirMeta) -> Result<Self> {
        let partitions = meta.servers.len() as u32;
        let bitmap = Bitmap::from_bytes(partitions, &meta.bitmap)
            .map_err(|e| Error::new(ErrorKind::Protocol, format!("directory bitmap: {e}")))?;
        Ok(Self {
            id: meta.id,
            parent: meta.parent,
            attrs: Attributes::from_proto(meta.attrs.as_ref())?,
            servers: meta.servers.clone(),
            bitmap,
            split_threshold: meta.split_threshold,
            initial_partitions: meta.initial_partitions,
        })
    }
}

/// Where a name lives: what `canopy dirsvc locate` prints.
#[derive(Clone, Debug, serde::Serialize)]
pub struct Placement {
    pub hash: u64,
    pub partitions: u32,
    pub tree_height: u32,
    pub bitmap: String,
    pub partition: u32,
    pub level: u32,
    pub server: u32,
    pub address: String,
}

/// A resolved path.
#[derive(Clone, Debug)]
pub struct Resolved {
    pub id: u64,
    pub attrs: Attributes,
}

pub struct Client {
    cluster: ClusterDir,
    servers: Vec<RpcClient>,
    dirs: Mutex<HashMap<u64, Arc<DirInfo>>>,
    stats: ProbeStats,
}

enum Routed {
    Create(CreateFields),
    Lookup,
    Unlink {
        expect_id: u64,
        directory: bool,
    },
    /// Settling link intent (id, intent): is its entry there?
    Fence {
        id: u64,
        intent: u64,
    },
}

/// A create's fields besides where and which name.
#[derive(Clone, Default)]
struct CreateFields {
    attrs: Attrs,
    id: u64,
    replace_id: u64,
    target: Vec<u8>,
    link_intent: u64,
    open_session: u64,
}

impl Client {
    /// A client of `cluster`; connections open on first use. Call it inside a tokio runtime
    /// (the one that will drive the client).
    pub fn connect(cluster: &ClusterDir) -> Self {
        Self::connect_with_timeout(cluster, REQUEST_TIMEOUT)
    }

    /// A client whose requests fail as unavailable after `timeout` (a server that is down fails
    /// them at once: its connection is refused).
    pub fn connect_with_timeout(cluster: &ClusterDir, timeout: std::time::Duration) -> Self {
        Self {
            servers: cluster
                .config
                .servers
                .iter()
                .map(|&addr| connect_lazy(addr, &cluster.secret, timeout))
                .collect(),
            cluster: cluster.clone(),
            dirs: Mutex::new(HashMap::new()),
            stats: ProbeStats::default(),
        }
    }

    pub fn cluster(&self) -> &ClusterDir {
        &self.cluster
    }

    pub fn server_count(&self) -> u32 {
        self.servers.len() as u32
    }

    pub fn root(&self) -> u64 {
        ROOT_ID
    }

    /// Probes per name-routed operation so far.
    pub fn probe_histogram(&self) -> ProbeHistogram {
        self.stats.snapshot()
    }

    pub(crate) fn rpc(&self, server: u32) -> Result<RpcClient> {
        self.servers.get(server as usize).cloned().ok_or_else(|| {
            Error::new(
                ErrorKind::Protocol,
                format!("server {server} is not in this {}-server cluster", self.servers.len()),
            )
        })
    }

    pub(crate) fn status_error(&self, server: u32, status: &tonic::Status) -> Error {
        let address = self
            .cluster
            .config
            .servers
            .get(server as usize)
            .map_or_else(|| "?".to_string(), ToString::to_string);
        Error::from_status(&format!("{server} ({address})"), status)
    }

    pub async fn ping(&self, server: u32) -> Result<PingReply> {
        Ok(self
            .rpc(server)?
            .ping(PingRequest {})
            .await
            .map_err(|s| self.status_error(server, &s))?
            .into_inner())
    }

    /// The directory's information, from the cache when present.
    pub async fn dir_info(&self, dir: u64) -> Result<Arc<DirInfo>> {
        if let Some(info) = self.dirs.lock().expect("dir cache").get(&dir) {
            return Ok(Arc::clone(info));
        }
        self.fetch_dir(dir).await
    }

    /// The directory's information fresh from its metadata object (merged with what the cache
    /// knew, since bitmaps only grow).
    pub async fn fetch_dir(&self, dir: u64) -> Result<Arc<DirInfo>> {
        let server = home_server(dir);
        let reply = self
            .rpc(server)?
            .get_dir(DirRequest { dir })
            .await
            .map_err(|s| self.status_error(server, &s))?
            .into_inner();
        if let Some(failure) = reply.failure {
            self.forget_dir(dir);
            return Err(Error::from_failure(&failure));
        }
        let meta =
            reply.meta.ok_or_else(|| Error::new(ErrorKind::Protocol, "directory reply without metadata"))?;
        Ok(self.remember(DirInfo::from_meta(&meta)?))
    }

    fn remember(&self, mut info: DirInfo) -> Arc<DirInfo> {
        let mut dirs = self.dirs.lock().expect("dir cache");
        if let Some(known) = dirs.get(&info.id) {
            info.bitmap.merge(&known.bitmap);
        }
        let info = Arc::new(info);
        dirs.insert(info.id, Arc::clone(&info));
        info
    }

    pub(crate) fn forget_dir(&self, dir: u64) {
        self.dirs.lock().expect("dir cache").remove(&dir);
    }

    /// After a redirect: the metadata object's bitmap plus the answering partition's.
    async fn refresh(&self, dir: u64, hint: &[u8]) -> Result<Arc<DirInfo>> {
        self.stats.record_refresh();
        let fresh = self.fetch_dir(dir).await?;
        let Ok(hint) = Bitmap::from_bytes(fresh.bitmap.partitions(), hint) else {
            return Ok(fresh);
        };
        let mut info = (*fresh).clone();
        info.bitmap.merge(&hint);
        Ok(self.remember(info))
    }

    /// Sends a name-routed request to the partition the cached bitmap names, following redirects;
    /// answers the entry the partition's server returned (with its object's attributes when that
    /// server holds the object).
    async fn route(&self, dir: u64, name: &[u8], op: &Routed) -> Result<Entry> {
        validate_name(name)?;
        let hash = name_hash(name);
        let mut info = self.dir_info(dir).await?;
        let mut probes = 0;
        loop {
            let partition = info.bitmap.partition_for(hash);
            let server = info.servers[partition as usize];
            let at = Some(PartitionRef { dir, partition });
            let name = name.to_vec();
            let mut rpc = self.rpc(server)?;
            probes += 1;
            let reply = match op {
                Routed::Create(fields) => {
                    let request = CreateRequest {
                        at,
                        name,
                        attrs: Some(fields.attrs),
                        id: fields.id,
                        replace_id: fields.replace_id,
                        target: fields.target.clone(),
                        link_intent: fields.link_intent,
                        open_session: fields.open_session,
                    };
                    rpc.create(request).await
                }
                Routed::Lookup => rpc.lookup(LookupRequest { at, name }).await,
                &Routed::Unlink { expect_id, directory } => {
                    rpc.unlink(UnlinkRequest { at, name, expect_id, directory }).await
                }
                &Routed::Fence { id, intent } => {
                    rpc.fence_link(FenceLinkRequest { at, name, id, intent }).await
                }
            }
            .map_err(|s| self.status_error(server, &s))?
            .into_inner();
            match reply.failure {
                None => {
                    self.stats.record(probes);
                    return reply.entry.ok_or_else(|| Error::new(ErrorKind::Protocol, "reply without entry"));
                }
                Some(failure) if failure.kind() == FailureKind::WrongPartition => {
                    if probes >= MAX_PROBES {
                        return Err(Error::new(
                            ErrorKind::Busy,
                            format!("no partition accepted the name after {probes} probes"),
                        ));
                    }
                    info = self.refresh(dir, &failure.bitmap).await?;
                }
                Some(failure) => {
                    self.stats.record(probes);
                    return Err(Error::from_failure(&failure));
                }
            }
        }
    }

    /// Creates an empty file (or another non-directory without a target) named `name` in `dir`.
    pub async fn create(&self, dir: u64, name: &[u8], kind: FileKind, owner: Owner) -> Result<DirEntry> {
        self.create_node(dir, name, &NewNode { kind, owner, rdev: 0, target: &[] }, 0).await
    }

    /// Creates a symlink to `target`.
    pub async fn symlink(&self, dir: u64, name: &[u8], target: &[u8], owner: Owner) -> Result<DirEntry> {
        let node = NewNode { kind: FileKind::Symlink, owner, rdev: 0, target };
        self.create_node(dir, name, &node, 0).await
    }

    /// Creates a non-directory entry: a file, symlink, FIFO, socket or device node. A file made
    /// with a mount's `open_session` is open in that session (see `close`).
    pub async fn create_node(
        &self,
        dir: u64,
        name: &[u8],
        node: &NewNode<'_>,
        open_session: u64,
    ) -> Result<DirEntry> {
        if node.kind == FileKind::Directory {
            return Err(Error::invalid("use mkdir to create directories"));
        }
        let attrs = Attrs {
            kind: node.kind.to_proto() as i32,
            mode: node.owner.mode,
            uid: node.owner.uid,
            gid: node.owner.gid,
            rdev: node.rdev,
            ..Attrs::default()
        };
        let fields =
            CreateFields { attrs, target: node.target.to_vec(), open_session, ..CreateFields::default() };
        let entry = self.route(dir, name, &Routed::Create(fields)).await?;
        self.complete(entry).await
    }

    /// Looks `name` up in directory `dir` (stat).
    pub async fn lookup(&self, dir: u64, name: &[u8]) -> Result<DirEntry> {
        let entry = self.route(dir, name, &Routed::Lookup).await?;
        self.complete(entry).await
    }

    /// The object `name` in `dir` names, without its attributes (one request fewer).
    pub async fn lookup_name(&self, dir: u64, name: &[u8]) -> Result<Listed> {
        Listed::from_proto(&self.route(dir, name, &Routed::Lookup).await?)
    }

    /// Removes a non-directory's name; the object goes with its last name (and last open).
    pub async fn unlink(&self, dir: u64, name: &[u8]) -> Result<Listed> {
        let op = Routed::Unlink { expect_id: 0, directory: false };
        Listed::from_proto(&self.route(dir, name, &op).await?)
    }

    /// Whether link intent (`id`, `intent`) made its entry `name` in `dir`; NotFound when it did
    /// not — and then it never will (the inode's server settling an old intent).
    pub async fn fence_link(&self, dir: u64, name: &[u8], id: u64, intent: u64) -> Result<()> {
        self.route(dir, name, &Routed::Fence { id, intent }).await.map(drop)
    }

    /// Lists a directory page by page; complete and duplicate-free even while partitions split.
    pub fn list(&self, dir: u64) -> DirLister {
        DirLister::new(dir)
    }

    /// Every entry of a directory, with its attributes (see `list`).
    pub async fn read_dir(&self, dir: u64) -> Result<Vec<DirEntry>> {
        let mut lister = self.list(dir);
        let mut all = Vec::new();
        while let Some(page) = lister.next_page(self).await? {
            all.extend(self.with_attributes(page).await?);
        }
        Ok(all)
    }

    /// Per-partition counts and levels of a directory, from every server.
    pub async fn partition_stats(&self, dir: u64) -> Result<Vec<PartitionStat>> {
        let mut all = Vec::new();
        for server in 0..self.server_count() {
            let reply = self
                .rpc(server)?
                .partition_stats(DirRequest { dir })
                .await
                .map_err(|s| self.status_error(server, &s))?
                .into_inner();
            if let Some(failure) = reply.failure {
                return Err(Error::from_failure(&failure));
            }
            all.extend(reply.partitions);
        }
        all.sort_by_key(|p| p.partition);
        Ok(all)
    }

    /// Every entry one partition holds right now (diagnostics and placement checks).
    pub async fn partition_entries(&self, dir: u64, partition: u32) -> Result<Vec<Listed>> {
        let info = self.dir_info(dir).await?;
        let server = *info
            .servers
            .get(partition as usize)
            .ok_or_else(|| Error::invalid(format!("directory has no partition {partition}")))?;
        let mut after = Vec::new();
        let mut all = Vec::new();
        loop {
            let request = crate::proto::ReadPartitionRequest {
                at: Some(PartitionRef { dir, partition }),
                after: after.clone(),
                limit: 0,
            };
            let reply = self
                .rpc(server)?
                .read_partition(request)
                .await
                .map_err(|s| self.status_error(server, &s))?
                .into_inner();
            if let Some(failure) = reply.failure {
                return Err(Error::from_failure(&failure));
            }
            if let Some(last) = reply.entries.last() {
                after = last.name.clone();
            }
            for entry in &reply.entries {
                all.push(Listed::from_proto(entry)?);
            }
            if !reply.more {
                return Ok(all);
            }
        }
    }

    /// Where `name` lives in directory `dir`, by the metadata object's current bitmap.
    pub async fn locate(&self, dir: u64, name: &[u8]) -> Result<Placement> {
        validate_name(name)?;
        let info = self.fetch_dir(dir).await?;
        let hash = name_hash(name);
        let partition = info.bitmap.partition_for(hash);
        let server = info.servers[partition as usize];
        Ok(Placement {
            hash,
            partitions: info.bitmap.partitions(),
            tree_height: tree_height(info.bitmap.partitions()),
            bitmap: info.bitmap.render(),
            partition,
            level: info.bitmap.level(partition),
            server,
            address: self.cluster.config.servers[server as usize].to_string(),
        })
    }

    /// Resolves a slash-separated path from the root.
    pub async fn resolve(&self, path: &str) -> Result<Resolved> {
        let mut current = Resolved { id: ROOT_ID, attrs: self.fetch_dir(ROOT_ID).await?.attrs };
        let mut walked = String::new();
        for component in path.split('/').filter(|c| !c.is_empty() && *c != ".") {
            if current.attrs.kind != FileKind::Directory {
                return Err(Error::new(ErrorKind::NotDirectory, format!("{walked} is not a directory")));
            }
            walked.push('/');
            walked.push_str(component);
            let entry = self.lookup(current.id, component.as_bytes()).await.map_err(|e| {
                if e.kind == ErrorKind::NotFound {
                    Error::new(ErrorKind::NotFound, format!("{walked}: no such file or directory"))
                } else {
                    e
                }
            })?;
            current = Resolved { id: entry.id, attrs: entry.attrs };
        }
        Ok(current)
    }

    /// Resolves a path that must name a directory.
    pub async fn resolve_dir(&self, path: &str) -> Result<u64> {
        let resolved = self.resolve(path).await?;
        if resolved.attrs.kind != FileKind::Directory {
            return Err(Error::new(ErrorKind::NotDirectory, format!("{path} is not a directory")));
        }
        Ok(resolved.id)
    }

    /// The directory id and final name of a path (its parent must exist).
    pub async fn resolve_parent<'p>(&self, path: &'p str) -> Result<(u64, &'p str)> {
        let trimmed = path.trim_end_matches('/');
        let (parent, name) = trimmed.rsplit_once('/').unwrap_or(("", trimmed));
        if name.is_empty() {
            return Err(Error::invalid(format!("{path} names no entry")));
        }
        Ok((self.resolve_dir(parent).await?, name))
    }
}

//! The server's request handlers, independent of the RPC transport: validate, then read from a
//! snapshot or hand a mutation to the writer. A request for a name that a split is moving waits
//! for the split to finish (bounded), then gets its answer — usually "wrong partition". The
//! handlers of objects by id (attributes, links, data, opens) and of other servers' deliveries are
//! in `object_rpcs.rs`.

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tonic::Status;

use super::apply::{check_route, no_partition, stored_bitmap};
use super::inline::InlineIndex;
use super::mutation::{Mutation, Outcome, PartKey, Refusal};
use super::objects::{named_object, read_dir_object};
use super::open_refs::OpenRefs;
use super::store::{self, Store};
use super::touches::{Touches, relatime_due};
use super::validate;
use super::writer::{CommitStats, Writer};
use crate::client::Client;
use crate::ids::{home_server, now_ns};
use crate::mapping::Bitmap;
use crate::proto::{
    Ack, Attrs, CreateDirRequest, CreateRequest, DirMetaReply, DirRequest, Entry, EntryReply, Failure,
    FailureKind, FenceLinkRequest, InitPartitionsRequest, InodeRecord, InstallSplitRequest, Kind,
    LookupRequest, MergeBitmapRequest, PartitionRef, PartitionStat, PartitionStatsReply, PingReply,
    ReadPartitionReply, ReadPartitionRequest, RenameRequest, SealRequest, Touch, TouchKind, UnlinkRequest,
    UsageReply, UsageRequest,
};

pub struct Core {
    pub index: u32,
    pub servers: u32,
    pub store: Store,
    pub writer: Writer,
    splits_finished: watch::Receiver<u64>,
    pub commit_stats: watch::Receiver<CommitStats>,
    /// How long a request waits for a split that froze its name.
    pub split_wait: Duration,
    /// Where the store lives (statfs reports its file system).
    pub store_dir: PathBuf,
    pub opens: Arc<OpenRefs>,
    pub touches: Arc<Touches>,
    /// Where inodes inline in their entries are (`inline.rs`).
    pub inline: Arc<InlineIndex>,
    /// This server as a client of the cluster (settling link intents routes like a client); set
    /// once the server is on the network.
    pub client: OnceLock<Arc<Client>>,
}

/// A handled request: an outcome or an in-band failure; `Err` is a gRPC-level error.
pub(super) type Handled = Result<Result<Outcome, Failure>, Status>;

/// The parts of a core that exist before it does.
pub struct CoreParts {
    pub store: Store,
    pub writer: Writer,
    pub splits_finished: watch::Receiver<u64>,
    pub commit_stats: watch::Receiver<CommitStats>,
    pub store_dir: PathBuf,
    pub opens: Arc<OpenRefs>,
    pub touches: Arc<Touches>,
    pub inline: Arc<InlineIndex>,
}

impl Core {
    pub fn new(index: u32, servers: u32, parts: CoreParts) -> Self {
        Self {
            index,
            servers,
            store: parts.store,
            writer: parts.writer,
            splits_finished: parts.splits_finished,
            commit_stats: parts.commit_stats,
            split_wait: Duration::from_secs(30),
            store_dir: parts.store_dir,
            opens: parts.opens,
            touches: parts.touches,
            inline: parts.inline,
            client: OnceLock::new(),
        }
    }

    /// Submits a mutation; while a split freezes it, waits for splits to finish and resubmits.
    pub(super) async fn submit(&self, mutation: Mutation) -> Handled {
        let deadline = Instant::now() + self.split_wait;
        loop {
            let mut finished = self.splits_finished.clone();
            finished.mark_unchanged();
            match self.writer.submit(mutation.clone()).await {
                Err(Refusal::Frozen) => self.wait_for_split(&mut finished, deadline).await?,
                Ok(outcome) => return Ok(Ok(outcome)),
                Err(refusal) => return handled(refusal),
            }
        }
    }

    async fn wait_for_split(
        &self,
        finished: &mut watch::Receiver<u64>,
        deadline: Instant,
    ) -> Result<(), Status> {
        match tokio::time::timeout_at(deadline, finished.changed()).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(_)) => Err(Status::unavailable("server is shutting down")),
            Err(_) => Err(Status::unavailable(format!(
                "a split froze this name for more than {} s (is the server holding the new \
                 partition down?)",
                self.split_wait.as_secs()
            ))),
        }
    }

    fn at(&self, at: Option<&PartitionRef>) -> Result<PartKey, Status> {
        validate::partition(at, self.servers)
    }

    pub async fn create(&self, request: CreateRequest) -> Result<EntryReply, Status> {
        let at = self.at(request.at.as_ref())?;
        let hash = validate::name(&request.name)?;
        let attrs = validate::attrs(request.attrs.as_ref())?;
        validate::new_entry(&request, attrs.kind())?;
        let outcome = self
            .submit(Mutation::Create {
                at,
                name: request.name,
                hash,
                attrs,
                id: request.id,
                replace_id: request.replace_id,
                target: request.target,
                link_intent: request.link_intent,
                open_session: request.open_session,
            })
            .await;
        entry_reply(outcome)
    }

    pub async fn unlink(&self, request: UnlinkRequest) -> Result<EntryReply, Status> {
        let at = self.at(request.at.as_ref())?;
        let hash = validate::name(&request.name)?;
        let outcome = self
            .submit(Mutation::Unlink {
                at,
                name: request.name,
                hash,
                expect_id: request.expect_id,
                directory: request.directory,
            })
            .await;
        entry_reply(outcome)
    }

    pub async fn fence_link(&self, request: FenceLinkRequest) -> Result<EntryReply, Status> {
        let at = self.at(request.at.as_ref())?;
        let hash = validate::name(&request.name)?;
        let (id, intent) = (validate::id(request.id)?, request.intent);
        entry_reply(self.submit(Mutation::FenceLink { at, name: request.name, hash, id, intent }).await)
    }

    /// The store's file system and how many entries this server's partitions hold (statfs).
    pub async fn usage(&self, _request: UsageRequest) -> Result<UsageReply, Status> {
        let disk = rustix::fs::statvfs(&self.store_dir)
            .map_err(|e| Status::internal(format!("statvfs {}: {e}", self.store_dir.display())))?;
        let snapshot = self.store.snapshot();
        let entries =
            store::all_partitions(&snapshot, &self.store).map_err(internal)?.iter().map(|p| p.entries).sum();
        Ok(UsageReply {
            total_bytes: disk.f_blocks * disk.f_frsize,
            free_bytes: disk.f_bfree * disk.f_frsize,
            available_bytes: disk.f_bavail * disk.f_frsize,
            entries,
        })
    }

    pub async fn rename(&self, request: RenameRequest) -> Result<EntryReply, Status> {
        let from = self.at(request.from.as_ref())?;
        let to = self.at(request.to.as_ref())?;
        let from_hash = validate::name(&request.from_name)?;
        let to_hash = validate::name(&request.to_name)?;
        if from == to && request.from_name == request.to_name {
            return Err(validate::invalid("rename of an entry onto itself"));
        }
        let outcome = self
            .submit(Mutation::Rename {
                from,
                from_name: request.from_name,
                from_hash,
                to,
                to_name: request.to_name,
                to_hash,
                expect_id: request.expect_id,
                replace_id: request.replace_id,
            })
            .await;
        entry_reply(outcome)
    }

    pub async fn lookup(&self, request: LookupRequest) -> Result<EntryReply, Status> {
        let at = self.at(request.at.as_ref())?;
        let hash = validate::name(&request.name)?;
        let deadline = Instant::now() + self.split_wait;
        loop {
            let mut finished = self.splits_finished.clone();
            finished.mark_unchanged();
            let snapshot = self.store.snapshot();
            let Some(record) = store::get_partition(&snapshot, &self.store, at.0, at.1).map_err(internal)?
            else {
                return entry_reply(handled(no_partition(at)));
            };
            match check_route(&record, hash) {
                Err(Refusal::Frozen) => self.wait_for_split(&mut finished, deadline).await?,
                Err(refusal) => return entry_reply(handled(refusal)),
                Ok(()) => {
                    let entry = store::get_entry(&snapshot, &self.store, at.0, at.1, &request.name)
                        .map_err(internal)?;
                    return Ok(match entry {
                        Some(record) => {
                            let named = Entry {
                                name: request.name,
                                id: record.id,
                                kind: record.kind,
                                ..Entry::default()
                            };
                            let entry = self.joined(&snapshot, named, record.inode)?;
                            EntryReply { entry: Some(entry), failure: None }
                        }
                        None => EntryReply {
                            entry: None,
                            failure: Some(failure_of(
                                FailureKind::NotFound,
                                format!("no entry named {}", super::apply::shown(&request.name)),
                            )),
                        },
                    });
                }
            }
        }
    }

    /// One page of a partition, with the partition's bitmap from the same snapshot, so the client
    /// can tell whether the partition split since it started reading it.
    pub async fn read_partition(&self, request: ReadPartitionRequest) -> Result<ReadPartitionReply, Status> {
        let at = self.at(request.at.as_ref())?;
        let limit = validate::page_limit(request.limit)?;
        if !request.after.is_empty() {
            validate::name(&request.after)?;
        }
        let snapshot = self.store.snapshot();
        let Some(record) = store::get_partition(&snapshot, &self.store, at.0, at.1).map_err(internal)? else {
            return page_failure(no_partition(at));
        };
        let bitmap = stored_bitmap(record.servers.len() as u32, &record.bitmap);
        let bitmap = match bitmap {
            Ok(bitmap) => bitmap,
            Err(refusal) => return page_failure(refusal),
        };
        if !bitmap.get(u64::from(at.1)) {
            return page_failure(super::mutation::wrong_partition(
                &bitmap,
                format!("partition {} is not active", at.1),
            ));
        }
        let (entries, more) = store::list_entries(&snapshot, &self.store, at.0, at.1, &request.after, limit)
            .map_err(internal)?;
        let entries = entries
            .into_iter()
            .map(|(e, inline)| self.joined(&snapshot, e, inline))
            .collect::<Result<_, _>>()?;
        // A listing starts at partition 0, on the directory's own server: its access time (relatime).
        if at.1 == 0 && request.after.is_empty() {
            let dir = read_dir_object(&snapshot, &self.store, &self.touches, at.0).map_err(internal)?;
            self.accessed(at.0, dir.and_then(|dir| dir.attrs));
        }
        Ok(ReadPartitionReply { entries, more, bitmap: bitmap.as_bytes().to_vec(), failure: None })
    }

    /// An entry with its object's attributes (and a symlink's target) when this server holds them
    /// (`inline`: the inode the entry's record holds).
    fn joined(
        &self,
        view: &impl fjall::Readable,
        mut entry: Entry,
        inline: Option<InodeRecord>,
    ) -> Result<Entry, Status> {
        entry.link_intent = 0;
        if home_server(entry.id) == self.index
            && let Some(object) =
                named_object(view, &self.store, &self.touches, entry.id, inline).map_err(internal)?
        {
            entry.attrs = object.attrs;
            entry.target = object.target;
        }
        Ok(entry)
    }

    /// Object `id`, whose attributes are `attrs`, was read now: moves its access time when
    /// relatime says so.
    pub(super) fn accessed(&self, id: u64, attrs: Option<Attrs>) {
        let now = now_ns();
        if attrs.is_some_and(|attrs| relatime_due(&attrs, now)) {
            self.touched(&[Touch { id, kind: TouchKind::TouchAccess as i32, time_ns: now }]);
        }
    }

    /// Records touches of this server's objects; the writer folds them in.
    pub(super) fn touched(&self, touches: &[Touch]) {
        if self.touches.add(touches) {
            self.writer.submit_detached(Mutation::Fold);
        }
    }

    pub async fn create_dir(&self, request: CreateDirRequest) -> Result<DirMetaReply, Status> {
        if request.parent == 0 {
            return Err(validate::invalid("parent directory id 0 does not exist"));
        }
        let mut attrs = validate::attrs(request.attrs.as_ref())?;
        attrs.kind = Kind::Directory as i32;
        if request.initial_partitions > self.servers {
            return Err(validate::invalid(format!(
                "{} initial partitions in a {}-server cluster",
                request.initial_partitions, self.servers
            )));
        }
        let outcome = self
            .submit(Mutation::CreateDir {
                parent: request.parent,
                attrs,
                initial_partitions: request.initial_partitions,
                split_threshold: request.split_threshold,
            })
            .await;
        self.dir_reply(outcome)
    }

    pub async fn get_dir(&self, request: DirRequest) -> Result<DirMetaReply, Status> {
        let snapshot = self.store.snapshot();
        let meta = store::get_dir(&snapshot, &self.store, request.dir).map_err(internal)?;
        Ok(match meta {
            Some(mut meta) => {
                self.touches.overlay_dir(&mut meta);
                DirMetaReply { meta: Some(meta), failure: None }
            }
            None => DirMetaReply {
                meta: None,
                failure: Some(failure_of(
                    FailureKind::NotFound,
                    format!("no directory with id {:#x}", request.dir),
                )),
            },
        })
    }

    pub async fn remove_dir(&self, request: DirRequest) -> Result<DirMetaReply, Status> {
        let dir = validate::removable_dir(request.dir)?;
        self.dir_reply(self.submit(Mutation::RemoveDir { dir }).await)
    }

    pub async fn merge_bitmap(&self, request: MergeBitmapRequest) -> Result<DirMetaReply, Status> {
        let bitmap = validate::bitmap(&request.bitmap, self.servers)?;
        let mutation = Mutation::MergeBitmap { dir: request.dir, bitmap };
        self.dir_reply(self.submit(mutation).await)
    }

    pub async fn init_partitions(&self, request: InitPartitionsRequest) -> Result<Ack, Status> {
        let meta = validate::dir_meta(request.meta.as_ref(), self.servers)?;
        ack(self.submit(Mutation::InitPartitions { meta }).await)
    }

    pub async fn seal_partition(&self, request: SealRequest) -> Result<Ack, Status> {
        let at = self.at(request.at.as_ref())?;
        if request.seal {
            validate::removable_dir(at.0)?;
        }
        ack(self.submit(Mutation::Seal { at, seal: request.seal }).await)
    }

    pub async fn drop_partition(&self, request: PartitionRef) -> Result<Ack, Status> {
        let at = self.at(Some(&request))?;
        validate::removable_dir(at.0)?;
        ack(self.submit(Mutation::DropPartition { at }).await)
    }

    pub async fn install_split(&self, request: InstallSplitRequest) -> Result<Ack, Status> {
        let at = self.at(request.at.as_ref())?;
        let bitmap = validate::bitmap(&request.bitmap, self.servers)?;
        validate::split_entries(&request.entries, at.1, &bitmap)?;
        ack(self
            .submit(Mutation::InstallSplit {
                at,
                reset: request.reset,
                entries: request.entries,
                activate: request.activate,
                bitmap,
            })
            .await)
    }

    pub async fn partition_stats(&self, request: DirRequest) -> Result<PartitionStatsReply, Status> {
        let snapshot = self.store.snapshot();
        let records = store::partitions_of(&snapshot, &self.store, request.dir).map_err(internal)?;
        let mut partitions = Vec::with_capacity(records.len());
        for record in records {
            let bitmap = Bitmap::from_bytes(record.servers.len() as u32, &record.bitmap)
                .map_err(|e| Status::internal(format!("stored bitmap: {e}")))?;
            let active = bitmap.get(u64::from(record.index));
            partitions.push(PartitionStat {
                partition: record.index,
                active,
                level: if active { bitmap.level(record.index) } else { 0 },
                entries: record.entries,
                splitting: record.splitting_to != 0,
                sealed: record.sealed,
            });
        }
        Ok(PartitionStatsReply { partitions, failure: None })
    }

    /// Waits until the writer has applied everything queued before (touches folded in): what
    /// tests comparing stores need.
    pub async fn settle_writer(&self) {
        let _ = self.writer.submit(Mutation::Fold).await;
    }

    /// Records this server's identity and creates its share of the root directory, on first
    /// start; on later starts checks that the store belongs to this server of this cluster.
    pub async fn format(&self, root_partitions: u32, split_threshold: u64) -> crate::error::Result<()> {
        let format =
            Mutation::Format { index: self.index, servers: self.servers, root_partitions, split_threshold };
        match self.writer.submit(format).await {
            Ok(_) => Ok(()),
            Err(Refusal::Failure(failure)) => Err(crate::error::Error::invalid(failure.message)),
            Err(other) => Err(crate::error::Error::io(format!("formatting the store: {other:?}"))),
        }
    }

    pub fn ping(&self) -> PingReply {
        let stats = *self.commit_stats.borrow();
        let snapshot = self.store.snapshot();
        let count = |tag: u8| fjall::Readable::prefix(&snapshot, &self.store.pending, [tag]).count() as u64;
        PingReply {
            index: self.index,
            servers: self.servers,
            pid: std::process::id(),
            commits: stats.commits,
            mutations: stats.mutations,
            sync_micros: stats.sync_time.as_micros() as u64,
            cpu_micros: process_cpu().as_micros() as u64,
            outbox: count(store::OUTBOX),
            intents: count(store::INTENTS),
        }
    }

    pub(super) fn dir_reply(&self, result: Handled) -> Result<DirMetaReply, Status> {
        Ok(match result? {
            Ok(Outcome::Dir(mut meta)) => {
                self.touches.overlay_dir(&mut meta);
                DirMetaReply { meta: Some(meta), failure: None }
            }
            Ok(other) => return Err(Status::internal(format!("unexpected outcome {other:?}"))),
            Err(failure) => DirMetaReply { meta: None, failure: Some(failure) },
        })
    }
}

/// CPU time this process has used so far.
pub fn process_cpu() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

pub(super) fn handled(refusal: Refusal) -> Handled {
    match refusal {
        Refusal::Failure(failure) => Ok(Err(failure)),
        Refusal::Internal(message) => Err(Status::internal(message)),
        Refusal::Frozen => Err(Status::internal("frozen request escaped its wait")),
    }
}

pub(super) fn entry_reply(result: Handled) -> Result<EntryReply, Status> {
    Ok(match result? {
        Ok(Outcome::Entry(entry)) => EntryReply { entry: Some(entry), failure: None },
        Ok(other) => return Err(Status::internal(format!("unexpected outcome {other:?}"))),
        Err(failure) => EntryReply { entry: None, failure: Some(failure) },
    })
}

pub(super) fn ack(result: Handled) -> Result<Ack, Status> {
    Ok(match result? {
        Ok(Outcome::AlreadyDone) => Ack { failure: None, already_done: true },
        Ok(_) => Ack::default(),
        Err(failure) => Ack { failure: Some(failure), already_done: false },
    })
}

fn page_failure(refusal: Refusal) -> Result<ReadPartitionReply, Status> {
    Ok(ReadPartitionReply {
        failure: Some(handled(refusal)?.err().unwrap_or_default()),
        ..ReadPartitionReply::default()
    })
}

pub(super) fn failure_of(kind: FailureKind, message: String) -> Failure {
    Failure { kind: kind as i32, message, bitmap: Vec::new() }
}

pub(super) fn internal(e: store::StoreError) -> Status {
    Status::internal(e.to_string())
}

//! The server's request handlers, independent of the RPC transport: validate, then read from a
//! snapshot or hand a mutation to the writer. A request for a name that a split is moving waits
//! for the split to finish (bounded), then gets its answer — usually "wrong partition".

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::watch;
use tokio::time::Instant;
use tonic::Status;

use super::apply::{check_route, no_partition, stored_bitmap};
use super::mutation::{Mutation, Outcome, PartKey, Refusal};
use super::store::{self, Store};
use super::validate;
use super::writer::{CommitStats, Writer};
use crate::mapping::Bitmap;
use crate::proto::{
    Ack, CreateDirRequest, CreateRequest, DirMetaReply, DirRequest, EntryReply, Failure, FailureKind,
    InitPartitionsRequest, InstallSplitRequest, Kind, LookupRequest, MergeBitmapRequest, PartitionRef,
    PartitionStat, PartitionStatsReply, PingReply, ReadDataReply, ReadDataRequest, ReadPartitionReply,
    ReadPartitionRequest, RenameRequest, SealRequest, SetAttrRequest, SetDirAttrRequest, SetParentRequest,
    TruncateDataRequest, UnlinkRequest, UsageReply, UsageRequest, WriteDataRequest,
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
}

/// A handled request: an outcome or an in-band failure; `Err` is a gRPC-level error.
type Handled = Result<Result<Outcome, Failure>, Status>;

impl Core {
    pub fn new(
        index: u32,
        servers: u32,
        store: Store,
        writer: Writer,
        splits_finished: watch::Receiver<u64>,
        commit_stats: watch::Receiver<CommitStats>,
        store_dir: PathBuf,
    ) -> Self {
        Self {
            index,
            servers,
            store,
            writer,
            splits_finished,
            commit_stats,
            split_wait: Duration::from_secs(30),
            store_dir,
        }
    }

    /// Submits a mutation; while a split freezes it, waits for splits to finish and resubmits.
    async fn submit(&self, mutation: Mutation) -> Handled {
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
        if request.id == 0 && attrs.kind() == Kind::Directory {
            return Err(validate::invalid("directories are made with CreateDir and linked with their id"));
        }
        validate::target(attrs.kind(), &request.target)?;
        let outcome = self
            .submit(Mutation::Create {
                at,
                name: request.name,
                hash,
                attrs,
                id: request.id,
                replace_id: request.replace_id,
                target: request.target,
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
                keep_data: request.keep_data,
            })
            .await;
        entry_reply(outcome)
    }

    pub async fn set_attr(&self, request: SetAttrRequest) -> Result<EntryReply, Status> {
        let at = self.at(request.at.as_ref())?;
        let hash = validate::name(&request.name)?;
        let change = validate::change(request.change.as_ref())?;
        let outcome = self
            .submit(Mutation::SetAttr { at, name: request.name, hash, expect_id: request.expect_id, change })
            .await;
        entry_reply(outcome)
    }

    pub async fn set_dir_attr(&self, request: SetDirAttrRequest) -> Result<DirMetaReply, Status> {
        let change = validate::change(request.change.as_ref())?;
        dir_reply(self.submit(Mutation::SetDirAttr { dir: request.dir, change }).await)
    }

    pub async fn write_data(&self, request: WriteDataRequest) -> Result<Ack, Status> {
        validate::data_range(request.file, request.offset, request.data.len() as u64)?;
        let mutation = Mutation::WriteData {
            file: request.file,
            offset: request.offset,
            data: request.data,
            valid_size: request.valid_size,
        };
        ack(self.submit(mutation).await)
    }

    pub async fn read_data(&self, request: ReadDataRequest) -> Result<ReadDataReply, Status> {
        validate::data_range(request.file, request.offset, u64::from(request.length))?;
        let snapshot = self.store.snapshot();
        let data = super::data::read(
            &snapshot,
            &self.store,
            request.file,
            request.offset,
            u64::from(request.length),
            request.size,
        )
        .map_err(internal)?;
        Ok(ReadDataReply { data })
    }

    pub async fn truncate_data(&self, request: TruncateDataRequest) -> Result<Ack, Status> {
        validate::data_range(request.file, request.size, 0)?;
        ack(self.submit(Mutation::TruncateData { file: request.file, size: request.size }).await)
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
                        Some(record) => EntryReply {
                            entry: Some(crate::proto::Entry {
                                name: request.name,
                                id: record.id,
                                attrs: record.attrs,
                                target: record.target,
                            }),
                            failure: None,
                        },
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
        Ok(ReadPartitionReply { entries, more, bitmap: bitmap.as_bytes().to_vec(), failure: None })
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
        dir_reply(outcome)
    }

    pub async fn get_dir(&self, request: DirRequest) -> Result<DirMetaReply, Status> {
        let snapshot = self.store.snapshot();
        let meta = store::get_dir(&snapshot, &self.store, request.dir).map_err(internal)?;
        Ok(match meta {
            Some(meta) => DirMetaReply { meta: Some(meta), failure: None },
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
        dir_reply(self.submit(Mutation::RemoveDir { dir: request.dir }).await)
    }

    pub async fn set_parent(&self, request: SetParentRequest) -> Result<DirMetaReply, Status> {
        if request.parent == 0 {
            return Err(validate::invalid("parent directory id 0 does not exist"));
        }
        let mutation = Mutation::SetParent { dir: request.dir, parent: request.parent };
        dir_reply(self.submit(mutation).await)
    }

    pub async fn merge_bitmap(&self, request: MergeBitmapRequest) -> Result<DirMetaReply, Status> {
        let bitmap = validate::bitmap(&request.bitmap, self.servers)?;
        let mutation = Mutation::MergeBitmap { dir: request.dir, bitmap };
        dir_reply(self.submit(mutation).await)
    }

    pub async fn init_partitions(&self, request: InitPartitionsRequest) -> Result<Ack, Status> {
        let meta = validate::dir_meta(request.meta.as_ref(), self.servers)?;
        ack(self.submit(Mutation::InitPartitions { meta }).await)
    }

    pub async fn seal_partition(&self, request: SealRequest) -> Result<Ack, Status> {
        let at = self.at(request.at.as_ref())?;
        ack(self.submit(Mutation::Seal { at, seal: request.seal }).await)
    }

    pub async fn drop_partition(&self, request: PartitionRef) -> Result<Ack, Status> {
        let at = self.at(Some(&request))?;
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
        PingReply {
            index: self.index,
            servers: self.servers,
            pid: std::process::id(),
            commits: stats.commits,
            mutations: stats.mutations,
            sync_micros: stats.sync_time.as_micros() as u64,
            cpu_micros: process_cpu().as_micros() as u64,
        }
    }
}

/// CPU time this process has used so far.
pub fn process_cpu() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ProcessCPUTime);
    Duration::new(now.tv_sec as u64, now.tv_nsec as u32)
}

fn handled(refusal: Refusal) -> Handled {
    match refusal {
        Refusal::Failure(failure) => Ok(Err(failure)),
        Refusal::Internal(message) => Err(Status::internal(message)),
        Refusal::Frozen => Err(Status::internal("frozen request escaped its wait")),
    }
}

fn entry_reply(result: Handled) -> Result<EntryReply, Status> {
    Ok(match result? {
        Ok(Outcome::Entry(entry)) => EntryReply { entry: Some(entry), failure: None },
        Ok(other) => return Err(Status::internal(format!("unexpected outcome {other:?}"))),
        Err(failure) => EntryReply { entry: None, failure: Some(failure) },
    })
}

fn dir_reply(result: Handled) -> Result<DirMetaReply, Status> {
    Ok(match result? {
        Ok(Outcome::Dir(meta)) => DirMetaReply { meta: Some(meta), failure: None },
        Ok(other) => return Err(Status::internal(format!("unexpected outcome {other:?}"))),
        Err(failure) => DirMetaReply { meta: None, failure: Some(failure) },
    })
}

fn ack(result: Handled) -> Result<Ack, Status> {
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

fn failure_of(kind: FailureKind, message: String) -> Failure {
    Failure { kind: kind as i32, message, bitmap: Vec::new() }
}

fn internal(e: store::StoreError) -> Status {
    Status::internal(e.to_string())
}

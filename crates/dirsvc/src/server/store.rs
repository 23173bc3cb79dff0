//! A server's durable state in fjall: five keyspaces written only by the group-commit writer and
//! read through snapshots by request handlers.
//!
//! - `dirs`:    dir id (8 bytes BE)                      -> DirMeta
//! - `parts`:   dir id ‖ partition (4 bytes BE)          -> PartitionRecord
//! - `entries`: dir id ‖ partition ‖ name bytes          -> EntryRecord
//! - `server`:  "identity" -> ServerIdentity, "next_seq" -> u64 LE
//! - `data`:    file id ‖ chunk index (8 bytes BE each)  -> bytes (see `data.rs`)
//!
//! Entry keys sort by name within a partition, which gives readdir a stable cursor.

use std::ops::Bound;
use std::path::Path;

use fjall::{
    KeyspaceCreateOptions, PersistMode, Readable, SingleWriterTxDatabase, SingleWriterTxKeyspace, Snapshot,
};
use prost::Message;

use crate::proto::{DirMeta, Entry, EntryRecord, PartitionRecord, ServerIdentity};

pub const IDENTITY_KEY: &[u8] = b"identity";
pub const NEXT_SEQ_KEY: &[u8] = b"next_seq";

/// A store failure: the process cannot serve correctly any more.
#[derive(Debug)]
pub struct StoreError(pub String);

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "store: {}", self.0)
    }
}

impl From<fjall::Error> for StoreError {
    fn from(e: fjall::Error) -> Self {
        Self(e.to_string())
    }
}

pub type StoreResult<T> = Result<T, StoreError>;

/// (keyspace, key, value)
pub type DumpedItem = (String, Vec<u8>, Vec<u8>);

#[derive(Clone)]
pub struct Store {
    pub db: SingleWriterTxDatabase,
    pub dirs: SingleWriterTxKeyspace,
    pub parts: SingleWriterTxKeyspace,
    pub entries: SingleWriterTxKeyspace,
    pub server: SingleWriterTxKeyspace,
    pub data: SingleWriterTxKeyspace,
}

impl Store {
    pub fn open(path: &Path) -> StoreResult<Self> {
        // Journal persistence is ours: the writer syncs once per group of requests.
        let db = SingleWriterTxDatabase::builder(path).manual_journal_persist(true).open()?;
        let keyspace = |name: &str| db.keyspace(name, KeyspaceCreateOptions::default);
        Ok(Self {
            dirs: keyspace("dirs")?,
            parts: keyspace("parts")?,
            entries: keyspace("entries")?,
            server: keyspace("server")?,
            data: keyspace("data")?,
            db,
        })
    }

    pub fn snapshot(&self) -> Snapshot {
        self.db.read_tx()
    }

    /// A write transaction whose commit returns only once the journal is on disk (fsync).
    pub fn durable_tx(&self) -> fjall::SingleWriterWriteTx<'_> {
        self.db.write_tx().durability(Some(PersistMode::SyncAll))
    }

    /// Every key and value of every keyspace, in order: lets tests compare whole states.
    pub fn dump(&self) -> StoreResult<Vec<DumpedItem>> {
        let snapshot = self.snapshot();
        let mut all = Vec::new();
        for (name, keyspace) in [
            ("dirs", &self.dirs),
            ("parts", &self.parts),
            ("entries", &self.entries),
            ("server", &self.server),
            ("data", &self.data),
        ] {
            for item in snapshot.iter(keyspace) {
                let (key, value) = item.into_inner()?;
                all.push((name.to_string(), key.to_vec(), value.to_vec()));
            }
        }
        Ok(all)
    }
}

pub fn dir_key(dir: u64) -> [u8; 8] {
    dir.to_be_bytes()
}

pub fn part_key(dir: u64, partition: u32) -> [u8; 12] {
    let mut key = [0u8; 12];
    key[..8].copy_from_slice(&dir.to_be_bytes());
    key[8..].copy_from_slice(&partition.to_be_bytes());
    key
}

pub fn entry_key(dir: u64, partition: u32, name: &[u8]) -> Vec<u8> {
    let mut key = Vec::with_capacity(12 + name.len());
    key.extend_from_slice(&part_key(dir, partition));
    key.extend_from_slice(name);
    key
}

pub fn decode<M: Message + Default>(what: &str, bytes: &[u8]) -> StoreResult<M> {
    M::decode(bytes).map_err(|e| StoreError(format!("corrupt {what} record: {e}")))
}

pub fn get_dir(view: &impl Readable, store: &Store, dir: u64) -> StoreResult<Option<DirMeta>> {
    view.get(&store.dirs, dir_key(dir))?.map(|bytes| decode("directory", &bytes)).transpose()
}

pub fn get_partition(
    view: &impl Readable,
    store: &Store,
    dir: u64,
    partition: u32,
) -> StoreResult<Option<PartitionRecord>> {
    view.get(&store.parts, part_key(dir, partition))?.map(|bytes| decode("partition", &bytes)).transpose()
}

pub fn get_entry(
    view: &impl Readable,
    store: &Store,
    dir: u64,
    partition: u32,
    name: &[u8],
) -> StoreResult<Option<EntryRecord>> {
    view.get(&store.entries, entry_key(dir, partition, name))?
        .map(|bytes| decode("entry", &bytes))
        .transpose()
}

pub fn get_identity(view: &impl Readable, store: &Store) -> StoreResult<Option<ServerIdentity>> {
    view.get(&store.server, IDENTITY_KEY)?.map(|bytes| decode("identity", &bytes)).transpose()
}

pub fn get_next_seq(view: &impl Readable, store: &Store) -> StoreResult<Option<u64>> {
    Ok(view.get(&store.server, NEXT_SEQ_KEY)?.map(|bytes| {
        let mut raw = [0u8; 8];
        raw.copy_from_slice(&bytes[..8.min(bytes.len())]);
        u64::from_le_bytes(raw)
    }))
}

/// Entries of one partition with names strictly after `after`, in name order; at most `limit`.
/// Returns the page and whether more follow.
pub fn list_entries(
    view: &impl Readable,
    store: &Store,
    dir: u64,
    partition: u32,
    after: &[u8],
    limit: usize,
) -> StoreResult<(Vec<Entry>, bool)> {
    let prefix = part_key(dir, partition);
    let start = if after.is_empty() {
        Bound::Included(prefix.to_vec())
    } else {
        Bound::Excluded(entry_key(dir, partition, after))
    };
    let mut entries = Vec::new();
    let mut more = false;
    for item in view.range(&store.entries, (start, Bound::Unbounded)) {
        let (key, value) = item.into_inner()?;
        if !key.starts_with(&prefix) {
            break;
        }
        if entries.len() == limit {
            more = true;
            break;
        }
        let record: EntryRecord = decode("entry", &value)?;
        entries.push(Entry {
            name: key[prefix.len()..].to_vec(),
            id: record.id,
            attrs: record.attrs,
            target: record.target,
        });
    }
    Ok((entries, more))
}

/// Names (with their records) of one partition, all of them, in name order.
pub fn scan_partition(
    view: &impl Readable,
    store: &Store,
    dir: u64,
    partition: u32,
) -> StoreResult<Vec<(Vec<u8>, EntryRecord)>> {
    let prefix = part_key(dir, partition);
    let mut all = Vec::new();
    for item in view.prefix(&store.entries, prefix) {
        let (key, value) = item.into_inner()?;
        all.push((key[prefix.len()..].to_vec(), decode("entry", &value)?));
    }
    Ok(all)
}

/// The partition records this server holds for `dir`.
pub fn partitions_of(view: &impl Readable, store: &Store, dir: u64) -> StoreResult<Vec<PartitionRecord>> {
    let mut records = Vec::new();
    for item in view.prefix(&store.parts, dir_key(dir)) {
        let (_, value) = item.into_inner()?;
        records.push(decode("partition", &value)?);
    }
    Ok(records)
}

/// Every partition record on this server (startup: rebuild the writer's cache, resume splits).
pub fn all_partitions(view: &impl Readable, store: &Store) -> StoreResult<Vec<PartitionRecord>> {
    let mut records = Vec::new();
    for item in view.iter(&store.parts) {
        let (_, value) = item.into_inner()?;
        records.push(decode("partition", &value)?);
    }
    Ok(records)
}

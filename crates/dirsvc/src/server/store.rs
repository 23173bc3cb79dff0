//! A server's durable state in fjall: keyspaces written only by the group-commit writer and read
//! through snapshots by request handlers.
//!
//! - `dirs`:    dir id (8 bytes BE)                      -> DirMeta
//! - `parts`:   dir id ‖ partition (4 bytes BE)          -> PartitionRecord
//! - `entries`: dir id ‖ partition ‖ name bytes          -> EntryRecord (with the inode of a file
//!   it is the only name of: `inline.rs`)
//! - `inodes`:  inode id                                 -> InodeRecord of a file not inline in an entry
//! - `pending`: what is in flight between servers, by a one-byte tag:
//!   `i` ‖ inode id ‖ intent number (8 bytes BE)         -> LinkIntent
//!   `f` ‖ inode id ‖ intent number                      -> empty: a link intent that must not be made
//!   `o` ‖ destination server (4 bytes BE) ‖ seq         -> Effect (see `effects.rs`)
//! - `server`:  "identity" -> ServerIdentity; "next_seq", "next_intent", "next_effect" -> u64 LE;
//!   "applied" ‖ sender (4 bytes BE) -> u64 LE, the sender's last effect applied here
//! - `data`:    file id ‖ chunk index (8 bytes BE each)  -> bytes (see `data.rs`)
//!
//! Entry keys sort by name within a partition, which gives readdir a stable cursor.

use std::ops::Bound;
use std::path::Path;

use fjall::{
    KeyspaceCreateOptions, PersistMode, Readable, SingleWriterTxDatabase, SingleWriterTxKeyspace, Snapshot,
};
use prost::Message;

use crate::proto::{DirMeta, Entry, EntryRecord, InodeRecord, PartitionRecord, ServerIdentity};

pub const IDENTITY_KEY: &[u8] = b"identity";
pub const NEXT_SEQ_KEY: &[u8] = b"next_seq";
pub const NEXT_INTENT_KEY: &[u8] = b"next_intent";
pub const NEXT_EFFECT_KEY: &[u8] = b"next_effect";
const APPLIED_PREFIX: &[u8] = b"applied";

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
    pub inodes: SingleWriterTxKeyspace,
    pub pending: SingleWriterTxKeyspace,
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
            inodes: keyspace("inodes")?,
            pending: keyspace("pending")?,
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
            ("inodes", &self.inodes),
            ("pending", &self.pending),
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

/// Tags of the `pending` keyspace.
pub const INTENTS: u8 = b'i';
pub const FENCES: u8 = b'f';
pub const OUTBOX: u8 = b'o';

fn id_pair_key(tag: u8, id: u64, number: u64) -> [u8; 17] {
    let mut key = [0u8; 17];
    key[0] = tag;
    key[1..9].copy_from_slice(&id.to_be_bytes());
    key[9..].copy_from_slice(&number.to_be_bytes());
    key
}

/// Link intent `intent` of inode `id`.
pub fn intent_key(id: u64, intent: u64) -> [u8; 17] {
    id_pair_key(INTENTS, id, intent)
}

/// The fence of link intent `intent` of inode `id`.
pub fn fence_key(id: u64, intent: u64) -> [u8; 17] {
    id_pair_key(FENCES, id, intent)
}

/// (inode id, intent number) of an intent's key.
pub fn intent_of(key: &[u8]) -> (u64, u64) {
    let id = u64::from_be_bytes(key[1..9].try_into().expect("intent key"));
    let number = u64::from_be_bytes(key[9..17].try_into().expect("intent key"));
    (id, number)
}

pub fn outbox_key(dest: u32, seq: u64) -> [u8; 13] {
    let mut key = [0u8; 13];
    key[0] = OUTBOX;
    key[1..5].copy_from_slice(&dest.to_be_bytes());
    key[5..].copy_from_slice(&seq.to_be_bytes());
    key
}

/// The prefix of the outbox to server `dest` (all destinations when `None`).
pub fn outbox_prefix(dest: Option<u32>) -> Vec<u8> {
    let mut prefix = vec![OUTBOX];
    if let Some(dest) = dest {
        prefix.extend_from_slice(&dest.to_be_bytes());
    }
    prefix
}

pub fn applied_key(sender: u32) -> Vec<u8> {
    [APPLIED_PREFIX, &sender.to_be_bytes()].concat()
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
    get_entry_at(view, store, &entry_key(dir, partition, name))
}

/// The entry stored under `key` (an [`entry_key`]).
pub fn get_entry_at(view: &impl Readable, store: &Store, key: &[u8]) -> StoreResult<Option<EntryRecord>> {
    view.get(&store.entries, key)?.map(|bytes| decode("entry", &bytes)).transpose()
}

pub fn get_inode(view: &impl Readable, store: &Store, id: u64) -> StoreResult<Option<InodeRecord>> {
    view.get(&store.inodes, id.to_be_bytes())?.map(|bytes| decode("inode", &bytes)).transpose()
}

pub fn get_identity(view: &impl Readable, store: &Store) -> StoreResult<Option<ServerIdentity>> {
    view.get(&store.server, IDENTITY_KEY)?.map(|bytes| decode("identity", &bytes)).transpose()
}

/// A counter or mark in the `server` keyspace.
pub fn get_number(view: &impl Readable, store: &Store, key: &[u8]) -> StoreResult<Option<u64>> {
    Ok(view.get(&store.server, key)?.map(|bytes| {
        let mut raw = [0u8; 8];
        let len = 8.min(bytes.len());
        raw[..len].copy_from_slice(&bytes[..len]);
        u64::from_le_bytes(raw)
    }))
}

/// A listed entry and the inode its record holds, if it does (`inline.rs`).
pub type ListedEntry = (Entry, Option<InodeRecord>);

/// Entries of one partition with names strictly after `after`, in name order; at most `limit`;
/// each with the inode its record holds, if it does. Returns the page and whether more follow.
pub fn list_entries(
    view: &impl Readable,
    store: &Store,
    dir: u64,
    partition: u32,
    after: &[u8],
    limit: usize,
) -> StoreResult<(Vec<ListedEntry>, bool)> {
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
        let entry = Entry {
            name: key[prefix.len()..].to_vec(),
            id: record.id,
            kind: record.kind,
            link_intent: record.link_intent,
            ..Entry::default()
        };
        entries.push((entry, record.inode));
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

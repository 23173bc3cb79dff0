//! A file's inode kept inside its directory entry while that entry is its only name: a create
//! writes one key, as before hard links. The inode moves out to the `inodes` keyspace, in the same
//! transaction, when it gets a second name (`Batch::add_link`) and when its entry leaves this
//! server (a split's finish), since an inode lives on the server in its id; it never moves back.
//! So an inline inode's entry is always on its home server, and its count is always 1.
//!
//! Objects are also asked for by id (getattr, open, write, a touch), so each server keeps an index
//! in memory: id of an inline inode → key of the entry holding it, rebuilt from the entries at
//! start-up. The writer adds a commit's new locations before the commit and drops the old ones
//! after it, so a reader that takes its snapshot first and reads the index after finds every
//! location its snapshot can show — unless a whole later commit came in between, which it sees as
//! a disagreement and answers by reading again with a fresh snapshot.

use std::collections::HashMap;
use std::sync::RwLock;

use fjall::{Readable, Snapshot};
use prost::Message;

use super::apply::{Batch, internal};
use super::mutation::Refusal;
use super::store::{self, Store, StoreResult};
use crate::proto::{EntryRecord, InodeRecord};

/// How often a reader re-reads when its snapshot and the index disagree (each disagreement needs
/// a commit that moved the inode between the reader's two steps).
const READ_ATTEMPTS: usize = 4;

/// Ids of inline inodes → keys of the entries that hold them (two for a moment while a commit
/// moves one: the new key is added before the commit, the old one dropped after).
#[derive(Default)]
pub struct InlineIndex {
    locations: RwLock<HashMap<u64, Vec<Vec<u8>>>>,
}

/// Where a batch put inode `id`: the key of the entry holding it, or `None` when it is no longer
/// inline (moved out, or gone).
pub type InlineMoves = HashMap<u64, Option<Vec<u8>>>;

impl InlineIndex {
    /// The index of the entries in `store`.
    pub fn load(store: &Store) -> StoreResult<Self> {
        let mut locations = HashMap::new();
        for item in store.snapshot().iter(&store.entries) {
            let (key, value) = item.into_inner()?;
            let record: EntryRecord = store::decode("entry", &value)?;
            if record.inode.is_some() {
                locations.insert(record.id, vec![key.to_vec()]);
            }
        }
        Ok(Self { locations: RwLock::new(locations) })
    }

    fn keys(&self, id: u64) -> Vec<Vec<u8>> {
        self.locations.read().expect("inline index").get(&id).cloned().unwrap_or_default()
    }

    /// The committed location of `id` (the writer's view between its commits).
    fn committed(&self, id: u64) -> Option<Vec<u8>> {
        self.locations.read().expect("inline index").get(&id).and_then(|keys| keys.last().cloned())
    }

    /// Before a commit: the locations it makes, beside the old ones.
    pub(super) fn add(&self, moves: &InlineMoves) {
        let mut locations = self.locations.write().expect("inline index");
        for (&id, key) in moves {
            if let Some(key) = key {
                let keys = locations.entry(id).or_default();
                if !keys.contains(key) {
                    keys.push(key.clone());
                }
            }
        }
    }

    /// After the commit: only the locations it left.
    pub(super) fn settle(&self, moves: &InlineMoves) {
        let mut locations = self.locations.write().expect("inline index");
        for (&id, key) in moves {
            match key {
                Some(key) => locations.insert(id, vec![key.clone()]),
                None => locations.remove(&id),
            };
        }
    }
}

/// Inode `id` from this server, inline or moved out, with the snapshot it was read in; `None`
/// when the server does not hold it.
pub fn read_inode(
    store: &Store,
    index: &InlineIndex,
    id: u64,
) -> StoreResult<(Snapshot, Option<InodeRecord>)> {
    let mut attempt = 1;
    loop {
        let snapshot = store.snapshot();
        let keys = index.keys(id);
        for key in &keys {
            if let Some(inode) = held_inode(&snapshot, store, id, key)? {
                return Ok((snapshot, Some(inode)));
            }
        }
        if let Some(inode) = store::get_inode(&snapshot, store, id)? {
            return Ok((snapshot, Some(inode)));
        }
        if keys.is_empty() || attempt == READ_ATTEMPTS {
            return Ok((snapshot, None));
        }
        attempt += 1;
    }
}

/// The inode of `id` that the entry at `key` holds, if it does.
fn held_inode(view: &impl Readable, store: &Store, id: u64, key: &[u8]) -> StoreResult<Option<InodeRecord>> {
    let Some(record) = store::get_entry_at(view, store, key)? else {
        return Ok(None);
    };
    Ok(if record.id == id { record.inode } else { None })
}

impl Batch<'_> {
    /// The key and record of the entry holding inode `id`, when it is inline.
    pub(super) fn inline_entry(&mut self, id: u64) -> Result<Option<(Vec<u8>, EntryRecord)>, Refusal> {
        let key = match self.inline_moves.get(&id) {
            Some(key) => key.clone(),
            None => self.shared.inline.committed(id),
        };
        let Some(key) = key else {
            return Ok(None);
        };
        let record = store::get_entry_at(&self.tx, self.store, &key).map_err(internal)?;
        Ok(record.filter(|r| r.id == id && r.inode.is_some()).map(|record| (key, record)))
    }

    /// Records that this batch put inode `id` inline at `key` (`None`: it is no longer inline).
    pub(super) fn inline_at(&mut self, id: u64, key: Option<Vec<u8>>) {
        self.inline_moves.insert(id, key);
    }

    /// Moves inode `id` out of its entry, if it is inline, to the `inodes` keyspace.
    pub(super) fn move_out(&mut self, id: u64) -> Result<(), Refusal> {
        let Some((key, mut record)) = self.inline_entry(id)? else {
            return Ok(());
        };
        let inode = record.inode.take().expect("an inline entry holds its inode");
        self.tx.insert(&self.store.entries, key, record.encode_to_vec());
        self.inline_at(id, None);
        self.tx.insert(&self.store.inodes, id.to_be_bytes(), inode.encode_to_vec());
        Ok(())
    }
}

#[cfg(test)]
#[path = "inline_tests.rs"]
mod tests;

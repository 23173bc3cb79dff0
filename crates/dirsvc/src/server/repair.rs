//! What `canopy dirsvc fsck` reads and fixes on one server: a paged scan of its inodes, entries,
//! directories, data and link intents, and repairs that apply only to an object still as the
//! check saw it (so a repair never undoes a change made since).

use std::ops::Bound;

use fjall::Readable;

use super::apply::{Batch, internal};
use super::data::{data_ids, truncate};
use super::mutation::{Outcome, Refusal, failure};
use super::open_refs::OpenRefs;
use super::store::{self, INTENTS, Store, StoreResult, entry_key, intent_of};
use crate::proto::{
    EntryRecord, FailureKind, InodeRecord, LinkIntentRef, ScanReply, ScanTable, ScannedDir, ScannedEntry,
    ScannedInode, repair_request::Action,
};

impl Batch<'_> {
    pub(super) fn repair(&mut self, action: Action) -> Result<Outcome, Refusal> {
        match action {
            Action::LinkCount(set) => {
                let mut inode = self.unchanged_inode(set.id, |inode| nlink(inode) == set.from)?;
                if set.to == 0 && self.inline_entry(set.id)?.is_some() {
                    return Err(changed("the file has a name: the entry holding its inode"));
                }
                inode.attrs.get_or_insert_default().nlink = set.to;
                if set.to == 0 {
                    return self.remove_unless_open(set.id, &inode).map(|()| Outcome::Done);
                }
                self.put_inode(set.id, &inode)?;
            }
            Action::RemoveData(id) => {
                if self.inode(id)?.is_some() {
                    return Err(changed("the file has an inode now"));
                }
                truncate(self, id, 0).map_err(internal)?;
            }
            Action::Subdirs(set) => {
                let Some(mut meta) = self.find_dir(set.dir)? else {
                    return Err(changed("the directory is gone"));
                };
                if meta.subdirs != set.from {
                    return Err(changed("its subdirectory count changed"));
                }
                meta.subdirs = set.to;
                self.put_dir(&meta);
            }
            Action::RemoveEntry(entry) => {
                let at = (entry.dir, entry.partition);
                let key = entry_key(at.0, at.1, &entry.name);
                let current = store::get_entry_at(&self.tx, self.store, &key).map_err(internal)?;
                if current.as_ref().is_none_or(|c| c.id != entry.id) {
                    return Err(changed("the entry changed"));
                }
                if current.is_some_and(|c| c.inode.is_some()) {
                    return Err(changed("the entry holds its file's inode"));
                }
                self.tx.remove(&self.store.entries, key);
                self.adjust_count(at, -1)?;
            }
            Action::Parent(moved) => {
                let Some(mut meta) = self.find_dir(moved.dir)? else {
                    return Err(changed("the directory is gone"));
                };
                meta.parent = moved.parent;
                self.put_dir(&meta);
            }
        }
        Ok(Outcome::Done)
    }

    fn unchanged_inode(
        &mut self,
        id: u64,
        as_seen: impl Fn(&InodeRecord) -> bool,
    ) -> Result<InodeRecord, Refusal> {
        match self.inode(id)? {
            Some(inode) if as_seen(&inode) => Ok(inode),
            _ => Err(changed("its link count changed since the check")),
        }
    }
}

fn nlink(inode: &InodeRecord) -> u32 {
    inode.attrs.map_or(0, |a| a.nlink)
}

fn scanned_inode(id: u64, inode: &InodeRecord, opens: &OpenRefs) -> ScannedInode {
    let attrs = inode.attrs.unwrap_or_default();
    ScannedInode { id, kind: attrs.kind, nlink: attrs.nlink, open: opens.is_open(id) }
}

fn changed(why: &str) -> Refusal {
    failure(FailureKind::Changed, format!("not repaired: {why}"))
}

/// One page of `table`, after the key `after`.
pub fn scan(
    view: &impl Readable,
    store: &Store,
    opens: &OpenRefs,
    table: ScanTable,
    after: &[u8],
    limit: usize,
) -> StoreResult<ScanReply> {
    let mut reply = ScanReply::default();
    let (keyspace, first, end) = match table {
        ScanTable::ScanInodes => (&store.inodes, Bound::Unbounded, Bound::Unbounded),
        ScanTable::ScanEntries => (&store.entries, Bound::Unbounded, Bound::Unbounded),
        ScanTable::ScanDirs => (&store.dirs, Bound::Unbounded, Bound::Unbounded),
        ScanTable::ScanIntents => {
            (&store.pending, Bound::Included(vec![INTENTS]), Bound::Excluded(vec![INTENTS + 1]))
        }
        ScanTable::ScanData => {
            let after =
                if after.len() == 8 { u64::from_be_bytes(after.try_into().expect("8 bytes")) } else { 0 };
            reply.data = data_ids(view, store, after, limit)?;
            if reply.data.len() == limit {
                reply.next = reply.data.last().expect("a full page").to_be_bytes().to_vec();
            }
            return Ok(reply);
        }
        ScanTable::ScanUnspecified => return Ok(reply),
    };
    let start = if after.is_empty() { first } else { Bound::Excluded(after.to_vec()) };
    let mut last = Vec::new();
    let mut count = 0;
    for item in view.range(keyspace, (start, end)).take(limit) {
        let (key, value) = item.into_inner()?;
        count += 1;
        match table {
            ScanTable::ScanInodes => {
                let id = u64::from_be_bytes(key[..8].try_into().expect("8-byte key"));
                let inode: InodeRecord = store::decode("inode", &value)?;
                reply.inodes.push(scanned_inode(id, &inode, opens));
            }
            ScanTable::ScanEntries => {
                let dir = u64::from_be_bytes(key[..8].try_into().expect("entry key"));
                let partition = u32::from_be_bytes(key[8..12].try_into().expect("entry key"));
                let record: EntryRecord = store::decode("entry", &value)?;
                if let Some(inode) = &record.inode {
                    // An inode inline in its entry (`inline.rs`) is checked as any other.
                    reply.inodes.push(scanned_inode(record.id, inode, opens));
                }
                reply.entries.push(ScannedEntry {
                    dir,
                    partition,
                    name: key[12..].to_vec(),
                    id: record.id,
                    kind: record.kind,
                });
            }
            ScanTable::ScanDirs => {
                let meta: crate::proto::DirMeta = store::decode("directory", &value)?;
                reply.dirs.push(ScannedDir {
                    id: meta.id,
                    parent: meta.parent,
                    subdirs: meta.subdirs,
                    servers: meta.servers,
                });
            }
            ScanTable::ScanIntents => {
                let (id, intent) = intent_of(&key);
                reply.intents.push(LinkIntentRef { id, intent });
            }
            ScanTable::ScanData | ScanTable::ScanUnspecified => {}
        }
        last = key.to_vec();
    }
    if count == limit {
        reply.next = last;
    }
    Ok(reply)
}

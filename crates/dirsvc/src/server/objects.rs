//! Objects by id, on the server in their id: inodes (a non-directory's attributes, link count and
//! symlink target) and directories' metadata objects; hard links, file writes, and the removal of
//! inodes nobody names or has open any more.
//!
//! A hard link is counted before its entry exists: `AddLink` raises the link count and records a
//! link intent here; the client then creates the entry on the name's partition, whose server
//! settles the intent (a `LinkDone` effect) in the same transaction. So the count is never below
//! the names that exist. An intent nobody settles (the client died, or its request was lost) is
//! settled by this server's resolver (`resolver.rs`), which asks the name's partition whether the
//! entry was made — and makes sure it never will be if it was not.

use fjall::Readable;
use prost::Message;

use super::apply::{Batch, internal};
use super::inline::{InlineIndex, read_inode};
use super::mutation::{Outcome, Refusal, failure};
use super::store::{self, Store, StoreResult, intent_key};
use super::touches::Touches;
use crate::ids::{home_server, now_ns};
use crate::proto::{DirMeta, FailureKind, InodeRecord, Kind, LinkIntent, Object};

/// The most names a file may have (ext4's limit).
pub const LINK_MAX: u32 = 65_000;

impl Batch<'_> {
    /// Inode `id`, inline in its entry or moved out (`inline.rs`).
    pub(super) fn inode(&mut self, id: u64) -> Result<Option<InodeRecord>, Refusal> {
        if let Some((_, record)) = self.inline_entry(id)? {
            return Ok(record.inode);
        }
        store::get_inode(&self.tx, self.store, id).map_err(internal)
    }

    /// Stores inode `id` where it is: in its entry while inline, else in the `inodes` keyspace.
    pub(super) fn put_inode(&mut self, id: u64, inode: &InodeRecord) -> Result<(), Refusal> {
        if let Some((key, mut record)) = self.inline_entry(id)? {
            record.inode = Some(inode.clone());
            self.tx.insert(&self.store.entries, key, record.encode_to_vec());
        } else {
            self.tx.insert(&self.store.inodes, id.to_be_bytes(), inode.encode_to_vec());
        }
        Ok(())
    }

    /// Deletes inode `id` (its data is the caller's): from the `inodes` keyspace, or from the entry
    /// a split left behind here while the inode was still inline in it.
    pub(super) fn delete_inode(&mut self, id: u64) -> Result<(), Refusal> {
        if let Some((key, mut record)) = self.inline_entry(id)? {
            record.inode = None;
            self.tx.insert(&self.store.entries, key, record.encode_to_vec());
            self.inline_at(id, None);
        } else {
            self.tx.remove(&self.store.inodes, id.to_be_bytes());
        }
        Ok(())
    }

    /// Object `id` as a reader sees it, when this server holds it.
    pub(super) fn local_object(&mut self, id: u64) -> Result<Option<Object>, Refusal> {
        if home_server(id) != self.index {
            return Ok(None);
        }
        if let Some(meta) = self.find_dir(id)? {
            return Ok(Some(dir_object(meta, self.shared.touches)));
        }
        self.local_inode_object(id)
    }

    /// Inode `id` as a reader sees it, when this server holds it (the caller knows it is no
    /// directory: an entry's kind says so).
    pub(super) fn local_inode_object(&mut self, id: u64) -> Result<Option<Object>, Refusal> {
        if home_server(id) != self.index {
            return Ok(None);
        }
        Ok(self.inode(id)?.map(|inode| inode_object(id, inode, self.shared.touches)))
    }

    pub(super) fn object_outcome(&mut self, id: u64) -> Result<Outcome, Refusal> {
        let object = self.local_object(id)?;
        object
            .map(Outcome::Object)
            .ok_or_else(|| failure(FailureKind::NotFound, format!("no object with id {id:#x}")))
    }

    /// Writes `data` at `offset` of file `file`: its size and mtime change with the data.
    pub(super) fn write(&mut self, file: u64, offset: u64, data: &[u8]) -> Result<Outcome, Refusal> {
        let Some(mut inode) = self.inode(file)? else {
            return Err(failure(FailureKind::NotFound, format!("no file with id {file:#x}")));
        };
        let attrs = inode.attrs.get_or_insert_default();
        if attrs.kind() != Kind::File {
            return Err(failure(FailureKind::NotPermitted, "only a regular file holds data"));
        }
        self.write_chunks(file, offset, data).map_err(internal)?;
        let now = now_ns();
        attrs.size = attrs.size.max(offset + data.len() as u64);
        attrs.mtime_ns = now;
        attrs.ctime_ns = now;
        inode.mtime_set_ns = 0;
        self.put_inode(file, &inode)?;
        self.object_outcome(file)
    }

    /// Counts a new name (`name` in `dir`) of inode `id` and records the link intent.
    pub(super) fn add_link(&mut self, id: u64, dir: u64, name: &[u8]) -> Result<Outcome, Refusal> {
        let Some(mut inode) = self.inode(id)? else {
            if self.find_dir(id)?.is_some() {
                return Err(failure(FailureKind::NotPermitted, "a directory cannot have hard links"));
            }
            return Err(failure(FailureKind::NotFound, format!("no file with id {id:#x}")));
        };
        let attrs = inode.attrs.get_or_insert_default();
        if attrs.nlink == 0 {
            return Err(failure(FailureKind::NotFound, "the file has no name left to link"));
        }
        if attrs.nlink >= LINK_MAX {
            return Err(failure(FailureKind::TooManyLinks, format!("the file has {LINK_MAX} names already")));
        }
        let now = now_ns();
        attrs.nlink += 1;
        attrs.ctime_ns = now;
        let intent = self.allocate_intent();
        let record = LinkIntent { dir, name: name.to_vec(), created_ns: now };
        self.tx.insert(&self.store.pending, intent_key(id, intent), record.encode_to_vec());
        // Two names: the inode leaves its entry for good (`inline.rs`).
        self.move_out(id)?;
        self.put_inode(id, &inode)?;
        let Outcome::Object(object) = self.object_outcome(id)? else {
            unreachable!("object_outcome answers an object");
        };
        Ok(Outcome::Linked(intent, object))
    }

    /// Settles link intent `intent` of inode `id`: its entry exists (`made`), or never will and the
    /// name is uncounted.
    pub(super) fn settle_link(&mut self, id: u64, intent: u64, made: bool) -> Result<Outcome, Refusal> {
        let key = intent_key(id, intent);
        if !self.tx.contains_key(&self.store.pending, key).map_err(|e| internal(e.into()))? {
            return Ok(Outcome::AlreadyDone);
        }
        self.tx.remove(&self.store.pending, key);
        if !made {
            self.drop_name(id, now_ns())?;
        }
        Ok(Outcome::Done)
    }

    /// Removes inode `id` if it has no name and nobody has it open any more.
    pub(super) fn reclaim(&mut self, id: u64) -> Result<(), Refusal> {
        match self.inode(id)? {
            Some(inode) if inode.attrs.is_some_and(|a| a.nlink == 0) => self.remove_unless_open(id, &inode),
            _ => Ok(()),
        }
    }
}

/// Object `id` now, with pending touches: a directory (link count 2 + subdirectories) or an inode;
/// `None` when this server does not hold it.
pub fn read_object(
    store: &Store,
    touches: &Touches,
    inline: &InlineIndex,
    id: u64,
) -> StoreResult<Option<Object>> {
    if let Some(meta) = store::get_dir(&store.snapshot(), store, id)? {
        return Ok(Some(dir_object(meta, touches)));
    }
    let (_, inode) = read_inode(store, inline, id)?;
    Ok(inode.map(|inode| inode_object(id, inode, touches)))
}

/// Directory `id` from `view`, with pending touches.
pub fn read_dir_object(
    view: &impl Readable,
    store: &Store,
    touches: &Touches,
    id: u64,
) -> StoreResult<Option<Object>> {
    Ok(store::get_dir(view, store, id)?.map(|meta| dir_object(meta, touches)))
}

/// The object an entry names, from `view` with pending touches, when this server holds it: a
/// directory, an inode inline in the entry, or a moved-out inode.
pub fn named_object(
    view: &impl Readable,
    store: &Store,
    touches: &Touches,
    id: u64,
    inline: Option<InodeRecord>,
) -> StoreResult<Option<Object>> {
    if let Some(inode) = inline {
        return Ok(Some(inode_object(id, inode, touches)));
    }
    if let Some(dir) = read_dir_object(view, store, touches, id)? {
        return Ok(Some(dir));
    }
    Ok(store::get_inode(view, store, id)?.map(|inode| inode_object(id, inode, touches)))
}

fn dir_object(mut meta: DirMeta, touches: &Touches) -> Object {
    touches.overlay_dir(&mut meta);
    Object { id: meta.id, attrs: meta.attrs, target: Vec::new() }
}

pub(super) fn inode_object(id: u64, mut inode: InodeRecord, touches: &Touches) -> Object {
    touches.overlay_inode(id, &mut inode);
    Object { id, attrs: inode.attrs, target: inode.target }
}

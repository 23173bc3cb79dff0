//! Entries: create (a new object, or a name for an existing one), unlink, rename within this
//! server, and the fence that settles an abandoned link. An entry is a name and the id (and kind)
//! of the object it names; the object itself — an inode or a directory's metadata object — lives
//! on the server in its id. Each change here also changes objects: the parent directory's times
//! (and its subdirectory count), the named object's link count or parent. Those on this server
//! change in the same transaction, those elsewhere through effects and touches (`effects.rs`).

use fjall::Readable;
use prost::Message;

use super::apply::{Batch, check_replace, check_route, internal, not_found, shown};
use super::mutation::{Outcome, PartKey, Refusal, failure};
use super::objects::inode_object;
use super::store::{self, entry_key, fence_key};
use crate::ids::now_ns;
use crate::proto::effect::Change;
use crate::proto::{
    Attrs, Entry, EntryRecord, FailureKind, InodeRecord, Kind, LinkDone, ParentChange, PartitionRecord,
    SubdirDelta, TouchKind, Unlinked,
};

/// What a create makes: a new object (`id` 0) or a name for an existing one.
pub struct NewEntry {
    pub attrs: Attrs,
    pub id: u64,
    pub replace_id: u64,
    pub target: Vec<u8>,
    pub link_intent: u64,
    pub open_session: u64,
}

fn kind_of(record: &EntryRecord) -> Kind {
    record.kind()
}

impl Batch<'_> {
    pub(super) fn create(
        &mut self,
        at: PartKey,
        name: &[u8],
        hash: u64,
        new: NewEntry,
    ) -> Result<Outcome, Refusal> {
        let mut record = self.routed(at, hash)?;
        let existing = self.entry(at, name)?;
        check_replace(existing.as_ref(), new.replace_id, name)?;
        let kind = new.attrs.kind();
        if new.id != 0 && kind != Kind::Directory {
            self.check_not_fenced(new.id, new.link_intent)?;
        }
        let now = now_ns();
        let key = entry_key(at.0, at.1, name);
        let (id, entry) = if new.id == 0 {
            let id = self.allocate_id();
            if new.open_session != 0 {
                // A fresh id cannot be in the middle of a deletion.
                self.shared.opens.open(id, new.open_session);
            }
            // One name, here: the inode lives in its entry (`inline.rs`).
            let inode = new_inode(new.attrs, new.target, now);
            (id, EntryRecord { id, kind: kind as i32, link_intent: 0, inode: Some(inode) })
        } else {
            let link_intent = new.link_intent;
            (new.id, EntryRecord { id: new.id, kind: kind as i32, link_intent, inode: None })
        };
        let is_new = existing.is_none();
        if let Some(victim) = existing
            && victim.id != id
        {
            self.name_gone(at.0, victim, now)?;
        }
        if entry.inode.is_some() {
            self.inline_at(id, Some(key.clone()));
        }
        self.tx.insert(&self.store.entries, key, entry.encode_to_vec());
        if is_new {
            record.entries += 1;
            self.put_partition(at, Some(record));
        }
        if new.id != 0 {
            self.name_made(at.0, &entry)?;
            if kind == Kind::Directory {
                // A directory linked by id is moving (mkdir's new one is not seen yet): its ctime.
                self.touch(id, TouchKind::TouchStatus, now)?;
            }
        }
        self.touch(at.0, TouchKind::TouchContents, now)?;
        self.entry_outcome(name, &entry)
    }

    pub(super) fn unlink(
        &mut self,
        at: PartKey,
        name: &[u8],
        hash: u64,
        expect_id: u64,
        directory: bool,
    ) -> Result<Outcome, Refusal> {
        let mut record = self.routed(at, hash)?;
        let Some(existing) = self.entry(at, name)? else {
            return Err(not_found(name));
        };
        if expect_id != 0 && existing.id != expect_id {
            return Err(failure(FailureKind::Changed, format!("{} was replaced meanwhile", shown(name))));
        }
        let is_dir = kind_of(&existing) == Kind::Directory;
        if directory && !is_dir {
            return Err(failure(FailureKind::NotDirectory, format!("{} is not a directory", shown(name))));
        }
        if !directory && is_dir {
            return Err(failure(FailureKind::IsDirectory, format!("{} is a directory", shown(name))));
        }
        let now = now_ns();
        // The answer shows the object as the name last showed it (a removed inode has no more).
        let outcome = self.entry_outcome(name, &existing)?;
        self.tx.remove(&self.store.entries, entry_key(at.0, at.1, name));
        record.entries = record.entries.saturating_sub(1);
        self.put_partition(at, Some(record));
        self.name_gone(at.0, existing, now)?;
        self.touch(at.0, TouchKind::TouchContents, now)?;
        Ok(outcome)
    }

    pub(super) fn rename(
        &mut self,
        (from, from_name, from_hash): (PartKey, &[u8], u64),
        (to, to_name, to_hash): (PartKey, &[u8], u64),
        expect_id: u64,
        replace_id: u64,
    ) -> Result<Outcome, Refusal> {
        self.routed(from, from_hash)?;
        self.routed(to, to_hash)?;
        let Some(moving) = self.entry(from, from_name)? else {
            return Err(not_found(from_name));
        };
        if expect_id != 0 && moving.id != expect_id {
            return Err(failure(
                FailureKind::Changed,
                format!("{} was replaced meanwhile", shown(from_name)),
            ));
        }
        let existing = self.entry(to, to_name)?;
        check_replace(existing.as_ref(), replace_id, to_name)?;
        let now = now_ns();
        let moved_to = existing.is_none();
        if let Some(victim) = existing {
            self.name_gone(to.0, victim, now)?;
        }
        let to_key = entry_key(to.0, to.1, to_name);
        if moving.inode.is_some() {
            // Still its only name, still on this server: the inode moves with it.
            self.inline_at(moving.id, Some(to_key.clone()));
        }
        self.tx.remove(&self.store.entries, entry_key(from.0, from.1, from_name));
        self.tx.insert(&self.store.entries, to_key, moving.encode_to_vec());
        self.adjust_count(from, -1)?;
        if moved_to {
            self.adjust_count(to, 1)?;
        }
        if kind_of(&moving) == Kind::Directory && from.0 != to.0 {
            self.subdirs(from.0, -1)?;
            self.name_made(to.0, &moving)?;
        }
        self.touch(moving.id, TouchKind::TouchStatus, now)?;
        self.touch(from.0, TouchKind::TouchContents, now)?;
        if to.0 != from.0 {
            self.touch(to.0, TouchKind::TouchContents, now)?;
        }
        // An inline inode's new ctime is in the entry just written.
        let moved = if moving.inode.is_some() { self.entry(to, to_name)?.unwrap_or(moving) } else { moving };
        self.entry_outcome(to_name, &moved)
    }

    /// Whether link intent `intent` of inode `id` made the entry at (`at`, `name`); if it did not,
    /// records that it never may.
    pub(super) fn fence_link(
        &mut self,
        at: PartKey,
        name: &[u8],
        hash: u64,
        (id, intent): (u64, u64),
    ) -> Result<Outcome, Refusal> {
        // A partition sealed by an rmdir in progress is unsealed again if the rmdir fails: the
        // fence must hold there too, so the seal does not stop it.
        let Some(record) = self.partition(at)? else {
            return Err(super::apply::no_partition(at));
        };
        check_route(&PartitionRecord { sealed: false, ..record }, hash)?;
        if let Some(existing) = self.entry(at, name)?
            && existing.id == id
            && existing.link_intent == intent
        {
            return self.entry_outcome(name, &existing);
        }
        self.tx.insert(&self.store.pending, fence_key(id, intent), Vec::new());
        Err(failure(FailureKind::NotFound, "the link was abandoned"))
    }

    fn check_not_fenced(&mut self, id: u64, intent: u64) -> Result<(), Refusal> {
        if self.tx.contains_key(&self.store.pending, fence_key(id, intent)).map_err(|e| internal(e.into()))? {
            return Err(failure(FailureKind::Changed, "the link took too long and was abandoned"));
        }
        Ok(())
    }

    /// An existing object got a name in `dir`: a file's link intent is settled, a directory is
    /// counted in its new parent and points to it.
    fn name_made(&mut self, dir: u64, entry: &EntryRecord) -> Result<(), Refusal> {
        if kind_of(entry) == Kind::Directory {
            self.subdirs(dir, 1)?;
            self.effect(entry.id, Change::Parent(ParentChange { dir: entry.id, parent: dir }))
        } else {
            self.effect(entry.id, Change::LinkDone(LinkDone { id: entry.id, intent: entry.link_intent }))
        }
    }

    /// A name in `dir` went away: a file has one name less (an inline inode had only that one),
    /// a directory is no longer counted.
    fn name_gone(&mut self, dir: u64, entry: EntryRecord, now: i64) -> Result<(), Refusal> {
        if kind_of(&entry) == Kind::Directory {
            self.subdirs(dir, -1)
        } else if let Some(inode) = entry.inode {
            self.inline_name_gone(entry.id, inode, now)
        } else {
            self.effect(entry.id, Change::Unlinked(Unlinked { id: entry.id, time_ns: now }))
        }
    }

    fn subdirs(&mut self, dir: u64, delta: i32) -> Result<(), Refusal> {
        self.effect(dir, Change::Subdirs(SubdirDelta { dir, delta }))
    }

    /// The answer to a change of `name`: the entry, with its object's attributes when they are here.
    fn entry_outcome(&mut self, name: &[u8], record: &EntryRecord) -> Result<Outcome, Refusal> {
        let object = if let Some(inode) = &record.inode {
            Some(inode_object(record.id, inode.clone(), self.shared.touches))
        } else if kind_of(record) == Kind::Directory {
            self.local_object(record.id)?
        } else {
            self.local_inode_object(record.id)?
        };
        Ok(Outcome::Entry(Entry {
            name: name.to_vec(),
            id: record.id,
            kind: record.kind,
            attrs: object.as_ref().and_then(|o| o.attrs),
            target: object.map(|o| o.target).unwrap_or_default(),
            link_intent: 0,
        }))
    }

    pub(super) fn entry(&mut self, at: PartKey, name: &[u8]) -> Result<Option<EntryRecord>, Refusal> {
        store::get_entry(&self.tx, self.store, at.0, at.1, name).map_err(internal)
    }
}

/// A new non-directory object: one name, the times of its creation.
fn new_inode(mut attrs: Attrs, target: Vec<u8>, now: i64) -> InodeRecord {
    attrs.atime_ns = now;
    attrs.mtime_ns = now;
    attrs.ctime_ns = now;
    attrs.nlink = 1;
    // A symlink's size is its target's length, as lstat reports it.
    attrs.size = target.len() as u64;
    InodeRecord { attrs: Some(attrs), target, ..InodeRecord::default() }
}

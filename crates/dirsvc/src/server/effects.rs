//! What an operation on this server does to objects elsewhere. Every object lives on the server in
//! its id; a change of an entry here can change an object there: an inode loses a name (its link
//! count), a link intent is settled, a directory gains or loses a subdirectory or gets a new
//! parent, a directory's or an object's times move.
//!
//! - **Effects** (counts, intents, parents) must happen exactly once. An effect on this server's own
//!   objects is applied in the same transaction. One for another server is written to this
//!   server's outbox in the same transaction as the change that causes it, so a crash cannot
//!   separate them; a delivery task per destination sends the outbox in order, the destination
//!   applies each effect once (it keeps the last sequence number it applied from each sender, in
//!   the same transaction) and the outbox drops what was delivered. A restart resumes delivery.
//! - **Touches** (times) are idempotent: they are sent before this server's commit, so they cost no
//!   extra wait, and applied at the destination at once (`touches.rs`).
//!
//! The answer to the operation waits until its effects and touches have reached their servers
//! (bounded: a server that is down gets them when it is back), so whoever asked sees them.

use std::collections::BTreeMap;

use prost::Message;

use super::apply::{Batch, internal};
use super::data::truncate;
use super::mutation::{Outcome, Refusal};
use super::store::{self, applied_key, intent_key, outbox_key};
use super::touches::{touch_dir, touch_inode};
use crate::ids::home_server;
use crate::proto::effect::Change;
use crate::proto::{Effect, InodeRecord, Touch, TouchKind};

/// The effects and touches one mutation sent to other servers: its answer waits for them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct JobEffects {
    /// Destination server -> the highest effect sequence number sent to it.
    pub outbox: BTreeMap<u32, u64>,
    /// Touches per destination server.
    pub touches: BTreeMap<u32, Vec<Touch>>,
}

impl JobEffects {
    pub fn is_empty(&self) -> bool {
        self.outbox.is_empty() && self.touches.is_empty()
    }
}

impl Batch<'_> {
    /// Makes `change` to the object `owner` (on the server in its id).
    pub(super) fn effect(&mut self, owner: u64, change: Change) -> Result<(), Refusal> {
        let dest = home_server(owner);
        if dest == self.index {
            return self.apply_effect(change);
        }
        let seq = self.allocate_effect();
        let effect = Effect { seq, change: Some(change) };
        self.tx.insert(&self.store.pending, outbox_key(dest, seq), effect.encode_to_vec());
        self.job.outbox.insert(dest, seq);
        Ok(())
    }

    /// Moves a time of object `id` (on the server in its id).
    pub(super) fn touch(&mut self, id: u64, kind: TouchKind, time_ns: i64) -> Result<(), Refusal> {
        let dest = home_server(id);
        if dest == self.index {
            return self.apply_touch(id, kind, time_ns);
        }
        self.job.touches.entry(dest).or_default().push(Touch { id, kind: kind as i32, time_ns });
        Ok(())
    }

    /// The effects of the mutation applied last (and forgets them).
    pub fn take_job_effects(&mut self) -> JobEffects {
        std::mem::take(&mut self.job)
    }

    /// Folds touches received from other servers into the store.
    pub fn fold(&mut self, pending: &super::touches::Pending) -> Result<(), Refusal> {
        for (&(id, kind), &time) in pending {
            let kind = TouchKind::try_from(kind).unwrap_or(TouchKind::TouchUnspecified);
            self.apply_touch(id, kind, time)?;
        }
        Ok(())
    }

    fn apply_touch(&mut self, id: u64, kind: TouchKind, time: i64) -> Result<(), Refusal> {
        if let Some(mut meta) = self.find_dir(id)? {
            touch_dir(&mut meta, kind, time);
            self.put_dir(&meta);
        } else if let Some(mut inode) = self.inode(id)? {
            touch_inode(&mut inode, kind, time);
            self.put_inode(id, &inode)?;
        }
        Ok(())
    }

    fn apply_effect(&mut self, change: Change) -> Result<(), Refusal> {
        match change {
            Change::Unlinked(unlinked) => self.drop_name(unlinked.id, unlinked.time_ns),
            Change::LinkDone(done) => {
                self.tx.remove(&self.store.pending, intent_key(done.id, done.intent));
                Ok(())
            }
            Change::Subdirs(delta) => {
                if let Some(mut meta) = self.find_dir(delta.dir)? {
                    meta.subdirs = meta.subdirs.saturating_add_signed(i64::from(delta.delta));
                    self.put_dir(&meta);
                }
                Ok(())
            }
            Change::Parent(moved) => {
                if let Some(mut meta) = self.find_dir(moved.dir)? {
                    meta.parent = moved.parent;
                    self.put_dir(&meta);
                }
                Ok(())
            }
        }
    }

    /// Applies what server `from` sent, skipping effects applied before (a resent delivery).
    pub(super) fn apply_effects(&mut self, from: u32, mut effects: Vec<Effect>) -> Result<Outcome, Refusal> {
        let key = applied_key(from);
        let mut applied = store::get_number(&self.tx, self.store, &key).map_err(internal)?.unwrap_or(0);
        effects.sort_by_key(|e| e.seq);
        for effect in effects {
            if effect.seq <= applied {
                continue;
            }
            if let Some(change) = effect.change {
                self.apply_effect(change)?;
            }
            applied = effect.seq;
        }
        self.tx.insert(&self.store.server, key, applied.to_le_bytes().to_vec());
        Ok(Outcome::Applied(applied))
    }

    /// `dest` has applied this server's effects up to `through`.
    pub(super) fn delivered(&mut self, dest: u32, through: u64) -> Result<Outcome, Refusal> {
        let keys: Vec<Vec<u8>> = fjall::Readable::range(
            &self.tx,
            &self.store.pending,
            outbox_key(dest, 0)..=outbox_key(dest, through),
        )
        .map(|item| item.key().map(|k| k.to_vec()))
        .collect::<Result<_, _>>()
        .map_err(|e| internal(e.into()))?;
        for key in keys {
            self.tx.remove(&self.store.pending, key);
        }
        Ok(Outcome::Done)
    }

    /// Inode `id` lost a name at `time`; with none left (and no link in progress) it goes, with its
    /// data — unless a mount has it open, then it stays, with a link count of 0, until closed.
    pub(super) fn drop_name(&mut self, id: u64, time: i64) -> Result<(), Refusal> {
        let Some(mut inode) = self.inode(id)? else {
            return Ok(());
        };
        let attrs = inode.attrs.get_or_insert_default();
        attrs.nlink = attrs.nlink.saturating_sub(1);
        attrs.ctime_ns = attrs.ctime_ns.max(time);
        if attrs.nlink == 0 {
            return self.remove_unless_open(id, &inode);
        }
        self.put_inode(id, &inode)
    }

    /// The only name of inline inode `inode` went, its entry with it (the caller removed or
    /// replaced the entry): the inode goes too — unless a mount has it open, then it moves out
    /// with a link count of 0 and stays until closed, as `drop_name` keeps one. (A count still
    /// above 0, which only a repair can set, moves out too, for fsck to settle.)
    pub(super) fn inline_name_gone(
        &mut self,
        id: u64,
        mut inode: InodeRecord,
        time: i64,
    ) -> Result<(), Refusal> {
        self.inline_at(id, None);
        let attrs = inode.attrs.get_or_insert_default();
        attrs.nlink = attrs.nlink.saturating_sub(1);
        attrs.ctime_ns = attrs.ctime_ns.max(time);
        if attrs.nlink > 0 || !self.shared.opens.reap_unless_open(id) {
            self.tx.insert(&self.store.inodes, id.to_be_bytes(), inode.encode_to_vec());
            return Ok(());
        }
        self.reap_data(id)
    }

    /// Removes an inode without names and its data, unless a mount has it open.
    pub(super) fn remove_unless_open(&mut self, id: u64, inode: &InodeRecord) -> Result<(), Refusal> {
        if !self.shared.opens.reap_unless_open(id) {
            return self.put_inode(id, inode);
        }
        self.delete_inode(id)?;
        self.reap_data(id)
    }

    /// The data of an inode deleted in this batch.
    fn reap_data(&mut self, id: u64) -> Result<(), Refusal> {
        self.reaped.push(id);
        truncate(self, id, 0).map_err(internal)
    }
}

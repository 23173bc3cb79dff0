//! How each mutation changes the store, inside the writer's current transaction. Every mutation
//! checks everything first and writes only when it will succeed, so a refused request leaves the
//! transaction — and the store — as it was. The namespace's entries are in `entries.rs`, objects
//! (inodes, links, directories' attributes) in `objects.rs`, changes to other servers' objects in
//! `effects.rs`; this file holds the batch itself, directories' partitions and splits.

use std::collections::{BTreeMap, BTreeSet};

use fjall::{Readable, SingleWriterWriteTx};
use prost::Message;

use super::effects::JobEffects;
use super::inline::{InlineIndex, InlineMoves};
use super::mutation::{Mutation, Outcome, PartKey, Refusal, SplitPlan, failure, wrong_partition};
use super::open_refs::OpenRefs;
use super::store::{self, IDENTITY_KEY, Store, StoreError, dir_key, entry_key, part_key};
use super::touches::Touches;
use crate::ids::{ROOT_ID, home_server, make_id, now_ns};
use crate::mapping::{Bitmap, name_hash, owns};
use crate::proto::{Attrs, DirMeta, Entry, EntryRecord, FailureKind, Kind, PartitionRecord, ServerIdentity};

/// Counters kept in the `server` keyspace, loaded once by the writer and saved with each commit
/// that moved them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Counters {
    /// The next object id's sequence number.
    pub seq: u64,
    /// The next link intent's number.
    pub intent: u64,
    /// The next outgoing effect's sequence number.
    pub effect: u64,
}

/// What a batch needs beyond the store: the server's shared in-memory state.
pub struct Shared<'a> {
    pub opens: &'a OpenRefs,
    pub touches: &'a Touches,
    pub inline: &'a InlineIndex,
}

/// One group commit in the making: the open transaction plus the partition records and directory
/// objects it touched. Those two are kept decoded and written once, at the commit: a batch of N
/// creates in one directory changes its partition's count and the directory's times N times.
pub struct Batch<'a> {
    pub(super) store: &'a Store,
    pub(super) tx: SingleWriterWriteTx<'a>,
    pub(super) index: u32,
    counters: &'a mut Counters,
    counters_dirty: bool,
    parts: BTreeMap<PartKey, Option<PartitionRecord>>,
    dirty: BTreeSet<PartKey>,
    dirs: BTreeMap<u64, Option<DirMeta>>,
    dirty_dirs: BTreeSet<u64>,
    pub(super) shared: Shared<'a>,
    /// The effects of the mutation being applied (see `take_job_effects`).
    pub(super) job: JobEffects,
    /// Inodes deleted in this batch (opens of them fail until the commit).
    pub reaped: Vec<u64>,
    /// Inline inodes this batch made, moved or moved out (`inline.rs`).
    pub(super) inline_moves: InlineMoves,
    /// Splits that finished in this batch (waiters are woken after the commit).
    pub splits_finished: usize,
}

impl<'a> Batch<'a> {
    pub fn new(store: &'a Store, index: u32, counters: &'a mut Counters, shared: Shared<'a>) -> Self {
        Self {
            store,
            tx: store.durable_tx(),
            index,
            counters,
            counters_dirty: false,
            parts: BTreeMap::new(),
            dirty: BTreeSet::new(),
            dirs: BTreeMap::new(),
            dirty_dirs: BTreeSet::new(),
            shared,
            job: JobEffects::default(),
            reaped: Vec::new(),
            inline_moves: InlineMoves::new(),
            splits_finished: 0,
        }
    }

    /// Writes the touched partition records, directory objects and counters, then commits and
    /// syncs. Returns the partitions that may now need a split.
    pub fn commit(mut self) -> Result<Vec<PartKey>, StoreError> {
        for dir in std::mem::take(&mut self.dirty_dirs) {
            match &self.dirs[&dir] {
                Some(meta) => self.tx.insert(&self.store.dirs, dir_key(dir), meta.encode_to_vec()),
                None => self.tx.remove(&self.store.dirs, dir_key(dir)),
            }
        }
        let mut candidates = Vec::new();
        for key in std::mem::take(&mut self.dirty) {
            match &self.parts[&key] {
                Some(record) => {
                    self.tx.insert(&self.store.parts, part_key(key.0, key.1), record.encode_to_vec());
                    if wants_split(record) {
                        candidates.push(key);
                    }
                }
                None => self.tx.remove(&self.store.parts, part_key(key.0, key.1)),
            }
        }
        if self.counters_dirty {
            let counters = [
                (store::NEXT_SEQ_KEY, self.counters.seq),
                (store::NEXT_INTENT_KEY, self.counters.intent),
                (store::NEXT_EFFECT_KEY, self.counters.effect),
            ];
            for (key, value) in counters {
                self.tx.insert(&self.store.server, key, value.to_le_bytes().to_vec());
            }
        }
        // Readers find an inline inode through the index: its new place before the commit shows it.
        self.shared.inline.add(&self.inline_moves);
        self.tx.commit()?;
        self.shared.inline.settle(&self.inline_moves);
        Ok(candidates)
    }

    pub fn apply(&mut self, mutation: Mutation) -> Result<Outcome, Refusal> {
        match mutation {
            Mutation::Format { index, servers, root_partitions, split_threshold } => {
                self.format(index, servers, root_partitions, split_threshold)
            }
            Mutation::Create { at, name, hash, attrs, id, replace_id, target, link_intent, open_session } => {
                let new =
                    super::entries::NewEntry { attrs, id, replace_id, target, link_intent, open_session };
                self.create(at, &name, hash, new)
            }
            Mutation::Unlink { at, name, hash, expect_id, directory } => {
                self.unlink(at, &name, hash, expect_id, directory)
            }
            Mutation::FenceLink { at, name, hash, id, intent } => {
                self.fence_link(at, &name, hash, (id, intent))
            }
            Mutation::SetObjectAttr { id, change } => self.set_object_attr(id, &change),
            Mutation::WriteData { file, offset, data } => self.write(file, offset, &data),
            Mutation::AddLink { id, dir, name } => self.add_link(id, dir, &name),
            Mutation::SettleLink { id, intent, made } => self.settle_link(id, intent, made),
            Mutation::Reclaim { ids } => {
                for id in ids {
                    self.reclaim(id)?;
                }
                Ok(Outcome::Done)
            }
            Mutation::ApplyEffects { from, effects } => self.apply_effects(from, effects),
            Mutation::Delivered { dest, through } => self.delivered(dest, through),
            Mutation::Fold => Ok(Outcome::Done),
            Mutation::Repair(action) => self.repair(action),
            Mutation::Rename { from, from_name, from_hash, to, to_name, to_hash, expect_id, replace_id } => {
                self.rename((from, &from_name, from_hash), (to, &to_name, to_hash), expect_id, replace_id)
            }
            Mutation::CreateDir { parent, attrs, initial_partitions, split_threshold } => {
                self.create_dir(parent, attrs, initial_partitions, split_threshold)
            }
            Mutation::RemoveDir { dir } => {
                if dir == ROOT_ID {
                    return Err(failure(FailureKind::NotPermitted, "the root directory cannot be removed"));
                }
                let meta = self.dir(dir)?;
                self.dirs.insert(dir, None);
                self.dirty_dirs.insert(dir);
                Ok(Outcome::Dir(meta))
            }
            Mutation::MergeBitmap { dir, bitmap } => {
                let mut meta = self.dir(dir)?;
                let mut merged = stored_bitmap(meta.servers.len() as u32, &meta.bitmap)?;
                if bitmap.partitions() != merged.partitions() {
                    return Err(failure(
                        FailureKind::Changed,
                        "bitmap is for a different number of partitions",
                    ));
                }
                merged.merge(&bitmap);
                meta.bitmap = merged.as_bytes().to_vec();
                self.put_dir(&meta);
                Ok(Outcome::Dir(meta))
            }
            Mutation::InitPartitions { meta } => self.init_partitions(&meta),
            Mutation::Seal { at, seal } => self.seal(at, seal),
            Mutation::DropPartition { at } => self.drop_partition(at),
            Mutation::InstallSplit { at, reset, entries, activate, bitmap } => {
                self.install_split(at, reset, entries, activate, &bitmap)
            }
            Mutation::SplitBegin { at } => self.split_begin(at),
            Mutation::SplitFinish { at } => self.split_finish(at),
            Mutation::SplitAbort { at } => {
                let Some(mut record) = self.partition(at)? else {
                    return Ok(Outcome::AlreadyDone);
                };
                record.splitting_to = 0;
                self.put_partition(at, Some(record));
                self.splits_finished += 1;
                Ok(Outcome::Done)
            }
        }
    }

    fn format(
        &mut self,
        index: u32,
        servers: u32,
        root_partitions: u32,
        split_threshold: u64,
    ) -> Result<Outcome, Refusal> {
        let wanted = ServerIdentity { index, servers };
        if let Some(existing) = store::get_identity(&self.tx, self.store).map_err(internal)? {
            if existing != wanted {
                return Err(failure(
                    FailureKind::Changed,
                    format!(
                        "this store belongs to server {} of a {}-server cluster, not server {index} of {servers}",
                        existing.index, existing.servers
                    ),
                ));
            }
            return Ok(Outcome::AlreadyDone);
        }
        self.tx.insert(&self.store.server, IDENTITY_KEY, wanted.encode_to_vec());
        let now = now_ns();
        let attrs = Attrs {
            kind: Kind::Directory as i32,
            mode: 0o755,
            atime_ns: now,
            mtime_ns: now,
            ctime_ns: now,
            ..Attrs::default()
        };
        let root = DirMeta {
            id: ROOT_ID,
            parent: ROOT_ID,
            attrs: Some(attrs),
            servers: (0..servers).collect(),
            bitmap: Bitmap::initial(servers, root_partitions).as_bytes().to_vec(),
            split_threshold,
            initial_partitions: root_partitions,
            ..DirMeta::default()
        };
        if index == home_server(ROOT_ID) {
            self.put_dir(&root);
            self.counters.seq = self.counters.seq.max(ROOT_ID + 1);
            self.counters_dirty = true;
        }
        self.init_partitions(&root)?;
        Ok(Outcome::Done)
    }

    fn create_dir(
        &mut self,
        parent: u64,
        mut attrs: Attrs,
        initial_partitions: u32,
        split_threshold: u64,
    ) -> Result<Outcome, Refusal> {
        let servers = self.servers()?;
        let now = now_ns();
        attrs.kind = Kind::Directory as i32;
        attrs.atime_ns = now;
        attrs.mtime_ns = now;
        attrs.ctime_ns = now;
        let initial = if initial_partitions == 0 { servers } else { initial_partitions.min(servers) };
        let meta = DirMeta {
            id: self.allocate_id(),
            parent,
            attrs: Some(attrs),
            // Rotate the table so each directory's partition 0 lives with its metadata object.
            servers: (0..servers).map(|i| (self.index + i) % servers).collect(),
            bitmap: Bitmap::initial(servers, initial).as_bytes().to_vec(),
            split_threshold,
            initial_partitions: initial,
            ..DirMeta::default()
        };
        self.put_dir(&meta);
        Ok(Outcome::Dir(meta))
    }

    fn init_partitions(&mut self, meta: &DirMeta) -> Result<Outcome, Refusal> {
        let mut created = false;
        for (index, &server) in meta.servers.iter().enumerate() {
            let at = (meta.id, index as u32);
            if server != self.index || self.partition(at)?.is_some() {
                continue;
            }
            let record = PartitionRecord {
                dir: meta.id,
                index: index as u32,
                servers: meta.servers.clone(),
                bitmap: meta.bitmap.clone(),
                split_threshold: meta.split_threshold,
                entries: 0,
                sealed: false,
                splitting_to: 0,
            };
            self.put_partition(at, Some(record));
            created = true;
        }
        Ok(if created { Outcome::Done } else { Outcome::AlreadyDone })
    }

    fn seal(&mut self, at: PartKey, seal: bool) -> Result<Outcome, Refusal> {
        if seal && at.0 == ROOT_ID {
            return Err(failure(FailureKind::NotPermitted, "the root directory cannot be removed"));
        }
        let Some(mut record) = self.partition(at)? else {
            return Err(no_partition(at));
        };
        if seal {
            if record.splitting_to != 0 {
                return Err(failure(FailureKind::Busy, "a split of this partition is in progress"));
            }
            if record.entries > 0 {
                return Err(failure(
                    FailureKind::NotEmpty,
                    format!("directory is not empty ({} entries in partition {})", record.entries, at.1),
                ));
            }
        }
        if record.sealed == seal {
            return Ok(Outcome::AlreadyDone);
        }
        record.sealed = seal;
        self.put_partition(at, Some(record));
        Ok(Outcome::Done)
    }

    fn drop_partition(&mut self, at: PartKey) -> Result<Outcome, Refusal> {
        let Some(record) = self.partition(at)? else {
            return Ok(Outcome::AlreadyDone);
        };
        if !record.sealed || record.entries > 0 {
            return Err(failure(
                FailureKind::Busy,
                "only an empty, sealed partition can be dropped (rmdir seals first)",
            ));
        }
        self.put_partition(at, None);
        Ok(Outcome::Done)
    }

    fn install_split(
        &mut self,
        at: PartKey,
        reset: bool,
        entries: Vec<Entry>,
        activate: bool,
        bitmap: &Bitmap,
    ) -> Result<Outcome, Refusal> {
        let Some(mut record) = self.partition(at)? else {
            return Err(no_partition(at));
        };
        let mut local = stored_bitmap(record.servers.len() as u32, &record.bitmap)?;
        if local.get(u64::from(at.1)) {
            return Ok(Outcome::AlreadyDone);
        }
        if record.sealed {
            return Err(failure(FailureKind::Busy, "directory is being removed"));
        }
        if reset {
            for (name, _) in store::scan_partition(&self.tx, self.store, at.0, at.1).map_err(internal)? {
                self.tx.remove(&self.store.entries, entry_key(at.0, at.1, &name));
            }
            record.entries = 0;
        }
        for entry in entries {
            let key = entry_key(at.0, at.1, &entry.name);
            if !self.tx.contains_key(&self.store.entries, &key).map_err(|e| internal(e.into()))? {
                record.entries += 1;
            }
            // Without an inode: it stays on the server in its id (`inline.rs`).
            let value = EntryRecord {
                id: entry.id,
                kind: entry.kind,
                link_intent: entry.link_intent,
                ..EntryRecord::default()
            };
            self.tx.insert(&self.store.entries, key, value.encode_to_vec());
        }
        if activate {
            local.merge(bitmap);
            local.set(at.1);
            record.bitmap = local.as_bytes().to_vec();
        }
        self.put_partition(at, Some(record));
        Ok(Outcome::Done)
    }

    fn split_begin(&mut self, at: PartKey) -> Result<Outcome, Refusal> {
        let Some(mut record) = self.partition(at)? else {
            return Ok(Outcome::NoSplit);
        };
        if !wants_split(&record) {
            return Ok(Outcome::NoSplit);
        }
        let bitmap = stored_bitmap(record.servers.len() as u32, &record.bitmap)?;
        let Some(child) = bitmap.split_child(at.1) else {
            return Ok(Outcome::NoSplit);
        };
        record.splitting_to = child;
        let plan = split_plan(&record)?;
        self.put_partition(at, Some(record));
        Ok(Outcome::Split(plan))
    }

    fn split_finish(&mut self, at: PartKey) -> Result<Outcome, Refusal> {
        let Some(mut record) = self.partition(at)? else {
            return Ok(Outcome::AlreadyDone);
        };
        if record.splitting_to == 0 {
            return Ok(Outcome::AlreadyDone);
        }
        let child = record.splitting_to;
        let mut bitmap = stored_bitmap(record.servers.len() as u32, &record.bitmap)?;
        let level = bitmap.level(at.1);
        let mut moved = 0;
        for (name, record) in store::scan_partition(&self.tx, self.store, at.0, at.1).map_err(internal)? {
            if owns(child, level + 1, name_hash(&name)) {
                if let Some(inode) = record.inode {
                    // Its name is on the child's server now; the inode stays here, its home.
                    self.tx.insert(&self.store.inodes, record.id.to_be_bytes(), inode.encode_to_vec());
                    self.inline_at(record.id, None);
                }
                self.tx.remove(&self.store.entries, entry_key(at.0, at.1, &name));
                moved += 1;
            }
        }
        bitmap.set(child);
        record.bitmap = bitmap.as_bytes().to_vec();
        record.entries = record.entries.saturating_sub(moved);
        record.splitting_to = 0;
        self.put_partition(at, Some(record));
        self.splits_finished += 1;
        Ok(Outcome::Done)
    }

    /// The partition record, checked to be the right place for `hash`: active, not being
    /// removed, owning the hash, and not in the half a split is moving away.
    pub(super) fn routed(&mut self, at: PartKey, hash: u64) -> Result<PartitionRecord, Refusal> {
        let Some(record) = self.partition(at)? else {
            return Err(no_partition(at));
        };
        check_route(&record, hash)?;
        Ok(record)
    }

    pub(super) fn partition(&mut self, at: PartKey) -> Result<Option<PartitionRecord>, Refusal> {
        if let Some(cached) = self.parts.get(&at) {
            return Ok(cached.clone());
        }
        let loaded = store::get_partition(&self.tx, self.store, at.0, at.1).map_err(internal)?;
        self.parts.insert(at, loaded.clone());
        Ok(loaded)
    }

    pub(super) fn put_partition(&mut self, at: PartKey, record: Option<PartitionRecord>) {
        self.parts.insert(at, record);
        self.dirty.insert(at);
    }

    pub(super) fn adjust_count(&mut self, at: PartKey, delta: i64) -> Result<(), Refusal> {
        if let Some(mut record) = self.partition(at)? {
            record.entries = record.entries.saturating_add_signed(delta);
            self.put_partition(at, Some(record));
        }
        Ok(())
    }

    pub(super) fn dir(&mut self, dir: u64) -> Result<DirMeta, Refusal> {
        self.find_dir(dir)?
            .ok_or_else(|| failure(FailureKind::NotFound, format!("no directory with id {dir:#x}")))
    }

    pub(super) fn find_dir(&mut self, dir: u64) -> Result<Option<DirMeta>, Refusal> {
        if let Some(cached) = self.dirs.get(&dir) {
            return Ok(cached.clone());
        }
        let loaded = store::get_dir(&self.tx, self.store, dir).map_err(internal)?;
        self.dirs.insert(dir, loaded.clone());
        Ok(loaded)
    }

    pub(super) fn put_dir(&mut self, meta: &DirMeta) {
        self.dirs.insert(meta.id, Some(meta.clone()));
        self.dirty_dirs.insert(meta.id);
    }

    fn servers(&mut self) -> Result<u32, Refusal> {
        let identity = store::get_identity(&self.tx, self.store)
            .map_err(internal)?
            .ok_or_else(|| Refusal::Internal("server is not formatted".into()))?;
        Ok(identity.servers)
    }

    pub(super) fn allocate_id(&mut self) -> u64 {
        let seq = self.counters.seq.max(1);
        self.counters.seq = seq + 1;
        self.counters_dirty = true;
        make_id(self.index, seq)
    }

    pub(super) fn allocate_intent(&mut self) -> u64 {
        let intent = self.counters.intent.max(1);
        self.counters.intent = intent + 1;
        self.counters_dirty = true;
        intent
    }

    pub(super) fn allocate_effect(&mut self) -> u64 {
        let seq = self.counters.effect.max(1);
        self.counters.effect = seq + 1;
        self.counters_dirty = true;
        seq
    }
}

/// Whether `hash` may be served by this partition now (see `Batch::routed`).
pub fn check_route(record: &PartitionRecord, hash: u64) -> Result<(), Refusal> {
    let bitmap = stored_bitmap(record.servers.len() as u32, &record.bitmap)?;
    if !bitmap.get(u64::from(record.index)) {
        return Err(wrong_partition(&bitmap, format!("partition {} is not active", record.index)));
    }
    if record.sealed {
        return Err(failure(FailureKind::NotFound, "directory is being removed"));
    }
    let level = bitmap.level(record.index);
    if !owns(record.index, level, hash) {
        return Err(wrong_partition(
            &bitmap,
            format!("name is outside the hash space of partition {}", record.index),
        ));
    }
    if record.splitting_to != 0 && owns(record.splitting_to, level + 1, hash) {
        return Err(Refusal::Frozen);
    }
    Ok(())
}

/// The plan of the split recorded in `record.splitting_to`.
pub fn split_plan(record: &PartitionRecord) -> Result<SplitPlan, Refusal> {
    let bitmap = stored_bitmap(record.servers.len() as u32, &record.bitmap)?;
    let child = record.splitting_to;
    let child_server = *record
        .servers
        .get(child as usize)
        .ok_or_else(|| Refusal::Internal(format!("split child {child} has no server")))?;
    let mut bitmap_after = bitmap.clone();
    bitmap_after.set(child);
    Ok(SplitPlan {
        at: (record.dir, record.index),
        child,
        level: bitmap.level(record.index),
        child_server,
        meta_server: home_server(record.dir),
        bitmap_after,
    })
}

fn wants_split(record: &PartitionRecord) -> bool {
    record.split_threshold > 0
        && record.entries > record.split_threshold
        && record.splitting_to == 0
        && !record.sealed
        && Bitmap::from_bytes(record.servers.len() as u32, &record.bitmap)
            .is_ok_and(|b| b.get(u64::from(record.index)) && b.split_child(record.index).is_some())
}

pub(super) fn check_replace(
    existing: Option<&EntryRecord>,
    replace_id: u64,
    name: &[u8],
) -> Result<(), Refusal> {
    match (existing, replace_id) {
        (None, 0) => Ok(()),
        (Some(_), 0) => Err(failure(FailureKind::Exists, format!("{} exists", shown(name)))),
        (Some(entry), id) if entry.id == id => Ok(()),
        _ => Err(failure(FailureKind::Changed, format!("{} changed meanwhile", shown(name)))),
    }
}

pub fn stored_bitmap(partitions: u32, bytes: &[u8]) -> Result<Bitmap, Refusal> {
    Bitmap::from_bytes(partitions, bytes).map_err(|e| Refusal::Internal(format!("stored bitmap: {e}")))
}

pub(super) fn internal(e: StoreError) -> Refusal {
    Refusal::Internal(e.to_string())
}

pub(super) fn not_found(name: &[u8]) -> Refusal {
    failure(FailureKind::NotFound, format!("no entry named {}", shown(name)))
}

pub fn no_partition(at: PartKey) -> Refusal {
    failure(
        FailureKind::NotFound,
        format!("no directory {:#x} (partition {} is not on this server)", at.0, at.1),
    )
}

pub fn shown(name: &[u8]) -> String {
    format!("{:?}", String::from_utf8_lossy(name))
}

#[cfg(test)]
#[path = "apply_tests.rs"]
mod tests;

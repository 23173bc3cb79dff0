//! Everything but directories: decided against what the destination has ([`super::plan`]), told
//! ([`super::listing`]), then copied — regular files by [`super::files`], symlinks and special files
//! here — or linked to the copy of their inode's first name (`-H`, `--preserve=links`).

use super::attrs::{self, Wanted, open_path_fd, xattrs_differ};
use super::dest::{DestDir, Place};
use super::destination::Destination;
use super::files::{at_source, lossy, open_source};
use super::itemize::{Flags, Item, Update};
use super::links::{Arrival, Placed, Waiter};
use super::plan::{Decision, Probe, Verdict};
use super::policy::masked_mode;
use super::temp::{create_fresh, discard, rename_into_place};
use super::visitor::{CopyJob, Failure, TransferState};
use super::{Transfer, special};
use crate::common::lookup;
use canopy_engine::{Cx, DirFd, Entry, Errno, FileKind, Metadata, Op, WalkError};
use canopy_util::temp_name::temp_name;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, OFlags, linkat, openat, readlinkat, unlinkat};
use std::ffi::CStr;
use std::sync::Arc;

/// What the judge asks of an entry and its destination when metadata cannot tell.
pub(super) struct EntryProbe<'a, 'e> {
    transfer: &'a Transfer,
    state: &'a mut TransferState,
    entry: &'a Entry<'e, DestDir>,
    meta: &'a Metadata,
    place: &'a Place,
    /// The destination directory (none in a dry run below a directory not made yet).
    dir: Option<&'a DirFd>,
    /// A symlink's target.
    target: &'a [u8],
}

impl Probe for EntryProbe<'_, '_> {
    fn same_data(&mut self) -> bool {
        let Some(dir) = self.dir else { return false };
        if self.meta.kind() == FileKind::Symlink {
            return readlinkat(dir, self.place.name(), Vec::new()).is_ok_and(|t| t.as_bytes() == self.target);
        }
        self.transfer.same_content(self.state, self.entry, self.meta, dir, self.place.name())
    }

    fn xattrs_differ(&mut self, acls: bool) -> bool {
        let opened;
        let dir = match self.dir {
            Some(dir) => dir,
            None => match self.place.open_dir() {
                Ok(dir) => {
                    opened = dir;
                    &opened
                }
                Err(_) => return true,
            },
        };
        let source = at_source(self.entry, |dir, name| open_path_fd(dir, name));
        match (source, open_path_fd(dir, self.place.name())) {
            (Ok(source), Ok(dest)) => xattrs_differ(source.as_fd(), dest.as_fd(), acls),
            _ => true,
        }
    }
}

impl Transfer {
    pub(super) fn probe<'a, 'e>(
        &'a self,
        state: &'a mut TransferState,
        entry: &'a Entry<'e, DestDir>,
        meta: &'a Metadata,
        place: &'a Place,
        dir: Option<&'a DirFd>,
    ) -> EntryProbe<'a, 'e> {
        EntryProbe { transfer: self, state, entry, meta, place, dir, target: &[] }
    }

    /// Reports a failed entry and fails the other names waiting for it, if any.
    pub(super) fn fail(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        link: Option<(u64, u64)>,
        failure: Failure,
    ) {
        let errno = match &failure {
            Failure::Io { errno, .. } => *errno,
            Failure::Message(_) => Errno::IO,
        };
        self.report_failure(state, failure);
        self.settle(cx, link, Err(errno));
    }

    /// The first name of a multiply linked file is done: schedule the names that waited for it.
    pub(super) fn settle(
        &self,
        cx: &mut Cx<'_, Self>,
        link: Option<(u64, u64)>,
        first: Result<Arc<Placed>, Errno>,
    ) {
        let Some(id) = link else { return };
        for Waiter { reservation, place } in self.links.settle(id, first.clone()) {
            cx.spawn_reserved(reservation, CopyJob::Link { place, first: first.clone() });
        }
    }

    /// The first name of a multiply linked file (source `meta`) is in place as the copy `id`:
    /// under MPI it is first offered as the inode's copy to the other processes (see
    /// `shared_links`), then the names that waited for it are scheduled.
    pub(super) fn settle_placed(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        link: Option<(u64, u64)>,
        place: &Place,
        id: Option<(u64, u64)>,
        meta: &Metadata,
    ) {
        if link.is_none() {
            return;
        }
        let id = match self.shared_links() {
            Some(shared) => self.publish(cx, state, shared, place, id, meta),
            None => id,
        };
        self.settle(cx, link, Ok(Arc::new(Placed { place: place.clone(), id, source: *meta })));
    }

    /// The attributes a new copy of `meta` gets, `replacing` what the destination had.
    pub(super) fn wanted_for<'m>(&self, meta: &'m Metadata, replacing: Option<&Metadata>) -> Wanted<'m> {
        let keep = self.options.keep;
        let mode = match replacing {
            _ if keep.perms => meta.permissions(),
            // rsync and cp both leave a file written over with its permissions.
            Some(old) if old.kind() == FileKind::File && meta.kind() == FileKind::File => old.permissions(),
            _ => masked_mode(meta, self.options.umask, self.options.cp_rules),
        };
        // cp writes over a file in place: its owner stays.
        let owner = replacing
            .filter(|old| self.options.cp_rules && old.kind() == FileKind::File && !keep.owner)
            .map(|old| (old.uid, old.gid));
        Wanted { meta, keep, mode: Some(mode), owner }
    }

    /// Copies a non-directory, unless the destination already has it.
    pub(super) fn copy_entry(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        entry: &Entry<'_, DestDir>,
        meta: &Metadata,
        place: Place,
    ) {
        let Some((destination, existing)) = self.destination(cx, &place, "create") else { return };
        let link =
            (self.options.keep.hard_links && meta.nlink > 1 && !entry.is_root()).then(|| meta.file_id());
        if let (Some(id), Some(source_dir)) = (link, place.source_dir()) {
            let arrival = self.links.arrive(id, meta.nlink, || Waiter {
                reservation: cx.reserve(source_dir),
                place: place.clone(),
            });
            match arrival {
                // A directory in the way is refused below, as for any file.
                Arrival::First if existing.is_none_or(|e| !e.is_dir()) => {
                    if let (Some(shared), Some(dir)) = (self.shared_links(), destination.to_change()) {
                        match shared.find(meta) {
                            Ok(Some(meeting)) => {
                                return self.adopt(
                                    cx,
                                    state,
                                    (&place, meta),
                                    dir,
                                    existing.as_ref(),
                                    link,
                                    &meeting,
                                );
                            }
                            Ok(None) => {}
                            Err(errno) => self.meeting_failed(state, shared.area(), errno),
                        }
                    }
                }
                Arrival::First => {}
                Arrival::Link(first) => {
                    return self.link(cx, state, &place, &destination, existing.as_ref(), &first);
                }
                Arrival::Failed(errno) => return self.link_failed(cx, &place, errno),
                Arrival::Waiting => return,
            }
        }
        let target = if meta.kind() == FileKind::Symlink {
            match at_source(entry, |dir, name| readlinkat(dir, name, Vec::new())) {
                Ok(target) => target.into_bytes(),
                Err(errno) => return self.fail(cx, state, link, Failure::io(entry.path(), "read", errno)),
            }
        } else {
            Vec::new()
        };
        let resume_since = place.pair().resume_since;
        let mut probe = EntryProbe {
            target: &target,
            ..self.probe(state, entry, meta, &place, destination.to_look_at())
        };
        let mut verdict = self.judge().judge(meta, existing.as_ref(), resume_since, &mut probe);
        if verdict.decision == Decision::Blocked {
            match self.clear_blocking_dir(&place, destination.to_change()) {
                Ok(()) => verdict = Verdict { decision: Decision::Create, ..verdict },
                Err(failure) => return self.fail(cx, state, link, failure),
            }
        }
        let existing = existing.filter(|_| verdict.decision != Decision::Create);
        let existing_id = existing.map(|m| m.file_id());
        let kind = meta.kind();
        let update = match (verdict.decision, kind) {
            (Decision::Keep | Decision::Refresh, _) => Update::Attributes,
            (_, FileKind::File) => Update::Transfer,
            _ => Update::Local,
        };
        let item = Item { new: verdict.new, flags: verdict.flags, ..self.item(kind, update) };
        let target_shown = (kind == FileKind::Symlink).then_some(target.as_slice());
        self.tell(state, &place, item, target_shown, None);
        if update == Update::Transfer {
            self.totals.transferring(meta.size);
        }
        match (verdict.decision, destination.to_change()) {
            (Decision::Keep, _) => {
                if verdict.resumed {
                    self.totals.resumed(meta.size);
                }
                self.totals.done(0, meta.size);
                self.settle_placed(cx, state, link, &place, existing_id, meta);
            }
            // A dry run: only told.
            (decision, None) => {
                let id = (decision == Decision::Refresh).then_some(existing_id).flatten();
                self.settle_placed(cx, state, link, &place, id, meta);
            }
            (Decision::Refresh, Some(dir)) => {
                if verdict.resumed {
                    self.totals.resumed(meta.size);
                }
                let wanted = Wanted {
                    mode: self.options.keep.perms.then(|| meta.permissions()),
                    ..self.wanted_for(meta, None)
                };
                let source = self.xattr_source(entry);
                match attrs::apply_by_name(
                    dir,
                    place.name(),
                    source.as_ref().map(AsFd::as_fd),
                    &wanted,
                    &self.owner,
                ) {
                    Ok(()) => {
                        self.totals.done(0, meta.size);
                        self.settle_placed(cx, state, link, &place, existing_id, meta);
                    }
                    Err(e) => self.fail(cx, state, link, Failure::io(place.dest_path(), e.verb, e.errno)),
                }
            }
            (_, Some(dir)) if kind == FileKind::File => {
                let wanted = self.wanted_for(meta, existing.as_ref());
                self.copy_file(cx, state, entry, place, dir, link, (wanted.mode, wanted.owner));
            }
            (_, Some(dir)) => {
                let wanted = self.wanted_for(meta, None);
                let source = self.xattr_source(entry);
                match special::make(
                    dir,
                    place.name(),
                    &wanted,
                    &target,
                    source.as_ref().map(AsFd::as_fd),
                    &self.owner,
                ) {
                    Ok(()) => {
                        self.totals.done(1, 0);
                        let id =
                            link.and_then(|_| lookup(dir, place.name()).ok().flatten()).map(|m| m.file_id());
                        self.settle_placed(cx, state, link, &place, id, meta);
                    }
                    Err(e) => self.fail(cx, state, link, Failure::io(place.dest_path(), e.verb, e.errno)),
                }
            }
        }
    }

    /// The source entry opened `O_PATH`, to copy its xattrs from, when they are kept.
    fn xattr_source(&self, entry: &Entry<'_, DestDir>) -> Option<OwnedFd> {
        let keep = self.options.keep;
        (keep.xattrs || keep.acls)
            .then(|| at_source(entry, |dir, name| open_path_fd(dir, name)).ok())
            .flatten()
    }

    /// Where the entry at `place` goes and what is there now; `None` once a failure to open or
    /// look (`verb`, what the entry was for) is reported.
    fn destination(
        &self,
        cx: &mut Cx<'_, Self>,
        place: &Place,
        verb: &'static str,
    ) -> Option<(Destination, Option<Metadata>)> {
        let destination = Destination::open(place, self.options.dry_run)
            .map_err(|errno| cx.report(WalkError::io(place.dest_path(), Op::Tool(verb), errno)))
            .ok()?;
        let existing = destination
            .existing(place)
            .map_err(|errno| cx.report(WalkError::io(place.dest_path(), Op::Stat, errno)))
            .ok()?;
        Some((destination, existing))
    }

    /// A directory where a non-directory goes. sync removes it from `dir` when it is empty (and,
    /// with `--delete`, the deletion pass did already; a dry run, without `dir`, says what would
    /// be); cp refuses.
    fn clear_blocking_dir(&self, place: &Place, dir: Option<&DirFd>) -> Result<(), Failure> {
        let dest = || lossy(&place.dest_path()).into_owned();
        if !self.options.replace_non_directories {
            return Err(Failure::Message(format!(
                "cannot overwrite directory '{}' with non-directory '{}'",
                dest(),
                lossy(&place.source_path())
            )));
        }
        let Some(dir) = dir else { return Ok(()) };
        match unlinkat(dir, place.name(), AtFlags::REMOVEDIR) {
            Ok(()) | Err(Errno::NOENT) => Ok(()),
            Err(Errno::NOTEMPTY | Errno::EXIST) => Err(Failure::Message(format!(
                "cannot delete non-empty directory: '{}' (to make way for '{}'; --delete would)",
                dest(),
                lossy(&place.source_path())
            ))),
            Err(errno) => Err(Failure::io(place.dest_path(), "remove", errno)),
        }
    }

    /// Makes `place` another name of the copy `first` (the first name of the same source inode).
    fn link(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        place: &Place,
        destination: &Destination,
        existing: Option<&Metadata>,
        first: &Placed,
    ) {
        if existing.is_some_and(|e| Some(e.file_id()) == first.id) {
            return;
        }
        if existing.is_some_and(Metadata::is_dir) {
            // cp refuses; sync removes it (emptied by --delete), as for any non-directory.
            let cleared = if self.options.replace_non_directories {
                self.clear_blocking_dir(place, destination.to_change())
            } else {
                let dest = lossy(&place.dest_path()).into_owned();
                Err(Failure::Message(format!("cannot overwrite directory '{dest}' with a hard link")))
            };
            if let Err(failure) = cleared {
                return self.report_failure(state, failure);
            }
        }
        let existing = existing.filter(|e| !e.is_dir());
        let new = existing.is_none();
        let flags = existing.filter(|_| !new).map(|e| self.link_flags(&first.source, e)).unwrap_or_default();
        let item = Item { new, flags, ..self.item(FileKind::File, Update::HardLink) };
        self.tell(state, place, item, None, Some(&first.place));
        let Some(dir) = destination.to_change() else { return };
        let first_dir = match first.place.open_dir() {
            Ok(fd) => fd,
            Err(errno) => return cx.report(WalkError::io(first.place.dest_path(), Op::Tool("link"), errno)),
        };
        match self.make_link(place, dir, existing.is_some(), (first_dir.as_fd(), first.place.name())) {
            Ok(()) => self.totals.done(1, 0),
            Err(errno) => cx.report(WalkError::io(place.dest_path(), Op::Tool("link"), errno)),
        }
    }

    /// What rsync itemizes for a later name linked over an existing file: how that file differed
    /// from the source (its size, and the attributes kept; extended attributes not compared).
    pub(super) fn link_flags(&self, source: &Metadata, existing: &Metadata) -> Flags {
        struct Attributes;
        impl Probe for Attributes {
            fn same_data(&mut self) -> bool {
                true
            }
            fn xattrs_differ(&mut self, _acls: bool) -> bool {
                false
            }
        }
        let mut flags = self.judge().attr_flags(source, existing, &mut Attributes);
        if existing.kind() == FileKind::File && existing.size != source.size {
            flags |= Flags::SIZE;
        }
        flags
    }

    /// Makes `place` (in `dir`, where something is if `replace`) another name of `from`: linked
    /// directly, or, over an existing entry, as a temporary link renamed over it.
    pub(super) fn make_link(
        &self,
        place: &Place,
        dir: &DirFd,
        replace: bool,
        (from_dir, from_name): (BorrowedFd<'_>, &CStr),
    ) -> Result<(), Errno> {
        let name = place.name();
        let link_to = |to: &CStr| linkat(from_dir, from_name, dir, to, AtFlags::empty());
        let linked = if replace {
            Err(Errno::EXIST)
        } else {
            link_to(name).inspect(|()| {
                // An interrupted run may have been copying this name as the first of its inode:
                // its leftover temporary is not replaced by a link, so remove it (a fresh
                // directory cannot hold one).
                if !place.fresh() {
                    discard(dir, &temp_name(name));
                }
            })
        };
        match linked {
            Err(Errno::EXIST) => {
                let temp = temp_name(name);
                create_fresh(dir, &temp, link_to)
                    .and_then(|()| rename_into_place(dir, &temp, name).inspect_err(|_| discard(dir, &temp)))
            }
            other => other,
        }
    }

    fn link_failed(&self, cx: &mut Cx<'_, Self>, place: &Place, errno: Errno) {
        cx.report(WalkError::io(place.source_path(), Op::Tool("copy"), errno));
    }

    /// A later name whose first name is now settled.
    pub(super) fn link_later(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        place: Place,
        first: Result<Arc<Placed>, Errno>,
    ) {
        let first = match first {
            Ok(first) => first,
            Err(errno) => return self.link_failed(cx, &place, errno),
        };
        let Some((destination, existing)) = self.destination(cx, &place, "link") else { return };
        self.link(cx, state, &place, &destination, existing.as_ref(), &first);
    }

    /// `--checksum`: whether the destination file `name` in `dir` has the source's content. Neither
    /// side's access time moves, where permitted.
    pub(super) fn same_content(
        &self,
        state: &mut TransferState,
        entry: &Entry<'_, DestDir>,
        meta: &Metadata,
        dir: &DirFd,
        name: &CStr,
    ) -> bool {
        let noatime = self.euid == 0 || meta.uid == self.euid;
        let Ok(src) = open_source(entry, meta, noatime) else { return false };
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let dest = openat(dir, name, flags | OFlags::NOATIME, rustix::fs::Mode::empty())
            .or_else(|_| openat(dir, name, flags, rustix::fs::Mode::empty()));
        let Ok(dest) = dest else { return false };
        let hash = |fd: &OwnedFd, state: &mut TransferState| {
            super::data::hash_of(fd.as_fd(), 0..meta.size, &mut state.scratch).ok()
        };
        let source_hash = hash(&src, state);
        source_hash.is_some() && source_hash == hash(&dest, state)
    }
}

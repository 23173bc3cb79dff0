//! The copy visitor: directories are created as they are visited and finished (attributes) when
//! left; everything else is copied as it is visited.

use super::attrs::{self, chmod_nofollow};
use super::data::Scratch;
use super::dest::{DestDir, Place, dest_dir_path};
use super::files::{FileChunk, at_source, lossy};
use super::links::{Arrival, Placed, Waiter};
use super::plan::{Plan, plan};
use super::temp::{create_fresh, discard, is_temp_name, rename_into_place, temp_name};
use super::{Transfer, listing, special};
use crate::common::{Mirror, lookup, print_error, wire};
use canopy_engine::output::OutBuf;
use canopy_engine::{Action, Cx, DirFd, DirNode, Entry, Errno, FileKind, Metadata, Op, Visitor, WalkError};
use rustix::fd::{AsFd, BorrowedFd};
use rustix::fs::{AtFlags, Mode, fsync, linkat, mkdirat, readlinkat, statat, unlinkat};
use serde::{Deserialize, Serialize};
use std::ffi::CStr;
use std::sync::Arc;

/// One worker's share of a transfer.
pub struct TransferState {
    pub(super) scratch: Scratch,
    listing: Option<OutBuf>,
    /// Failures without an errno (a source that changed, a verification mismatch): shown here and
    /// counted toward the exit status at the end.
    pub failures: u64,
}

/// Follow-up work on the pool, plain data that any process can run.
#[derive(Serialize, Deserialize)]
pub enum Job {
    /// A piece of a big file.
    Chunk(FileChunk),
    /// A later name of a multiply linked file, whose first name was copied (or failed).
    Link {
        place: Place,
        #[serde(with = "wire::shared_outcome")]
        first: Result<Arc<Placed>, Errno>,
    },
}

/// A failure to report: a system call's, or one only words describe.
pub enum Failure {
    Io { path: Vec<u8>, verb: &'static str, errno: Errno },
    Message(String),
}

impl Failure {
    pub fn io(path: Vec<u8>, verb: &'static str, errno: Errno) -> Self {
        Failure::Io { path, verb, errno }
    }
}

impl Transfer {
    /// Shows a failure and counts it.
    pub(super) fn report_failure(&self, state: &mut TransferState, failure: Failure) {
        match failure {
            Failure::Io { path, verb, errno } => {
                print_error(self.tool, WalkError::io(path, Op::Tool(verb), errno));
            }
            Failure::Message(message) => print_error(self.tool, message),
        }
        state.failures += 1;
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
            cx.spawn_reserved(reservation, Job::Link { place, first: first.clone() });
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
        self.settle(cx, link, Ok(Arc::new(Placed { place: place.clone(), id })));
    }

    fn root_place(&self, cx: &mut Cx<'_, Self>, entry: &Entry<'_, DestDir>) -> Option<Place> {
        let pair = self.roots.iter().find(|pair| pair.source == entry.name_cstr().to_bytes())?;
        match Place::root(Arc::clone(pair)) {
            Ok(place) => Some(place),
            Err(errno) => {
                cx.report(WalkError::io(pair.dest.clone(), Op::Tool("create"), errno));
                None
            }
        }
    }

    /// Creates (or finds) the destination of a directory; `Some(fresh)` if it is there to fill.
    fn make_dir(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, place: &Place) -> Option<bool> {
        if self.options.dry_run && place.fresh() {
            listing::line(&mut state.listing, "mkdir", &place.dest_path(), None);
            return Some(true);
        }
        let dir = match place.open_dir() {
            Ok(dir) => dir,
            Err(errno) => {
                cx.report(WalkError::io(place.dest_path(), Op::Tool("create"), errno));
                return None;
            }
        };
        let follow = matches!(place, Place::Root { pair, .. } if pair.follow_dest);
        let flags = if follow { AtFlags::empty() } else { AtFlags::SYMLINK_NOFOLLOW };
        let name = place.name();
        let created = if self.options.dry_run {
            Err(Errno::EXIST)
        } else {
            mkdirat(&dir, name, Mode::from_raw_mode(0o700))
        };
        let existing = match created {
            Ok(()) => return Some(true),
            Err(Errno::EXIST) => statat(&dir, name, flags),
            Err(errno) => Err(errno),
        };
        match existing {
            Ok(st) if st.st_mode & libc::S_IFMT == libc::S_IFDIR => {
                self.make_writable(&dir, name, &st);
                Some(false)
            }
            Err(Errno::NOENT) if self.options.dry_run => {
                listing::line(&mut state.listing, "mkdir", &place.dest_path(), None);
                Some(true)
            }
            Ok(_) if self.options.replace_non_directories => {
                if self.options.dry_run {
                    listing::line(&mut state.listing, "replace", &place.dest_path(), None);
                    return Some(true);
                }
                let replaced = unlinkat(&dir, name, AtFlags::empty())
                    .and_then(|()| mkdirat(&dir, name, Mode::from_raw_mode(0o700)));
                match replaced {
                    Ok(()) => Some(true),
                    Err(errno) => {
                        cx.report(WalkError::io(place.dest_path(), Op::Tool("create"), errno));
                        None
                    }
                }
            }
            Ok(_) => {
                let message = format!(
                    "cannot overwrite non-directory '{}' with directory '{}'",
                    lossy(&place.dest_path()),
                    lossy(&place.source_path())
                );
                self.report_failure(state, Failure::Message(message));
                None
            }
            Err(errno) => {
                cx.report(WalkError::io(place.dest_path(), Op::Tool("create"), errno));
                None
            }
        }
    }

    /// An existing destination directory left read-only (by an earlier, completed run) is opened up
    /// for its owner while it is filled; `leave_dir` sets its real mode again.
    fn make_writable(&self, dir: &DirFd, name: &CStr, st: &rustix::fs::Stat) {
        let owner_rwx = 0o700;
        if self.euid != 0 && st.st_uid == self.euid && st.st_mode & owner_rwx != owner_rwx {
            // If this fails, creating entries inside fails and is reported there.
            let _ = chmod_nofollow(dir, name, (st.st_mode & 0o7777) | owner_rwx);
        }
    }

    fn enter_dir(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, place: Place) -> Action {
        let Some(fresh) = self.make_dir(cx, state, &place) else { return Action::Prune };
        let data = match place {
            Place::Root { pair, .. } => DestDir { fresh, ..DestDir::of_root(pair) },
            Place::Child { .. } | Place::Beneath { .. } => DestDir { fresh, ..DestDir::default() },
        };
        cx.set_dir_data(data);
        Action::Continue
    }

    /// Copies a non-directory, unless the destination already has it.
    fn copy_entry(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        entry: &Entry<'_, DestDir>,
        meta: &Metadata,
        place: Place,
    ) {
        if meta.kind() == FileKind::File {
            self.counters.found(meta.size);
        }
        let dir = if self.options.dry_run && place.fresh() {
            None
        } else {
            match place.open_dir() {
                Ok(dir) => Some(dir),
                Err(errno) => return cx.report(WalkError::io(place.dest_path(), Op::Tool("create"), errno)),
            }
        };
        let existing = match &dir {
            Some(dir) if !place.fresh() => match lookup(dir, place.name()) {
                Ok(existing) => existing,
                Err(errno) => return cx.report(WalkError::io(place.dest_path(), Op::Stat, errno)),
            },
            _ => None,
        };
        let link = (meta.nlink > 1 && !entry.is_root()).then(|| meta.file_id());
        if let (Some(id), Some(source_dir)) = (link, place.source_dir()) {
            let arrival = self.links.arrive(id, meta.nlink, || Waiter {
                reservation: cx.reserve(source_dir),
                place: place.clone(),
            });
            match arrival {
                // A directory in the way is refused below, as for any file.
                Arrival::First if existing.is_none_or(|e| !e.is_dir()) => {
                    if let (Some(shared), Some(dir)) = (self.shared_links(), &dir) {
                        match shared.find(meta) {
                            Ok(Some(meeting)) => {
                                return self.adopt(cx, state, &place, dir, existing.as_ref(), link, &meeting);
                            }
                            Ok(None) => {}
                            Err(errno) => self.meeting_failed(state, shared.area(), errno),
                        }
                    }
                }
                Arrival::First => {}
                Arrival::Link(first) => {
                    return self.link(cx, state, &place, dir.as_ref(), existing.as_ref(), &first);
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
        let decision = plan(meta, existing.as_ref(), self.options.compare, &self.owner, || match &dir {
            Some(dir) if meta.kind() == FileKind::Symlink => {
                readlinkat(dir, place.name(), Vec::new()).is_ok_and(|t| t.as_bytes() == target.as_slice())
            }
            Some(dir) => self.same_content(state, entry, meta, dir, place.name()),
            None => false,
        });
        let existing_id = existing.map(|m| m.file_id());
        match (decision, dir) {
            (Plan::Skip, _) => {
                self.counters.copied(0, meta.size);
                self.settle_placed(cx, state, link, &place, existing_id, meta);
            }
            (Plan::Blocked, _) if self.options.dry_run && self.options.blocking_directories_pruned => {
                listing::line(&mut state.listing, "replace", &place.dest_path(), None);
            }
            (Plan::Blocked, _) => {
                let message = format!(
                    "cannot overwrite directory '{}' with non-directory '{}'",
                    lossy(&place.dest_path()),
                    lossy(&entry.path())
                );
                self.fail(cx, state, link, Failure::Message(message));
            }
            (plan, None) | (plan, Some(_)) if self.options.dry_run => {
                let verb = match plan {
                    Plan::Refresh => "attrs",
                    Plan::Replace => "replace",
                    _ => "create",
                };
                listing::line(&mut state.listing, verb, &place.dest_path(), None);
                self.settle_placed(
                    cx,
                    state,
                    link,
                    &place,
                    (plan == Plan::Refresh).then_some(existing_id).flatten(),
                    meta,
                );
            }
            (Plan::Refresh, Some(dir)) => match attrs::apply_by_name(&dir, place.name(), meta, &self.owner) {
                Ok(()) => {
                    self.counters.copied(0, meta.size);
                    self.settle_placed(cx, state, link, &place, existing_id, meta);
                }
                Err(e) => self.fail(cx, state, link, Failure::io(place.dest_path(), e.verb, e.errno)),
            },
            (_, Some(dir)) if meta.kind() == FileKind::File => {
                self.copy_file(cx, state, entry, place, &dir, link)
            }
            (_, Some(dir)) => match special::make(&dir, place.name(), meta, &target, &self.owner) {
                Ok(()) => {
                    self.counters.copied(1, 0);
                    let id =
                        link.and_then(|_| lookup(&dir, place.name()).ok().flatten()).map(|m| m.file_id());
                    self.settle_placed(cx, state, link, &place, id, meta);
                }
                Err(e) => self.fail(cx, state, link, Failure::io(place.dest_path(), e.verb, e.errno)),
            },
            (_, None) => unreachable!("only a dry run has no destination directory"),
        }
    }

    /// Makes `place` another name of the copy `first` (the first name of the same source inode).
    fn link(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        place: &Place,
        dir: Option<&DirFd>,
        existing: Option<&Metadata>,
        first: &Placed,
    ) {
        if existing.is_some_and(|e| Some(e.file_id()) == first.id) {
            return;
        }
        // In a dry run of a sync that deletes, a directory in the way is listed for deletion.
        let pruned = self.options.dry_run && self.options.blocking_directories_pruned;
        if existing.is_some_and(Metadata::is_dir) && !pruned {
            let message =
                format!("cannot overwrite directory '{}' with a hard link", lossy(&place.dest_path()));
            return self.report_failure(state, Failure::Message(message));
        }
        let Some(dir) = dir.filter(|_| !self.options.dry_run) else {
            let first_path = first.place.dest_path();
            return listing::line(&mut state.listing, "link", &place.dest_path(), Some(&first_path));
        };
        let first_dir = match first.place.open_dir() {
            Ok(fd) => fd,
            Err(errno) => return cx.report(WalkError::io(first.place.dest_path(), Op::Tool("link"), errno)),
        };
        match self.make_link(place, dir, existing.is_some(), (first_dir.as_fd(), first.place.name())) {
            Ok(()) => self.counters.copied(1, 0),
            Err(errno) => cx.report(WalkError::io(place.dest_path(), Op::Tool("link"), errno)),
        }
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
    fn link_later(
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
        let dir = if self.options.dry_run && place.fresh() {
            None
        } else {
            match place.open_dir() {
                Ok(dir) => Some(dir),
                Err(errno) => return cx.report(WalkError::io(place.dest_path(), Op::Tool("link"), errno)),
            }
        };
        let existing = match &dir {
            Some(dir) if !place.fresh() => match lookup(dir, place.name()) {
                Ok(existing) => existing,
                Err(errno) => return cx.report(WalkError::io(place.dest_path(), Op::Stat, errno)),
            },
            _ => None,
        };
        self.link(cx, state, &place, dir.as_ref(), existing.as_ref(), &first);
    }
}

impl Transfer {
    /// Gives the copy of a directory everything in which is done its owner, permissions, xattrs
    /// and times (and flushes it, with `--fsync`); returns the failures.
    pub(super) fn finish_dir(&self, dir: &DirNode<DestDir>) -> Vec<WalkError> {
        let dest = match Mirror::open(dir, &DestDir::mirror) {
            Ok(dest) => dest,
            Err(errno) => {
                return vec![WalkError::io(dest_dir_path(dir), Op::Tool("set the attributes of"), errno)];
            }
        };
        let mut errors = Vec::new();
        if let Some(meta) = dir.metadata() {
            let source = dir.open().ok();
            let source = source.as_ref().map(|fd| fd.as_fd());
            if let Err(e) = attrs::apply(dest.as_fd(), source, meta, &self.owner) {
                errors.push(WalkError::io(dest_dir_path(dir), Op::Tool(e.verb), e.errno));
            }
        }
        if self.options.fsync
            && let Err(errno) = fsync(&dest)
        {
            errors.push(WalkError::io(dest_dir_path(dir), Op::Tool("flush"), errno));
        }
        errors
    }
}

impl Visitor for Transfer {
    type State = TransferState;
    type DirData = DestDir;
    type Job = Job;

    fn new_state(&self) -> TransferState {
        TransferState { scratch: Scratch::default(), listing: listing::buffer(&self.listing), failures: 0 }
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, entry: &Entry<'_, DestDir>) -> Action {
        let place = match entry.dir() {
            Some(dir) => {
                if is_temp_name(entry.name_cstr().to_bytes()) {
                    let path = entry.path();
                    print_error(
                        self.tool,
                        format_args!("skipping '{}': a leftover temporary of canopy", lossy(&path)),
                    );
                    return Action::Prune;
                }
                Place::child(dir, entry.name_cstr())
            }
            None => match self.root_place(cx, entry) {
                Some(place) => place,
                None => return Action::Prune,
            },
        };
        let meta = match entry.metadata() {
            Ok(meta) => *meta,
            Err(errno) => {
                cx.report(WalkError::io(entry.path(), Op::Stat, errno));
                return Action::Prune;
            }
        };
        if meta.is_dir() {
            return self.enter_dir(cx, state, place);
        }
        self.copy_entry(cx, state, entry, &meta, place);
        Action::Prune
    }

    fn leave_dir(&self, cx: &mut Cx<'_, Self>, _: &mut TransferState, dir: &Arc<DirNode<DestDir>>) {
        if !self.options.dry_run {
            if self.distributed && dir.is_root() {
                // Its copy may hold the link area, touched until the end (see shared_links).
                self.deferred_roots.lock().unwrap_or_else(|e| e.into_inner()).push(Arc::clone(dir));
            } else {
                self.finish_dir(dir).into_iter().for_each(|error| cx.report(error));
            }
        }
        dir.data.mirror.close();
    }

    fn stand_in_data(&self, dir: &DirNode<DestDir>) -> DestDir {
        DestDir::lend(dir)
    }

    fn absorb_completed(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        dir: &Arc<DirNode<DestDir>>,
        from: DestDir,
    ) {
        self.absorb_chunks(cx, state, dir, from);
    }

    fn run_job(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, job: Job) {
        match job {
            Job::Chunk(chunk) => self.run_chunk(cx, state, chunk),
            Job::Link { place, first } => self.link_later(cx, state, place, first),
        }
    }

    fn error(&self, error: &WalkError) -> bool {
        print_error(self.tool, error);
        true
    }
}

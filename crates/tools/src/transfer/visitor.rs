//! The copy visitor: directories are created as they are visited and finished (attributes) when
//! left; everything else is copied as it is visited ([`super::entries`]).

use super::attrs::{self, Wanted, chmod_nofollow};
use super::data::Scratch;
use super::dest::{DestDir, Place, dest_dir_path};
use super::destination::Destination;
use super::files::{FileChunk, lossy};
use super::itemize::{Item, Update};
use super::links::Placed;
use super::listing::Named;
use super::plan::Judge;
use super::policy::masked_mode;
use super::{Transfer, marker};
use crate::common::{Mirror, print_error, wire};
use canopy_engine::output::OutBuf;
use canopy_engine::{
    Action, Cx, DirFd, DirNode, DistributedVisitor, Entry, Errno, FileKind, Metadata, Op, Visitor, WalkError,
};
use canopy_util::temp_name::is_temp_name;
use rustix::fd::AsFd;
use rustix::fs::fsync;
use serde::{Deserialize, Serialize};
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// One worker's share of a transfer.
pub struct TransferState {
    pub(super) scratch: Scratch,
    pub(super) out: Option<OutBuf>,
    /// Failures without an errno (a source that changed, a verification mismatch): shown here and
    /// counted toward the exit status at the end.
    pub failures: u64,
}

/// Follow-up work on the pool, plain data that any process can run.
#[derive(Serialize, Deserialize)]
pub enum CopyJob {
    /// Pieces of a big file, copied one after the other.
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

/// What the destination had where a directory goes.
enum DirState {
    /// Made in this run (or, in a dry run, would be).
    Made,
    /// Already there: its metadata, and the directory holding it.
    Found(Metadata, Destination),
}

impl Transfer {
    /// Shows a failure and counts it.
    pub(super) fn report_failure(&self, state: &mut TransferState, failure: Failure) {
        match failure {
            Failure::Io { path, verb, errno } => {
                if errno == Errno::NOENT && verb == "read" {
                    self.vanished.fetch_add(1, Ordering::Relaxed);
                }
                print_error(self.tool, WalkError::io(path, Op::Tool(verb), errno));
            }
            Failure::Message(message) => print_error(self.tool, message),
        }
        self.problems.fetch_add(1, Ordering::Relaxed);
        state.failures += 1;
    }

    /// How the destination's existing entries are judged.
    pub(super) fn judge(&self) -> Judge<'_> {
        Judge { keep: self.options.keep, existing: self.options.existing, owner: &self.owner }
    }

    /// Tells what was done (or would be) to the entry at `place`, and counts it.
    pub(super) fn tell(
        &self,
        state: &mut TransferState,
        place: &Place,
        item: Item,
        target: Option<&[u8]>,
        first: Option<&Place>,
    ) {
        if item.new {
            self.totals.created(item.kind);
        }
        let (Some(listing), Some(out)) = (&self.listing, &mut state.out) else { return };
        match listing.style() {
            super::Style::Cp if item.update != Update::Attributes => {
                listing.copied(out, &place.source_path(), &place.dest_path());
            }
            super::Style::Cp => {}
            super::Style::Rsync { .. } => {
                let name = place.list_name();
                let first = first.map(Place::list_name);
                let named = Named {
                    name: &name,
                    is_dir: item.kind == FileKind::Dir,
                    target,
                    first: first.as_deref(),
                };
                listing.item(out, &item, &named);
            }
        }
    }

    /// An item of `kind` as this transfer itemizes it.
    pub(super) fn item(&self, kind: FileKind, update: Update) -> Item {
        Item { kind, update, new: false, flags: Default::default(), times_kept: self.options.keep.times }
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

    /// Creates (or finds) the destination of a directory; `None` if it cannot be filled.
    fn make_dir(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, place: &Place) -> Option<DirState> {
        if matches!(place, Place::Root { pair, .. } if pair.made) {
            return Some(DirState::Made);
        }
        let report = |cx: &mut Cx<'_, Self>, errno| {
            cx.report(WalkError::io(place.dest_path(), Op::Tool("create"), errno));
            None
        };
        let destination = match Destination::open(place, self.options.dry_run) {
            Ok(destination) => destination,
            Err(errno) => return report(cx, errno),
        };
        let follow = matches!(place, Place::Root { pair, .. } if pair.follow_dest);
        let name = place.name();
        match destination.make_dir(name, follow) {
            Ok(None) => Some(DirState::Made),
            Ok(Some(found)) if found.is_dir() => Some(DirState::Found(found, destination)),
            Ok(Some(_)) if self.options.replace_non_directories => match destination.replace_by_dir(name) {
                Ok(()) => Some(DirState::Made),
                Err(errno) => report(cx, errno),
            },
            Ok(Some(_)) => {
                let message = format!(
                    "cannot overwrite non-directory '{}' with directory '{}'",
                    lossy(&place.dest_path()),
                    lossy(&place.source_path())
                );
                self.report_failure(state, Failure::Message(message));
                None
            }
            Err(errno) => report(cx, errno),
        }
    }

    /// An existing destination directory left without write permission for its owner (by an
    /// earlier, completed run) is opened up while it is filled; returns its permissions to put
    /// back. `leave_dir` sets its final mode.
    fn make_writable(&self, place: &Place, found: &Metadata, destination: &Destination) -> Option<u32> {
        let owner_rwx = 0o700;
        if self.euid == 0 || found.uid != self.euid || found.mode & owner_rwx == owner_rwx {
            return None;
        }
        let dir = destination.to_change()?;
        // If this fails, creating entries inside fails and is reported there.
        chmod_nofollow(dir, place.name(), found.permissions() | owner_rwx).ok()?;
        Some(found.permissions())
    }

    fn enter_dir(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        entry: &Entry<'_, DestDir>,
        meta: &Metadata,
        place: Place,
    ) -> Action {
        let Some(found) = self.make_dir(cx, state, &place) else { return Action::Prune };
        let (item, fresh, restore_mode) = match found {
            DirState::Made => (Item { new: true, ..self.item(FileKind::Dir, Update::Local) }, true, None),
            DirState::Found(dest, destination) => {
                let mut probe = self.probe(state, entry, meta, &place, destination.to_look_at());
                let flags = self.judge().attr_flags(meta, &dest, &mut probe);
                let item = Item { flags, ..self.item(FileKind::Dir, Update::Attributes) };
                (item, false, self.make_writable(&place, &dest, &destination))
            }
        };
        self.tell(state, &place, item, None, None);
        let data = match place {
            Place::Root { pair, .. } => DestDir { fresh, restore_mode, ..DestDir::of_root(pair) },
            Place::Child { .. } | Place::Beneath { .. } => {
                DestDir { fresh, restore_mode, ..DestDir::default() }
            }
        };
        cx.set_dir_data(data);
        Action::Continue
    }

    /// Gives the copy of a directory everything in which is done its owner, permissions, xattrs
    /// and times (and flushes it, with `--fsync`); returns the failures. `completed`: nothing
    /// failed anywhere (a root's marker of a copy in progress goes).
    pub(super) fn finish_dir(&self, dir: &DirNode<DestDir>, completed: bool) -> Vec<WalkError> {
        let dest = match Mirror::open(dir, &DestDir::mirror) {
            Ok(dest) => dest,
            Err(errno) => {
                return vec![WalkError::io(dest_dir_path(dir), Op::Tool("set the attributes of"), errno)];
            }
        };
        let mut errors = Vec::new();
        if let Some(meta) = dir.metadata() {
            if completed && dir.is_root() && dir.data.root.as_ref().is_some_and(|pair| pair.marked) {
                marker::remove(&dest);
            }
            let source = dir.open().ok();
            let source = source.as_ref().map(|fd| fd.as_fd());
            let wanted =
                Wanted { meta, keep: self.options.keep, mode: self.dir_mode(dir, meta, &dest), owner: None };
            if let Err(e) = attrs::apply(dest.as_fd(), source, &wanted, &self.owner) {
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

    /// The permission bits a directory's copy ends with: the source's when kept; for a directory
    /// made in this run, the source's masked by the umask (with the setgid bit it inherited from
    /// its parent); for one that was there, those it had.
    fn dir_mode(&self, dir: &DirNode<DestDir>, meta: &Metadata, dest: &DirFd) -> Option<u32> {
        if self.options.keep.perms {
            return Some(meta.permissions());
        }
        if !dir.data.fresh {
            return dir.data.restore_mode;
        }
        let inherited = rustix::fs::fstat(dest).map_or(0, |st| st.st_mode & libc::S_ISGID);
        Some(masked_mode(meta, self.options.umask, self.options.cp_rules) | inherited)
    }

    /// Whether the copy is complete so far: nothing failed (cp's marker goes then).
    pub(super) fn completed(&self) -> bool {
        self.problems.load(Ordering::Relaxed) == 0
    }
}

impl Visitor for Transfer {
    type State = TransferState;
    type DirData = DestDir;
    type Job = CopyJob;

    fn new_state(&self) -> TransferState {
        TransferState {
            scratch: Scratch::default(),
            out: self.listing.as_deref().map(super::Listing::buffer),
            failures: 0,
        }
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
        if entry.follows() && meta.kind() == FileKind::Symlink {
            // A link to follow (cp -L) that leads nowhere: cp fails on it, it copies no symlink.
            let errno = match entry.dir_fd() {
                Some(dir) => canopy_engine::sys::stat_at(dir, entry.name_cstr(), true).err(),
                None => canopy_engine::sys::stat_path(&entry.path(), true).err(),
            };
            cx.report(WalkError::io(entry.path(), Op::Tool("stat"), errno.unwrap_or(Errno::NOENT)));
            return Action::Prune;
        }
        if let Some(filter) = &self.options.filter
            && !(entry.is_root() && place.pair().list_name.is_empty())
            && filter.excluded(&place.list_name(), meta.is_dir())
        {
            return Action::Prune;
        }
        self.totals.listed(meta.kind(), meta.size);
        if !self.options.scope.includes(meta.kind()) {
            if let (Some(listing), Some(out)) = (&self.listing, &mut state.out) {
                listing.note(out, "skipping non-regular file \"", &place.list_name(), "\"");
            }
            return Action::Prune;
        }
        if meta.is_dir() {
            return self.enter_dir(cx, state, entry, &meta, place);
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
                self.finish_dir(dir, self.completed()).into_iter().for_each(|error| cx.report(error));
            }
        }
        dir.data.mirror.close();
    }

    fn run_job(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, job: CopyJob) {
        match job {
            CopyJob::Chunk(chunk) => self.run_chunk(cx, state, chunk),
            CopyJob::Link { place, first } => self.link_later(cx, state, place, first),
        }
    }

    fn error(&self, error: &WalkError) -> bool {
        let source_side = matches!(
            error.kind,
            canopy_engine::ErrorKind::Io { op: Op::Stat | Op::OpenDir | Op::ReadDir, errno: Errno::NOENT }
        );
        if source_side {
            self.vanished.fetch_add(1, Ordering::Relaxed);
        }
        self.problems.fetch_add(1, Ordering::Relaxed);
        print_error(self.tool, error);
        true
    }
}

impl DistributedVisitor for Transfer {
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
}

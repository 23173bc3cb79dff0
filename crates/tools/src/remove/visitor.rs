use super::conduct::Conduct;
use super::unlink::{is_empty_dir, remove_at, remove_path};
use super::{RemoveDir, Selection, Selector};
use crate::common::guard::{Protected, last_component_is_dot};
use crate::common::{print_error, quote};
use canopy_engine::output::{OutBuf, Sink};
use canopy_engine::{
    Action, Cx, DirNode, DistributedVisitor, Entry, Errno, ErrorKind, FileKind, Op, Visitor, WalkError,
};
use rustix::fd::AsFd;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The removal visitor; `S` chooses what goes.
pub struct Remover<S> {
    pub selector: S,
    tool: &'static str,
    /// `--dry-run`: where to list what would go, and the prefix of each line.
    listing: Option<(Arc<Sink>, &'static [u8])>,
    conduct: Conduct,
    protected: Protected,
    /// Directories the engine could not read: their removal fails with "not empty", already explained.
    unreadable: Mutex<HashSet<Vec<u8>>>,
}

/// One worker's share: its output buffer (the dry run's listing or `-v`'s lines) and counts.
pub struct RemoveState {
    out: Option<OutBuf>,
    pub removed: u64,
    /// Entries refused (`/`, `.`, the current directory's ancestors, another file system): each
    /// reported, each counts as an error.
    pub refused: u64,
}

impl<S: Selector> Remover<S> {
    pub fn new(
        selector: S,
        tool: &'static str,
        listing: Option<(Arc<Sink>, &'static [u8])>,
        protected: Protected,
    ) -> Self {
        Remover {
            selector,
            tool,
            listing,
            conduct: Conduct::default(),
            protected,
            unreadable: Mutex::default(),
        }
    }

    /// The same removal, talking to the user as `conduct` says.
    pub fn with_conduct(mut self, conduct: Conduct) -> Self {
        self.conduct = conduct;
        self
    }

    fn list(&self, state: &mut RemoveState, path: &[u8]) {
        let (Some(out), Some((_, prefix))) = (&mut state.out, &self.listing) else { return };
        let buf = out.buf();
        buf.extend_from_slice(prefix);
        buf.extend_from_slice(path);
        buf.push(b'\n');
        out.end_record();
    }

    /// `-v`'s line for an entry just removed.
    fn removed(&self, state: &mut RemoveState, path: &[u8], is_dir: bool) {
        state.removed += 1;
        let Some(out) = state.out.as_mut().filter(|_| self.conduct.verbose.is_some()) else { return };
        let what = if is_dir { "removed directory" } else { "removed" };
        let buf = out.buf();
        buf.extend_from_slice(format!("{what} {}\n", quote(path)).as_bytes());
        out.end_record();
    }

    fn refuse(&self, state: &mut RemoveState, message: std::fmt::Arguments<'_>) {
        print_error(self.tool, message);
        state.refused += 1;
    }

    /// A directory chosen for removal must not be `/`, the current directory or above it, nor a
    /// starting point spelled with a final `.` or `..`.
    fn refused(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut RemoveState,
        entry: &Entry<'_, RemoveDir<S::Data>>,
    ) -> bool {
        if entry.is_root() && last_component_is_dot(entry.name_cstr().to_bytes()) {
            let path = quote(entry.name_cstr().to_bytes());
            self.refuse(state, format_args!("refusing to remove '.' or '..' directory: skipping {path}"));
            return true;
        }
        let id = match entry.metadata() {
            Ok(meta) => meta.file_id(),
            Err(errno) => {
                cx.report(WalkError::io(entry.path(), Op::Stat, errno));
                return true;
            }
        };
        if !self.protected.contains(id) {
            return false;
        }
        let path = entry.path();
        if self.protected.is_root(id) {
            let same = if path == b"/" { String::new() } else { " (same as '/')".to_string() };
            self.refuse(
                state,
                format_args!("it is dangerous to operate recursively on {}{same}", quote(&path)),
            );
            print_error(self.tool, "canopy never removes '/' or the current directory's ancestors");
        } else {
            self.refuse(
                state,
                format_args!("refusing to remove {}: it holds the current directory", quote(&path)),
            );
        }
        true
    }

    /// `--one-file-system`: a directory below an argument on another file system is skipped.
    fn on_other_file_system(&self, state: &mut RemoveState, entry: &Entry<'_, RemoveDir<S::Data>>) -> bool {
        if !self.conduct.one_file_system {
            return false;
        }
        let root_dev = entry.dir().and_then(|dir| dir.root_dev());
        let dev = entry.metadata().map(|meta| meta.dev).ok();
        if root_dev.is_none() || dev.is_none() || root_dev == dev {
            return false;
        }
        let path = quote(&entry.path());
        self.refuse(state, format_args!("skipping {path}, since it's on a different device"));
        true
    }

    /// Asks before an entry goes (`-i`, write-protected files); a directory that is not empty is
    /// asked about twice, on the way in and on the way out.
    fn allowed(&self, entry: &Entry<'_, RemoveDir<S::Data>>, descend: bool) -> bool {
        let Some(prompter) = &self.conduct.prompter else { return true };
        let Ok(meta) = entry.metadata() else { return true };
        prompter.allows(entry.dir_fd(), entry.name_cstr(), &entry.path(), meta, descend)
    }

    fn remove_file(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut RemoveState,
        entry: &Entry<'_, RemoveDir<S::Data>>,
    ) {
        let path = entry.path();
        let kind = entry.kind();
        if !self.selector.admit(&path, kind) {
            if let Some(dir) = entry.dir() {
                dir.data.failed.store(true, Ordering::Relaxed);
            }
            return;
        }
        if self.listing.is_some() || self.selector.dry_run() {
            self.list(state, &path);
            self.selector.removed(&path, kind);
            return;
        }
        let mark_failed = || {
            if let Some(dir) = entry.dir() {
                dir.data.failed.store(true, Ordering::Relaxed);
            }
        };
        if !self.allowed(entry, false) {
            // Declined: the directory holding it is still asked about, and cannot go (as rm).
            return;
        }
        let result = match entry.dir_fd() {
            Some(fd) => remove_at(fd, entry.name_cstr(), false),
            None => remove_path(entry.name_cstr().to_bytes(), false),
        };
        match result {
            Ok(()) => {
                self.removed(state, &path, false);
                self.selector.removed(&path, kind);
            }
            // Gone already (removed concurrently): what was asked for is true.
            Err(Errno::NOENT) => {
                state.removed += 1;
                self.selector.removed(&path, kind);
            }
            Err(errno) => {
                cx.report(WalkError::io(path, Op::Tool("remove"), errno));
                mark_failed();
            }
        }
    }

    /// A directory about to be entered and emptied: refusals, `--one-file-system` and `-i`.
    /// Returns the directory's data, or `None` to leave it (its parent then stays, quietly).
    fn enter_doomed(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut RemoveState,
        entry: &Entry<'_, RemoveDir<S::Data>>,
        inherited: bool,
    ) -> Option<RemoveDir<S::Data>> {
        let refused =
            (!inherited && self.refused(cx, state, entry)) || self.on_other_file_system(state, entry);
        let mut confirmed = false;
        let declined = !refused
            && self.conduct.prompter.is_some()
            && self.listing.is_none()
            && match is_empty_dir(entry.dir_fd(), entry.name_cstr()) {
                // An empty directory is asked about once: to remove it.
                Ok(true) => {
                    confirmed = self.allowed(entry, false);
                    !confirmed
                }
                _ => !self.allowed(entry, true),
            };
        if refused || declined {
            if let Some(dir) = entry.dir() {
                dir.data.failed.store(true, Ordering::Relaxed);
            }
            return None;
        }
        Some(RemoveDir { doomed: true, confirmed, failed: Default::default(), data: S::Data::default() })
    }
}

impl<S: Selector> Visitor for Remover<S> {
    type State = RemoveState;
    type DirData = RemoveDir<S::Data>;
    type Job = ();

    fn new_state(&self) -> RemoveState {
        let sink = match (&self.listing, &self.conduct.verbose) {
            (Some((sink, _)), _) | (None, Some(sink)) => Some(Arc::clone(sink)),
            (None, None) => None,
        };
        RemoveState { out: sink.map(OutBuf::new), removed: 0, refused: 0 }
    }

    fn visit(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut RemoveState,
        entry: &Entry<'_, Self::DirData>,
    ) -> Action {
        let inherited = entry.dir().is_some_and(|dir| dir.data.doomed);
        if inherited && self.selector.spare(entry) {
            if let Some(dir) = entry.dir() {
                dir.data.failed.store(true, Ordering::Relaxed);
            }
            return Action::Prune;
        }
        if !inherited {
            match self.selector.select(cx, entry) {
                Selection::Remove => {}
                Selection::Keep(data) => {
                    cx.set_dir_data(RemoveDir {
                        doomed: false,
                        confirmed: false,
                        failed: Default::default(),
                        data,
                    });
                    return Action::Continue;
                }
                Selection::Skip => return Action::Prune,
            }
        }
        if entry.kind() != FileKind::Dir {
            self.remove_file(cx, state, entry);
            return Action::Prune;
        }
        match self.enter_doomed(cx, state, entry, inherited) {
            Some(data) => {
                cx.set_dir_data(data);
                Action::Continue
            }
            None => Action::Prune,
        }
    }

    fn leave_dir(&self, cx: &mut Cx<'_, Self>, state: &mut RemoveState, dir: &Arc<DirNode<Self::DirData>>) {
        self.selector.leave(&dir.data.data);
        if !dir.data.doomed {
            return;
        }
        let failed = |dir: &Arc<DirNode<Self::DirData>>| {
            if let Some(parent) = dir.parent() {
                parent.data.failed.store(true, Ordering::Relaxed);
            }
        };
        if dir.data.failed.load(Ordering::Relaxed) || !self.selector.admit(dir.path(), FileKind::Dir) {
            failed(dir);
            return;
        }
        if self.listing.is_some() || self.selector.dry_run() {
            self.list(state, dir.path());
            self.selector.removed(dir.path(), FileKind::Dir);
            return;
        }
        let parent_fd = match dir.parent().map(|parent| parent.open()).transpose() {
            Ok(fd) => fd,
            Err(errno) => {
                cx.report(WalkError::io(dir.path().to_vec(), Op::Tool("remove"), errno));
                failed(dir);
                return;
            }
        };
        if let (Some(prompter), Some(meta)) = (&self.conduct.prompter, dir.metadata())
            && !dir.data.confirmed
            && !prompter.allows(parent_fd.as_ref().map(AsFd::as_fd), dir.name(), dir.path(), meta, false)
        {
            failed(dir);
            return;
        }
        let result = match &parent_fd {
            Some(fd) => remove_at(fd, dir.name(), true),
            None => remove_path(dir.path(), true),
        };
        match result {
            Ok(()) => {
                self.removed(state, dir.path(), true);
                self.selector.removed(dir.path(), FileKind::Dir);
            }
            Err(Errno::NOENT) => {
                state.removed += 1;
                self.selector.removed(dir.path(), FileKind::Dir);
            }
            Err(Errno::NOTEMPTY)
                if self.unreadable.lock().unwrap_or_else(|e| e.into_inner()).contains(dir.path()) =>
            {
                failed(dir);
            }
            Err(errno) => {
                cx.report(WalkError::io(dir.path().to_vec(), Op::Tool("remove"), errno));
                failed(dir);
            }
        }
    }

    fn error(&self, error: &WalkError) -> bool {
        let errno = error.errno();
        if self.conduct.force && matches!(errno, Some(Errno::NOENT | Errno::NOTDIR)) {
            // rm -f: what does not exist is already removed.
            return false;
        }
        if let ErrorKind::Io { op: Op::OpenDir | Op::ReadDir, .. } = error.kind {
            self.unreadable.lock().unwrap_or_else(|e| e.into_inner()).insert(error.path.clone());
        }
        match errno {
            Some(errno) if self.conduct.rm_messages => {
                let reason = canopy_engine::errno_message(errno);
                print_error(self.tool, format_args!("cannot remove {}: {reason}", quote(&error.path)));
            }
            _ => print_error(self.tool, error),
        }
        true
    }
}

impl<S: Selector> DistributedVisitor for Remover<S>
where
    S::Data: Serialize + DeserializeOwned,
{
    fn stand_in_data(&self, dir: &DirNode<Self::DirData>) -> Self::DirData {
        RemoveDir {
            doomed: dir.data.doomed,
            confirmed: dir.data.confirmed,
            failed: AtomicBool::new(false),
            data: self.selector.lend(dir),
        }
    }

    /// A directory that could not be read here cannot be emptied: the rank holding it is told, so
    /// its removal fails quietly there too (the reason was reported here).
    fn leave_stand_in(&self, _: &mut Cx<'_, Self>, _: &mut RemoveState, dir: &Arc<DirNode<Self::DirData>>) {
        if self.unreadable.lock().unwrap_or_else(|e| e.into_inner()).contains(dir.path()) {
            dir.data.failed.store(true, Ordering::Relaxed);
        }
    }

    fn absorb(&self, into: &Self::DirData, from: Self::DirData) {
        if from.failed.into_inner() {
            into.failed.store(true, Ordering::Relaxed);
        }
    }
}

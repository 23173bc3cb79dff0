use super::unlink::{remove_at, remove_path};
use super::{RemoveDir, Selection, Selector};
use crate::common::guard::{Protected, last_component_is_dot};
use crate::common::print_error;
use canopy_engine::output::{OutBuf, Sink};
use canopy_engine::{Action, Cx, DirNode, Entry, Errno, FileKind, Op, Visitor, WalkError};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// The removal visitor; `S` chooses what goes.
pub struct Remover<S> {
    pub selector: S,
    tool: &'static str,
    /// `--dry-run`: where to list what would go, and the prefix of each line.
    listing: Option<(Arc<Sink>, &'static [u8])>,
    protected: Protected,
    /// Directories the engine could not read: their removal fails with "not empty", already explained.
    unreadable: Mutex<HashSet<Vec<u8>>>,
}

/// One worker's share: its listing buffer and counts.
pub struct RemoveState {
    listing: Option<OutBuf>,
    pub removed: u64,
    /// Directories refused because they hold the current directory (reported, count as errors).
    pub refused: u64,
}

impl<S: Selector> Remover<S> {
    pub fn new(
        selector: S,
        tool: &'static str,
        listing: Option<(Arc<Sink>, &'static [u8])>,
        protected: Protected,
    ) -> Self {
        Remover { selector, tool, listing, protected, unreadable: Mutex::default() }
    }

    fn list(&self, state: &mut RemoveState, path: &[u8]) {
        let (Some(out), Some((_, prefix))) = (&mut state.listing, &self.listing) else { return };
        let buf = out.buf();
        buf.extend_from_slice(prefix);
        buf.extend_from_slice(path);
        buf.push(b'\n');
        out.end_record();
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
            let path = String::from_utf8_lossy(entry.name_cstr().to_bytes()).into_owned();
            print_error(self.tool, format_args!("refusing to remove '.' or '..': skipping '{path}'"));
            state.refused += 1;
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
        print_error(
            self.tool,
            format_args!(
                "refusing to remove '{}': it is '/' or holds the current directory",
                String::from_utf8_lossy(&path)
            ),
        );
        state.refused += 1;
        true
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
        let result = match entry.dir_fd() {
            Some(fd) => remove_at(fd, entry.name_cstr(), false),
            None => remove_path(entry.name_cstr().to_bytes(), false),
        };
        match result {
            // Gone already (removed concurrently): what was asked for is true.
            Ok(()) | Err(Errno::NOENT) => {
                state.removed += 1;
                self.selector.removed(&path, kind);
            }
            Err(errno) => {
                cx.report(WalkError::io(path, Op::Tool("remove"), errno));
                if let Some(dir) = entry.dir() {
                    dir.data.failed.store(true, Ordering::Relaxed);
                }
            }
        }
    }
}

impl<S: Selector> Visitor for Remover<S> {
    type State = RemoveState;
    type DirData = RemoveDir<S::Data>;
    type Job = ();

    fn new_state(&self) -> RemoveState {
        RemoveState {
            listing: self.listing.as_ref().map(|(sink, _)| OutBuf::new(Arc::clone(sink))),
            removed: 0,
            refused: 0,
        }
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
                    cx.set_dir_data(RemoveDir { doomed: false, failed: Default::default(), data });
                    return Action::Continue;
                }
                Selection::Skip => return Action::Prune,
            }
        }
        if entry.kind() != FileKind::Dir {
            self.remove_file(cx, state, entry);
            return Action::Prune;
        }
        if !inherited && self.refused(cx, state, entry) {
            return Action::Prune;
        }
        cx.set_dir_data(RemoveDir { doomed: true, failed: Default::default(), data: S::Data::default() });
        Action::Continue
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
        let result = match dir.parent() {
            Some(parent) => parent.open().and_then(|fd| remove_at(fd, dir.name(), true)),
            None => remove_path(dir.path(), true),
        };
        match result {
            Ok(()) | Err(Errno::NOENT) => {
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

    fn stand_in_data(&self, dir: &DirNode<Self::DirData>) -> Self::DirData {
        RemoveDir { doomed: dir.data.doomed, failed: AtomicBool::new(false), data: self.selector.lend(dir) }
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

    fn error(&self, error: &WalkError) -> bool {
        if let canopy_engine::ErrorKind::Io { op: Op::OpenDir | Op::ReadDir, .. } = error.kind {
            self.unreadable.lock().unwrap_or_else(|e| e.into_inner()).insert(error.path.clone());
        }
        print_error(self.tool, error);
        true
    }
}

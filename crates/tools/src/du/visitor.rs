//! The engine visitor of `canopy du`: stat every entry, add it to its directory's sums, and when the
//! walk leaves a directory (the post-order hook) add the directory's sums to its parent's, print
//! its GNU-style line, and hand its kept node to the parent. Nothing per entry outlives its
//! directory unless an output needs it.

use super::args::Settings;
use super::export::{Export, Left, Piece};
use super::links::{LinkRecord, LinkTable, Met, Place};
use super::list::Line;
use super::order::Ordered;
use super::roots::Roots;
use super::tally::Tally;
use super::tree::{Node, NodeKind};
use super::usage::Usage;
use crate::common::print_error;
use crate::common::records::{Record, RecordBuffer, RecordOutput};
use canopy_engine::{
    Action, Cx, DirNode, DistributedVisitor, Entry, Errno, ErrorKind, FileKind, Follow, Metadata, Op,
    Visitor, WalkError, errno_message,
};
use canopy_util::path::join_path;
use serde::{Deserialize, Serialize};
use std::sync::Arc;

/// The operation of a followed symlink that leads nowhere.
const DANGLING: &str = "follow";

/// How du counts an entry it takes in.
struct Counted {
    meta: Metadata,
    usage: Usage,
    /// Counted through the hard-link table, once per inode (unless `-l`): a file with several
    /// links, or under `-L` any inode, which may be met twice.
    linked: bool,
}

impl Counted {
    fn new(meta: Metadata, settings: &Settings) -> Self {
        let linked =
            !settings.count_links && (settings.count_every_inode_once || (!meta.is_dir() && meta.nlink > 1));
        Counted { meta, usage: Usage::of(&meta, settings.time_field()), linked }
    }
}

pub struct DuVisitor<'a> {
    settings: &'a Settings,
    roots: &'a Roots,
    links: LinkTable<DirHandle>,
    /// Where list lines go as they are made, in argument order (none with `--sort` or under MPI:
    /// they are gathered and put in order at the end).
    ordered: Option<&'a Ordered>,
    records: Option<&'a RecordOutput>,
    export: Option<&'a Export>,
}

/// A directory, compared by identity: the hard-link table's "all names in one directory".
pub struct DirHandle(Arc<DirNode<Tally>>);

impl PartialEq for DirHandle {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// One worker's share.
pub struct DuState<'a> {
    /// List lines held for `--sort` (or for rank 0).
    pub sorted: Vec<Line>,
    pub roots: Vec<RootResult>,
    records: Option<RecordBuffer<'a>>,
    path: Vec<u8>,
}

/// What the walk found for one PATH argument.
#[derive(Debug, Serialize, Deserialize)]
pub struct RootResult {
    pub root: u32,
    pub node: Node,
    pub export: Vec<Piece>,
}

impl<'a> DuVisitor<'a> {
    pub fn new(
        settings: &'a Settings,
        roots: &'a Roots,
        ordered: Option<&'a Ordered>,
        records: Option<&'a RecordOutput>,
        export: Option<&'a Export>,
    ) -> Self {
        DuVisitor { settings, roots, links: LinkTable::new(), ordered, records, export }
    }

    /// Hard-linked inodes whose names were not all met in one directory: counted after the walk.
    pub fn into_open_links(self) -> Vec<LinkRecord> {
        self.links.into_records()
    }

    fn root_of(&self, entry: &Entry<'_, Tally>) -> u32 {
        self.roots.position(entry.start_point())
    }

    fn place(&self, root: u32, path: &[u8]) -> Place {
        Place { root, rel: self.roots.relative(root, path).to_vec() }
    }

    /// A GNU du line for `path` (if it passes `--threshold`): printed in its turn, or held.
    fn line(&self, state: &mut DuState<'_>, usage: Usage, path: &[u8], root: u32) {
        let Some(list) = &self.settings.list else { return };
        if !list.passes(usage.get(self.settings.metric)) {
            return;
        }
        let mut bytes = Vec::with_capacity(path.len() + 24);
        super::list::write_line(&mut bytes, list, self.settings.metric, usage, path);
        match self.ordered {
            Some(ordered) => ordered.line(root, &bytes),
            None => state.sorted.push(Line { place: self.place(root, path), bytes }),
        }
    }

    /// The walk of an argument is over (`open`: some of its lines wait for the end).
    fn finished(&self, root: u32, open: bool) {
        if let Some(ordered) = self.ordered {
            ordered.finished(root, open);
        }
    }

    /// A file counted in `dir`: its `-a` line and, with `--files`, its node.
    fn show_file(&self, state: &mut DuState<'_>, dir: &DirNode<Tally>, name: &[u8], usage: Usage, root: u32) {
        let depth = dir.depth() + 1;
        if self.settings.list.as_ref().is_some_and(|l| l.all && depth <= l.max_depth) {
            let path = join_path(dir.path(), name);
            self.line(state, usage, &path, root);
        }
        if self.settings.shape.is_some_and(|s| s.files && depth <= s.depth) {
            dir.data.kept().push(Node::new(name.to_vec(), NodeKind::File, usage));
        }
    }

    fn export_entry(
        &self,
        dir: Option<&DirNode<Tally>>,
        name: &[u8],
        meta: Option<&Metadata>,
        left: Option<Left>,
    ) {
        if let (Some(export), Some(dir)) = (self.export, dir) {
            let parent_dev = dir.metadata().map(|m| m.dev);
            export.entry(&mut dir.data.export(), name, meta, parent_dev, left);
        }
    }

    /// `--exclude`: whether the entry's path matches a pattern.
    fn excluded(&self, state: &mut DuState<'_>, entry: &Entry<'_, Tally>) -> bool {
        let Some(excludes) = &self.settings.excludes else { return false };
        state.path.clear();
        entry.write_path(&mut state.path);
        excludes.matches(&state.path)
    }

    /// `-x`: whether the entry is on another file system than its argument.
    fn on_other_file_system(&self, entry: &Entry<'_, Tally>, meta: &Metadata) -> bool {
        self.settings.one_file_system
            && entry.dir().and_then(|d| d.root_dev()).is_some_and(|dev| dev != meta.dev)
    }

    /// The entry's metadata if du counts it. `None` when it is left out — excluded, unreadable, a
    /// symlink to follow that leads nowhere (both reported), on another file system with `-x`, or
    /// already counted as an earlier argument — after noting it in the export.
    fn admitted(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut DuState<'_>,
        entry: &Entry<'_, Tally>,
        root: u32,
    ) -> Option<Metadata> {
        let dir = entry.dir().map(|d| &**d);
        // The name in its directory; for an argument, the path as given.
        let name = entry.name_cstr().to_bytes();
        if self.excluded(state, entry) {
            self.export_entry(dir, name, None, Some(Left::Pattern));
            return None;
        }
        let meta = match entry.metadata() {
            Ok(meta) if entry.follows() && meta.kind() == FileKind::Symlink => {
                // A symlink to follow that leads nowhere: du cannot access what it names.
                cx.report(WalkError::io(entry.path(), Op::Tool(DANGLING), Errno::NOENT));
                self.export_entry(dir, name, None, Some(Left::Unreadable));
                return None;
            }
            Ok(meta) => *meta,
            Err(errno) => {
                cx.report(WalkError::io(entry.path(), Op::Stat, errno));
                self.export_entry(dir, name, None, Some(Left::Unreadable));
                return None;
            }
        };
        if self.on_other_file_system(entry, &meta) {
            self.export_entry(dir, name, Some(&meta), Some(Left::OtherFs));
            return None;
        }
        if dir.is_some() && self.roots.is_earlier_argument(root, meta.file_id()) {
            return None;
        }
        Some(meta)
    }

    /// `--records`: the entry's record.
    fn record(&self, state: &mut DuState<'_>, entry: &Entry<'_, Tally>, meta: &Metadata) {
        if let Some(records) = &mut state.records {
            state.path.clear();
            entry.write_path(&mut state.path);
            records.push(&Record { path: &state.path, kind: meta.kind(), meta, depth: entry.depth() });
        }
    }

    /// The sums a directory starts with: its own usage, or a claim on it in the hard-link table.
    fn dir_tally(&self, entry: &Entry<'_, Tally>, counted: &Counted, root: u32) -> Tally {
        let tally = Tally::default();
        if counted.linked {
            let place = self.place(root, &entry.path());
            self.links.meet(counted.meta.file_id(), counted.usage, None, place, true, None);
            tally.add_pending_link();
        } else {
            tally.usage.add(counted.usage);
        }
        tally
    }

    /// An argument that is not a directory: its own line, at level 0.
    fn argument_file(&self, state: &mut DuState<'_>, entry: &Entry<'_, Tally>, counted: &Counted, root: u32) {
        let (name, usage) = (entry.name_cstr().to_bytes(), counted.usage);
        let mut node = Node::new(name.to_vec(), NodeKind::File, Usage::default());
        if counted.linked {
            let place = self.place(root, b"");
            self.links.meet(counted.meta.file_id(), usage, None, place, false, None);
            node.open = true;
        } else {
            node.usage = usage;
            self.line(state, usage, name, root);
            node.printed = self.settings.list.is_some();
        }
        let export = self.export.map(|_| Vec::new()).unwrap_or_default();
        let open = node.open;
        state.roots.push(RootResult { root, node, export });
        self.finished(root, open);
    }

    /// A file in `dir`: added to the directory's sums, or to the hard-link table's count, which
    /// gives it to the directory once all its names are met.
    fn file_in(
        &self,
        state: &mut DuState<'_>,
        dir: &Arc<DirNode<Tally>>,
        entry: &Entry<'_, Tally>,
        counted: &Counted,
        root: u32,
    ) {
        let (name, meta, usage) = (entry.name_cstr().to_bytes(), &counted.meta, counted.usage);
        self.export_entry(Some(dir), name, Some(meta), None);
        if !counted.linked {
            dir.data.usage.add(usage);
            self.show_file(state, dir, name, usage, root);
            return;
        }
        let place = self.place(root, &entry.path());
        let here = DirHandle(Arc::clone(dir));
        match self.links.meet(meta.file_id(), usage, Some(meta.nlink), place, false, Some(here)) {
            Met::Counted { owner, usage, earlier } => {
                dir.data.take_back_pending_links(earlier);
                dir.data.usage.add(usage);
                let owner_name = owner.components().last().unwrap_or_default().to_vec();
                self.show_file(state, dir, &owner_name, usage, root);
            }
            Met::Pending => dir.data.add_pending_link(),
        }
    }
}

impl<'a> Visitor for DuVisitor<'a> {
    type State = DuState<'a>;
    type DirData = Tally;
    type Job = ();

    fn new_state(&self) -> DuState<'a> {
        DuState {
            sorted: Vec::new(),
            roots: Vec::new(),
            records: self.records.map(RecordOutput::buffer),
            path: Vec::new(),
        }
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, state: &mut DuState<'a>, entry: &Entry<'_, Tally>) -> Action {
        let root = self.root_of(entry);
        let Some(meta) = self.admitted(cx, state, entry, root) else {
            // An argument that goes no further has nothing more to print.
            if entry.is_root() {
                self.finished(root, false);
            }
            return Action::Prune;
        };
        self.record(state, entry, &meta);
        let counted = Counted::new(meta, self.settings);
        if meta.is_dir() {
            cx.set_dir_data(self.dir_tally(entry, &counted, root));
            return Action::Continue;
        }
        match entry.dir() {
            None => self.argument_file(state, entry, &counted, root),
            Some(dir) => self.file_in(state, dir, entry, &counted, root),
        }
        Action::Continue
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, state: &mut DuState<'a>, dir: &Arc<DirNode<Tally>>) {
        let tally = &dir.data;
        // The directory and its files; with -S its subdirectories are apart, in `below`.
        let own = tally.usage.load();
        let mut usage = own;
        usage.add(tally.below.load());
        let open = tally.is_open();
        let depth = dir.depth();
        let root = self.roots.position(&dir.start().path);
        let list = self.settings.list.as_ref();
        let printed = list.is_some_and(|l| !open && depth <= l.max_depth);
        if let Some(list) = list.filter(|_| printed) {
            self.line(state, if list.separate { own } else { usage }, dir.path(), root);
        }
        let keep = dir.parent().is_none()
            || list.is_some_and(|l| open && depth <= l.max_depth)
            || self.settings.shape.is_some_and(|s| depth <= s.depth);
        let node = keep.then(|| {
            let mut children = std::mem::take(&mut *tally.kept());
            if let Some(shape) = &self.settings.shape {
                shape.prune(&mut children, usage.get(shape.metric));
            }
            let name = dir.name().to_bytes().to_vec();
            Node { name, kind: NodeKind::Dir, usage, own, open, printed, children }
        });
        let parent = dir.parent();
        let export = self.export.map(|export| {
            let part = std::mem::take(&mut *tally.export());
            let parent_dev = parent.and_then(|p| p.metadata()).map(|m| m.dev);
            export.finish_dir(dir.path(), dir.name().to_bytes(), dir.metadata(), parent_dev, part)
        });
        match parent {
            Some(parent) => {
                if self.settings.list.as_ref().is_some_and(|l| l.separate) {
                    parent.data.below.add(usage);
                } else {
                    parent.data.usage.add(usage);
                }
                if open {
                    parent.data.mark_open_below();
                }
                if let Some(node) = node {
                    parent.data.kept().push(node);
                }
                if let (Some(export), Some(part)) = (self.export, export) {
                    export.add_child(&mut parent.data.export(), part);
                }
            }
            None => {
                state.roots.push(RootResult {
                    root,
                    node: node.expect("argument nodes are always kept"),
                    export: export.unwrap_or_default(),
                });
                self.finished(root, open);
            }
        }
    }

    fn error(&self, error: &WalkError) -> bool {
        if let ErrorKind::Io { op: Op::Stat, .. } = error.kind
            && let Some(root) = self.roots.find(&error.path)
        {
            // An argument that cannot be examined is never visited: its turn is over.
            self.finished(root, false);
        }
        if matches!(error.kind, ErrorKind::Loop { .. }) && self.settings.follow == Follow::Always {
            // du -L skips a directory that leads back to an ancestor, silently.
            return false;
        }
        let path = String::from_utf8_lossy(&error.path);
        match error.kind {
            ErrorKind::Io { op: Op::OpenDir | Op::ReadDir, errno } => {
                if let Some(export) = self.export {
                    export.unreadable_dir(&error.path);
                }
                print_error("du", format_args!("cannot read directory '{path}': {}", errno_message(errno)));
            }
            ErrorKind::Io { op: Op::Stat, errno } => {
                print_error("du", format_args!("cannot access '{path}': {}", errno_message(errno)));
            }
            // GNU du's wording for a link it was told to follow that leads nowhere: no reason given.
            ErrorKind::Io { op: Op::Tool(DANGLING), .. } => {
                print_error("du", format_args!("cannot access '{path}'"))
            }
            _ => print_error("du", error),
        }
        true
    }
}

impl<'a> DistributedVisitor for DuVisitor<'a> {
    fn absorb(&self, into: &Tally, from: Tally) {
        into.absorb(from);
    }
}

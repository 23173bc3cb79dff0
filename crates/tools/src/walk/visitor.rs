//! The engine visitor of `canopy walk`: stat every entry, add it to the thread's summary and, with
//! `--output`, to the thread's record buffer.

use super::summary::{Seen, TreeSummary};
use crate::common::records::{Record, RecordBuffer, RecordOutput};
use canopy_engine::{Action, Cx, DirNode, DistributedVisitor, Entry, Op, Timestamp, Visitor, WalkError};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

pub struct WalkVisitor<'o> {
    /// Ages are measured from this instant (the walk's start), the same for every thread.
    reference: Timestamp,
    top: usize,
    records: Option<&'o RecordOutput>,
}

/// A worker's share of the work: its summary, and its records on their way to the file.
pub struct ThreadState<'o> {
    pub summary: TreeSummary,
    records: Option<RecordBuffer<'o>>,
    path: Vec<u8>,
}

impl<'o> WalkVisitor<'o> {
    pub fn new(reference: Timestamp, top: usize, records: Option<&'o RecordOutput>) -> Self {
        WalkVisitor { reference, top, records }
    }
}

impl<'o> Visitor for WalkVisitor<'o> {
    type State = ThreadState<'o>;
    /// Entries seen in the directory so far, for the widest directories.
    type DirData = AtomicU64;
    type Job = ();

    fn new_state(&self) -> ThreadState<'o> {
        ThreadState {
            summary: TreeSummary::new(self.top),
            records: self.records.map(RecordOutput::buffer),
            path: Vec::new(),
        }
    }

    fn visit(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut ThreadState<'o>,
        entry: &Entry<'_, AtomicU64>,
    ) -> Action {
        if let Some(dir) = entry.dir() {
            dir.data.fetch_add(1, Ordering::Relaxed);
        }
        let meta = match entry.metadata() {
            Ok(meta) => meta,
            Err(errno) => {
                cx.report(WalkError::io(entry.path(), Op::Stat, errno));
                return Action::Continue;
            }
        };
        let seen = Seen { kind: meta.kind(), meta, depth: entry.depth() };
        state.summary.add(&seen, self.reference, || entry.path());
        if let Some(records) = &mut state.records {
            state.path.clear();
            entry.write_path(&mut state.path);
            records.push(&Record { path: &state.path, kind: seen.kind, meta, depth: seen.depth });
        }
        Action::Continue
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, state: &mut ThreadState<'o>, dir: &Arc<DirNode<AtomicU64>>) {
        let entries = dir.data.load(Ordering::Relaxed);
        state.summary.add_dir_width(entries, || dir.path().to_vec());
    }
}

impl<'o> DistributedVisitor for WalkVisitor<'o> {
    /// Entries of this directory counted by another rank (under MPI, part of a big directory was
    /// visited there).
    fn absorb(&self, into: &AtomicU64, from: AtomicU64) {
        into.fetch_add(from.into_inner(), Ordering::Relaxed);
    }
}

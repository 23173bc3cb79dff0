//! The find visitor: evaluates the expression per entry — before descending, or after the
//! directory's contents under `-depth`/`-delete` — and merges the workers' leftovers at the end.

use super::exec::{Batches, ExecRunner};
use super::host::FindHost;
use super::output::{Outputs, Record};
use canopy_dist::Cluster;
use canopy_engine::output::Sink;
use canopy_engine::{Action, Cx, DirNode, Entry, Errno, FileKind, Op, Visitor, WalkError};
use canopy_expr::{Flow, LsWidths, Program, eval};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct Find<'p> {
    pub program: &'p Program,
    /// 0 is stdout, then one per `-fprint`-style file.
    pub sinks: Vec<Arc<Sink>>,
    pub sorted: bool,
    /// With `-quit`, entries commit their output under this lock; once it holds `true`, nothing more
    /// is printed — so the output is exactly that of some serial order that stopped at the quit.
    quit_gate: Option<Mutex<bool>>,
    pub exec: ExecRunner,
    pub failed: AtomicBool,
}

/// One worker's state.
pub struct FindState {
    pub outputs: Outputs,
    pub ls: LsWidths,
    pub batches: Batches,
}

impl<'p> Find<'p> {
    pub fn new(program: &'p Program, sorted: bool, cluster: &Cluster) -> Result<Self, String> {
        let sinks = cluster.outputs(&program.output_files).map_err(|e| format!("{e}"))?;
        Ok(Find {
            program,
            sinks,
            sorted,
            quit_gate: program.has_quit().then(|| Mutex::new(false)),
            exec: ExecRunner::default(),
            failed: AtomicBool::new(false),
        })
    }

    fn evaluate(&self, cx: &mut Cx<'_, Self>, state: &mut FindState, entry: &Entry<'_, ()>) -> Flow {
        let marks = self.quit_gate.as_ref().map(|_| state.outputs.marks());
        let mut flow = Flow::default();
        let mut host = FindHost { find: self, cx: &mut *cx, state: &mut *state };
        eval(&self.program.expr, entry, &mut host, &mut flow);
        if let (Some(gate), Some(marks)) = (&self.quit_gate, marks) {
            let mut quit_committed = gate.lock().unwrap_or_else(|e| e.into_inner());
            if *quit_committed {
                state.outputs.truncate(&marks);
                flow.quit = true;
            } else if flow.quit {
                *quit_committed = true;
                state.outputs.flush();
            }
        }
        if flow.quit {
            cx.quit();
        }
        flow
    }

    /// Writes what the workers left: pending `-exec … +` batches, sorted output (gathered from
    /// every rank), buffered bytes. Returns false if something failed (a command, a write).
    pub fn finish(&self, states: Vec<FindState>, cluster: &Cluster) -> bool {
        let mut records: Vec<Record> = Vec::new();
        for mut state in states {
            state.batches.flush_all(self);
            match state.outputs {
                Outputs::Direct(mut bufs) => bufs.iter_mut().for_each(|b| b.flush()),
                Outputs::Sorted(r) => records.extend(r),
            }
        }
        if self.sorted {
            let gathered = cluster.reduce(records, |mut a, b| {
                a.extend(b);
                a
            });
            if let Some(mut all) = gathered {
                all.sort_by(|a, b| a.path.cmp(&b.path));
                for record in all {
                    let _ = self.sinks[record.sink].write_all(&record.bytes);
                }
            }
        }
        cluster.finish_output();
        if crate::common::report_write_errors(self.sinks.iter().map(|s| &**s)) {
            self.failed.store(true, Ordering::Relaxed);
        }
        !self.failed.load(Ordering::Relaxed) && !self.exec.failed()
    }
}

impl Visitor for Find<'_> {
    type State = FindState;
    type DirData = ();
    type Job = ();

    fn new_state(&self) -> FindState {
        FindState {
            outputs: Outputs::new(&self.sinks, self.sorted),
            ls: LsWidths::default(),
            batches: Batches::default(),
        }
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, state: &mut FindState, entry: &Entry<'_, ()>) -> Action {
        let options = &self.program.options;
        if entry.depth() < options.min_depth {
            return Action::Continue;
        }
        if options.depth_first && entry.kind() == FileKind::Dir {
            return Action::Continue; // evaluated in leave_dir, after its contents
        }
        let flow = self.evaluate(cx, state, entry);
        if flow.prune && !options.depth_first { Action::Prune } else { Action::Continue }
    }

    fn leave_dir(&self, cx: &mut Cx<'_, Self>, state: &mut FindState, dir: &Arc<DirNode<()>>) {
        if !self.program.options.depth_first || dir.depth() < self.program.options.min_depth {
            return;
        }
        match dir.parent() {
            None => {
                self.evaluate(cx, state, &Entry::of_dir(dir, None));
            }
            Some(parent) => match parent.open() {
                Ok(fd) => {
                    let entry = Entry::of_dir(dir, Some((parent, rustix::fd::AsFd::as_fd(&fd))));
                    self.evaluate(cx, state, &entry);
                }
                Err(errno) => cx.report(WalkError::io(parent.path().to_vec(), Op::OpenDir, errno)),
            },
        }
    }

    fn error(&self, error: &WalkError) -> bool {
        if self.program.options.ignore_readdir_race && error.errno() == Some(Errno::NOENT) {
            return false;
        }
        crate::common::print_error("find", error);
        true
    }
}

//! The find visitor: evaluates the expression per entry — before descending, or after the
//! directory's contents under `-depth`/`-delete` — and merges the workers' leftovers at the end.

use super::actions::FindActions;
use super::exec::{Batches, ExecRunner};
use super::output::{OutputPolicy, Outputs, Record, StdoutGate};
use canopy_distwalk::Cluster;
use canopy_engine::output::Sink;
use canopy_engine::{
    Action, Cx, DirNode, DistributedVisitor, Entry, Errno, FileKind, Op, Visitor, WalkError,
};
use canopy_expr::{Flow, LsWidths, Program, eval};
use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

pub struct Find<'p> {
    pub program: &'p Program,
    /// 0 is stdout, then one per `-fprint`-style file.
    pub sinks: Vec<Arc<Sink>>,
    output: OutputPolicy,
    /// With `-quit`, entries commit their output under this lock; once it holds `true`, nothing more
    /// is printed — so the output is exactly that of some serial order that stopped at the quit.
    quit_gate: Option<Mutex<bool>>,
    pub exec: ExecRunner,
    pub failed: AtomicBool,
    /// The starting points, when `-ignore_readdir_race` must still report them missing.
    roots: HashSet<Vec<u8>>,
}

/// One worker's state.
pub struct FindState {
    pub outputs: Outputs,
    pub ls: LsWidths,
    pub batches: Batches,
}

impl<'p> Find<'p> {
    /// `line_buffered`: stdout is a terminal, where matches must show as they are found.
    pub fn new(
        program: &'p Program,
        roots: &[Vec<u8>],
        sorted: bool,
        line_buffered: bool,
        cluster: &Cluster,
    ) -> Result<Self, String> {
        let sinks = cluster.outputs(&program.output_files).map_err(|e| format!("{e}"))?;
        let gate = Arc::new(StdoutGate::default());
        let runs_commands = program.actions.iter().any(|a| matches!(a, canopy_expr::Action::Exec(_)));
        Ok(Find {
            program,
            sinks,
            output: OutputPolicy { sorted, line_buffered, gate: runs_commands.then(|| Arc::clone(&gate)) },
            quit_gate: program.has_quit().then(|| Mutex::new(false)),
            exec: ExecRunner::new(gate),
            failed: AtomicBool::new(false),
            roots: match program.options.ignore_readdir_race {
                true => roots.iter().cloned().collect(),
                false => HashSet::new(),
            },
        })
    }

    fn evaluate(&self, cx: &mut dyn Reporter, state: &mut FindState, entry: &Entry<'_, ()>) -> Flow {
        let marks = self.quit_gate.as_ref().map(|_| state.outputs.marks());
        let mut flow = Flow::default();
        let mut actions = FindActions { find: self, cx: &mut *cx, state: &mut *state };
        eval(&self.program.expr, entry, &mut actions, &mut flow);
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
        state.outputs.end_entry();
        if flow.quit {
            cx.quit();
        }
        flow
    }

    /// Evaluates a starting point that is not a directory outside the walk (there is nothing to
    /// walk), in command-line order.
    pub fn visit_start(&self, pass: &mut StartPass, state: &mut FindState, path: &[u8]) {
        let Ok(path) = std::ffi::CString::new(path) else { return };
        let entry = Entry::root(&path, self.program.follow != canopy_engine::Follow::Never);
        if entry.depth() >= self.program.options.min_depth {
            self.evaluate(pass, state, &entry);
        }
    }

    /// Writes what the workers left: pending `-exec … +` batches, sorted output (gathered from
    /// every rank), buffered bytes. Returns false if something failed (a command, a write).
    pub fn finish(&self, mut states: Vec<FindState>, cluster: &Cluster) -> bool {
        // Everything printed comes out before the last `{} +` batches run, as in GNU find.
        states.iter_mut().for_each(|state| state.outputs.flush());
        let batches: Vec<Batches> =
            states.iter_mut().map(|state| std::mem::take(&mut state.batches)).collect();
        Batches::flush_merged(batches, self);
        let mut records: Vec<Record> = Vec::new();
        for state in states {
            if let Outputs::Sorted(r) = state.outputs {
                records.extend(r);
            }
        }
        if self.output.sorted {
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

/// What evaluating an entry needs from its caller: a walk worker's context, or the pass over
/// starting points outside the walk.
pub trait Reporter {
    /// Shows a failure and counts it toward the exit status if it counts.
    fn report(&mut self, error: WalkError);
    /// `-quit`: stop everything.
    fn quit(&mut self);
}

impl Reporter for Cx<'_, Find<'_>> {
    fn report(&mut self, error: WalkError) {
        Cx::report(self, error);
    }

    fn quit(&mut self) {
        Cx::quit(self);
    }
}

/// The errors and `-quit` of starting points evaluated outside the walk.
pub struct StartPass<'a, 'p> {
    pub find: &'a Find<'p>,
    pub errors: u64,
    pub quit: bool,
}

impl Reporter for StartPass<'_, '_> {
    fn report(&mut self, error: WalkError) {
        if self.find.error(&error) {
            self.errors += 1;
        }
    }

    fn quit(&mut self) {
        self.quit = true;
    }
}

impl Visitor for Find<'_> {
    type State = FindState;
    type DirData = ();
    type Job = ();

    fn new_state(&self) -> FindState {
        FindState {
            outputs: Outputs::new(&self.sinks, &self.output),
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
        // -ignore_readdir_race forgives files that vanish during the walk, never a missing
        // starting point.
        let is_root = self.roots.contains(&error.path);
        if self.program.options.ignore_readdir_race && error.errno() == Some(Errno::NOENT) && !is_root {
            return false;
        }
        crate::common::print_error("find", error);
        true
    }
}

impl DistributedVisitor for Find<'_> {}

//! The handle a visitor gets with each call.

use crate::error::WalkError;
use crate::node::DirNode;
use crate::options::WalkOptions;
use crate::session::Shared;
use crate::task::Task;
use crate::visitor::Visitor;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Schedule jobs, report errors, stop the walk.
pub struct Cx<'w, V: Visitor> {
    pub(crate) shared: &'w Shared<'w, V>,
    pub(crate) worker: usize,
}

impl<V: Visitor> Cx<'_, V> {
    /// Index of the worker thread running this call.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// Schedules a job on the pool.
    pub fn spawn(&mut self, job: V::Job) {
        self.shared.sched.push(self.worker, Task::Job(job, None));
    }

    /// Schedules a job that must finish before `dir`'s post-order [`Visitor::leave_dir`].
    pub fn spawn_in(&mut self, dir: &Arc<DirNode<V::DirData>>, job: V::Job) {
        dir.add_pending(1);
        self.shared.sched.push(self.worker, Task::Job(job, Some(Arc::clone(dir))));
    }

    /// Shows a failure through [`Visitor::error`] and counts it toward the exit status if the
    /// visitor says it counts.
    pub fn report(&mut self, error: WalkError) {
        if self.shared.visitor.error(&error) {
            self.shared.counters[self.worker].errors.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Stops the walk as soon as every worker finishes its current call (find's `-quit`).
    pub fn quit(&mut self) {
        self.shared.quit.store(true, Ordering::SeqCst);
        self.shared.sched.stop();
    }

    pub fn is_quitting(&self) -> bool {
        self.shared.quit.load(Ordering::Relaxed)
    }

    /// The walk's options (follow mode, depth limits…).
    pub fn options(&self) -> &WalkOptions {
        self.shared.options
    }
}

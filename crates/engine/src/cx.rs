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
    /// Data for the directory the current visit continues into ([`Cx::set_dir_data`]).
    pub(crate) dir_data: Option<V::DirData>,
    /// The directory the running job counts toward, if any ([`Cx::job_dir`]).
    pub(crate) job_dir: Option<Arc<DirNode<V::DirData>>>,
}

/// A slot in a directory's pending work, taken with [`Cx::reserve`] and filled with
/// [`Cx::spawn_reserved`]; can be moved to another thread or job.
#[must_use = "a reservation dropped unspent keeps its directory from ever being left"]
pub struct Reservation<D> {
    dir: Arc<DirNode<D>>,
}

impl<D> Reservation<D> {
    /// The directory whose `leave_dir` waits for this reservation.
    pub fn dir(&self) -> &Arc<DirNode<D>> {
        &self.dir
    }
}

impl<V: Visitor> Cx<'_, V> {
    /// Index of the worker thread running this call.
    pub fn worker(&self) -> usize {
        self.worker
    }

    /// The directory the running job counts toward ([`Cx::spawn_in`], [`Cx::spawn_reserved`]); on a
    /// process that imported the job, the directory's stand-in, whose data goes back with its
    /// completion — the way a job run elsewhere reports to where it was spawned.
    pub fn job_dir(&self) -> Option<&Arc<DirNode<V::DirData>>> {
        self.job_dir.as_ref()
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

    /// Holds back `dir`'s post-order [`Visitor::leave_dir`] for a job that cannot be scheduled yet
    /// (it waits on work elsewhere, e.g. a hard link waiting for its target's copy); schedule it with
    /// [`Cx::spawn_reserved`] once it can run. A reservation dropped unspent keeps `dir` and its
    /// ancestors from ever being left.
    pub fn reserve(&mut self, dir: &Arc<DirNode<V::DirData>>) -> Reservation<V::DirData> {
        dir.add_pending(1);
        Reservation { dir: Arc::clone(dir) }
    }

    /// Schedules the job a [`Reservation`] was made for; it counts toward the reserved directory as
    /// if scheduled there with [`Cx::spawn_in`].
    pub fn spawn_reserved(&mut self, reservation: Reservation<V::DirData>, job: V::Job) {
        self.shared.sched.push(self.worker, Task::Job(job, Some(reservation.dir)));
    }

    /// Gives the directory being visited its [`Visitor::DirData`] (instead of `Default::default()`), so
    /// what the visit learned — a destination it created, a decision to remove everything below — is
    /// there for every entry inside it. Only meaningful in [`Visitor::visit`] of a directory that
    /// returns [`Action::Continue`](crate::Action::Continue); ignored otherwise.
    pub fn set_dir_data(&mut self, data: V::DirData) {
        self.dir_data = Some(data);
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

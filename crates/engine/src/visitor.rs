//! The seam between the engine and the tools: a tool is a [`Visitor`] whose per-thread state is merged
//! by the tool when the walk ends (a reduction), so counting, summing and output need no locks on the
//! hot path.

use crate::cx::Cx;
use crate::entry::Entry;
use crate::error::WalkError;
use crate::node::DirNode;
use serde::Serialize;
use serde::de::DeserializeOwned;
use std::sync::Arc;

/// What to do after visiting an entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Descend into it if it is a directory.
    Continue,
    /// Do not descend (find's `-prune`, `-maxdepth`).
    Prune,
}

/// Per-entry logic of a tool. Called concurrently from every worker thread, each with its own
/// `State`; the states come back from the walk for the tool to merge.
pub trait Visitor: Sync + Sized {
    /// Per-thread state (counters, output buffers, partial reductions).
    type State: Send;
    /// Per-directory data kept in each [`DirNode`] while its subtree is walked (e.g. running sizes).
    type DirData: Default + Send + Sync;
    /// Follow-up work a visitor schedules on the same pool (a file's chunks to copy, content to grep).
    type Job: Send;

    fn new_state(&self) -> Self::State;

    /// Called once per entry, roots included, in no particular order across threads; a directory is
    /// always visited before anything inside it.
    fn visit(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut Self::State,
        entry: &Entry<'_, Self::DirData>,
    ) -> Action;

    /// Called once for every directory whose visit returned [`Action::Continue`], after everything
    /// below it (entries, subdirectories, jobs attached to it) has finished — also when the engine did
    /// not enter it (depth limit, another file system, a symlink loop) or could not read it: the
    /// post-order hook for sizes, removal, directory times and find's `-depth`.
    fn leave_dir(
        &self,
        _cx: &mut Cx<'_, Self>,
        _state: &mut Self::State,
        _dir: &Arc<DirNode<Self::DirData>>,
    ) {
    }

    /// Runs a job scheduled with [`Cx::spawn`], [`Cx::spawn_in`] or [`Cx::spawn_reserved`].
    fn run_job(&self, _cx: &mut Cx<'_, Self>, _state: &mut Self::State, _job: Self::Job) {}

    /// Shows a failure; returns whether it counts toward the exit status (find's
    /// `-ignore_readdir_race` drops files that vanished mid-walk, for instance).
    fn error(&self, error: &WalkError) -> bool {
        eprintln!("canopy: {error}");
        true
    }
}

/// What a visitor adds to be walked by several processes at once: its jobs and directory data
/// travel between processes as bytes, and a directory whose work is split between processes has
/// its data lent to a stand-in and folded back. Each hook has a default (nothing to lend, nothing
/// to fold in), so a visitor whose directory data needs none of this declares itself with an empty
/// `impl`; only the distributed transport ([`Session::distributed`](crate::Session::distributed),
/// [`remote`](crate::remote)) calls them.
pub trait DistributedVisitor:
    Visitor<Job: Serialize + DeserializeOwned, DirData: Serialize + DeserializeOwned>
{
    /// Folds into `into` the data another process collected for the same directory (part of the
    /// directory's work ran there). Sums add, for instance.
    fn absorb(&self, _into: &Self::DirData, _from: Self::DirData) {}

    /// [`DistributedVisitor::absorb`] with the pool at hand, for data whose arrival means more work
    /// here (a file whose last chunk was copied elsewhere is finished by the process that opened
    /// it). Runs before `dir` releases the work that went away.
    fn absorb_completed(
        &self,
        _cx: &mut Cx<'_, Self>,
        _state: &mut Self::State,
        dir: &Arc<DirNode<Self::DirData>>,
        from: Self::DirData,
    ) {
        self.absorb(&dir.data, from);
    }

    /// The data a stand-in of `dir` starts with on a process that imports part of its work: what
    /// the entries below need to know — where their copies go, that they are to be removed. What
    /// is collected for [`DistributedVisitor::absorb`] starts empty, as by default, since the
    /// stand-in's data comes back when its work is done.
    fn stand_in_data(&self, _dir: &DirNode<Self::DirData>) -> Self::DirData {
        Self::DirData::default()
    }

    /// Called where the work of a stand-in finished, just before its data goes back to the process
    /// that exported it: the part of [`Visitor::leave_dir`] that belongs where the work ran (noting
    /// what only this process knows about the directory).
    fn leave_stand_in(
        &self,
        _cx: &mut Cx<'_, Self>,
        _state: &mut Self::State,
        _dir: &Arc<DirNode<Self::DirData>>,
    ) {
    }
}

/// The hooks a worker calls on stand-ins and completions. Workers serve local and distributed
/// walks alike, over any [`Visitor`]; a distributed session hands them its visitor as this
/// ([`Session::distributed`](crate::Session::distributed)).
pub(crate) trait StandInHooks<V: Visitor>: Sync {
    fn absorb_completed(
        &self,
        cx: &mut Cx<'_, V>,
        state: &mut V::State,
        dir: &Arc<DirNode<V::DirData>>,
        from: V::DirData,
    );
    fn leave_stand_in(&self, cx: &mut Cx<'_, V>, state: &mut V::State, dir: &Arc<DirNode<V::DirData>>);
}

impl<V: DistributedVisitor> StandInHooks<V> for V {
    fn absorb_completed(
        &self,
        cx: &mut Cx<'_, V>,
        state: &mut V::State,
        dir: &Arc<DirNode<V::DirData>>,
        from: V::DirData,
    ) {
        DistributedVisitor::absorb_completed(self, cx, state, dir, from);
    }

    fn leave_stand_in(&self, cx: &mut Cx<'_, V>, state: &mut V::State, dir: &Arc<DirNode<V::DirData>>) {
        DistributedVisitor::leave_stand_in(self, cx, state, dir);
    }
}

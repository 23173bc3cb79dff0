//! Work crossing process boundaries, for the distributed transport. Tasks leave as plain data
//! ([`RemoteTask`]); a directory whose work leaves keeps its place here under an export id, and the
//! importing side runs the work under a stand-in node that reports back ([`Completion`]) when
//! everything below it is done — so post-order hooks (find -depth, rm, du totals) stay exact
//! across processes, and each runs where the directory's parent lives.

use crate::chunk::Chunk;
use crate::meta::{FileKind, Metadata};
use crate::node::{DirNode, Import, StartPoint};
use crate::options::Follow;
use crate::session::{Driver, Shared};
use crate::task::Task;
use crate::visitor::DistributedVisitor;
use serde::{Deserialize, Serialize};
use std::ffi::CString;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// A task in a form another process can run; `J` is the visitor's job, `D` its directory data.
#[derive(Debug, Serialize, Deserialize)]
pub struct RemoteTask<J, D> {
    /// The sender's export id, when finishing this work must be reported back.
    pub origin: Option<u64>,
    pub work: RemoteWork<J, D>,
}

#[derive(Debug, Serialize, Deserialize)]
pub enum RemoteWork<J, D> {
    Root { path: Vec<u8> },
    Read { dir: DirSpec<D> },
    Chunk { dir: DirSpec<D>, names: Vec<u8>, items: Vec<(u32, FileKind)> },
    Job { job: J, dir: Option<DirSpec<D>> },
}

/// A directory described for another process.
#[derive(Debug, Serialize, Deserialize)]
pub struct DirSpec<D> {
    pub path: Vec<u8>,
    pub name: Vec<u8>,
    pub depth: u32,
    pub follow: bool,
    pub meta: Option<Metadata>,
    /// The starting point it was found under: its stand-in has no parent there to find it by.
    pub start: StartPoint,
    /// (path, device, inode) of its ancestors — only when following links, for loop detection.
    pub ancestors: Vec<(Vec<u8>, u64, u64)>,
    /// What its stand-in starts with ([`DistributedVisitor::stand_in_data`]).
    pub data: D,
}

/// The report that work exported under `id` is done, with what the directory's stand-in collected.
#[derive(Debug, Serialize, Deserialize)]
pub struct Completion<D> {
    pub id: u64,
    pub data: D,
}

/// An imported directory finished here: report `node.data` under `id` to `peer`.
pub struct FinishedImport<D> {
    pub peer: u32,
    pub id: u64,
    pub node: Arc<DirNode<D>>,
}

impl<V: DistributedVisitor> Driver<'_, '_, '_, V> {
    /// Takes queued work for another process: a share split as the session's split mode says.
    pub fn export(&self, rng: &mut fastrand::Rng) -> Vec<RemoteTask<V::Job, V::DirData>> {
        self.to_remote(self.shared.sched.steal_for_remote(rng))
    }

    /// Takes every task this pool created and has not started, for the centralised scheduler's
    /// master ([`Driver::set_forward_created`]).
    pub fn export_created(&self) -> Vec<RemoteTask<V::Job, V::DirData>> {
        self.to_remote(self.shared.sched.take_created())
    }

    /// Takes up to `count` of the oldest queued tasks (the biggest subtrees) for another process.
    pub fn export_oldest(&self, count: usize) -> Vec<RemoteTask<V::Job, V::DirData>> {
        self.to_remote(self.shared.sched.take_oldest(count))
    }

    /// The tasks that can leave this process, as data; the others are queued again.
    fn to_remote(&self, tasks: Vec<Task<V>>) -> Vec<RemoteTask<V::Job, V::DirData>> {
        let shared = self.shared;
        let mut exported = Vec::new();
        let mut stay = Vec::new();
        for task in tasks {
            match shared.task_to_remote(task) {
                Ok(remote) => exported.push(remote),
                Err(task) => stay.push(task),
            }
        }
        shared.sched.inject(stay);
        exported
    }

    /// Queues work received from `peer`.
    pub fn import(&self, peer: u32, tasks: Vec<RemoteTask<V::Job, V::DirData>>) {
        let tasks = tasks.into_iter().map(|t| self.shared.task_from_remote(peer, t)).collect();
        self.shared.sched.inject(tasks);
    }

    /// Imported directories whose work finished here since the last call.
    pub fn take_finished_imports(&self) -> Vec<FinishedImport<V::DirData>> {
        let nodes =
            std::mem::take(&mut *self.shared.finished_imports.lock().unwrap_or_else(|e| e.into_inner()));
        nodes
            .into_iter()
            .filter_map(|node| {
                let import = node.import()?;
                Some(FinishedImport { peer: import.peer, id: import.id, node: Arc::clone(&node) })
            })
            .collect()
    }

    /// A peer finished work exported from here: fold in its data and release the pending unit.
    pub fn complete(&self, completion: Completion<V::DirData>) {
        let node = self.shared.exported.lock().unwrap_or_else(|e| e.into_inner()).remove(&completion.id);
        if let Some(node) = node {
            self.shared.sched.inject(vec![Task::Complete(node, completion.data)]);
        }
    }

    /// Exports still waiting for their completion report.
    pub fn outstanding_exports(&self) -> usize {
        self.shared.exported.lock().unwrap_or_else(|e| e.into_inner()).len()
    }
}

impl<V: DistributedVisitor> Shared<'_, V> {
    fn register_export(&self, node: Arc<DirNode<V::DirData>>) -> u64 {
        let id = self.next_export_id.fetch_add(1, Ordering::Relaxed);
        self.exported.lock().unwrap_or_else(|e| e.into_inner()).insert(id, node);
        id
    }

    fn spec(&self, node: &DirNode<V::DirData>) -> DirSpec<V::DirData> {
        let mut ancestors = Vec::new();
        if self.options.follow == Follow::Always {
            let mut top = node;
            for a in node.ancestors() {
                if let Some(m) = a.metadata() {
                    ancestors.push((a.path().to_vec(), m.dev, m.ino));
                }
                top = a;
            }
            if let Some(import) = top.import() {
                ancestors.extend(import.ancestors.iter().cloned());
            }
        }
        DirSpec {
            path: node.path().to_vec(),
            name: node.name().to_bytes().to_vec(),
            depth: node.depth(),
            follow: node.follows(),
            meta: node.metadata().copied(),
            start: StartPoint::clone(node.start()),
            ancestors,
            data: self.visitor.stand_in_data(node),
        }
    }

    /// The plain-data form of a task, or the task back if it cannot leave this process.
    fn task_to_remote(&self, task: Task<V>) -> Result<RemoteTask<V::Job, V::DirData>, Task<V>> {
        Ok(match task {
            Task::Root(path) => {
                RemoteTask { origin: None, work: RemoteWork::Root { path: path.into_bytes() } }
            }
            Task::Read(node) => {
                let dir = self.spec(&node);
                RemoteTask { origin: Some(self.register_export(node)), work: RemoteWork::Read { dir } }
            }
            Task::Chunk(chunk, node) => {
                let dir = self.spec(&node);
                let (names, items) = chunk.into_parts();
                RemoteTask {
                    origin: Some(self.register_export(node)),
                    work: RemoteWork::Chunk { dir, names, items },
                }
            }
            Task::Job(job, Some(node)) => {
                let dir = Some(self.spec(&node));
                RemoteTask { origin: Some(self.register_export(node)), work: RemoteWork::Job { job, dir } }
            }
            Task::Job(job, None) => RemoteTask { origin: None, work: RemoteWork::Job { job, dir: None } },
            complete @ Task::Complete(..) => return Err(complete),
        })
    }

    fn task_from_remote(&self, peer: u32, task: RemoteTask<V::Job, V::DirData>) -> Task<V> {
        let stand_in = |dir: DirSpec<V::DirData>| -> Arc<DirNode<V::DirData>> {
            let import = Import { peer, id: task.origin.unwrap_or(0), ancestors: dir.ancestors };
            DirNode::imported(
                &dir.path, &dir.name, dir.depth, dir.follow, dir.meta, dir.start, import, dir.data,
            )
        };
        match task.work {
            RemoteWork::Root { path } => Task::Root(CString::new(path).unwrap_or_default()),
            RemoteWork::Read { dir } => Task::Read(stand_in(dir)),
            RemoteWork::Chunk { dir, names, items } => {
                Task::Chunk(Box::new(Chunk::from_parts(names, items)), stand_in(dir))
            }
            RemoteWork::Job { job, dir } => Task::Job(job, dir.map(stand_in)),
        }
    }
}

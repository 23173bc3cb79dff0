//! The units of work the pool schedules.

use crate::chunk::Chunk;
use crate::node::DirNode;
use crate::visitor::Visitor;
use std::ffi::CString;
use std::sync::Arc;

pub(crate) enum Task<V: Visitor> {
    /// Stat and visit a starting point.
    Root(CString),
    /// Read a directory.
    Read(Arc<DirNode<V::DirData>>),
    /// Visit a chunk of a big directory's entries.
    Chunk(Box<Chunk>, Arc<DirNode<V::DirData>>),
    /// A visitor's follow-up job, optionally counted toward a directory's completion.
    Job(V::Job, Option<Arc<DirNode<V::DirData>>>),
    /// Work exported to another process finished there: fold in what it found and release the unit
    /// of pending work it carried.
    Complete(Arc<DirNode<V::DirData>>, V::DirData),
}

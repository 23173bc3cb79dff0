//! Where copies go: each source directory's counterpart in the destination ([`DestDir`], the data the
//! walk keeps per directory) and the place of one entry ([`Place`]: a name in such a directory).

use crate::common::Mirror;
use canopy_engine::sys::{open_path, split_parent};
use canopy_engine::{DirFd, DirNode, Errno, join_path};
use std::ffi::{CStr, CString};
use std::sync::Arc;

/// A source root and the path of its copy.
pub struct RootPair {
    /// The source root as given on the command line.
    pub source: Vec<u8>,
    /// The path of its copy (for `cp SRC DIR/`, `DIR/basename(SRC)`).
    pub dest: Vec<u8>,
    /// Whether the copy's last component may be a symlink to follow (sync's DST, named by the user).
    pub follow_dest: bool,
}

/// The destination counterpart of a source directory.
#[derive(Default)]
pub struct DestDir {
    pub mirror: Mirror,
    /// The directory did not exist before this run (in a dry run: would not), so nothing inside it
    /// needs looking up.
    pub fresh: bool,
    /// Set for the copy of a walk root.
    pub root: Option<Arc<RootPair>>,
}

impl DestDir {
    pub fn mirror(&self) -> &Mirror {
        &self.mirror
    }
}

/// The destination of one entry.
#[derive(Clone)]
pub enum Place {
    /// `name` in the counterpart of the source directory `dir`.
    Child { dir: Arc<DirNode<DestDir>>, name: CString },
    /// The copy of a walk root: the last component of `pair.dest`.
    Root { pair: Arc<RootPair>, name: CString },
}

impl Place {
    pub fn child(dir: &Arc<DirNode<DestDir>>, name: &CStr) -> Self {
        Place::Child { dir: Arc::clone(dir), name: name.to_owned() }
    }

    pub fn root(pair: Arc<RootPair>) -> Result<Self, Errno> {
        let name = CString::new(split_parent(&pair.dest).1).map_err(|_| Errno::INVAL)?;
        Ok(Place::Root { pair, name })
    }

    pub fn name(&self) -> &CStr {
        match self {
            Place::Child { name, .. } | Place::Root { name, .. } => name,
        }
    }

    /// The source directory whose `leave_dir` must wait for work on this entry (none for a root).
    pub fn source_dir(&self) -> Option<&Arc<DirNode<DestDir>>> {
        match self {
            Place::Child { dir, .. } => Some(dir),
            Place::Root { .. } => None,
        }
    }

    /// Whether the containing destination directory is new in this run.
    pub fn fresh(&self) -> bool {
        match self {
            Place::Child { dir, .. } => dir.data.fresh,
            Place::Root { .. } => false,
        }
    }

    /// The destination directory holding the entry, opened without following symlinks below the
    /// destination root.
    pub fn open_dir(&self) -> Result<DirFd, Errno> {
        match self {
            Place::Child { dir, .. } => Mirror::open(dir, &DestDir::mirror),
            Place::Root { pair, .. } => open_path(split_parent(&pair.dest).0, true).map(DirFd::Temporary),
        }
    }

    pub fn pair(&self) -> Arc<RootPair> {
        match self {
            Place::Child { dir, .. } => root_pair(dir),
            Place::Root { pair, .. } => Arc::clone(pair),
        }
    }

    /// The entry's path relative to the roots (empty for a root itself).
    pub fn relative(&self) -> Vec<u8> {
        match self {
            Place::Child { dir, name } => join_relative(&relative_dir(dir), name.to_bytes()),
            Place::Root { .. } => Vec::new(),
        }
    }

    /// The source entry's path, for messages.
    pub fn source_path(&self) -> Vec<u8> {
        join_relative(&self.pair().source, &self.relative())
    }

    /// The destination path, for messages.
    pub fn dest_path(&self) -> Vec<u8> {
        join_relative(&self.pair().dest, &self.relative())
    }
}

/// The roots a source directory was reached from.
fn root_pair(dir: &DirNode<DestDir>) -> Arc<RootPair> {
    let root = dir.ancestors().last().expect("a node is its own last ancestor at least");
    Arc::clone(root.data.root.as_ref().expect("the walk gives every root its pair"))
}

/// A source directory's path relative to its root.
fn relative_dir(dir: &DirNode<DestDir>) -> Vec<u8> {
    let root = dir.ancestors().last().expect("a node is its own last ancestor at least");
    let rest = &dir.path()[root.path().len()..];
    rest.strip_prefix(b"/").unwrap_or(rest).to_vec()
}

/// The destination path of a source directory, for messages.
pub fn dest_dir_path(dir: &DirNode<DestDir>) -> Vec<u8> {
    join_relative(&root_pair(dir).dest, &relative_dir(dir))
}

/// `base/relative`, where either may be empty (the root itself, or a path relative to the roots).
pub fn join_relative(base: &[u8], relative: &[u8]) -> Vec<u8> {
    match (base.is_empty(), relative.is_empty()) {
        (_, true) => base.to_vec(),
        (true, false) => relative.to_vec(),
        (false, false) => join_path(base, relative),
    }
}

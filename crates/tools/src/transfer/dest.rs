//! Where copies go: each source directory's counterpart in the destination ([`DestDir`], the data the
//! walk keeps per directory) and the place of one entry ([`Place`]: a name in such a directory).
//! Both travel between the processes of a distributed copy as plain data: the root pair and the
//! path below it, reopened from the destination root with `O_NOFOLLOW` at every step.

use crate::common::pieces::PieceReports;
use crate::common::{Mirror, wire};
use canopy_engine::sys::{open_beneath, open_path};
use canopy_engine::{DirFd, DirNode, Errno};
use canopy_util::path::{join_path, split_parent};
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString};
use std::sync::Arc;

/// A source root and the path of its copy.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct RootPair {
    /// The source root as given on the command line.
    pub source: Vec<u8>,
    /// Whether the source's last component may be a symlink to follow (sync's `SRC/`).
    pub follow_source: bool,
    /// The path of its copy (for `cp SRC DIR/`, `DIR/basename(SRC)`).
    pub dest: Vec<u8>,
    /// Whether the copy's last component may be a symlink to follow (sync's DST, named by the user).
    pub follow_dest: bool,
    /// How rsync names the root in listings and matches it against filter rules: its basename for
    /// `SRC`, empty for `SRC/` (whose root is `.` and whose entries are named without a prefix).
    pub list_name: Vec<u8>,
    /// The copy's top directory was made for this run before the walk (rsync's "created
    /// directory", cp's marked directory): it counts as new.
    pub made: bool,
    /// The copy carries cp's marker of a copy in progress, removed once it completed (see `cp`).
    pub marked: bool,
    /// This run resumes a copy interrupted after it began at this time (the marker's): the files
    /// that copy completed stay.
    pub resume_since: Option<canopy_engine::Timestamp>,
}

impl RootPair {
    /// The pair of a plain copy of `source` to `dest`.
    pub fn new(source: Vec<u8>, follow_source: bool, dest: Vec<u8>, follow_dest: bool) -> Self {
        RootPair { source, follow_source, dest, follow_dest, ..RootPair::default() }
    }

    /// rsync's name of the entry `relative` below the root (`.` for the root of `SRC/`).
    pub fn list_name_of(&self, relative: &[u8]) -> Vec<u8> {
        match (self.list_name.is_empty(), relative.is_empty()) {
            (true, true) => b".".to_vec(),
            _ => join_relative(&self.list_name, relative),
        }
    }
}

/// The destination counterpart of a source directory.
#[derive(Default, Serialize, Deserialize)]
pub struct DestDir {
    pub mirror: Mirror,
    /// The directory did not exist before this run (in a dry run: would not), so nothing inside it
    /// needs looking up.
    pub fresh: bool,
    /// Set for the copy of a walk root, and for a stand-in (whose walk root is elsewhere).
    #[serde(with = "wire::shared_option")]
    pub root: Option<Arc<RootPair>>,
    /// Chunks copied here of files opened on other processes, on their way back.
    pub chunks_done: PieceReports,
    /// The permission bits an existing directory had before this run opened it up for its owner
    /// (to fill it), put back when the source's are not kept.
    pub restore_mode: Option<u32>,
}

impl DestDir {
    pub fn mirror(&self) -> &Mirror {
        &self.mirror
    }
}

impl DestDir {
    /// The data of a walk root's copy (and of the job group of a root file's chunks).
    pub fn of_root(pair: Arc<RootPair>) -> DestDir {
        DestDir {
            mirror: Mirror::root(&pair.dest, pair.follow_dest),
            fresh: false,
            root: Some(pair),
            chunks_done: PieceReports::default(),
            restore_mode: None,
        }
    }

    /// What a stand-in of `dir` on another process starts with: the destination below the root.
    pub fn lend(dir: &DirNode<DestDir>) -> DestDir {
        let pair = root_pair(dir);
        DestDir {
            mirror: Mirror::beneath(&pair.dest, pair.follow_dest, dir.relative_path()),
            fresh: dir.data.fresh,
            root: Some(pair),
            chunks_done: PieceReports::default(),
            restore_mode: None,
        }
    }
}

/// The destination of one entry.
#[derive(Clone, Serialize, Deserialize)]
#[serde(into = "PlaceWire", try_from = "PlaceWire")]
pub enum Place {
    /// `name` in the counterpart of the source directory `dir`.
    Child { dir: Arc<DirNode<DestDir>>, name: CString },
    /// The copy of a walk root: the last component of `pair.dest`.
    Root { pair: Arc<RootPair>, name: CString },
    /// `name` in the directory `dir` below the roots, on a process that got the place as data.
    Beneath { pair: Arc<RootPair>, dir: Vec<u8>, name: CString, fresh: bool },
}

/// A place as plain data: the roots, the directory below them (`None` for a root's copy), the name.
#[derive(Serialize, Deserialize)]
struct PlaceWire {
    pair: RootPair,
    dir: Option<Vec<u8>>,
    name: Vec<u8>,
    fresh: bool,
}

impl From<Place> for PlaceWire {
    fn from(place: Place) -> PlaceWire {
        let fresh = place.fresh();
        let pair = RootPair::clone(&place.pair());
        match place {
            Place::Child { dir, name } => {
                PlaceWire { pair, dir: Some(dir.relative_path().to_vec()), name: name.into_bytes(), fresh }
            }
            Place::Root { name, .. } => PlaceWire { pair, dir: None, name: name.into_bytes(), fresh },
            Place::Beneath { dir, name, .. } => {
                PlaceWire { pair, dir: Some(dir), name: name.into_bytes(), fresh }
            }
        }
    }
}

impl TryFrom<PlaceWire> for Place {
    type Error = std::ffi::NulError;

    fn try_from(wire: PlaceWire) -> Result<Place, Self::Error> {
        let (pair, name) = (Arc::new(wire.pair), CString::new(wire.name)?);
        Ok(match wire.dir {
            Some(dir) => Place::Beneath { pair, dir, name, fresh: wire.fresh },
            None => Place::Root { pair, name },
        })
    }
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
            Place::Child { name, .. } | Place::Root { name, .. } | Place::Beneath { name, .. } => name,
        }
    }

    /// The source directory whose `leave_dir` must wait for work on this entry (none for a root,
    /// nor for a place that came as data).
    pub fn source_dir(&self) -> Option<&Arc<DirNode<DestDir>>> {
        match self {
            Place::Child { dir, .. } => Some(dir),
            Place::Root { .. } | Place::Beneath { .. } => None,
        }
    }

    /// Whether the containing destination directory is new in this run.
    pub fn fresh(&self) -> bool {
        match self {
            Place::Child { dir, .. } => dir.data.fresh,
            Place::Root { .. } => false,
            Place::Beneath { fresh, .. } => *fresh,
        }
    }

    /// The destination directory holding the entry, opened without following symlinks below the
    /// destination root.
    pub fn open_dir(&self) -> Result<DirFd, Errno> {
        match self {
            Place::Child { dir, .. } => Mirror::open(dir, &DestDir::mirror),
            Place::Root { pair, .. } => open_path(split_parent(&pair.dest).0, true).map(DirFd::Temporary),
            Place::Beneath { pair, dir, .. } => {
                open_beneath(&pair.dest, pair.follow_dest, dir, false).map(DirFd::Temporary)
            }
        }
    }

    pub fn pair(&self) -> Arc<RootPair> {
        match self {
            Place::Child { dir, .. } => root_pair(dir),
            Place::Root { pair, .. } | Place::Beneath { pair, .. } => Arc::clone(pair),
        }
    }

    /// The entry's path relative to the roots (empty for a root itself).
    pub fn relative(&self) -> Vec<u8> {
        match self {
            Place::Child { dir, name } => join_relative(dir.relative_path(), name.to_bytes()),
            Place::Root { .. } => Vec::new(),
            Place::Beneath { dir, name, .. } => join_relative(dir, name.to_bytes()),
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

    /// rsync's name of the entry, for listings and filter rules.
    pub fn list_name(&self) -> Vec<u8> {
        self.pair().list_name_of(&self.relative())
    }
}

/// The roots a source directory was reached from (kept by the walk root, or a stand-in).
fn root_pair(dir: &DirNode<DestDir>) -> Arc<RootPair> {
    let root = dir.ancestors().last().expect("a node is its own last ancestor at least");
    Arc::clone(root.data.root.as_ref().expect("the walk gives every root and stand-in its pair"))
}

/// The destination path of a source directory, for messages.
pub fn dest_dir_path(dir: &DirNode<DestDir>) -> Vec<u8> {
    join_relative(&root_pair(dir).dest, dir.relative_path())
}

/// `base/relative`, where either may be empty (the root itself, or a path relative to the roots).
pub fn join_relative(base: &[u8], relative: &[u8]) -> Vec<u8> {
    match (base.is_empty(), relative.is_empty()) {
        (_, true) => base.to_vec(),
        (true, false) => relative.to_vec(),
        (false, false) => join_path(base, relative),
    }
}

//! Directory nodes: one per directory being walked, alive while anything below it is pending.

use crate::meta::Metadata;
use crate::sys::{CachedFd, PinnedFd, open_beneath, open_dir_at, open_path};
use canopy_util::path::join_path;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::io::Errno;
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// The starting point a directory was found under, shared by every node below it and sent with
/// every directory whose work moves to another process.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct StartPoint {
    /// The path as given on the command line (find's `%H`).
    pub path: Box<[u8]>,
    /// Its device, for `-xdev`.
    pub dev: Option<u64>,
    /// Whether it was opened following a symlink in its last component (the walk follows roots).
    pub follow: bool,
}

/// Where an imported directory came from: the peer that exported it and its id there. When the
/// work imported with it finishes, completion goes back to that peer instead of to a parent here.
#[derive(Debug, Clone)]
pub struct Import {
    pub peer: u32,
    pub id: u64,
    /// (path, device, inode) of the directory's ancestors on the exporting side, for loop detection
    /// when following links.
    pub ancestors: Vec<(Vec<u8>, u64, u64)>,
}

/// A directory in the walk.
///
/// The node caches its open fd while its children still need it: they are opened with `openat`
/// relative to it and chunks of its entries are stat'ed relative to it. The cache holds a bounded
/// number of fds, least recently used out ([`CachedFd`]); a directory whose fd was not cached or
/// was closed since is reopened through the nearest cached ancestor, checking that each reopened
/// directory is still the one first seen.
///
/// `pending` counts the units of work below the node — its own read, child directories not yet
/// finished, chunks and jobs — and reaching zero fires the visitor's post-order `leave_dir`.
pub struct DirNode<D> {
    parent: Option<Arc<DirNode<D>>>,
    path: Box<[u8]>,
    name: CString,
    depth: u32,
    follow: bool,
    meta: Option<Metadata>,
    start: Arc<StartPoint>,
    import: Option<Import>,
    fd: Mutex<Option<Arc<CachedFd>>>,
    /// Set once the directory has been opened for reading; later opens are reopens and are checked.
    opened: AtomicBool,
    pending: AtomicUsize,
    /// Per-directory data owned by the tool (e.g. du's running totals).
    pub data: D,
}

/// An open directory fd: pinned in a node's cache, or opened just for this use.
pub enum DirFd {
    Cached(PinnedFd),
    Temporary(OwnedFd),
}

impl AsFd for DirFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            DirFd::Cached(fd) => fd.as_fd(),
            DirFd::Temporary(fd) => fd.as_fd(),
        }
    }
}

impl<D: Default> DirNode<D> {
    /// A starting point of the walk, opened by `path` (which may exceed `PATH_MAX`).
    pub fn root(path: &[u8], follow: bool, meta: Option<Metadata>) -> Arc<Self> {
        Self::root_with(path, follow, meta, D::default())
    }

    /// A subdirectory `name` of `parent`; counts as pending work of the parent until it finishes.
    pub fn child(parent: &Arc<Self>, name: &CStr, follow: bool, meta: Option<Metadata>) -> Arc<Self> {
        Self::child_with(parent, name, follow, meta, D::default())
    }
}

impl<D> DirNode<D> {
    /// A counter for jobs that is no directory of the walk: jobs spawned into it with
    /// [`Cx::spawn_in`](crate::Cx::spawn_in) report back from other processes as a directory's work
    /// does (the chunks of a file given as a starting point). `label` stands for its path; it is
    /// never left.
    pub fn job_group(label: &[u8], data: D) -> Arc<Self> {
        Self::root_with(label, false, None, data)
    }

    /// A stand-in for a directory exported by another process, starting with `data`: it has no
    /// parent here, and is opened from its starting point one component at a time (never following
    /// a symlink on the way unless the walk follows links).
    #[allow(clippy::too_many_arguments)] // the fields of a directory arriving from another process
    pub fn imported(
        path: &[u8],
        name: &[u8],
        depth: u32,
        follow: bool,
        meta: Option<Metadata>,
        start: StartPoint,
        import: Import,
        data: D,
    ) -> Arc<Self> {
        Arc::new(DirNode {
            parent: None,
            path: path.into(),
            name: CString::new(name).unwrap_or_default(),
            depth,
            follow,
            meta,
            start: Arc::new(start),
            import: Some(import),
            fd: Mutex::new(None),
            opened: AtomicBool::new(false),
            pending: AtomicUsize::new(1),
            data,
        })
    }

    pub(crate) fn root_with(path: &[u8], follow: bool, meta: Option<Metadata>, data: D) -> Arc<Self> {
        Arc::new(DirNode {
            parent: None,
            path: path.into(),
            name: CString::new(path).unwrap_or_default(),
            depth: 0,
            follow,
            start: Arc::new(StartPoint { path: path.into(), dev: meta.map(|m| m.dev), follow }),
            import: None,
            meta,
            fd: Mutex::new(None),
            opened: AtomicBool::new(false),
            pending: AtomicUsize::new(1),
            data,
        })
    }

    pub(crate) fn child_with(
        parent: &Arc<Self>,
        name: &CStr,
        follow: bool,
        meta: Option<Metadata>,
        data: D,
    ) -> Arc<Self> {
        parent.add_pending(1);
        Arc::new(DirNode {
            parent: Some(Arc::clone(parent)),
            path: join_path(&parent.path, name.to_bytes()).into(),
            name: name.to_owned(),
            depth: parent.depth + 1,
            follow,
            meta,
            start: Arc::clone(&parent.start),
            import: None,
            fd: Mutex::new(None),
            opened: AtomicBool::new(false),
            pending: AtomicUsize::new(1),
            data,
        })
    }

    /// The full path, as find prints it.
    pub fn path(&self) -> &[u8] {
        &self.path
    }

    /// The name within the parent (for a root: the path as given).
    pub fn name(&self) -> &CStr {
        &self.name
    }

    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn parent(&self) -> Option<&Arc<DirNode<D>>> {
        self.parent.as_ref()
    }

    /// Whether this is a starting point of the walk (not a subdirectory, not imported).
    pub fn is_root(&self) -> bool {
        self.parent.is_none() && self.import.is_none()
    }

    /// Where this directory's work came from, if another process exported it.
    pub fn import(&self) -> Option<&Import> {
        self.import.as_ref()
    }

    /// Whether the directory was reached by following a symlink or is opened following one.
    pub fn follows(&self) -> bool {
        self.follow
    }

    /// The directory's own metadata, when it was read while visiting it.
    pub fn metadata(&self) -> Option<&Metadata> {
        self.meta.as_ref()
    }

    /// The device of the walk root this directory belongs to (for `-xdev`).
    pub fn root_dev(&self) -> Option<u64> {
        self.start.dev
    }

    /// The starting point this directory was found under.
    pub fn start(&self) -> &Arc<StartPoint> {
        &self.start
    }

    /// The path below the starting point (empty for the starting point itself): where the
    /// directory's counterpart lies in another tree, the same on every process of a walk.
    pub fn relative_path(&self) -> &[u8] {
        below_start(&self.path, &self.start.path)
    }

    /// Iterates from this node up to its root (or to the imported node heading its chain).
    pub fn ancestors(&self) -> impl Iterator<Item = &DirNode<D>> {
        std::iter::successors(Some(self), |n| n.parent.as_deref())
    }

    /// The path of the nearest directory, here or on the exporting side, that is file `id` — the
    /// loop a followed symlink would close.
    pub fn ancestor_with_id(&self, id: (u64, u64)) -> Option<Vec<u8>> {
        let mut top = self;
        for node in self.ancestors() {
            if node.meta.is_some_and(|m| m.file_id() == id) {
                return Some(node.path.to_vec());
            }
            top = node;
        }
        let import = top.import.as_ref()?;
        import.ancestors.iter().find(|(_, dev, ino)| (*dev, *ino) == id).map(|(path, _, _)| path.clone())
    }

    pub(crate) fn add_pending(&self, n: usize) {
        self.pending.fetch_add(n, Ordering::SeqCst);
    }

    /// Finishes one unit of pending work; true when it was the last.
    pub(crate) fn release(&self) -> bool {
        self.pending.fetch_sub(1, Ordering::SeqCst) == 1
    }

    /// Opens the directory for reading it; from now on its fd is cached for children and chunks.
    pub(crate) fn open_and_cache(&self) -> Result<DirFd, Errno> {
        let fd = self.open()?;
        self.opened.store(true, Ordering::SeqCst);
        Ok(self.cache(fd))
    }

    /// Puts a fd of this directory in the cache, if the directory is being read and has none there.
    fn cache(&self, fd: DirFd) -> DirFd {
        let DirFd::Temporary(owned) = fd else { return fd };
        if !self.opened.load(Ordering::SeqCst) || self.pending.load(Ordering::SeqCst) == 0 {
            return DirFd::Temporary(owned);
        }
        match CachedFd::cache(owned) {
            Ok(pinned) => {
                let previous = self.lock_fd().replace(Arc::clone(pinned.cached()));
                if let Some(previous) = previous {
                    previous.retire();
                }
                DirFd::Cached(pinned)
            }
            Err(owned) => DirFd::Temporary(owned),
        }
    }

    /// The directory is done: its cached fd is closed (once no one uses it).
    pub(crate) fn drop_cached_fd(&self) {
        if let Some(cached) = self.lock_fd().take() {
            cached.retire();
        }
    }

    /// An fd for this directory: the cached one, or reopened through the nearest ancestor that has one
    /// (or the root's path), every step with `O_NOFOLLOW` unless the walk follows links. Directories
    /// reopened on the way that are still being walked go back in the cache.
    pub fn open(&self) -> Result<DirFd, Errno> {
        if let Some(fd) = self.cached_fd() {
            return Ok(DirFd::Cached(fd));
        }
        let mut chain = vec![self];
        let mut base = None;
        let mut cursor = self;
        while let Some(parent) = cursor.parent.as_deref() {
            if let Some(fd) = parent.cached_fd() {
                base = Some(DirFd::Cached(fd));
                break;
            }
            chain.push(parent);
            cursor = parent;
        }
        let mut fd = match base {
            Some(fd) => fd,
            None => {
                let top = chain.pop().expect("chain holds at least this node");
                let fd = match top.import {
                    Some(_) => top.open_beneath_start()?,
                    None => open_path(&top.path, top.follow)?,
                };
                top.check_identity(&fd)?;
                top.cache(DirFd::Temporary(fd))
            }
        };
        while let Some(node) = chain.pop() {
            let next = open_dir_at(&fd, &node.name, node.follow)?;
            node.check_identity(&next)?;
            fd = node.cache(DirFd::Temporary(next));
        }
        Ok(fd)
    }

    /// Opens an imported directory from its starting point, one component at a time.
    fn open_beneath_start(&self) -> Result<OwnedFd, Errno> {
        open_beneath(&self.start.path, self.start.follow, self.relative_path(), self.follow)
    }

    fn cached_fd(&self) -> Option<PinnedFd> {
        self.lock_fd().as_ref()?.pin()
    }

    fn lock_fd(&self) -> std::sync::MutexGuard<'_, Option<Arc<CachedFd>>> {
        self.fd.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A directory reopened by name must still be the one the walk saw: if it was replaced (renamed
    /// over, swapped), report it as gone rather than walk into something else. The first open needs no
    /// check: `O_NOFOLLOW` already refuses a swapped-in symlink.
    fn check_identity(&self, fd: &OwnedFd) -> Result<(), Errno> {
        if !self.opened.load(Ordering::SeqCst) {
            return Ok(());
        }
        let Some(meta) = self.meta else { return Ok(()) };
        let now = rustix::fs::fstat(fd)?;
        if now.st_ino == meta.ino && now.st_dev == meta.dev { Ok(()) } else { Err(Errno::STALE) }
    }
}

/// The part of `path` below the starting point `start` it was found under (`path` begins with it).
pub fn below_start<'p>(path: &'p [u8], start: &[u8]) -> &'p [u8] {
    let rest = path.get(start.len()..).unwrap_or_default();
    rest.strip_prefix(b"/").unwrap_or(rest)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reopens_through_ancestors_when_not_cached() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b/c")).unwrap();
        std::fs::write(tmp.path().join("a/b/c/f"), b"x").unwrap();
        let root_path = tmp.path().as_os_str().as_encoded_bytes();
        let root = DirNode::<()>::root(root_path, false, None);
        let a = DirNode::child(&root, c"a", false, None);
        let b = DirNode::child(&a, c"b", false, None);
        let c = DirNode::child(&b, c"c", false, None);
        let fd = c.open().unwrap();
        assert!(crate::sys::stat_at(&fd, c"f", false).is_ok());
        assert_eq!(c.path(), [root_path, b"/a/b/c"].concat());
    }

    #[test]
    fn refuses_a_directory_swapped_for_a_symlink() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir(tmp.path().join("outside")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("outside"), tmp.path().join("link")).unwrap();
        let root = DirNode::<()>::root(tmp.path().as_os_str().as_encoded_bytes(), false, None);
        let link = DirNode::child(&root, c"link", false, None);
        assert!(matches!(link.open(), Err(Errno::LOOP | Errno::NOTDIR)));
    }
}

#[cfg(test)]
mod import_tests {
    use super::*;

    #[test]
    fn imported_directories_open_beneath_their_start_and_refuse_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        std::fs::write(tmp.path().join("a/b/f"), b"x").unwrap();
        std::fs::create_dir(tmp.path().join("outside")).unwrap();
        std::os::unix::fs::symlink(tmp.path().join("outside"), tmp.path().join("a/swapped")).unwrap();
        let start = tmp.path().as_os_str().as_encoded_bytes().to_vec();
        let import = Import { peer: 1, id: 7, ancestors: Vec::new() };
        let make = |rel: &[u8]| {
            let path = [start.as_slice(), rel].concat();
            let name = rel.rsplit(|&b| b == b'/').next().unwrap().to_vec();
            DirNode::<()>::imported(
                &path,
                &name,
                2,
                false,
                None,
                StartPoint { path: start.clone().into(), dev: None, follow: false },
                import.clone(),
                (),
            )
        };
        let node = make(b"/a/b");
        assert!(!node.is_root());
        assert!(crate::sys::stat_at(node.open().unwrap(), c"f", false).is_ok());
        assert!(matches!(make(b"/a/swapped").open(), Err(Errno::LOOP | Errno::NOTDIR)));
    }
}

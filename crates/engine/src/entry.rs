//! What a visitor sees for each file: name, type from `d_type`, and metadata fetched only on demand.

use crate::meta::{FileKind, Metadata};
use crate::node::{DirNode, below_start};
use crate::sys::{stat_at, stat_path};
use canopy_util::path::{join_path, last_component};
use rustix::fd::BorrowedFd;
use rustix::io::Errno;
use std::cell::OnceCell;
use std::ffi::CStr;
use std::sync::Arc;

/// One entry of the walk. Metadata is fetched at most once, with `statx` relative to the parent
/// directory's fd, and only if the visitor (or the engine, to decide whether to descend) asks for it.
///
/// An entry knows the starting point it was found under ([`Entry::start_point`]) from its
/// directory's node, not from the directory's ancestors: on a process that imported part of a
/// distributed walk, the chain of ancestors stops at a stand-in.
pub struct Entry<'a, D> {
    parent: Option<(&'a Arc<DirNode<D>>, BorrowedFd<'a>)>,
    /// For roots: the path as given.
    name: &'a CStr,
    /// The starting point's path as given.
    start: &'a [u8],
    dtype: FileKind,
    depth: u32,
    follow: bool,
    meta: OnceCell<Result<Metadata, Errno>>,
}

impl<'a, D> Entry<'a, D> {
    /// An entry read from directory `dir` (open as `dir_fd`).
    pub fn child(
        dir: &'a Arc<DirNode<D>>,
        dir_fd: BorrowedFd<'a>,
        name: &'a CStr,
        dtype: FileKind,
        follow: bool,
    ) -> Self {
        Entry {
            parent: Some((dir, dir_fd)),
            name,
            start: &dir.start().path,
            dtype,
            depth: dir.depth() + 1,
            follow,
            meta: OnceCell::new(),
        }
    }

    /// A starting point given on the command line.
    pub fn root(path: &'a CStr, follow: bool) -> Self {
        Entry {
            parent: None,
            name: path,
            start: path.to_bytes(),
            dtype: FileKind::Unknown,
            depth: 0,
            follow,
            meta: OnceCell::new(),
        }
    }

    /// The entry a directory node stands for (for post-order visits, e.g. find -depth or -delete).
    /// `parent_fd` is the parent's open fd (`None` for a root).
    pub fn of_dir(node: &'a DirNode<D>, parent: Option<(&'a Arc<DirNode<D>>, BorrowedFd<'a>)>) -> Self {
        let meta = OnceCell::new();
        if let Some(m) = node.metadata() {
            let _ = meta.set(Ok(*m));
        }
        Entry {
            parent,
            name: node.name(),
            start: &node.start().path,
            dtype: FileKind::Dir,
            depth: node.depth(),
            follow: node.follows(),
            meta,
        }
    }

    /// Depth below the root (the root is 0), as find's `-maxdepth` counts.
    pub fn depth(&self) -> u32 {
        self.depth
    }

    pub fn is_root(&self) -> bool {
        self.parent.is_none()
    }

    /// The starting point this entry was found under, as given (find's `%H`): the same on every
    /// process of a distributed walk.
    pub fn start_point(&self) -> &'a [u8] {
        self.start
    }

    /// The path below the starting point, empty for the starting point itself (find's `%P`).
    pub fn relative_path(&self) -> Vec<u8> {
        below_start(&self.path(), self.start).to_vec()
    }

    /// The directory containing this entry (`None` for roots).
    pub fn dir(&self) -> Option<&'a Arc<DirNode<D>>> {
        self.parent.map(|(dir, _)| dir)
    }

    /// The parent directory's fd, for `*at` system calls on this entry (`None` for roots).
    pub fn dir_fd(&self) -> Option<BorrowedFd<'a>> {
        self.parent.map(|(_, fd)| fd)
    }

    /// The name relative to the parent (for roots, the whole path as given), NUL-terminated.
    pub fn name_cstr(&self) -> &'a CStr {
        self.name
    }

    /// The last path component, as find's `-name` sees it: for roots the basename of the given path
    /// with trailing slashes removed (`/` stays `/`).
    pub fn file_name(&self) -> &'a [u8] {
        let name = self.name.to_bytes();
        if self.parent.is_some() { name } else { last_component(name) }
    }

    /// Appends the full path to `out`.
    pub fn write_path(&self, out: &mut Vec<u8>) {
        match self.parent {
            None => out.extend_from_slice(self.name.to_bytes()),
            Some((dir, _)) => {
                let dir_path = dir.path();
                out.extend_from_slice(dir_path);
                if !dir_path.ends_with(b"/") {
                    out.push(b'/');
                }
                out.extend_from_slice(self.name.to_bytes());
            }
        }
    }

    /// The full path.
    pub fn path(&self) -> Vec<u8> {
        match self.parent {
            None => self.name.to_bytes().to_vec(),
            Some((dir, _)) => join_path(dir.path(), self.name.to_bytes()),
        }
    }

    /// The type `getdents64` reported, without a stat; may be `Unknown` and is never resolved
    /// through a symlink.
    pub fn dirent_kind(&self) -> FileKind {
        self.dtype
    }

    /// Whether stat-based questions follow symlinks for this entry (`-L`, or a `-H` root).
    pub fn follows(&self) -> bool {
        self.follow
    }

    /// The entry's type as find's `-type` sees it: from `d_type` when that is enough, otherwise from
    /// (l)stat — a symlink is resolved when following links, and a broken one stays a symlink.
    pub fn kind(&self) -> FileKind {
        let needs_stat = self.dtype == FileKind::Unknown || (self.follow && self.dtype == FileKind::Symlink);
        if !needs_stat {
            return self.dtype;
        }
        match self.metadata() {
            Ok(m) => m.kind(),
            Err(_) => self.dtype,
        }
    }

    /// The metadata, fetched on first use (stat when following links, lstat otherwise).
    pub fn metadata(&self) -> Result<&Metadata, Errno> {
        self.meta
            .get_or_init(|| match self.parent {
                Some((_, fd)) => stat_at(fd, self.name, self.follow),
                None => stat_path(self.name.to_bytes(), self.follow),
            })
            .as_ref()
            .map_err(|e| *e)
    }

    /// Metadata if it has already been fetched, without fetching it.
    pub fn cached_metadata(&self) -> Option<&Metadata> {
        self.meta.get().and_then(|r| r.as_ref().ok())
    }

    /// The metadata of the entry itself, never following a symlink (`-xtype`'s opposite view).
    pub fn symlink_metadata(&self) -> Result<Metadata, Errno> {
        if !self.follow {
            return self.metadata().copied();
        }
        match self.parent {
            Some((_, fd)) => stat_at(fd, self.name, false),
            None => stat_path(self.name.to_bytes(), false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_file_name_like_find() {
        let cases: [(&CStr, &[u8]); 6] = [
            (c"/", b"/"),
            (c"a/b/", b"b"),
            (c"a//", b"a"),
            (c".", b"."),
            (c"/usr/lib", b"lib"),
            (c"///", b"/"),
        ];
        for (path, expected) in cases {
            let e = Entry::<()>::root(path, false);
            assert_eq!(e.file_name(), expected, "{path:?}");
        }
    }
}

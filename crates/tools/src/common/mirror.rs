//! The directory at the same place in another tree — the destination of a copy, the source a sync
//! prunes against, the other side of a comparison. It is opened when first needed, relative to the
//! parent's counterpart with `O_NOFOLLOW` at every step (a symlink planted in the other tree is
//! never followed), and kept in the engine's fd cache until the walk leaves the directory (or the
//! cache closes it to make room: it is reopened the same way).
//!
//! Under MPI a directory's work may continue on another process, whose stand-in of the directory
//! has no parent there: its counterpart is lent as plain data ([`Mirror::beneath`]: the other
//! tree's root and the path below it) and reopened from that root, component by component, again
//! with `O_NOFOLLOW`.

use canopy_engine::sys::{CachedFd, open_beneath, open_dir_at, open_path};
use canopy_engine::{DirFd, DirNode, Errno};
use serde::{Deserialize, Serialize};
use std::sync::{Arc, Mutex};

#[derive(Default, Serialize, Deserialize)]
pub struct Mirror {
    origin: Origin,
    #[serde(skip)]
    fd: Mutex<Slot>,
}

/// How the counterpart is found.
#[derive(Default, Serialize, Deserialize)]
enum Origin {
    /// Through the parent's counterpart.
    #[default]
    Parent,
    /// The counterpart of a walk root: its path, and whether its last component may be a symlink.
    Root { path: Box<[u8]>, follow: bool },
    /// Below a root of the other tree (a stand-in's counterpart).
    Beneath { root: Box<[u8]>, follow_root: bool, relative: Box<[u8]> },
}

#[derive(Default)]
enum Slot {
    #[default]
    Unopened,
    Cached(Arc<CachedFd>),
    /// The walk left the directory: later opens (rare: a hard link into it) are not cached.
    Closed,
}

impl Mirror {
    /// The counterpart of a walk root, opened by `path` (of any length).
    pub fn root(path: &[u8], follow: bool) -> Self {
        Mirror { origin: Origin::Root { path: path.into(), follow }, fd: Mutex::default() }
    }

    /// The directory `relative` below the other tree's `root`: the counterpart lent to a stand-in
    /// (`relative` is the stand-in's [`DirNode::relative_path`]).
    pub fn beneath(root: &[u8], follow_root: bool, relative: &[u8]) -> Self {
        let origin = Origin::Beneath { root: root.into(), follow_root, relative: relative.into() };
        Mirror { origin, fd: Mutex::default() }
    }

    /// The counterpart of `node`, found through `of` in each directory's data.
    pub fn open<D>(node: &DirNode<D>, of: &impl Fn(&D) -> &Mirror) -> Result<DirFd, Errno> {
        let mirror = of(&node.data);
        let mut slot = mirror.fd.lock().unwrap_or_else(|e| e.into_inner());
        if let Slot::Cached(cached) = &*slot
            && let Some(pinned) = cached.pin()
        {
            return Ok(DirFd::Cached(pinned));
        }
        let fd = match (&mirror.origin, node.parent()) {
            (Origin::Root { path, follow }, _) => open_path(path, *follow)?,
            (Origin::Beneath { root, follow_root, relative }, _) => {
                open_beneath(root, *follow_root, relative, false)?
            }
            (Origin::Parent, Some(parent)) => open_dir_at(Self::open(parent, of)?, node.name(), false)?,
            (Origin::Parent, None) => {
                unreachable!("a walk root's counterpart is made with Mirror::root, a stand-in's lent")
            }
        };
        if matches!(*slot, Slot::Closed) {
            return Ok(DirFd::Temporary(fd));
        }
        match CachedFd::cache(fd) {
            Ok(pinned) => {
                *slot = Slot::Cached(Arc::clone(pinned.cached()));
                Ok(DirFd::Cached(pinned))
            }
            Err(fd) => Ok(DirFd::Temporary(fd)),
        }
    }

    /// Releases the cached fd once the walk has left the directory.
    pub fn close(&self) {
        let previous =
            std::mem::replace(&mut *self.fd.lock().unwrap_or_else(|e| e.into_inner()), Slot::Closed);
        if let Slot::Cached(cached) = previous {
            cached.retire();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use canopy_engine::{Action, Cx, Entry, ThreadPolicy, Visitor, WalkOptions, walk};
    use std::os::unix::ffi::OsStrExt;

    /// Walks tree `a` and opens, for each entry, its directory's counterpart in tree `b`.
    struct Lookup {
        b: Vec<u8>,
    }

    impl Visitor for Lookup {
        type State = Vec<(Vec<u8>, Result<(), Errno>)>;
        type DirData = Mirror;
        type Job = ();

        fn new_state(&self) -> Self::State {
            Vec::new()
        }

        fn visit(&self, cx: &mut Cx<'_, Self>, seen: &mut Self::State, entry: &Entry<'_, Mirror>) -> Action {
            match entry.dir() {
                None => cx.set_dir_data(Mirror::root(&self.b, false)),
                Some(dir) => {
                    let found = Mirror::open(dir, &|m: &Mirror| m).and_then(|fd| {
                        rustix::fs::statat(&fd, entry.name_cstr(), rustix::fs::AtFlags::SYMLINK_NOFOLLOW)
                            .map(drop)
                    });
                    seen.push((entry.name_cstr().to_bytes().to_vec(), found));
                }
            }
            Action::Continue
        }

        fn leave_dir(&self, _: &mut Cx<'_, Self>, _: &mut Self::State, dir: &Arc<DirNode<Mirror>>) {
            dir.data.close();
        }
    }

    #[test]
    fn opens_through_the_other_tree_and_refuses_symlinks() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/x/y")).unwrap();
        std::fs::write(tmp.path().join("a/x/f"), b"").unwrap();
        std::fs::write(tmp.path().join("a/x/y/z"), b"").unwrap();
        std::fs::create_dir_all(tmp.path().join("b/x")).unwrap();
        std::fs::write(tmp.path().join("b/x/f"), b"").unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        std::fs::write(tmp.path().join("outside/z"), b"").unwrap();
        std::os::unix::fs::symlink(tmp.path().join("outside"), tmp.path().join("b/x/y")).unwrap();
        let lookup = Lookup { b: tmp.path().join("b").as_os_str().as_bytes().to_vec() };
        let options = WalkOptions { threads: ThreadPolicy::Fixed(2), ..WalkOptions::default() };
        let outcome = walk(&[tmp.path().join("a").as_os_str().as_bytes().to_vec()], &options, &lookup);
        let mut seen: Vec<_> = outcome.states.into_iter().flatten().collect();
        seen.sort_by(|l, r| l.0.cmp(&r.0));
        assert_eq!(seen[0], (b"f".to_vec(), Ok(())), "a/x/f has b/x/f");
        assert_eq!(seen[1], (b"x".to_vec(), Ok(())));
        assert_eq!(seen[2], (b"y".to_vec(), Ok(())), "b/x/y exists (as a symlink)");
        assert_eq!(seen[3].0, b"z");
        assert!(matches!(seen[3].1, Err(Errno::LOOP | Errno::NOTDIR)), "never reached through the symlink");
    }
}

//! Hard links across the processes of a distributed copy (`mpirun canopy cp/sync`).
//!
//! Each process keeps `rsync -H` semantics among the names it meets itself ([`super::links`]).
//! Names of one inode met by different processes meet where all processes can see each other's
//! work: in the destination file system. Every source inode with more than one link has one
//! *meeting name* in a fixed directory of the destination, the link area (the directory copied into,
//! or the copy itself): `.canopy-tmp-` and 16 hex digits of a hash of the source's device, inode,
//! size and modification time. `link(2)` decides: it fails with `EEXIST` when the name exists, so
//! exactly one process publishes its copy there.
//!
//! * The first name of the inode a process meets looks the meeting name up: if it is there, the
//!   inode's copy exists and the name becomes a link to it — no data copied.
//! * Otherwise the name is copied like any file (temporary name, then rename) and then published:
//!   linked to the meeting name. The process whose link succeeds owns the inode's copy; one that
//!   finds the name taken (another process published first) replaces its own copy by a link to
//!   the published one, through a temporary link renamed over it, so the name always holds a
//!   complete copy.
//! * The other names a process meets link to its first name, by then a name of the published copy:
//!   all names of the inode, on every process, end up on one inode.
//! * When the walk is over everywhere, each process removes the meeting names it used; once all
//!   have, the copies of the walk roots get their times (the removals touched the link area, which
//!   may be such a copy), exactly once.
//!
//! A meeting name left by an interrupted run is a complete copy (it is only ever a link to one)
//! and, its hash covering size and modification time, is used again only for a source that passes
//! the quick check against it. Like every temporary it is never copied, and sync removes it.

use super::Transfer;
use super::dest::Place;
use super::links::Placed;
use super::visitor::{Failure, TransferState};
use crate::common::{lookup, print_error};
use canopy_engine::sys::open_path;
use canopy_engine::{Cx, DirFd, Errno, Metadata, Op, WalkError};
use canopy_util::path::join_path;
use canopy_util::temp_name::is_temp_name;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{AtFlags, linkat, unlinkat};
use std::collections::HashSet;
use std::ffi::{CStr, CString};
use std::sync::{Arc, Mutex};

/// The link area of one copy and the meeting names this process used in it.
pub struct SharedLinks {
    area: Vec<u8>,
    /// Whether the area's last component may be a symlink (a destination named by the user).
    follow: bool,
    fd: Mutex<Option<Arc<OwnedFd>>>,
    used: Mutex<HashSet<CString>>,
}

/// The published copy of an inode: a meeting name in the link area.
pub struct Meeting {
    pub area: Arc<OwnedFd>,
    pub name: CString,
    pub meta: Metadata,
}

impl SharedLinks {
    pub fn new(area: Vec<u8>, follow: bool) -> Self {
        SharedLinks { area, follow, fd: Mutex::default(), used: Mutex::default() }
    }

    /// The meeting name of the source inode `meta`.
    pub fn meeting_name(meta: &Metadata) -> CString {
        let mut key = b"canopy hard link".to_vec();
        for n in [meta.dev, meta.ino, meta.size, meta.mtime.sec as u64, u64::from(meta.mtime.nsec)] {
            key.extend_from_slice(&n.to_le_bytes());
        }
        let hash = xxhash_rust::xxh3::xxh3_64(&key);
        let name = CString::new(format!(".canopy-tmp-{hash:016x}")).expect("no NUL in a formatted name");
        debug_assert!(is_temp_name(name.to_bytes()));
        name
    }

    /// The published copy of `meta`'s inode, if a process (this run or an interrupted one) made it.
    pub fn find(&self, meta: &Metadata) -> Result<Option<Meeting>, Errno> {
        let area = self.area_fd()?;
        let name = Self::meeting_name(meta);
        let Some(found) = lookup(&*area, &name)? else { return Ok(None) };
        if found.kind() != meta.kind() || found.size != meta.size {
            return Ok(None);
        }
        self.note_used(&name);
        Ok(Some(Meeting { area, name, meta: found }))
    }

    /// Offers `name` in `dir`, a complete copy of `meta`'s inode, as the inode's copy: `None` if it
    /// now is (or already was: another process published it under another of its names), or the
    /// copy another process published first.
    pub fn publish(
        &self,
        dir: BorrowedFd<'_>,
        name: &CStr,
        meta: &Metadata,
    ) -> Result<Option<Meeting>, Errno> {
        let area = self.area_fd()?;
        let meeting = Self::meeting_name(meta);
        self.note_used(&meeting);
        match linkat(dir, name, &*area, &meeting, AtFlags::empty()) {
            Ok(()) => Ok(None),
            Err(Errno::EXIST) => {
                let found = lookup(&*area, &meeting)?.ok_or(Errno::NOENT)?;
                // Two processes that kept one existing copy, each under a name it met, publish the
                // same inode: nothing to replace. (Linking the name over itself would leave the
                // temporary behind: rename(2) between two names of one inode does nothing.)
                let offered = lookup(dir, name)?.ok_or(Errno::NOENT)?;
                if offered.file_id() == found.file_id() {
                    return Ok(None);
                }
                Ok(Some(Meeting { area, name: meeting, meta: found }))
            }
            Err(errno) => Err(errno),
        }
    }

    /// Removes the meeting names this process used (once the walk is over on every process);
    /// returns the failures, with their paths.
    pub fn remove_used(&self) -> Vec<(Vec<u8>, Errno)> {
        let used = std::mem::take(&mut *self.used.lock().unwrap_or_else(|e| e.into_inner()));
        if used.is_empty() {
            return Vec::new();
        }
        let area = match self.area_fd() {
            Ok(area) => area,
            Err(errno) => return vec![(self.area.clone(), errno)],
        };
        used.into_iter()
            .filter_map(|name| match unlinkat(area.as_fd(), &name, AtFlags::empty()) {
                Ok(()) | Err(Errno::NOENT) => None,
                Err(errno) => Some((join_path(&self.area, name.to_bytes()), errno)),
            })
            .collect()
    }

    /// The link area's path, for messages.
    pub fn area(&self) -> &[u8] {
        &self.area
    }

    fn note_used(&self, name: &CStr) {
        self.used.lock().unwrap_or_else(|e| e.into_inner()).insert(name.to_owned());
    }

    /// The link area, opened once (it exists by the time a name below a root is met: it is the
    /// directory copied into, or that root's copy).
    fn area_fd(&self) -> Result<Arc<OwnedFd>, Errno> {
        let mut fd = self.fd.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(fd) = &*fd {
            return Ok(Arc::clone(fd));
        }
        let opened = Arc::new(open_path(&self.area, self.follow)?);
        *fd = Some(Arc::clone(&opened));
        Ok(opened)
    }
}

impl Transfer {
    /// The first name met here of a multiply linked inode whose copy another process published:
    /// `place` (in `dir`, holding `existing`) becomes a name of that copy.
    #[allow(clippy::too_many_arguments)] // a copy_entry step: what it knows about the entry
    pub(super) fn adopt(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        (place, source): (&Place, &Metadata),
        dir: &DirFd,
        existing: Option<&Metadata>,
        link: Option<(u64, u64)>,
        meeting: &Meeting,
    ) {
        let id = meeting.meta.file_id();
        let linked = if existing.is_some_and(|e| e.file_id() == id) {
            Ok(())
        } else {
            self.make_link(place, dir, existing.is_some(), (meeting.area.as_fd(), &meeting.name))
        };
        match linked {
            Ok(()) => {
                let new = existing.is_none();
                let flags = existing.map(|e| self.link_flags(source, e)).unwrap_or_default();
                let item = super::itemize::Item {
                    new,
                    flags,
                    ..self.item(canopy_engine::FileKind::File, super::itemize::Update::HardLink)
                };
                self.tell(state, place, item, None, None);
                self.totals.done(1, 0);
                let placed = Placed { place: place.clone(), id: Some(id), source: *source };
                self.settle(cx, link, Ok(Arc::new(placed)));
            }
            Err(errno) => self.fail(cx, state, link, Failure::io(place.dest_path(), "link", errno)),
        }
    }

    /// Offers the first name met here of a multiply linked inode, in place as the copy `id`, as the
    /// inode's copy; returns the copy the name now is (another process's, if it published first).
    pub(super) fn publish(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        shared: &SharedLinks,
        place: &Place,
        id: Option<(u64, u64)>,
        meta: &Metadata,
    ) -> Option<(u64, u64)> {
        let published =
            place.open_dir().and_then(|dir| Ok((shared.publish(dir.as_fd(), place.name(), meta)?, dir)));
        match published {
            Ok((None, _)) => id,
            Ok((Some(meeting), dir)) => {
                match self.make_link(place, &dir, true, (meeting.area.as_fd(), &meeting.name)) {
                    Ok(()) => Some(meeting.meta.file_id()),
                    Err(errno) => {
                        cx.report(WalkError::io(place.dest_path(), Op::Tool("link"), errno));
                        id
                    }
                }
            }
            Err(errno) => {
                self.meeting_failed(state, shared.area(), errno);
                id
            }
        }
    }

    /// The link area could not be used: names of one inode met by different processes stay
    /// separate copies.
    pub(super) fn meeting_failed(&self, state: &mut TransferState, area: &[u8], errno: Errno) {
        let area = String::from_utf8_lossy(area);
        let message = format!(
            "cannot keep hard links across processes in '{area}': {}",
            canopy_engine::errno_message(errno)
        );
        self.report_failure(state, Failure::Message(message));
    }

    /// Under MPI, once the walk is over everywhere: removes the meeting names used here and, when
    /// every process has, gives the roots' copies their attributes. Collective; returns the
    /// failures, reported.
    pub(super) fn finish_on_every_process(&self, cluster: &canopy_distwalk::Cluster) -> u64 {
        let mut failures = 0;
        if let Some(shared) = &self.shared_links {
            for (path, errno) in shared.remove_used() {
                print_error(self.tool, WalkError::io(path, Op::Tool("remove"), errno));
                failures += 1;
            }
        }
        // A collective: no process passes it before every other has removed its meeting names.
        let completed = cluster.agree_exit(u8::from(!self.completed() || failures > 0)) == 0;
        let roots = std::mem::take(&mut *self.deferred_roots.lock().unwrap_or_else(|e| e.into_inner()));
        for root in roots {
            for error in self.finish_dir(&root, completed) {
                print_error(self.tool, error);
                failures += 1;
            }
        }
        failures
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::MetadataExt;

    #[test]
    fn one_publication_wins_and_the_others_find_it() {
        let tmp = tempfile::tempdir().unwrap();
        let (area, dir) = (tmp.path().join("area"), tmp.path().join("d"));
        std::fs::create_dir(&area).unwrap();
        std::fs::create_dir(&dir).unwrap();
        std::fs::write(dir.join("first"), b"data").unwrap();
        std::fs::write(dir.join("second"), b"data").unwrap();
        let source = canopy_engine::sys::stat_path(dir.join("first").as_os_str().as_bytes(), false).unwrap();
        let links = SharedLinks::new(area.as_os_str().as_bytes().to_vec(), false);
        assert!(links.find(&source).unwrap().is_none());
        let dir_fd = open_path(dir.as_os_str().as_bytes(), false).unwrap();
        assert!(links.publish(dir_fd.as_fd(), c"first", &source).unwrap().is_none(), "the first wins");
        std::fs::hard_link(dir.join("first"), dir.join("first-again")).unwrap();
        let again = links.publish(dir_fd.as_fd(), c"first-again", &source).unwrap();
        assert!(again.is_none(), "another name of the published copy is that copy already");
        let taken = links.publish(dir_fd.as_fd(), c"second", &source).unwrap().expect("the name is taken");
        let first_ino = std::fs::metadata(dir.join("first")).unwrap().ino();
        assert_eq!(taken.meta.ino, first_ino, "the loser learns the winner's copy");
        assert_eq!(links.find(&source).unwrap().unwrap().meta.ino, first_ino);
        assert!(links.remove_used().is_empty());
        assert_eq!(std::fs::read_dir(&area).unwrap().count(), 0, "meeting names removed");
        assert_eq!(std::fs::read(dir.join("first")).unwrap(), b"data", "the copies stay");
    }
}

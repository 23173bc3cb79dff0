//! Regular files. The source is opened without following symlinks (and checked to be the file the
//! walk listed); the copy is written under its temporary name — in one go, or for a big file in
//! chunks that any worker of any process copies ([`super::chunks`]) — then finished (owner, xattrs,
//! permissions, times, `--fsync`) and renamed into place, once, by the process that opened it, when
//! the last chunk is done wherever it was done.

use super::Reflink;
use super::chunks::FileChunkSpan;
use super::data::{CopyError, Span, copy_span};
use super::dest::{DestDir, Place, RootPair, join_relative};
use super::temp::{create_file, discard, rename_into_place};
use super::visitor::{Failure, TransferState};
use super::{Transfer, attrs};
use crate::common::wire;
use canopy_engine::sys::{PATH_MAX, open_beneath, open_path};
use canopy_engine::{Cx, DirFd, DirNode, Entry, Errno, Metadata, polite};
use canopy_util::path::{split_parent, split_relative};
use canopy_util::temp_name::temp_name;
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{CWD, Mode, OFlags, fdatasync, fstat, ftruncate, openat};
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString};
use std::sync::Arc;

/// Pieces of a big file's copy, as plain data any process can copy: the file by its roots and its
/// path below them, the temporary being filled, the identities both must still have there, and the
/// byte range left to copy from `offset`, one chunk per job.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct FileChunk {
    /// The copy it belongs to, on the process that opened it.
    pub id: u64,
    #[serde(with = "wire::shared")]
    pub pair: Arc<RootPair>,
    /// The file's path relative to the roots (empty for a root itself).
    pub path: Vec<u8>,
    pub temp: Vec<u8>,
    /// (device, inode) of the source and of the temporary.
    pub source_id: (u64, u64),
    pub temp_id: (u64, u64),
    /// Whether the source may be opened without updating its access time.
    pub noatime: bool,
    pub sparse: bool,
    /// The chunk this job copies starts here; the jobs after it copy the rest up to `end`.
    pub offset: u64,
    pub end: u64,
}

/// The two open files of a copy, and what a failure message needs.
#[derive(Clone, Copy)]
pub(super) struct Copying<'a> {
    pub pair: &'a RootPair,
    /// The file's path relative to the roots.
    pub path: &'a [u8],
    pub src: &'a OwnedFd,
    pub tmp: &'a OwnedFd,
    pub sparse: bool,
    pub verify: bool,
    pub offload: bool,
    /// The source's device (where `copy_file_range` may be refused).
    pub dev: u64,
}

/// A file being copied: its open source and temporary, and the attributes it is to get.
pub struct InFlight {
    pub(super) src: OwnedFd,
    pub(super) tmp: OwnedFd,
    pub(super) temp: CString,
    pub(super) place: Place,
    pub(super) pair: Arc<RootPair>,
    pub(super) meta: Metadata,
    pub(super) sparse: bool,
    /// Permission bits and, where cp writes over a file, the owner it keeps.
    mode: Option<u32>,
    owner: Option<(u32, u32)>,
    /// Source (device, inode) when the file has other links waiting for this copy.
    pub(super) link: Option<(u64, u64)>,
}

impl InFlight {
    pub(super) fn copying<'a>(&'a self, path: &'a [u8], transfer: &Transfer) -> Copying<'a> {
        Copying {
            pair: &self.pair,
            path,
            src: &self.src,
            tmp: &self.tmp,
            sparse: self.sparse,
            verify: transfer.options.verify,
            offload: transfer.options.reflink != Reflink::Never,
            dev: self.meta.dev,
        }
    }
}

/// Runs `op` on a source entry relative to its directory — or, for a starting point, by path
/// (through its parent when the path is longer than `PATH_MAX`).
pub fn at_source<T>(
    entry: &Entry<'_, DestDir>,
    op: impl FnOnce(BorrowedFd<'_>, &CStr) -> Result<T, Errno>,
) -> Result<T, Errno> {
    match entry.dir_fd() {
        Some(dir) => op(dir, entry.name_cstr()),
        None => at_path(entry.name_cstr().to_bytes(), op),
    }
}

/// Runs `op` on a root given by path (of any length): relative to its parent, opened by path.
fn at_path<T>(path: &[u8], op: impl FnOnce(BorrowedFd<'_>, &CStr) -> Result<T, Errno>) -> Result<T, Errno> {
    if path.len() < PATH_MAX {
        return op(CWD, &CString::new(path).map_err(|_| Errno::INVAL)?);
    }
    let (parent, name) = split_parent(path);
    let parent = open_path(parent, true)?;
    op(parent.as_fd(), &CString::new(name).map_err(|_| Errno::INVAL)?)
}

fn source_flags(noatime: bool) -> OFlags {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    if noatime { flags | OFlags::NOATIME } else { flags }
}

/// An opened file must still be the regular file `id`: one replaced meanwhile is not touched.
fn check_identity(fd: OwnedFd, id: (u64, u64)) -> Result<OwnedFd, Errno> {
    let now = fstat(&fd)?;
    let regular = now.st_mode & libc::S_IFMT == libc::S_IFREG;
    if !regular || (now.st_dev, now.st_ino) != id {
        return Err(Errno::STALE);
    }
    Ok(fd)
}

/// Opens a source file for reading: never through a symlink, without moving its access time when
/// allowed, and only if it is still the file the walk listed. (A root followed by the walk, cp's
/// `-L`/`-H`, is opened through its symlinks: its identity is the target's.)
pub(super) fn open_source(
    entry: &Entry<'_, DestDir>,
    meta: &Metadata,
    noatime: bool,
) -> Result<OwnedFd, Errno> {
    let flags =
        if entry.follows() { source_flags(noatime) - OFlags::NOFOLLOW } else { source_flags(noatime) };
    let fd = at_source(entry, |dir, name| polite(|| openat(dir, name, flags, Mode::empty())))?;
    check_identity(fd, meta.file_id())
}

/// Opens, on a process other than the one that opened the file, the source and the temporary of
/// `chunk`: from the roots, every directory with `O_NOFOLLOW`, both checked to be the files the
/// opening process saw.
pub(super) fn reopen(chunk: &FileChunk) -> Result<(OwnedFd, OwnedFd), Failure> {
    let pair = &chunk.pair;
    let source = || join_relative(&pair.source, &chunk.path);
    let dest = || join_relative(&pair.dest, &chunk.path);
    let (dir, name) = split_relative(&chunk.path);
    let open_file =
        |dir: BorrowedFd<'_>, name: &CStr| openat(dir, name, source_flags(chunk.noatime), Mode::empty());
    let src = if chunk.path.is_empty() {
        // A root the walk followed (cp's default without -r, -H, -L) is opened through its links.
        let flags = if pair.follow_source {
            source_flags(chunk.noatime) - OFlags::NOFOLLOW
        } else {
            source_flags(chunk.noatime)
        };
        at_path(&pair.source, |dir, name| openat(dir, name, flags, Mode::empty()))
    } else {
        open_beneath(&pair.source, pair.follow_source, dir, false)
            .and_then(|dir| open_file(dir.as_fd(), &CString::new(name).map_err(|_| Errno::INVAL)?))
    };
    let src = src
        .and_then(|fd| check_identity(fd, chunk.source_id))
        .map_err(|e| Failure::io(source(), "read", e))?;
    let dest_dir = if chunk.path.is_empty() {
        open_path(split_parent(&pair.dest).0, true)
    } else {
        open_beneath(&pair.dest, pair.follow_dest, dir, false)
    };
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let tmp = dest_dir
        .and_then(|dir| {
            openat(
                &dir,
                &CString::new(chunk.temp.as_slice()).map_err(|_| Errno::INVAL)?,
                flags,
                Mode::empty(),
            )
        })
        .and_then(|fd| check_identity(fd, chunk.temp_id))
        .map_err(|e| Failure::io(dest(), "write", e))?;
    Ok((src, tmp))
}

impl Transfer {
    /// Copies a regular file into `dir` (the destination directory of `place`), giving it `mode`
    /// and `owner` (see `Wanted`); `link` when other names of it wait for the copy.
    #[allow(clippy::too_many_arguments)] // a copy_entry step: what it decided about the entry
    pub(super) fn copy_file(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        entry: &Entry<'_, DestDir>,
        place: Place,
        dir: &DirFd,
        link: Option<(u64, u64)>,
        (mode, owner): (Option<u32>, Option<(u32, u32)>),
    ) {
        // The visit fetched the metadata before deciding to copy.
        let Some(meta) = entry.cached_metadata() else { return };
        let noatime = self.euid == 0 || meta.uid == self.euid;
        let src = match open_source(entry, meta, noatime) {
            Ok(fd) => fd,
            Err(errno) => return self.fail(cx, state, link, Failure::io(entry.path(), "read", errno)),
        };
        let temp = temp_name(place.name());
        let tmp = match create_file(dir, &temp) {
            Ok(fd) => fd,
            Err(errno) => return self.fail(cx, state, link, Failure::io(place.dest_path(), "create", errno)),
        };
        let sparse = meta.allocated_bytes() < meta.size;
        let clone = self.options.reflink == Reflink::Always;
        let chunked = meta.size > self.options.chunk_size && !clone;
        if (sparse || chunked)
            && !clone
            && let Err(errno) = ftruncate(&tmp, meta.size)
        {
            discard(dir, &temp);
            return self.fail(cx, state, link, Failure::io(place.dest_path(), "write", errno));
        }
        let temp_id = match fstat(&tmp) {
            Ok(st) => (st.st_dev, st.st_ino),
            Err(errno) => {
                discard(dir, &temp);
                return self.fail(cx, state, link, Failure::io(place.dest_path(), "write", errno));
            }
        };
        let pair = place.pair();
        let file = InFlight { src, tmp, temp, pair, place, meta: *meta, sparse, mode, owner, link };
        if clone {
            let cloned = rustix::fs::ioctl_ficlone(&file.tmp, &file.src);
            if let Err(errno) = cloned {
                let source = file.place.source_path();
                let message = format!(
                    "failed to clone '{}' from '{}': {}",
                    lossy(&file.place.dest_path()),
                    lossy(&source),
                    canopy_engine::errno_message(errno)
                );
                self.report_failure(state, Failure::Message(message));
            }
            return self.finish(cx, state, &file, cloned.is_err(), Some(dir));
        }
        if !chunked {
            let path = file.place.relative();
            let copied = self.copy_span_checked(state, &file.copying(&path, self), 0..meta.size);
            let failed = copied.map_err(|failure| self.report_failure(state, failure)).is_err();
            return self.finish(cx, state, &file, failed, Some(dir));
        }
        let chunks = meta.size.div_ceil(self.options.chunk_size);
        let span = FileChunkSpan { temp_id, noatime, sparse, size: meta.size };
        self.start_chunks(cx, file, chunks, span);
    }

    /// Copies `range`; says why not if it failed.
    pub(super) fn copy_span_checked(
        &self,
        state: &mut TransferState,
        copying: &Copying<'_>,
        range: std::ops::Range<u64>,
    ) -> Result<(), Failure> {
        let Copying { pair, path, src, tmp, sparse, verify, offload, dev } = *copying;
        let bytes = range.end - range.start;
        let span = Span { range, sparse, verify, offload, dev };
        let Err(error) = copy_span(src.as_fd(), tmp.as_fd(), &span, &mut state.scratch) else {
            self.totals.written(bytes);
            return Ok(());
        };
        let source = || join_relative(&pair.source, path);
        let dest = || join_relative(&pair.dest, path);
        let failure = match error {
            CopyError::Read(errno) => Failure::io(source(), "read", errno),
            CopyError::Write(errno) => Failure::io(dest(), "write", errno),
            CopyError::Shrank => {
                Failure::Message(format!("'{}': shrank while being copied", lossy(&source())))
            }
            CopyError::Mismatch => Failure::Message(format!(
                "'{}': verification failed: the copy read back differs from the source",
                lossy(&dest())
            )),
        };
        Err(failure)
    }

    /// Gives the complete temporary its attributes and renames it into place, or throws it away if a
    /// piece failed (already reported).
    pub(super) fn finish(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        file: &InFlight,
        failed: bool,
        dir: Option<&DirFd>,
    ) {
        let reopened;
        let dir = match dir {
            Some(dir) => dir,
            None => match file.place.open_dir() {
                Ok(fd) => {
                    reopened = fd;
                    &reopened
                }
                Err(errno) => {
                    return self.fail(
                        cx,
                        state,
                        file.link,
                        Failure::io(file.place.dest_path(), "create", errno),
                    );
                }
            },
        };
        if failed {
            discard(dir, &file.temp);
            return self.settle(cx, file.link, Err(Errno::IO));
        }
        match self.place_file(file, dir) {
            Ok(id) => {
                self.totals.done(1, file.meta.size);
                self.check_unchanged(state, file);
                self.settle_placed(cx, state, file.link, &file.place, id, &file.meta);
            }
            Err(failure) => {
                discard(dir, &file.temp);
                self.fail(cx, state, file.link, failure);
            }
        }
    }

    /// Attributes, flush, rename; returns the copy's (device, inode) when other links need it.
    fn place_file(&self, file: &InFlight, dir: &DirFd) -> Result<Option<(u64, u64)>, Failure> {
        let dest = || file.place.dest_path();
        let wanted =
            attrs::Wanted { meta: &file.meta, keep: self.options.keep, mode: file.mode, owner: file.owner };
        attrs::apply(file.tmp.as_fd(), Some(file.src.as_fd()), &wanted, &self.owner)
            .map_err(|e| Failure::io(dest(), e.verb, e.errno))?;
        if self.options.fsync {
            fdatasync(&file.tmp).map_err(|errno| Failure::io(dest(), "flush", errno))?;
        }
        let id = match file.link {
            Some(_) => fstat(&file.tmp).ok().map(|st| (st.st_dev, st.st_ino)),
            None => None,
        };
        rename_into_place(dir, &file.temp, file.place.name())
            .map_err(|errno| Failure::io(dest(), "create", errno))?;
        Ok(id)
    }

    /// A source that changed while it was copied is reported; its copy keeps the old modification
    /// time, so the next run copies it again.
    fn check_unchanged(&self, state: &mut TransferState, file: &InFlight) {
        let changed = fstat(&file.src).is_ok_and(|now| {
            now.st_size as u64 != file.meta.size
                || (now.st_mtime, now.st_mtime_nsec as i64)
                    != (file.meta.mtime.sec, i64::from(file.meta.mtime.nsec))
        });
        if changed {
            let source = file.place.source_path();
            let source = lossy(&source);
            self.report_failure(
                state,
                Failure::Message(format!(
                    "'{source}': changed while being copied (the next run copies it again)"
                )),
            );
        }
    }
}

/// The group a root file's chunks count toward (a source directory's count toward it).
pub(super) fn chunk_group(file: &InFlight) -> Arc<DirNode<DestDir>> {
    match file.place.source_dir() {
        Some(dir) => Arc::clone(dir),
        None => DirNode::job_group(&file.pair.source, DestDir::of_root(Arc::clone(&file.pair))),
    }
}

pub fn lossy(path: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(path)
}

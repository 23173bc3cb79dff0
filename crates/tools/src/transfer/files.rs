//! Regular files. The source is opened without following symlinks (and checked to be the file the
//! walk listed); the copy is written under its temporary name — in one go, or for a big file in
//! chunks that any worker of any process copies — then finished (owner, xattrs, permissions, times,
//! `--fsync`) and renamed into place, once, by the process that opened it, when the last chunk is
//! done wherever it was done (chunks done elsewhere come back with their directory's data).

use super::data::{CopyError, Span, copy_span, hash_of};
use super::dest::{DestDir, Place, RootPair, join_relative};
use super::temp::{create_file, discard, rename_into_place, temp_name};
use super::visitor::{Failure, Job, TransferState};
use super::{Transfer, attrs};
use crate::common::pieces::PieceDone;
use crate::common::{split_relative, wire};
use canopy_engine::sys::{PATH_MAX, open_beneath, open_path, split_parent};
use canopy_engine::{Cx, DirFd, DirNode, Entry, Errno, Metadata};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{CWD, Mode, OFlags, fdatasync, fstat, ftruncate, openat};
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString};
use std::sync::Arc;

/// One piece of a big file's copy, as plain data any process can copy: the file by its roots and
/// its path below them, the temporary being filled, the identities both must still have there,
/// and the byte range.
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
    pub offset: u64,
    pub len: u64,
}

/// The two open files of a copy, and what a failure message needs.
#[derive(Clone, Copy)]
struct Copying<'a> {
    pair: &'a RootPair,
    /// The file's path relative to the roots.
    path: &'a [u8],
    src: &'a OwnedFd,
    tmp: &'a OwnedFd,
    sparse: bool,
    /// The source's device (where `copy_file_range` may be refused).
    dev: u64,
}

/// A file being copied: its open source and temporary.
pub struct InFlight {
    src: OwnedFd,
    tmp: OwnedFd,
    temp: CString,
    place: Place,
    pair: Arc<RootPair>,
    meta: Metadata,
    sparse: bool,
    /// Source (device, inode) when the file has other links waiting for this copy.
    link: Option<(u64, u64)>,
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
/// allowed, and only if it is still the file the walk listed.
fn open_source(entry: &Entry<'_, DestDir>, meta: &Metadata, noatime: bool) -> Result<OwnedFd, Errno> {
    let fd = at_source(entry, |dir, name| openat(dir, name, source_flags(noatime), Mode::empty()))?;
    check_identity(fd, meta.file_id())
}

/// Opens, on a process other than the one that opened the file, the source and the temporary of
/// `chunk`: from the roots, every directory with `O_NOFOLLOW`, both checked to be the files the
/// opening process saw.
fn reopen(chunk: &FileChunk) -> Result<(OwnedFd, OwnedFd), Failure> {
    let pair = &chunk.pair;
    let source = || join_relative(&pair.source, &chunk.path);
    let dest = || join_relative(&pair.dest, &chunk.path);
    let (dir, name) = split_relative(&chunk.path);
    let open_file =
        |dir: BorrowedFd<'_>, name: &CStr| openat(dir, name, source_flags(chunk.noatime), Mode::empty());
    let src = if chunk.path.is_empty() {
        at_path(&pair.source, open_file)
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
    /// Copies a regular file into `dir` (the destination directory of `place`); `link` when other
    /// names of it wait for the copy.
    pub(super) fn copy_file(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        entry: &Entry<'_, DestDir>,
        place: Place,
        dir: &DirFd,
        link: Option<(u64, u64)>,
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
        let chunked = meta.size > self.options.chunk_size;
        if (sparse || chunked)
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
        let file = InFlight { src, tmp, temp, pair, place, meta: *meta, sparse, link };
        if !chunked {
            let copied = self.copy_range(state, &file, 0..meta.size);
            return self.finish(cx, state, &file, !copied, Some(dir));
        }
        let chunks = meta.size.div_ceil(self.options.chunk_size);
        let template = FileChunk {
            id: 0,
            pair: Arc::clone(&file.pair),
            path: file.place.relative(),
            temp: file.temp.as_bytes().to_vec(),
            source_id: meta.file_id(),
            temp_id,
            noatime,
            sparse,
            offset: 0,
            len: 0,
        };
        // The chunks count toward the file's directory; a root file's toward a group of its own.
        let group = match file.place.source_dir() {
            Some(dir) => Arc::clone(dir),
            None => DirNode::job_group(&file.pair.source, DestDir::of_root(Arc::clone(&file.pair))),
        };
        let id = self.copies.open(file, chunks as usize).id;
        for index in 0..chunks {
            let offset = index * self.options.chunk_size;
            let len = self.options.chunk_size.min(meta.size - offset);
            cx.spawn_in(&group, Job::Chunk(FileChunk { id, offset, len, ..template.clone() }));
        }
    }

    /// Copies one chunk. On the process that opened the file, whoever copies the last chunk
    /// finishes it; elsewhere the chunk is reported back through the directory it counts toward.
    pub(super) fn run_chunk(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, chunk: FileChunk) {
        let range = chunk.offset..chunk.offset + chunk.len;
        let Some(file) = self.copies.get(chunk.id) else {
            let copied = match reopen(&chunk) {
                Ok((src, tmp)) => {
                    let copying = Copying {
                        pair: &chunk.pair,
                        path: &chunk.path,
                        src: &src,
                        tmp: &tmp,
                        sparse: chunk.sparse,
                        dev: chunk.source_id.0,
                    };
                    self.copy_span_of(state, &copying, range)
                }
                Err(failure) => {
                    self.report_failure(state, failure);
                    false
                }
            };
            let dir = cx.job_dir().expect("chunks are spawned in a directory or a job group");
            dir.data.chunks_done.push(PieceDone { id: chunk.id, flagged: !copied });
            return;
        };
        let copied = self.copy_range(state, &file.item, range);
        if let Some(file) = self.copies.done(&file, !copied) {
            self.finish(cx, state, &file.item, file.flagged(), None);
        }
    }

    /// Chunks of files opened here came back from other processes: the last one finishes its file.
    pub(super) fn absorb_chunks(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        dir: &Arc<DirNode<DestDir>>,
        from: DestDir,
    ) {
        for file in self.copies.absorb(from.chunks_done, &dir.data.chunks_done) {
            self.finish(cx, state, &file.item, file.flagged(), None);
        }
    }

    /// Copies a byte range of `file`; false (reported) if it failed.
    fn copy_range(&self, state: &mut TransferState, file: &InFlight, range: std::ops::Range<u64>) -> bool {
        let path = file.place.relative();
        let copying = Copying {
            pair: &file.pair,
            path: &path,
            src: &file.src,
            tmp: &file.tmp,
            sparse: file.sparse,
            dev: file.meta.dev,
        };
        self.copy_span_of(state, &copying, range)
    }

    /// Copies `range`; false (reported) if it failed.
    fn copy_span_of(
        &self,
        state: &mut TransferState,
        copying: &Copying<'_>,
        range: std::ops::Range<u64>,
    ) -> bool {
        let Copying { pair, path, src, tmp, sparse, dev } = *copying;
        let span = Span { range, sparse, verify: self.options.verify, dev };
        let Err(error) = copy_span(src.as_fd(), tmp.as_fd(), &span, &mut state.scratch) else {
            return true;
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
        self.report_failure(state, failure);
        false
    }

    /// Gives the complete temporary its attributes and renames it into place, or throws it away if a
    /// piece failed (already reported).
    fn finish(
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
                self.counters.copied(1, file.meta.size);
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
        attrs::apply(file.tmp.as_fd(), Some(file.src.as_fd()), &file.meta, &self.owner)
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

    /// `--checksum`: whether the destination file `name` in `dir` has the source's content.
    pub(super) fn same_content(
        &self,
        state: &mut TransferState,
        entry: &Entry<'_, DestDir>,
        meta: &Metadata,
        dir: &DirFd,
        name: &CStr,
    ) -> bool {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let noatime = self.euid == 0 || meta.uid == self.euid;
        let (Ok(src), Ok(dest)) =
            (open_source(entry, meta, noatime), openat(dir, name, flags, Mode::empty()))
        else {
            return false;
        };
        let hash = |fd: &OwnedFd, state: &mut TransferState| {
            hash_of(fd.as_fd(), 0..meta.size, &mut state.scratch).ok()
        };
        let source_hash = hash(&src, state);
        source_hash.is_some() && source_hash == hash(&dest, state)
    }
}

pub fn lossy(path: &[u8]) -> std::borrow::Cow<'_, str> {
    String::from_utf8_lossy(path)
}

//! Regular files. The source is opened without following symlinks (and checked to be the file the
//! walk listed); the copy is written under its temporary name — in one go, or for a big file in
//! chunks that any worker copies — then finished (owner, xattrs, permissions, times, `--fsync`) and
//! renamed into place by whoever copied the last piece.

use super::data::{CopyError, Span, copy_span, hash_of};
use super::dest::{Place, RootPair, join_relative};
use super::temp::{create_file, discard, rename_into_place, temp_name};
use super::visitor::{Failure, Job, TransferState};
use super::{Transfer, attrs};
use canopy_engine::sys::{PATH_MAX, open_path, split_parent};
use canopy_engine::{Cx, DirFd, Entry, Errno, Metadata};
use rustix::fd::{AsFd, BorrowedFd, OwnedFd};
use rustix::fs::{CWD, Mode, OFlags, fdatasync, fstat, ftruncate, openat};
use serde::{Deserialize, Serialize};
use std::ffi::{CStr, CString};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

/// One piece of a big file's copy, as plain data that could be sent to another rank: the file by its
/// path relative to the source and destination roots, and the byte range.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct FileChunk {
    pub path: Vec<u8>,
    pub offset: u64,
    pub len: u64,
}

/// A chunk and the local copy it belongs to.
pub struct ChunkJob {
    chunk: FileChunk,
    file: Arc<InFlight>,
}

/// A file being copied: its open source and temporary, and what is left to do.
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
    chunks_left: AtomicUsize,
    failed: AtomicBool,
}

/// Runs `op` on a source entry relative to its directory — or, for a starting point, by path
/// (through its parent when the path is longer than `PATH_MAX`).
pub fn at_source<T>(
    entry: &Entry<'_, super::dest::DestDir>,
    op: impl FnOnce(BorrowedFd<'_>, &CStr) -> Result<T, Errno>,
) -> Result<T, Errno> {
    if let Some(dir) = entry.dir_fd() {
        return op(dir, entry.name_cstr());
    }
    let path = entry.name_cstr();
    if path.to_bytes().len() < PATH_MAX {
        return op(CWD, path);
    }
    let (parent, name) = split_parent(path.to_bytes());
    let parent = open_path(parent, true)?;
    op(parent.as_fd(), &CString::new(name).map_err(|_| Errno::INVAL)?)
}

/// Opens a source file for reading: never through a symlink, without moving its access time when
/// allowed, and only if it is still the file the walk listed.
fn open_source(
    entry: &Entry<'_, super::dest::DestDir>,
    meta: &Metadata,
    euid: u32,
) -> Result<OwnedFd, Errno> {
    let mut flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
    if euid == 0 || meta.uid == euid {
        flags |= OFlags::NOATIME;
    }
    let fd = at_source(entry, |dir, name| openat(dir, name, flags, Mode::empty()))?;
    let now = fstat(&fd)?;
    let regular = now.st_mode & libc::S_IFMT == libc::S_IFREG;
    if !regular || (now.st_dev, now.st_ino) != meta.file_id() {
        return Err(Errno::STALE);
    }
    Ok(fd)
}

impl Transfer {
    /// Copies a regular file into `dir` (the destination directory of `place`); `link` when other
    /// names of it wait for the copy.
    pub(super) fn copy_file(
        &self,
        cx: &mut Cx<'_, Self>,
        state: &mut TransferState,
        entry: &Entry<'_, super::dest::DestDir>,
        place: Place,
        dir: &DirFd,
        link: Option<(u64, u64)>,
    ) {
        // The visit fetched the metadata before deciding to copy.
        let Some(meta) = entry.cached_metadata() else { return };
        let src = match open_source(entry, meta, self.euid) {
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
        let chunks = if chunked { meta.size.div_ceil(self.options.chunk_size) } else { 1 };
        let file = InFlight {
            src,
            tmp,
            temp,
            pair: place.pair(),
            place,
            meta: *meta,
            sparse,
            link,
            chunks_left: AtomicUsize::new(chunks as usize),
            failed: AtomicBool::new(false),
        };
        if !chunked {
            self.copy_chunk(state, &file, 0..meta.size, &file.place.relative());
            return self.finish(cx, state, &file, Some(dir));
        }
        let file = Arc::new(file);
        let path = file.place.relative();
        for index in 0..chunks {
            let offset = index * self.options.chunk_size;
            let len = self.options.chunk_size.min(meta.size - offset);
            let chunk = FileChunk { path: path.clone(), offset, len };
            let job = Job::Chunk(ChunkJob { chunk, file: Arc::clone(&file) });
            match file.place.source_dir() {
                Some(source_dir) => cx.spawn_in(source_dir, job),
                None => cx.spawn(job),
            }
        }
    }

    /// Copies one chunk; whoever copies the last one finishes the file.
    pub(super) fn run_chunk(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, job: ChunkJob) {
        let ChunkJob { chunk, file } = job;
        self.copy_chunk(state, &file, chunk.offset..chunk.offset + chunk.len, &chunk.path);
        if file.chunks_left.fetch_sub(1, Ordering::AcqRel) == 1 {
            self.finish(cx, state, &file, None);
        }
    }

    /// Copies a byte range of `file` (named `path` relative to the roots, for messages).
    fn copy_chunk(
        &self,
        state: &mut TransferState,
        file: &InFlight,
        range: std::ops::Range<u64>,
        path: &[u8],
    ) {
        let span = Span { range, sparse: file.sparse, verify: self.options.verify, dev: file.meta.dev };
        let Err(error) = copy_span(file.src.as_fd(), file.tmp.as_fd(), &span, &mut state.scratch) else {
            return;
        };
        file.failed.store(true, Ordering::Relaxed);
        let source = || join_relative(&file.pair.source, path);
        let dest = || join_relative(&file.pair.dest, path);
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
    }

    /// Gives the complete temporary its attributes and renames it into place, or throws it away if a
    /// piece failed (already reported).
    fn finish(&self, cx: &mut Cx<'_, Self>, state: &mut TransferState, file: &InFlight, dir: Option<&DirFd>) {
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
        if file.failed.load(Ordering::Relaxed) {
            discard(dir, &file.temp);
            return self.settle(cx, file.link, Err(Errno::IO));
        }
        match self.place_file(file, dir) {
            Ok(id) => {
                self.counters.copied(1, file.meta.size);
                self.check_unchanged(state, file);
                self.settle_placed(cx, file.link, &file.place, id);
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
        entry: &Entry<'_, super::dest::DestDir>,
        meta: &Metadata,
        dir: &DirFd,
        name: &CStr,
    ) -> bool {
        let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let (Ok(src), Ok(dest)) =
            (open_source(entry, meta, self.euid), openat(dir, name, flags, Mode::empty()))
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

//! The FUSE side: each request is counted, pays its delay on its worker thread, is passed through to
//! the source, and answered with the TTL the mount was given.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use fuser::{
    AccessFlags, Errno, FileHandle, Filesystem, FopenFlags, Generation, INodeNo, KernelConfig, LockOwner,
    OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyDirectoryPlus,
    ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use crate::attr::file_attr;
use crate::gate::Gate;
use crate::mount::configure_kernel;
use crate::options::Options;
use crate::passthrough::{AttrChanges, Caller, Entry, Passthrough};
use crate::stats::{Op, Stats};

/// Generation numbers stay 0: node ids are inode numbers, and the kernel itself notices when an inode
/// number comes back as a different type of file.
pub(crate) const GENERATION: Generation = Generation(0);

pub(crate) struct LatencyFs {
    source: Passthrough,
    gate: Gate,
    ttl: Duration,
    readdirplus: bool,
    max_background: u16,
}

impl LatencyFs {
    pub(crate) fn new(options: &Options, stats: Arc<Stats>) -> io::Result<Self> {
        Ok(LatencyFs {
            source: Passthrough::new(&options.source)?,
            gate: Gate::new(options, stats),
            ttl: options.ttl,
            readdirplus: options.readdirplus,
            max_background: options.max_background,
        })
    }

    fn serve<T>(&self, op: Op, work: impl FnOnce() -> T) -> T {
        self.gate.serve(op, work)
    }

    fn reply_entry(&self, reply: ReplyEntry, result: rustix::io::Result<Entry>) {
        match result {
            Ok(entry) => reply.entry(&self.ttl, &file_attr(entry.id, &entry.stat), GENERATION),
            Err(error) => reply.error(errno(error)),
        }
    }
}

fn errno(error: rustix::io::Errno) -> Errno {
    Errno::from_i32(error.raw_os_error())
}

fn reply_empty(reply: ReplyEmpty, result: rustix::io::Result<()>) {
    match result {
        Ok(()) => reply.ok(),
        Err(error) => reply.error(errno(error)),
    }
}

fn caller(request: &Request) -> Caller {
    Caller { uid: request.uid(), gid: request.gid() }
}

impl Filesystem for LatencyFs {
    fn init(&mut self, _request: &Request, config: &mut KernelConfig) -> io::Result<()> {
        configure_kernel(config, self.readdirplus, self.max_background);
        Ok(())
    }

    fn lookup(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let result = self.serve(Op::Lookup, || self.source.lookup(parent.0, name));
        self.reply_entry(reply, result);
    }

    fn forget(&self, _request: &Request, ino: INodeNo, nlookup: u64) {
        self.source.inodes.forget(ino.0, nlookup);
    }

    fn getattr(&self, _request: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.serve(Op::Getattr, || self.source.getattr(ino.0, fh.map(|fh| fh.0))) {
            Ok(stat) => reply.attr(&self.ttl, &file_attr(ino.0, &stat)),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn setattr(
        &self,
        _request: &Request,
        ino: INodeNo,
        mode: Option<u32>,
        uid: Option<u32>,
        gid: Option<u32>,
        size: Option<u64>,
        atime: Option<TimeOrNow>,
        mtime: Option<TimeOrNow>,
        _ctime: Option<std::time::SystemTime>,
        fh: Option<FileHandle>,
        _crtime: Option<std::time::SystemTime>,
        _chgtime: Option<std::time::SystemTime>,
        _bkuptime: Option<std::time::SystemTime>,
        _flags: Option<fuser::BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let changes = AttrChanges { mode, uid, gid, size, atime, mtime };
        let result = self.serve(Op::Setattr, || self.source.setattr(ino.0, fh.map(|fh| fh.0), &changes));
        match result {
            Ok(stat) => reply.attr(&self.ttl, &file_attr(ino.0, &stat)),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn readlink(&self, _request: &Request, ino: INodeNo, reply: ReplyData) {
        match self.serve(Op::Readlink, || self.source.readlink(ino.0)) {
            Ok(target) => reply.data(&target),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn mknod(
        &self,
        request: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let result = self.serve(Op::Mknod, || self.source.mknod(parent.0, name, mode, rdev, caller(request)));
        self.reply_entry(reply, result);
    }

    fn mkdir(
        &self,
        request: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        reply: ReplyEntry,
    ) {
        let result = self.serve(Op::Mkdir, || self.source.mkdir(parent.0, name, mode, caller(request)));
        self.reply_entry(reply, result);
    }

    fn unlink(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(reply, self.serve(Op::Unlink, || self.source.unlink(parent.0, name)));
    }

    fn rmdir(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        reply_empty(reply, self.serve(Op::Rmdir, || self.source.rmdir(parent.0, name)));
    }

    fn symlink(
        &self,
        request: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let result =
            self.serve(Op::Symlink, || self.source.symlink(parent.0, link_name, target, caller(request)));
        self.reply_entry(reply, result);
    }

    fn rename(
        &self,
        _request: &Request,
        parent: INodeNo,
        name: &OsStr,
        newparent: INodeNo,
        newname: &OsStr,
        flags: RenameFlags,
        reply: ReplyEmpty,
    ) {
        let result = self
            .serve(Op::Rename, || self.source.rename((parent.0, name), (newparent.0, newname), flags.bits()));
        reply_empty(reply, result);
    }

    fn link(&self, _request: &Request, ino: INodeNo, newparent: INodeNo, newname: &OsStr, reply: ReplyEntry) {
        let result = self.serve(Op::Link, || self.source.link(ino.0, newparent.0, newname));
        self.reply_entry(reply, result);
    }

    fn open(&self, _request: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        match self.serve(Op::Open, || self.source.open(ino.0, flags.0)) {
            Ok(handle) => reply.opened(FileHandle(handle), FopenFlags::empty()),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn read(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        match self.serve(Op::Read, || self.source.read(fh.0, offset, size)) {
            Ok(data) => reply.data(&data),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn write(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        data: &[u8],
        _write_flags: WriteFlags,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyWrite,
    ) {
        match self.serve(Op::Write, || self.source.write(fh.0, offset, data)) {
            Ok(written) => reply.written(written),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn flush(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply_empty(reply, self.serve(Op::Flush, || self.source.flush(fh.0)));
    }

    fn release(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        reply_empty(reply, self.serve(Op::Release, || self.source.release(fh.0)));
    }

    fn fsync(&self, _request: &Request, _ino: INodeNo, fh: FileHandle, datasync: bool, reply: ReplyEmpty) {
        reply_empty(reply, self.serve(Op::Fsync, || self.source.fsync(fh.0, datasync)));
    }

    fn opendir(&self, _request: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.serve(Op::Opendir, || self.source.opendir(ino.0)) {
            Ok(handle) => reply.opened(FileHandle(handle), FopenFlags::empty()),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn readdir(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let filled = self.serve(Op::Readdir, || {
            let dir = self.source.dir(fh.0)?;
            // Offsets are positions in the listing snapshot: entry i carries i + 1, "resume after i".
            for (index, entry) in dir.entries.iter().enumerate().skip(offset as usize) {
                let ino = INodeNo(self.source.inodes.entry_id(entry.ino));
                if reply.add(ino, index as u64 + 1, entry.kind, &entry.name) {
                    break;
                }
            }
            Ok(())
        });
        match filled {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn readdirplus(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let filled = self.serve(Op::Readdirplus, || {
            let dir = self.source.dir(fh.0)?;
            for (index, entry) in dir.entries.iter().enumerate().skip(offset as usize) {
                let Ok(found) = self.source.stat_listed(&dir, entry) else {
                    continue; // removed since the listing was taken
                };
                let attr = file_attr(found.id, &found.stat);
                let offset = index as u64 + 1;
                if reply.add(INodeNo(found.id), offset, &entry.name, &self.ttl, &attr, GENERATION) {
                    break;
                }
                // Each entry in the reply is a lookup reference for the kernel, except "." and "..".
                if !entry.is_dot_or_dot_dot() {
                    self.source.remember_listed(&dir, found.id, &entry.name);
                }
            }
            Ok(())
        });
        match filled {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn releasedir(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        reply_empty(reply, self.serve(Op::Releasedir, || self.source.releasedir(fh.0)));
    }

    fn fsyncdir(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply_empty(reply, self.serve(Op::Fsyncdir, || self.source.fsyncdir(fh.0)));
    }

    fn statfs(&self, _request: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        match self.serve(Op::Statfs, || self.source.statfs()) {
            Ok(vfs) => reply.statfs(
                vfs.f_blocks,
                vfs.f_bfree,
                vfs.f_bavail,
                vfs.f_files,
                vfs.f_ffree,
                vfs.f_bsize as u32,
                vfs.f_namemax as u32,
                vfs.f_frsize as u32,
            ),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn access(&self, _request: &Request, ino: INodeNo, mask: AccessFlags, reply: ReplyEmpty) {
        reply_empty(reply, self.serve(Op::Access, || self.source.access(ino.0, mask.bits())));
    }

    fn create(
        &self,
        request: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        _umask: u32,
        flags: i32,
        reply: ReplyCreate,
    ) {
        let result =
            self.serve(Op::Create, || self.source.create(parent.0, name, mode, flags, caller(request)));
        match result {
            Ok((entry, handle)) => reply.created(
                &self.ttl,
                &file_attr(entry.id, &entry.stat),
                GENERATION,
                FileHandle(handle),
                FopenFlags::empty(),
            ),
            Err(error) => reply.error(errno(error)),
        }
    }
}

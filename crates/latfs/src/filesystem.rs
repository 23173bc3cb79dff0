//! The FUSE side: each request is counted, pays its delay on its worker thread, is passed through to
//! the source, and answered with the TTL the mount was given.

use std::ffi::OsStr;
use std::io;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use fuser::{
    AccessFlags, Errno, FileHandle, Filesystem, FopenFlags, Generation, INodeNo, InitFlags,
    KernelConfig, LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData,
    ReplyDirectory, ReplyDirectoryPlus, ReplyEmpty, ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite,
    Request, TimeOrNow, WriteFlags,
};

use crate::attr::file_attr;
use crate::latency::Latency;
use crate::options::Options;
use crate::passthrough::{AttrChanges, Caller, Entry, Passthrough};
use crate::stats::{InFlight, Op, Stats};
use crate::worker::prepare_thread;

/// Generation numbers stay 0: node ids are inode numbers, and the kernel itself notices when an inode
/// number comes back as a different type of file.
const GENERATION: Generation = Generation(0);

pub(crate) struct LatencyFs {
    source: Passthrough,
    stats: Arc<Stats>,
    latency: Latency,
    ttl: Duration,
    readdirplus: bool,
    max_background: u16,
}

impl LatencyFs {
    pub(crate) fn new(options: &Options, stats: Arc<Stats>) -> io::Result<Self> {
        Ok(LatencyFs {
            source: Passthrough::new(&options.source)?,
            stats,
            latency: Latency {
                metadata: options.delay,
                data: options.data_delay,
            },
            ttl: options.ttl,
            readdirplus: options.readdirplus,
            max_background: options.max_background,
        })
    }

    /// Starts serving one request: counts it and waits out its delay. Dropping the result ends it.
    fn admit(&self, op: Op) -> InFlight<'_> {
        prepare_thread();
        let in_flight = self.stats.start(op);
        self.latency.pay(op);
        in_flight
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
    Caller {
        uid: request.uid(),
        gid: request.gid(),
    }
}

impl Filesystem for LatencyFs {
    fn init(&mut self, _request: &Request, config: &mut KernelConfig) -> io::Result<()> {
        // Without PARALLEL_DIROPS the kernel serialises lookups and readdirs within one directory, and
        // concurrent clients would see one delay after another.
        if config
            .add_capabilities(InitFlags::FUSE_PARALLEL_DIROPS)
            .is_err()
        {
            eprintln!(
                "canopy latfs: the kernel lacks FUSE_PARALLEL_DIROPS: lookups in one directory will not overlap"
            );
        }
        if self.readdirplus
            && config
                .add_capabilities(InitFlags::FUSE_DO_READDIRPLUS)
                .is_err()
        {
            eprintln!("canopy latfs: the kernel lacks READDIRPLUS: --readdirplus has no effect");
        }
        // Background requests (readahead, async writes, releases) beyond this limit wait in the kernel.
        let _ = config.set_max_background(self.max_background);
        let _ = config.set_congestion_threshold((self.max_background / 4 * 3).max(1));
        Ok(())
    }

    fn lookup(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let _in_flight = self.admit(Op::Lookup);
        self.reply_entry(reply, self.source.lookup(parent.0, name));
    }

    fn forget(&self, _request: &Request, ino: INodeNo, nlookup: u64) {
        self.source.inodes.forget(ino.0, nlookup);
    }

    fn getattr(&self, _request: &Request, ino: INodeNo, fh: Option<FileHandle>, reply: ReplyAttr) {
        let _in_flight = self.admit(Op::Getattr);
        match self.source.getattr(ino.0, fh.map(|fh| fh.0)) {
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
        let _in_flight = self.admit(Op::Setattr);
        let changes = AttrChanges {
            mode,
            uid,
            gid,
            size,
            atime,
            mtime,
        };
        match self.source.setattr(ino.0, fh.map(|fh| fh.0), &changes) {
            Ok(stat) => reply.attr(&self.ttl, &file_attr(ino.0, &stat)),
            Err(error) => reply.error(errno(error)),
        }
    }

    fn readlink(&self, _request: &Request, ino: INodeNo, reply: ReplyData) {
        let _in_flight = self.admit(Op::Readlink);
        match self.source.readlink(ino.0) {
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
        let _in_flight = self.admit(Op::Mknod);
        let result = self
            .source
            .mknod(parent.0, name, mode, rdev, caller(request));
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
        let _in_flight = self.admit(Op::Mkdir);
        let result = self.source.mkdir(parent.0, name, mode, caller(request));
        self.reply_entry(reply, result);
    }

    fn unlink(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let _in_flight = self.admit(Op::Unlink);
        reply_empty(reply, self.source.unlink(parent.0, name));
    }

    fn rmdir(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let _in_flight = self.admit(Op::Rmdir);
        reply_empty(reply, self.source.rmdir(parent.0, name));
    }

    fn symlink(
        &self,
        request: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let _in_flight = self.admit(Op::Symlink);
        let result = self
            .source
            .symlink(parent.0, link_name, target, caller(request));
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
        let _in_flight = self.admit(Op::Rename);
        let result = self
            .source
            .rename((parent.0, name), (newparent.0, newname), flags.bits());
        reply_empty(reply, result);
    }

    fn link(
        &self,
        _request: &Request,
        ino: INodeNo,
        newparent: INodeNo,
        newname: &OsStr,
        reply: ReplyEntry,
    ) {
        let _in_flight = self.admit(Op::Link);
        self.reply_entry(reply, self.source.link(ino.0, newparent.0, newname));
    }

    fn open(&self, _request: &Request, ino: INodeNo, flags: OpenFlags, reply: ReplyOpen) {
        let _in_flight = self.admit(Op::Open);
        match self.source.open(ino.0, flags.0) {
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
        let _in_flight = self.admit(Op::Read);
        match self.source.read(fh.0, offset, size) {
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
        let _in_flight = self.admit(Op::Write);
        match self.source.write(fh.0, offset, data) {
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
        let _in_flight = self.admit(Op::Flush);
        reply_empty(reply, self.source.flush(fh.0));
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
        let _in_flight = self.admit(Op::Release);
        reply_empty(reply, self.source.release(fh.0));
    }

    fn fsync(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        datasync: bool,
        reply: ReplyEmpty,
    ) {
        let _in_flight = self.admit(Op::Fsync);
        reply_empty(reply, self.source.fsync(fh.0, datasync));
    }

    fn opendir(&self, _request: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        let _in_flight = self.admit(Op::Opendir);
        match self.source.opendir(ino.0) {
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
        let _in_flight = self.admit(Op::Readdir);
        let dir = match self.source.dir(fh.0) {
            Ok(dir) => dir,
            Err(error) => return reply.error(errno(error)),
        };
        // Offsets are positions in the listing snapshot: entry i carries offset i + 1, "resume after i".
        for (index, entry) in dir.entries.iter().enumerate().skip(offset as usize) {
            let ino = INodeNo(self.source.inodes.entry_id(entry.ino));
            if reply.add(ino, index as u64 + 1, entry.kind, &entry.name) {
                break;
            }
        }
        reply.ok();
    }

    fn readdirplus(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let _in_flight = self.admit(Op::Readdirplus);
        let dir = match self.source.dir(fh.0) {
            Ok(dir) => dir,
            Err(error) => return reply.error(errno(error)),
        };
        for (index, entry) in dir.entries.iter().enumerate().skip(offset as usize) {
            let Ok(found) = self.source.stat_listed(&dir, entry) else {
                continue; // removed since the listing was taken
            };
            let attr = file_attr(found.id, &found.stat);
            if reply.add(
                INodeNo(found.id),
                index as u64 + 1,
                &entry.name,
                &self.ttl,
                &attr,
                GENERATION,
            ) {
                break;
            }
            // Each entry in the reply is a lookup reference for the kernel, except "." and "..".
            if !entry.is_dot_or_dot_dot() {
                self.source.remember_listed(&dir, found.id, &entry.name);
            }
        }
        reply.ok();
    }

    fn releasedir(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        let _in_flight = self.admit(Op::Releasedir);
        reply_empty(reply, self.source.releasedir(fh.0));
    }

    fn fsyncdir(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        let _in_flight = self.admit(Op::Fsyncdir);
        reply_empty(reply, self.source.fsyncdir(fh.0));
    }

    fn statfs(&self, _request: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        let _in_flight = self.admit(Op::Statfs);
        match self.source.statfs() {
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
        let _in_flight = self.admit(Op::Access);
        reply_empty(reply, self.source.access(ino.0, mask.bits()));
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
        let _in_flight = self.admit(Op::Create);
        match self
            .source
            .create(parent.0, name, mode, flags, caller(request))
        {
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

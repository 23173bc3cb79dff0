//! The FUSE side: every request becomes a task on the mount's tokio runtime, which answers the
//! kernel when the servers have; the FUSE threads only read requests and never wait for the
//! network, so requests to different servers (and partitions) overlap.

use std::ffi::OsStr;
use std::future::Future;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::sync::Arc;
use std::time::SystemTime;

use fuser::{
    BsdFileFlags, FileHandle, Filesystem, FopenFlags, Generation, INodeNo, InitFlags, KernelConfig,
    LockOwner, OpenFlags, RenameFlags, ReplyAttr, ReplyCreate, ReplyData, ReplyDirectory, ReplyEmpty,
    ReplyEntry, ReplyOpen, ReplyStatfs, ReplyWrite, Request, TimeOrNow, WriteFlags,
};

use super::attributes::Changes;
use super::core::{Answer, Caller, MountCore};

/// Inode numbers are object ids, never reused: generation 0 throughout.
const GENERATION: Generation = Generation(0);
/// Requests the kernel may have in the background (async reads, releases).
const MAX_BACKGROUND: u16 = 64;

pub struct DirsvcFs {
    core: Arc<MountCore>,
    runtime: tokio::runtime::Runtime,
}

impl DirsvcFs {
    pub fn new(core: MountCore, runtime: tokio::runtime::Runtime) -> Self {
        let core = Arc::new(core);
        runtime.spawn(keep_open(Arc::clone(&core)));
        Self { core, runtime }
    }

    /// Runs `work` as a task; it replies to the kernel itself.
    fn spawn<F, Fut>(&self, work: F)
    where
        F: FnOnce(Arc<MountCore>) -> Fut,
        Fut: Future<Output = ()> + Send + 'static,
    {
        self.runtime.spawn(work(Arc::clone(&self.core)));
    }

    fn ttl(&self) -> std::time::Duration {
        self.core.settings.ttl
    }
}

/// Renews this mount's session on every server well within its lease, so the files it has open
/// stay open there (a mount that dies stops renewing, and its opens lapse).
async fn keep_open(core: Arc<MountCore>) {
    let period = crate::server::SESSION_LEASE / 4;
    loop {
        tokio::time::sleep(period).await;
        // A server that is down keeps nothing to renew; the next round reaches it when it is back.
        let _ = core.client.keep_open(core.session).await;
    }
}

fn caller(request: &Request) -> Caller {
    Caller { uid: request.uid(), gid: request.gid() }
}

fn bytes(name: &OsStr) -> Vec<u8> {
    name.as_bytes().to_vec()
}

fn reply_empty(reply: ReplyEmpty, answer: Answer<()>) {
    match answer {
        Ok(()) => reply.ok(),
        Err(errno) => reply.error(errno),
    }
}

fn reply_entry(reply: ReplyEntry, ttl: std::time::Duration, answer: Answer<fuser::FileAttr>) {
    match answer {
        Ok(attr) => reply.entry(&ttl, &attr, GENERATION),
        Err(errno) => reply.error(errno),
    }
}

impl Filesystem for DirsvcFs {
    fn init(&mut self, _request: &Request, config: &mut KernelConfig) -> io::Result<()> {
        // Lookups and readdirs within one directory may overlap (creates are still serialised
        // per directory by the kernel's directory lock).
        let _ = config.add_capabilities(InitFlags::FUSE_PARALLEL_DIROPS);
        let _ = config.set_max_background(MAX_BACKGROUND);
        let _ = config.set_congestion_threshold(MAX_BACKGROUND / 4 * 3);
        Ok(())
    }

    /// Unmounted: whatever this mount still had open is closed on the servers.
    fn destroy(&mut self) {
        let core = Arc::clone(&self.core);
        let _ = self.runtime.block_on(async move { core.client.close_session(core.session).await });
    }

    fn lookup(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let (name, ttl) = (bytes(name), self.ttl());
        self.spawn(move |core| async move { reply_entry(reply, ttl, core.lookup(parent.0, &name).await) });
    }

    fn forget(&self, _request: &Request, ino: INodeNo, nlookup: u64) {
        self.core.nodes.forget(ino.0, nlookup);
    }

    fn getattr(&self, _request: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        let ttl = self.ttl();
        self.spawn(move |core| async move {
            match core.getattr(ino.0).await {
                Ok(attr) => reply.attr(&ttl, &attr),
                Err(errno) => reply.error(errno),
            }
        });
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
        _ctime: Option<SystemTime>,
        _fh: Option<FileHandle>,
        _crtime: Option<SystemTime>,
        _chgtime: Option<SystemTime>,
        _bkuptime: Option<SystemTime>,
        _flags: Option<BsdFileFlags>,
        reply: ReplyAttr,
    ) {
        let (ttl, changes) = (self.ttl(), Changes { mode, uid, gid, size, atime, mtime });
        self.spawn(move |core| async move {
            match core.setattr(ino.0, changes).await {
                Ok(attr) => reply.attr(&ttl, &attr),
                Err(errno) => reply.error(errno),
            }
        });
    }

    fn readlink(&self, _request: &Request, ino: INodeNo, reply: ReplyData) {
        self.spawn(move |core| async move {
            match core.readlink(ino.0).await {
                Ok(target) => reply.data(&target),
                Err(errno) => reply.error(errno),
            }
        });
    }

    fn mknod(
        &self,
        request: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        rdev: u32,
        reply: ReplyEntry,
    ) {
        let (name, ttl, caller) = (bytes(name), self.ttl(), caller(request));
        self.spawn(move |core| async move {
            reply_entry(reply, ttl, core.mknod(parent.0, &name, mode & !umask, rdev, caller).await);
        });
    }

    fn mkdir(
        &self,
        request: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        reply: ReplyEntry,
    ) {
        let (name, ttl, caller) = (bytes(name), self.ttl(), caller(request));
        self.spawn(move |core| async move {
            reply_entry(reply, ttl, core.mkdir(parent.0, &name, mode & !umask, caller).await);
        });
    }

    fn unlink(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let name = bytes(name);
        self.spawn(move |core| async move { reply_empty(reply, core.unlink(parent.0, &name).await) });
    }

    fn rmdir(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEmpty) {
        let name = bytes(name);
        self.spawn(move |core| async move { reply_empty(reply, core.rmdir(parent.0, &name).await) });
    }

    fn symlink(
        &self,
        request: &Request,
        parent: INodeNo,
        link_name: &OsStr,
        target: &Path,
        reply: ReplyEntry,
    ) {
        let (name, target, ttl, caller) =
            (bytes(link_name), target.as_os_str().as_bytes().to_vec(), self.ttl(), caller(request));
        self.spawn(move |core| async move {
            reply_entry(reply, ttl, core.symlink(parent.0, &name, &target, caller).await);
        });
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
        let (name, new_name) = (bytes(name), bytes(newname));
        self.spawn(move |core| async move {
            reply_empty(reply, core.rename((parent.0, &name), (newparent.0, &new_name), flags).await);
        });
    }

    fn link(&self, _request: &Request, ino: INodeNo, newparent: INodeNo, newname: &OsStr, reply: ReplyEntry) {
        let (name, ttl) = (bytes(newname), self.ttl());
        self.spawn(move |core| async move {
            reply_entry(reply, ttl, core.link(ino.0, newparent.0, &name).await);
        });
    }

    fn open(&self, _request: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        self.spawn(move |core| async move {
            match core.open(ino.0).await {
                Ok(fh) => reply.opened(FileHandle(fh), FopenFlags::empty()),
                Err(errno) => reply.error(errno),
            }
        });
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
        self.spawn(move |core| async move {
            match core.read(fh.0, offset, size).await {
                Ok(data) => reply.data(&data),
                Err(errno) => reply.error(errno),
            }
        });
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
        let data = data.to_vec();
        self.spawn(move |core| async move {
            match core.write(fh.0, offset, data).await {
                Ok(written) => reply.written(written),
                Err(errno) => reply.error(errno),
            }
        });
    }

    /// Writes are on the file's server when acknowledged: nothing is left to push at close.
    fn flush(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        reply_empty(reply, self.core.open_file(fh.0).map(drop));
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
        self.spawn(move |core| async move { reply_empty(reply, core.release(fh.0).await) });
    }

    /// Writes (and their size) are durable when acknowledged: nothing to sync.
    fn fsync(&self, _request: &Request, _ino: INodeNo, fh: FileHandle, _datasync: bool, reply: ReplyEmpty) {
        reply_empty(reply, self.core.open_file(fh.0).map(drop));
    }

    fn opendir(&self, _request: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        reply.opened(FileHandle(self.core.opendir(ino.0)), FopenFlags::empty());
    }

    fn readdir(
        &self,
        _request: &Request,
        ino: INodeNo,
        fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        self.spawn(move |core| async move {
            let filled = core
                .readdir(ino.0, fh.0, offset, |id, offset, kind, name| {
                    reply.add(INodeNo(id), offset, kind, OsStr::from_bytes(name))
                })
                .await;
            match filled {
                Ok(()) => reply.ok(),
                Err(errno) => reply.error(errno),
            }
        });
    }

    fn releasedir(
        &self,
        _request: &Request,
        _ino: INodeNo,
        fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.core.releasedir(fh.0);
        reply.ok();
    }

    /// Entries are durable when acknowledged: nothing to sync.
    fn fsyncdir(
        &self,
        _request: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _datasync: bool,
        reply: ReplyEmpty,
    ) {
        reply.ok();
    }

    fn statfs(&self, _request: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        self.spawn(move |core| async move {
            match core.statfs().await {
                Ok(s) => {
                    reply.statfs(s.blocks, s.bfree, s.bavail, s.files, s.ffree, s.bsize, s.namelen, s.bsize)
                }
                Err(errno) => reply.error(errno),
            }
        });
    }

    fn create(
        &self,
        request: &Request,
        parent: INodeNo,
        name: &OsStr,
        mode: u32,
        umask: u32,
        _flags: i32,
        reply: ReplyCreate,
    ) {
        let (name, ttl, caller) = (bytes(name), self.ttl(), caller(request));
        self.spawn(move |core| async move {
            match core.create(parent.0, &name, mode & !umask, caller).await {
                Ok((attr, fh)) => reply.created(&ttl, &attr, GENERATION, FileHandle(fh), FopenFlags::empty()),
                Err(errno) => reply.error(errno),
            }
        });
    }
}

//! The FUSE side of a synthetic tree: every request goes through the same gate as the passthrough's
//! (counted, delayed), then is answered by arithmetic on the inode numbers. Nothing is remembered
//! between requests, so the server's memory does not grow with the tree or with the kernel's cache.

use std::ffi::OsStr;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::time::Duration;

use fuser::{
    AccessFlags, Errno, FileAttr, FileHandle, FileType, Filesystem, FopenFlags, INodeNo, KernelConfig,
    LockOwner, OpenFlags, ReplyAttr, ReplyData, ReplyDirectory, ReplyDirectoryPlus, ReplyEmpty, ReplyEntry,
    ReplyOpen, ReplyStatfs, Request,
};

use super::attributes::{Attributes, BLOCK, MAX_SIZE, Owner, contents, file_size};
use super::spec::Spec;
use super::tree::{Child, Dir, Node, SlotKind, Tree, slot_ino};
use crate::filesystem::GENERATION;
use crate::gate::Gate;
use crate::mount::configure_kernel;
use crate::options::Options;
use crate::stats::{Op, Stats};

pub(crate) struct SyntheticFs {
    tree: Tree,
    attributes: Attributes,
    gate: Gate,
    ttl: Duration,
    readdirplus: bool,
    max_background: u16,
}

/// One entry of a listing: its inode, type, name.
struct Listed {
    ino: u64,
    kind: FileType,
    name: Vec<u8>,
}

impl SyntheticFs {
    pub(crate) fn new(spec: &Spec, options: &Options, stats: Arc<Stats>) -> Self {
        SyntheticFs {
            tree: Tree::new(spec.clone()),
            attributes: Attributes { seed: spec.seed, owner: Owner::of_this_process() },
            gate: Gate::new(options, stats),
            ttl: options.ttl,
            readdirplus: options.readdirplus,
            max_background: options.max_background,
        }
    }

    fn dir(&self, ino: u64) -> Result<Dir, Errno> {
        match self.tree.locate(ino) {
            Some(Node::Dir(dir)) => Ok(dir),
            Some(Node::Slot { .. }) => Err(Errno::ENOTDIR),
            None => Err(Errno::ENOENT),
        }
    }

    /// The attributes of inode `ino`. A hard link's own slot number is nobody's inode: the kernel
    /// only knows the inode of the file it names.
    fn attr(&self, ino: u64) -> Result<FileAttr, Errno> {
        match self.tree.locate(ino).ok_or(Errno::ENOENT)? {
            Node::Dir(dir) => Ok(self.dir_attr(&dir)),
            Node::Slot { dir, index } => {
                let layout = self.tree.layout(&dir);
                match self.tree.slot_kind(&dir, &layout, index) {
                    SlotKind::File { nlink } => Ok(self.attributes.file(ino, nlink)),
                    SlotKind::Symlink => {
                        Ok(self.attributes.symlink(ino, self.tree.symlink_target(&dir, index).len()))
                    }
                    SlotKind::HardLink => Err(Errno::ENOENT),
                }
            }
        }
    }

    fn dir_attr(&self, dir: &Dir) -> FileAttr {
        let layout = self.tree.layout(dir);
        self.attributes.dir(dir.ino, layout.files + layout.subdirs, layout.subdirs)
    }

    /// The attributes of the entry `child` of `dir` names.
    fn child_attr(&self, dir: &Dir, child: &Child) -> FileAttr {
        match child {
            Child::Dir(sub) => self.dir_attr(sub),
            Child::Slot(index) => {
                let layout = self.tree.layout(dir);
                match self.tree.slot_kind(dir, &layout, *index) {
                    SlotKind::HardLink => self.attributes.file(slot_ino(dir, index - 1), 2),
                    SlotKind::File { nlink } => self.attributes.file(slot_ino(dir, *index), nlink),
                    SlotKind::Symlink => {
                        let target = self.tree.symlink_target(dir, *index);
                        self.attributes.symlink(slot_ino(dir, *index), target.len())
                    }
                }
            }
        }
    }

    /// Entry `index` of the listing of `dir`: `.`, `..`, the file slots, the subdirectories.
    fn listed(&self, dir: &Dir, index: u64) -> Option<(Listed, Option<Child>)> {
        match index {
            0 => Some((Listed { ino: dir.ino, kind: FileType::Directory, name: b".".to_vec() }, None)),
            1 => Some((Listed { ino: dir.parent, kind: FileType::Directory, name: b"..".to_vec() }, None)),
            _ => {
                let layout = self.tree.layout(dir);
                let position = index - 2;
                let child = self.tree.child_at(dir, &layout, position)?;
                let (ino, kind) = match child {
                    Child::Dir(sub) => (sub.ino, FileType::Directory),
                    Child::Slot(slot) => {
                        let kind = match self.tree.slot_kind(dir, &layout, slot) {
                            SlotKind::Symlink => FileType::Symlink,
                            _ => FileType::RegularFile,
                        };
                        (self.tree.slot_target_ino(dir, &layout, slot), kind)
                    }
                };
                let name = self.tree.child_name_at(dir, &layout, position).into_bytes();
                Some((Listed { ino, kind, name }, Some(child)))
            }
        }
    }

    /// The regular file `ino` and its size.
    fn file(&self, ino: u64) -> Result<u64, Errno> {
        match self.attr(ino)?.kind {
            FileType::RegularFile => Ok(file_size(self.tree.seed(), ino)),
            FileType::Directory => Err(Errno::EISDIR),
            _ => Err(Errno::EINVAL),
        }
    }
}

impl Filesystem for SyntheticFs {
    fn init(&mut self, _request: &Request, config: &mut KernelConfig) -> io::Result<()> {
        configure_kernel(config, self.readdirplus, self.max_background);
        Ok(())
    }

    fn lookup(&self, _request: &Request, parent: INodeNo, name: &OsStr, reply: ReplyEntry) {
        let found = self.gate.serve(Op::Lookup, || {
            let dir = self.dir(parent.0)?;
            let layout = self.tree.layout(&dir);
            let child = self.tree.child_named(&dir, &layout, name.as_bytes()).ok_or(Errno::ENOENT)?;
            Ok(self.child_attr(&dir, &child))
        });
        match found {
            Ok(attr) => reply.entry(&self.ttl, &attr, GENERATION),
            Err(error) => reply.error(error),
        }
    }

    fn getattr(&self, _request: &Request, ino: INodeNo, _fh: Option<FileHandle>, reply: ReplyAttr) {
        match self.gate.serve(Op::Getattr, || self.attr(ino.0)) {
            Ok(attr) => reply.attr(&self.ttl, &attr),
            Err(error) => reply.error(error),
        }
    }

    fn readlink(&self, _request: &Request, ino: INodeNo, reply: ReplyData) {
        let target = self.gate.serve(Op::Readlink, || match self.tree.locate(ino.0) {
            Some(Node::Slot { dir, index }) => {
                let layout = self.tree.layout(&dir);
                match self.tree.slot_kind(&dir, &layout, index) {
                    SlotKind::Symlink => Ok(self.tree.symlink_target(&dir, index)),
                    _ => Err(Errno::EINVAL),
                }
            }
            Some(Node::Dir(_)) => Err(Errno::EINVAL),
            None => Err(Errno::ENOENT),
        });
        match target {
            Ok(target) => reply.data(target.as_bytes()),
            Err(error) => reply.error(error),
        }
    }

    fn open(&self, _request: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.gate.serve(Op::Open, || self.file(ino.0)) {
            Ok(_) => reply.opened(FileHandle(0), FopenFlags::empty()),
            Err(error) => reply.error(error),
        }
    }

    fn read(
        &self,
        _request: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        size: u32,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        reply: ReplyData,
    ) {
        let read = self.gate.serve(Op::Read, || {
            let length = self.file(ino.0)?;
            Ok(contents(self.tree.seed(), ino.0, length, offset, u64::from(size)))
        });
        match read {
            Ok(bytes) => reply.data(&bytes),
            Err(error) => reply.error(error),
        }
    }

    fn flush(
        &self,
        _request: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _lock_owner: LockOwner,
        reply: ReplyEmpty,
    ) {
        self.gate.serve(Op::Flush, || ());
        reply.ok();
    }

    fn release(
        &self,
        _request: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        _lock_owner: Option<LockOwner>,
        _flush: bool,
        reply: ReplyEmpty,
    ) {
        self.gate.serve(Op::Release, || ());
        reply.ok();
    }

    fn opendir(&self, _request: &Request, ino: INodeNo, _flags: OpenFlags, reply: ReplyOpen) {
        match self.gate.serve(Op::Opendir, || self.dir(ino.0)) {
            Ok(_) => reply.opened(FileHandle(0), FopenFlags::empty()),
            Err(error) => reply.error(error),
        }
    }

    fn readdir(
        &self,
        _request: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectory,
    ) {
        let filled = self.gate.serve(Op::Readdir, || {
            let dir = self.dir(ino.0)?;
            // Offsets are positions in the listing: entry i carries i + 1, "resume after i". The listing
            // is a function of the position, so any offset resumes exactly where it left off.
            let mut index = offset;
            while let Some((entry, _)) = self.listed(&dir, index) {
                index += 1;
                if reply.add(INodeNo(entry.ino), index, entry.kind, OsStr::from_bytes(&entry.name)) {
                    break;
                }
            }
            Ok(())
        });
        match filled {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(error),
        }
    }

    fn readdirplus(
        &self,
        _request: &Request,
        ino: INodeNo,
        _fh: FileHandle,
        offset: u64,
        mut reply: ReplyDirectoryPlus,
    ) {
        let filled = self.gate.serve(Op::Readdirplus, || {
            let dir = self.dir(ino.0)?;
            let mut index = offset;
            while let Some((entry, child)) = self.listed(&dir, index) {
                index += 1;
                let attr = match child {
                    Some(child) => self.child_attr(&dir, &child),
                    None => FileAttr { ino: INodeNo(entry.ino), ..self.dir_attr(&dir) },
                };
                let name = OsStr::from_bytes(&entry.name);
                if reply.add(INodeNo(entry.ino), index, name, &self.ttl, &attr, GENERATION) {
                    break;
                }
            }
            Ok(())
        });
        match filled {
            Ok(()) => reply.ok(),
            Err(error) => reply.error(error),
        }
    }

    fn releasedir(
        &self,
        _request: &Request,
        _ino: INodeNo,
        _fh: FileHandle,
        _flags: OpenFlags,
        reply: ReplyEmpty,
    ) {
        self.gate.serve(Op::Releasedir, || ());
        reply.ok();
    }

    fn statfs(&self, _request: &Request, _ino: INodeNo, reply: ReplyStatfs) {
        self.gate.serve(Op::Statfs, || ());
        // The inode count is exact; the block count is an upper bound (every file at the largest
        // size), since the exact one takes a pass over every file.
        let entries = self.tree.spec().entries();
        let blocks = entries.saturating_mul(MAX_SIZE / BLOCK);
        reply.statfs(blocks, 0, 0, entries, 0, BLOCK as u32, 255, BLOCK as u32);
    }

    fn access(&self, _request: &Request, ino: INodeNo, _mask: AccessFlags, reply: ReplyEmpty) {
        match self.gate.serve(Op::Access, || self.attr(ino.0)) {
            Ok(_) => reply.ok(),
            Err(error) => reply.error(error),
        }
    }
}

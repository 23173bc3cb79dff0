//! What to do with one non-directory, given its source and what the destination already holds —
//! and how rsync would itemize it. rsync and cp differ here: rsync leaves a file whose size and
//! modification time match (its quick check), cp copies again unless told otherwise (`-n`, `-u`),
//! except on the rerun of an interrupted copy, where what that run completed stays: a copy only
//! ever appears under its final name complete (see the module documentation of `transfer`).

use super::attrs::OwnerPolicy;
use super::itemize::Flags;
use super::policy::{Existing, Keep};
use canopy_engine::{FileKind, Metadata, Timestamp};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Decision {
    /// Nothing there yet.
    Create,
    /// Something else, or an outdated copy, is there: build the copy aside and rename it over.
    Replace,
    /// The data is right; attributes are not.
    Refresh,
    /// Leave what is there.
    Keep,
    /// A directory is in the way.
    Blocked,
}

/// A decision and the attribute differences rsync's `%i` shows with it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict {
    pub decision: Decision,
    pub flags: Flags,
    /// What is there is not of the source's type (or nothing is): every column of `%i` is `+`.
    pub new: bool,
    /// Kept as an interrupted run of this copy completed it.
    pub resumed: bool,
}

impl Verdict {
    fn of(decision: Decision, flags: Flags) -> Self {
        Verdict { decision, flags, new: false, resumed: false }
    }

    fn new_entry(decision: Decision) -> Self {
        Verdict { decision, flags: Flags::default(), new: true, resumed: false }
    }
}

/// The comparisons metadata alone cannot make, asked only when needed.
pub trait Probe {
    /// Two symlinks' targets, two files' contents (`--checksum`).
    fn same_data(&mut self) -> bool;
    /// Extended attributes (`xattrs`, ACLs left out) or ACLs (`acls`) differ.
    fn xattrs_differ(&mut self, acls: bool) -> bool;
}

/// How the destination's existing entries are judged.
pub struct Judge<'a> {
    pub keep: Keep,
    pub existing: Existing,
    pub owner: &'a OwnerPolicy,
}

impl Judge<'_> {
    /// Decides for the non-directory `src` given the destination's `dest`.
    /// `resume_since`: the destination is the copy of an interrupted cp begun then.
    pub fn judge(
        &self,
        src: &Metadata,
        dest: Option<&Metadata>,
        resume_since: Option<Timestamp>,
        probe: &mut impl Probe,
    ) -> Verdict {
        let Some(dest) = dest else { return Verdict::new_entry(Decision::Create) };
        if dest.is_dir() {
            return Verdict::new_entry(Decision::Blocked);
        }
        if dest.kind() != src.kind() || (is_device(src) && src.rdev != dest.rdev) {
            return Verdict::new_entry(Decision::Replace);
        }
        match self.existing {
            Existing::Rsync { checksum, update } => self.rsync(src, dest, checksum, update, probe),
            Existing::Cp { no_clobber, update } => {
                if no_clobber || (update && dest.mtime >= src.mtime) {
                    return Verdict::of(Decision::Keep, Flags::default());
                }
                match resume_since {
                    Some(since) if self.completed(src, dest, since, probe) => {
                        let flags = self.attr_flags(src, dest, probe);
                        let decision = if flags.is_empty() { Decision::Keep } else { Decision::Refresh };
                        Verdict { resumed: true, ..Verdict::of(decision, flags) }
                    }
                    _ => Verdict::of(Decision::Replace, Flags::default()),
                }
            }
        }
    }

    fn rsync(
        &self,
        src: &Metadata,
        dest: &Metadata,
        checksum: bool,
        update: bool,
        probe: &mut impl Probe,
    ) -> Verdict {
        let mut flags = self.attr_flags(src, dest, probe);
        let same_data = match src.kind() {
            FileKind::File => {
                if update && dest.mtime.sec > src.mtime.sec {
                    return Verdict::of(Decision::Keep, Flags::default());
                }
                if src.size != dest.size {
                    flags |= Flags::SIZE;
                    if checksum {
                        // rsync says the checksums differ without computing them.
                        flags |= Flags::CHANGE;
                    }
                    false
                } else if checksum {
                    let same = probe.same_data();
                    if !same {
                        flags |= Flags::CHANGE;
                    }
                    same
                } else {
                    self.existing.same_time(src, dest)
                }
            }
            FileKind::Symlink => {
                let same = probe.same_data();
                if !same {
                    flags |= Flags::CHANGE;
                }
                same
            }
            _ => true,
        };
        if !same_data {
            if !self.keep.times {
                flags |= Flags::TIME; // set to the time of the transfer: `T`
            }
            return Verdict::of(Decision::Replace, flags);
        }
        let decision = if flags.is_empty() { Decision::Keep } else { Decision::Refresh };
        Verdict::of(decision, flags)
    }

    /// The attributes of `dest` that differ from those a copy of `src` gets.
    pub fn attr_flags(&self, src: &Metadata, dest: &Metadata, probe: &mut impl Probe) -> Flags {
        let keep = self.keep;
        let mut flags = Flags::default();
        let symlink = src.kind() == FileKind::Symlink;
        if keep.times && !self.existing.same_time(src, dest) {
            flags |= Flags::TIME;
        }
        if keep.perms && !symlink && src.permissions() != dest.permissions() {
            flags |= Flags::PERMS;
        }
        let (owner, group) = self.owner.differs(src, dest);
        if keep.owner && owner {
            flags |= Flags::OWNER;
        }
        if keep.group && group {
            flags |= Flags::GROUP;
        }
        if keep.acls && !symlink && probe.xattrs_differ(true) {
            flags |= Flags::ACL;
        }
        if keep.xattrs && probe.xattrs_differ(false) {
            flags |= Flags::XATTR;
        }
        flags
    }

    /// Whether `dest` is a copy an interrupted run of this copy (started at `since`) completed:
    /// renamed into place since then, of the source's size, and — times kept — of its modification
    /// time; otherwise not older than the source's last change. Symlinks and special files: made
    /// since then with the same target or device.
    fn completed(&self, src: &Metadata, dest: &Metadata, since: Timestamp, probe: &mut impl Probe) -> bool {
        if dest.ctime < since {
            return false;
        }
        match src.kind() {
            FileKind::File => {
                src.size == dest.size
                    && if self.keep.times { src.mtime == dest.mtime } else { src.mtime <= dest.ctime }
            }
            FileKind::Symlink => probe.same_data(),
            _ => true,
        }
    }
}

fn is_device(meta: &Metadata) -> bool {
    matches!(meta.kind(), FileKind::BlockDevice | FileKind::CharDevice)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(size: u64, mtime: i64, mode: u32) -> Metadata {
        Metadata {
            mode: libc::S_IFREG | mode,
            nlink: 1,
            uid: rustix::process::getuid().as_raw(),
            gid: rustix::process::getgid().as_raw(),
            size,
            blocks: 0,
            blksize: 4096,
            ino: 1,
            dev: 1,
            rdev: 0,
            atime: Timestamp::default(),
            mtime: Timestamp { sec: mtime, nsec: 5 },
            ctime: Timestamp { sec: mtime, nsec: 5 },
        }
    }

    struct Answers {
        same: bool,
        xattrs_differ: bool,
    }

    impl Probe for Answers {
        fn same_data(&mut self) -> bool {
            self.same
        }
        fn xattrs_differ(&mut self, _acls: bool) -> bool {
            self.xattrs_differ
        }
    }

    struct Never;

    impl Probe for Never {
        fn same_data(&mut self) -> bool {
            panic!("data compared needlessly")
        }
        fn xattrs_differ(&mut self, _: bool) -> bool {
            panic!("xattrs compared needlessly")
        }
    }

    fn rsync(checksum: bool, keep: Keep, owner: &OwnerPolicy) -> Judge<'_> {
        let keep = Keep { xattrs: false, acls: false, ..keep };
        Judge { keep, existing: Existing::Rsync { checksum, update: false }, owner }
    }

    fn same(same: bool) -> Answers {
        Answers { same, xattrs_differ: false }
    }

    #[test]
    fn rsync_quick_check_and_checksum() {
        let owner = OwnerPolicy::current();
        let judge = rsync(false, Keep::ALL, &owner);
        let decide = |src: &Metadata, dest: Option<&Metadata>| judge.judge(src, dest, None, &mut Never);
        let src = file(10, 100, 0o644);
        assert_eq!(decide(&src, None).decision, Decision::Create);
        assert_eq!(decide(&src, Some(&src)).decision, Decision::Keep);
        let bigger = decide(&src, Some(&file(11, 100, 0o644)));
        assert_eq!((bigger.decision, bigger.flags), (Decision::Replace, Flags::SIZE));
        let mut nanos_apart = src;
        nanos_apart.mtime.nsec = 6;
        assert_eq!(decide(&src, Some(&nanos_apart)).decision, Decision::Keep, "rsync compares whole seconds");
        let older = decide(&src, Some(&file(10, 99, 0o644)));
        assert_eq!((older.decision, older.flags), (Decision::Replace, Flags::TIME));
        let perms = decide(&src, Some(&file(10, 100, 0o600)));
        assert_eq!((perms.decision, perms.flags), (Decision::Refresh, Flags::PERMS));
        let mut dir = src;
        dir.mode = libc::S_IFDIR | 0o755;
        assert_eq!(decide(&src, Some(&dir)).decision, Decision::Blocked);
        let mut link = src;
        link.mode = libc::S_IFLNK | 0o777;
        let replaced = decide(&src, Some(&link));
        assert_eq!((replaced.decision, replaced.new), (Decision::Replace, true));
        let retargeted = judge.judge(&link, Some(&link), None, &mut same(false));
        assert_eq!((retargeted.decision, retargeted.flags), (Decision::Replace, Flags::CHANGE));

        let checksum = rsync(true, Keep::ALL, &owner);
        let retimed = checksum.judge(&src, Some(&file(10, 99, 0o644)), None, &mut same(true));
        assert_eq!((retimed.decision, retimed.flags), (Decision::Refresh, Flags::TIME), "same content");
        let changed = checksum.judge(&src, Some(&src), None, &mut same(false));
        assert_eq!((changed.decision, changed.flags), (Decision::Replace, Flags::CHANGE));
        let resized = checksum.judge(&src, Some(&file(11, 100, 0o644)), None, &mut Never);
        assert_eq!((resized.decision, resized.flags), (Decision::Replace, Flags::SIZE | Flags::CHANGE));

        let untimed = rsync(false, Keep { times: false, ..Keep::ALL }, &owner);
        let transfer = untimed.judge(&src, Some(&file(10, 99, 0o644)), None, &mut Never);
        assert_eq!((transfer.decision, transfer.flags), (Decision::Replace, Flags::TIME), "shown as T");
    }

    #[test]
    fn cp_copies_again_unless_told_or_resuming() {
        let owner = OwnerPolicy::current();
        let cp = |no_clobber, update, resume: Option<Timestamp>, src: &Metadata, dest: &Metadata| {
            let judge =
                Judge { keep: Keep::default(), existing: Existing::Cp { no_clobber, update }, owner: &owner };
            judge.judge(src, Some(dest), resume, &mut Never)
        };
        let src = file(10, 100, 0o644);
        assert_eq!(cp(false, false, None, &src, &src).decision, Decision::Replace);
        assert_eq!(cp(true, false, None, &src, &src).decision, Decision::Keep);
        assert_eq!(cp(false, true, None, &src, &src).decision, Decision::Keep);
        assert_eq!(cp(false, true, None, &src, &file(10, 99, 0o644)).decision, Decision::Replace);
        let since = Some(Timestamp { sec: 50, nsec: 0 });
        let mut made_since = file(10, 100, 0o644);
        made_since.ctime = Timestamp { sec: 120, nsec: 0 };
        let resumed = cp(false, false, since, &src, &made_since);
        assert_eq!((resumed.decision, resumed.resumed), (Decision::Keep, true));
        let mut before = made_since;
        before.ctime = Timestamp { sec: 40, nsec: 0 };
        assert_eq!(cp(false, false, since, &src, &before).decision, Decision::Replace, "made before the run");
        let mut short = made_since;
        short.size = 5;
        assert_eq!(cp(false, false, since, &src, &short).decision, Decision::Replace);
        let mut changed_since = src;
        changed_since.mtime = Timestamp { sec: 130, nsec: 0 };
        assert_eq!(
            cp(false, false, since, &changed_since, &made_since).decision,
            Decision::Replace,
            "the source changed after its copy was made"
        );
    }
}

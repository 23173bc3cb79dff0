//! What a transfer copies and keeps, and what it does with what the destination already has: the
//! meaning of rsync's `-rlptgoDHAX -c -u` and of cp's `-a -p --preserve -n -u`, in one place.

use canopy_engine::{FileKind, Metadata};

/// Which attributes copies carry over from their sources.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Keep {
    /// Permission bits, setuid/setgid/sticky included (rsync `-p`, cp `--preserve=mode`).
    pub perms: bool,
    /// The owner, when run as root (rsync `-o`, cp `--preserve=ownership`).
    pub owner: bool,
    /// The group, where permitted (rsync `-g`, cp `--preserve=ownership`).
    pub group: bool,
    /// Modification and access times (rsync `-t`, cp `--preserve=timestamps`).
    pub times: bool,
    /// Extended attributes other than ACLs (rsync `-X`, cp `--preserve=xattr`).
    pub xattrs: bool,
    /// POSIX ACLs (rsync `-A`, cp `--preserve=mode`).
    pub acls: bool,
    /// Names of one inode stay names of one copy (rsync `-H`, cp `--preserve=links`).
    pub hard_links: bool,
}

impl Keep {
    /// Everything: `cp -a`, `rsync -aHAX`.
    pub const ALL: Keep = Keep {
        perms: true,
        owner: true,
        group: true,
        times: true,
        xattrs: true,
        acls: true,
        hard_links: true,
    };
}

/// Which entries are copied; the others are skipped with rsync's "skipping non-regular file".
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Scope {
    /// Symlinks are copied as symlinks (rsync `-l`; cp copies them unless it follows them).
    pub symlinks: bool,
    /// Block and character devices (rsync `--devices`, root only).
    pub devices: bool,
    /// FIFOs and sockets (rsync `--specials`).
    pub specials: bool,
}

impl Scope {
    pub const ALL: Scope = Scope { symlinks: true, devices: true, specials: true };

    pub fn includes(&self, kind: FileKind) -> bool {
        match kind {
            FileKind::Symlink => self.symlinks,
            FileKind::BlockDevice | FileKind::CharDevice => self.devices,
            FileKind::Fifo | FileKind::Socket => self.specials,
            _ => true,
        }
    }
}

/// What to do with an entry the destination already has under the name a copy goes to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Existing {
    /// rsync: a regular file is up to date when its size and modification time (whole seconds, as
    /// rsync compares them by default) are the source's — with `checksum`, its size and content;
    /// with `update`, a destination file newer than its source is left alone.
    Rsync { checksum: bool, update: bool },
    /// cp: everything is copied again, except with `no_clobber` (nothing existing is touched) or
    /// `update` (only older destinations are replaced) — and on the rerun of an interrupted copy
    /// (see [`super::marker`]), where what that run completed stays.
    Cp { no_clobber: bool, update: bool },
}

impl Existing {
    /// Modification times compare to the second (rsync's default `--modify-window=0`) or exactly.
    pub fn same_time(&self, a: &Metadata, b: &Metadata) -> bool {
        match self {
            Existing::Rsync { .. } => a.mtime.sec == b.mtime.sec,
            Existing::Cp { .. } => a.mtime == b.mtime,
        }
    }
}

/// The process's file creation mask, read without changing it (`umask(2)` would, racing threads).
pub fn current_umask() -> u32 {
    let from_status = std::fs::read_to_string("/proc/self/status").ok().and_then(|status| {
        let line = status.lines().find(|l| l.starts_with("Umask:"))?;
        u32::from_str_radix(line["Umask:".len()..].trim(), 8).ok()
    });
    from_status.unwrap_or(0o022)
}

/// The permission bits of a new entry whose source's are not kept: the source's, less the umask,
/// without setuid and setgid (cp keeps a directory's sticky bit, rsync does not).
pub fn masked_mode(src: &Metadata, umask: u32, keep_dir_sticky: bool) -> u32 {
    let allowed = if keep_dir_sticky && src.kind() == FileKind::Dir { 0o1777 } else { 0o777 };
    src.permissions() & allowed & !umask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_umask_is_read_without_changing_it() {
        let mask = current_umask();
        assert_eq!(mask & !0o777, 0);
        let previous = rustix::process::umask(rustix::fs::Mode::from_raw_mode(mask));
        assert_eq!(previous.as_raw_mode(), mask);
    }
}

//! What a transfer did to one entry, in rsync's terms: the `%i` string of `--itemize-changes`
//! (`YXcstpoguax`) and the rule for which entries `-i` and `-v` show. rsync's `log.c` is the
//! reference: the update type (`>` transferred, `c` created locally, `h` hard-linked, `.` only
//! attributes), the file type, then one letter per attribute that differs, `+` throughout for a new
//! entry, spaces for an unchanged one that is listed anyway (a hard link made over a file).

use super::quote::printable_utf8_len;
use canopy_engine::FileKind;

/// Attribute differences, one bit per letter of the `%i` string.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Flags(u16);

impl Flags {
    /// `c`: a regular file's checksum (with `--checksum`), a symlink's target.
    pub const CHANGE: Flags = Flags(1 << 0);
    pub const SIZE: Flags = Flags(1 << 1);
    pub const TIME: Flags = Flags(1 << 2);
    pub const PERMS: Flags = Flags(1 << 3);
    pub const OWNER: Flags = Flags(1 << 4);
    pub const GROUP: Flags = Flags(1 << 5);
    pub const ACL: Flags = Flags(1 << 6);
    pub const XATTR: Flags = Flags(1 << 7);

    pub fn has(self, other: Flags) -> bool {
        self.0 & other.0 == other.0
    }

    pub fn is_empty(self) -> bool {
        self.0 == 0
    }
}

impl std::ops::BitOr for Flags {
    type Output = Flags;
    fn bitor(self, other: Flags) -> Flags {
        Flags(self.0 | other.0)
    }
}

impl std::ops::BitOrAssign for Flags {
    fn bitor_assign(&mut self, other: Flags) {
        self.0 |= other.0;
    }
}

/// How the entry was updated: the first letter of `%i`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Update {
    /// `>`: a regular file's data was copied.
    Transfer,
    /// `c`: created or replaced without copying data (directory, symlink, device, special file).
    Local,
    /// `h`: made a hard link to another name of the same source inode.
    HardLink,
    /// `.`: only attributes changed (or, listed anyway, nothing).
    Attributes,
}

/// One itemized entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Item {
    pub kind: FileKind,
    pub update: Update,
    /// The destination had nothing of this type there: `+` in every attribute column.
    pub new: bool,
    pub flags: Flags,
    /// Times are preserved (`-t`): a changed time is `t`; otherwise it is set to the transfer's, `T`.
    pub times_kept: bool,
}

impl Item {
    /// The 11 characters of rsync's `%i`.
    pub fn code(&self) -> [u8; 11] {
        let mut c = [b'.'; 11];
        c[0] = match self.update {
            Update::Transfer => b'>',
            Update::Local => b'c',
            Update::HardLink => b'h',
            Update::Attributes => b'.',
        };
        c[1] = type_letter(self.kind);
        let bit = |flag: Flags, letter: u8| if self.flags.has(flag) { letter } else { b'.' };
        c[2] = bit(Flags::CHANGE, b'c');
        if self.kind != FileKind::Symlink {
            c[3] = bit(Flags::SIZE, b's');
        }
        c[4] = bit(Flags::TIME, if self.times_kept { b't' } else { b'T' });
        c[5] = bit(Flags::PERMS, b'p');
        c[6] = bit(Flags::OWNER, b'o');
        c[7] = bit(Flags::GROUP, b'g');
        c[9] = bit(Flags::ACL, b'a');
        c[10] = bit(Flags::XATTR, b'x');
        if self.new {
            c[2..].fill(b'+');
        } else if self.update != Update::Transfer && c[2..].iter().all(|&b| b == b'.') {
            c[2..].fill(b' ');
        }
        c
    }

    /// Whether `-i` lists it: anything transferred, created, linked or different.
    pub fn itemized(&self) -> bool {
        self.new || self.update != Update::Attributes || !self.flags.is_empty()
    }

    /// Whether `-v` lists its name: data transferred, something made, or a directory whose
    /// attributes change (rsync leaves out files and symlinks whose attributes alone change).
    pub fn named(&self) -> bool {
        self.update != Update::Attributes || (self.kind == FileKind::Dir && self.itemized())
    }
}

/// The `%i` of a deletion.
pub const DELETING: &[u8; 11] = b"*deleting  ";

/// rsync's type letter: `f`, `d`, `L`, `D` (devices), `S` (FIFOs and sockets).
fn type_letter(kind: FileKind) -> u8 {
    match kind {
        FileKind::Dir => b'd',
        FileKind::Symlink => b'L',
        FileKind::BlockDevice | FileKind::CharDevice => b'D',
        FileKind::Fifo | FileKind::Socket => b'S',
        FileKind::File | FileKind::Unknown => b'f',
    }
}

/// Appends `name` as rsync prints file names: bytes that are not printable (control characters
/// but tab, and in the C locale every byte above 0x7f) as `\#ooo`; in a UTF-8 locale valid UTF-8
/// passes through.
pub fn push_name(out: &mut Vec<u8>, name: &[u8], utf8: bool) {
    let mut rest = name;
    while let Some((&b, tail)) = rest.split_first() {
        if b >= 0x80 && utf8 {
            let len = printable_utf8_len(rest);
            if len > 0 {
                out.extend_from_slice(&rest[..len]);
                rest = &rest[len..];
                continue;
            }
        }
        if b == b'\t' || (0x20..0x7f).contains(&b) {
            out.push(b);
        } else {
            out.extend_from_slice(format!("\\#{b:03o}").as_bytes());
        }
        rest = tail;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(kind: FileKind, update: Update, new: bool, flags: Flags) -> String {
        let item = Item { kind, update, new, flags, times_kept: true };
        String::from_utf8(item.code().to_vec()).unwrap()
    }

    #[test]
    fn codes_as_rsync_prints_them() {
        assert_eq!(item(FileKind::File, Update::Transfer, true, Flags::default()), ">f+++++++++");
        assert_eq!(item(FileKind::Dir, Update::Local, true, Flags::default()), "cd+++++++++");
        assert_eq!(item(FileKind::Fifo, Update::Local, true, Flags::default()), "cS+++++++++");
        assert_eq!(item(FileKind::File, Update::Transfer, false, Flags::SIZE | Flags::TIME), ">f.st......");
        assert_eq!(item(FileKind::Dir, Update::Attributes, false, Flags::TIME), ".d..t......");
        assert_eq!(item(FileKind::File, Update::Attributes, false, Flags::GROUP), ".f.....g...");
        assert_eq!(item(FileKind::Symlink, Update::Local, false, Flags::CHANGE | Flags::TIME), "cLc.t......");
        assert_eq!(
            item(FileKind::Symlink, Update::Attributes, false, Flags::TIME | Flags::SIZE),
            ".L..t......"
        );
        assert_eq!(item(FileKind::File, Update::HardLink, false, Flags::default()), "hf         ");
        assert_eq!(item(FileKind::File, Update::Transfer, false, Flags::CHANGE), ">fc........");
        let untimed = Item {
            kind: FileKind::File,
            update: Update::Transfer,
            new: false,
            flags: Flags::TIME,
            times_kept: false,
        };
        assert_eq!(&untimed.code(), b">f..T......");
    }

    #[test]
    fn what_i_and_v_list() {
        let attrs_only = Item {
            kind: FileKind::File,
            update: Update::Attributes,
            new: false,
            flags: Flags::PERMS,
            times_kept: true,
        };
        assert!(attrs_only.itemized() && !attrs_only.named());
        let dir_time = Item { kind: FileKind::Dir, flags: Flags::TIME, ..attrs_only };
        assert!(dir_time.itemized() && dir_time.named());
        let unchanged = Item { flags: Flags::default(), ..attrs_only };
        assert!(!unchanged.itemized() && !unchanged.named());
    }

    #[test]
    fn names_escaped_like_rsync() {
        let escaped = |name: &[u8], utf8| {
            let mut out = Vec::new();
            push_name(&mut out, name, utf8);
            String::from_utf8(out).unwrap()
        };
        assert_eq!(escaped(b"new\nline", false), "new\\#012line");
        assert_eq!(escaped(b"tab\there", false), "tab\there");
        assert_eq!(escaped("caf\u{e9}".as_bytes(), false), "caf\\#303\\#251");
        assert_eq!(escaped("caf\u{e9}".as_bytes(), true), "caf\u{e9}");
        assert_eq!(escaped(b"\xff\xfe x", true), "\\#377\\#376 x");
        assert_eq!(escaped(b"back\\slash 'q' \"d\"", false), "back\\slash 'q' \"d\"");
    }
}

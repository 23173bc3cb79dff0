//! Evaluation of an expression against one entry, with short-circuit `-a`/`-o` like find.

use crate::ast::{Expr, Test};
use crate::fstype::fs_type_name;
use crate::ids::{group_name, user_name};
use crate::printf::read_link;
use canopy_engine::sys::{open_dir_at, open_path};
use canopy_engine::{Entry, Errno, FileKind, Metadata};
use rustix::fs::{Access, AtFlags, CWD, RawDir};
use std::mem::MaybeUninit;

/// What the tool provides to evaluation: running actions and hearing about failures.
pub trait Actions<D> {
    /// Runs action `index` of the program on `entry`; returns its truth value.
    fn action(&mut self, index: usize, entry: &Entry<'_, D>) -> bool;
    /// A test could not read what it needed (the entry vanished, permission denied…).
    fn error(&mut self, entry: &Entry<'_, D>, errno: Errno);
}

/// Side channels of one evaluation: `-prune` and `-quit` were reached.
#[derive(Debug, Default)]
pub struct Flow {
    pub prune: bool,
    pub quit: bool,
    stat_failed: bool,
    path: Option<Vec<u8>>,
}

/// Evaluates `expr` on `entry`.
pub fn eval<D>(expr: &Expr, entry: &Entry<'_, D>, actions: &mut impl Actions<D>, flow: &mut Flow) -> bool {
    match expr {
        Expr::And(items) => items.iter().all(|e| !flow.quit && eval(e, entry, actions, flow)),
        Expr::Or(items) => items.iter().any(|e| !flow.quit && eval(e, entry, actions, flow)),
        // After -quit nothing more runs, not even the rest of a `,` list.
        Expr::List(items) => {
            items.iter().fold(false, |value, e| if flow.quit { value } else { eval(e, entry, actions, flow) })
        }
        Expr::Not(inner) => !eval(inner, entry, actions, flow),
        Expr::Test(test) => test_entry(test, entry, actions, flow),
        Expr::Action(index) => actions.action(*index, entry),
        Expr::Prune => {
            flow.prune = true;
            true
        }
        Expr::Quit => {
            flow.quit = true;
            true
        }
    }
}

fn test_entry<D>(test: &Test, entry: &Entry<'_, D>, actions: &mut impl Actions<D>, flow: &mut Flow) -> bool {
    let meta = |report: &mut dyn FnMut(Errno), flow: &mut Flow| -> Option<Metadata> {
        match entry.metadata() {
            Ok(m) => Some(*m),
            Err(errno) => {
                if !flow.stat_failed {
                    flow.stat_failed = true;
                    report(errno);
                }
                None
            }
        }
    };
    let mut report = |errno| actions.error(entry, errno);
    match test {
        Test::True => true,
        Test::False => false,
        Test::Name(glob) => glob.matches(entry.file_name()),
        Test::Path(glob) => glob.matches(path(entry, flow)),
        Test::Regex(regex) => regex.is_match(path(entry, flow)),
        Test::LinkName(glob) => {
            let is_link = entry.symlink_metadata().is_ok_and(|m| m.kind() == FileKind::Symlink);
            // Under -L only broken links are still links.
            let broken_or_physical = !entry.follows() || entry.kind() == FileKind::Symlink;
            is_link && broken_or_physical && read_link(entry).is_ok_and(|t| glob.matches(&t))
        }
        Test::Type { kinds, follow_opposite: false } => kinds.contains(&entry.kind()),
        Test::Type { kinds, follow_opposite: true } => match opposite_kind(entry) {
            Ok(kind) => kinds.contains(&kind),
            Err(errno) => {
                report(errno);
                false
            }
        },
        Test::Size { num, unit } => {
            meta(&mut report, flow).is_some_and(|m| num.matches(m.size.div_ceil(*unit)))
        }
        Test::Empty => match entry.kind() {
            FileKind::File => meta(&mut report, flow).is_some_and(|m| m.size == 0),
            FileKind::Dir => match dir_is_empty(entry) {
                Ok(empty) => empty,
                Err(errno) => {
                    report(errno);
                    false
                }
            },
            _ => false,
        },
        Test::Time { field, window } => {
            meta(&mut report, flow).is_some_and(|m| window.contains(field.of(&m)))
        }
        Test::Used(window) => meta(&mut report, flow).is_some_and(|m| window.contains(&m)),
        Test::Newer { field, reference } => {
            meta(&mut report, flow).is_some_and(|m| field.of(&m) > *reference)
        }
        Test::User(uid) => meta(&mut report, flow).is_some_and(|m| m.uid == *uid),
        Test::Group(gid) => meta(&mut report, flow).is_some_and(|m| m.gid == *gid),
        Test::Uid(num) => meta(&mut report, flow).is_some_and(|m| num.matches(u64::from(m.uid))),
        Test::Gid(num) => meta(&mut report, flow).is_some_and(|m| num.matches(u64::from(m.gid))),
        Test::NoUser => meta(&mut report, flow).is_some_and(|m| user_name(m.uid).is_none()),
        Test::NoGroup => meta(&mut report, flow).is_some_and(|m| group_name(m.gid).is_none()),
        Test::Perm(perm) => meta(&mut report, flow).is_some_and(|m| perm.matches(m.mode, m.is_dir())),
        Test::Links(num) => meta(&mut report, flow).is_some_and(|m| num.matches(m.nlink)),
        Test::Inum(num) => meta(&mut report, flow).is_some_and(|m| num.matches(m.ino)),
        Test::SameFile { dev, ino } => {
            meta(&mut report, flow).is_some_and(|m| m.dev == *dev && m.ino == *ino)
        }
        Test::Readable => accessible(entry, Access::READ_OK),
        Test::Writable => accessible(entry, Access::WRITE_OK),
        Test::Executable => accessible(entry, Access::EXEC_OK),
        Test::FsType(name) => meta(&mut report, flow).is_some_and(|m| fs_type_name(m.dev) == *name),
    }
}

fn path<'f, D>(entry: &Entry<'_, D>, flow: &'f mut Flow) -> &'f [u8] {
    flow.path.get_or_insert_with(|| entry.path())
}

/// `-xtype`: without -L, what a symlink points to (a broken link stays a link, a looping one is an
/// error); with -L, the link itself.
fn opposite_kind<D>(entry: &Entry<'_, D>) -> Result<FileKind, Errno> {
    if entry.follows() {
        return Ok(entry.symlink_metadata().map_or(entry.dirent_kind(), |m| m.kind()));
    }
    if entry.kind() != FileKind::Symlink {
        return Ok(entry.kind());
    }
    let followed = match entry.dir_fd() {
        Some(fd) => canopy_engine::sys::stat_at(fd, entry.name_cstr(), true),
        None => canopy_engine::sys::stat_path(entry.name_cstr().to_bytes(), true),
    };
    followed.map(|m| m.kind())
}

fn accessible<D>(entry: &Entry<'_, D>, mode: Access) -> bool {
    match entry.dir_fd() {
        Some(fd) => rustix::fs::accessat(fd, entry.name_cstr(), mode, AtFlags::empty()).is_ok(),
        None => rustix::fs::accessat(CWD, entry.name_cstr(), mode, AtFlags::empty()).is_ok(),
    }
}

fn dir_is_empty<D>(entry: &Entry<'_, D>) -> Result<bool, Errno> {
    let fd = match entry.dir_fd() {
        Some(parent) => open_dir_at(parent, entry.name_cstr(), entry.follows())?,
        None => open_path(entry.name_cstr().to_bytes(), entry.follows())?,
    };
    let mut buf = [MaybeUninit::uninit(); 1024];
    let mut dir = RawDir::new(&fd, &mut buf);
    while let Some(dirent) = dir.next() {
        let name = dirent?.file_name().to_bytes().to_vec();
        if name != b"." && name != b".." {
            return Ok(false);
        }
    }
    Ok(true)
}

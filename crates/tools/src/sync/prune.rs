//! Sync's prune pass: removes what the destination has and the source does not — entries missing
//! from the source, directories where the source has something else (and the reverse), and
//! leftover temporaries of interrupted copies. The destination root itself always stays.

use crate::common::Mirror;
use crate::remove::{RemoveDir, Remover, Selection, Selector};
use crate::transfer::is_temp_name;
use canopy_engine::{Cx, DirNode, Entry, Errno, FileKind, Op, WalkError, join_path};
use rustix::fs::{AtFlags, statat};

pub struct Extraneous {
    /// The source root (followed if it is a symlink, as the copy pass does).
    pub source: Vec<u8>,
    /// The destination root as given, to name source paths in messages.
    pub dest: Vec<u8>,
}

fn mirror(dir: &RemoveDir<Mirror>) -> &Mirror {
    &dir.data
}

impl Extraneous {
    /// The source path of a destination entry, for messages.
    fn source_path(&self, dest_path: &[u8]) -> Vec<u8> {
        let rest = &dest_path[self.dest.len().min(dest_path.len())..];
        join_path(&self.source, rest.strip_prefix(b"/").unwrap_or(rest))
    }
}

impl Selector for Extraneous {
    type Data = Mirror;

    fn select(
        &self,
        cx: &mut Cx<'_, Remover<Self>>,
        entry: &Entry<'_, RemoveDir<Mirror>>,
    ) -> Selection<Mirror> {
        let Some(dir) = entry.dir() else {
            return Selection::Keep(Mirror::root(&self.source, true));
        };
        let name = entry.name_cstr();
        if is_temp_name(name.to_bytes()) {
            return Selection::Remove;
        }
        let found =
            Mirror::open(dir, &mirror).and_then(|source| statat(&source, name, AtFlags::SYMLINK_NOFOLLOW));
        let source_is_dir = match found {
            Ok(st) => st.st_mode & libc::S_IFMT == libc::S_IFDIR,
            Err(Errno::NOENT) => return Selection::Remove,
            Err(errno) => {
                // Without knowing what the source has, keep the entry.
                cx.report(WalkError::io(self.source_path(&entry.path()), Op::Stat, errno));
                return Selection::Skip;
            }
        };
        match (entry.kind() == FileKind::Dir, source_is_dir) {
            (true, true) => Selection::Keep(Mirror::default()),
            (false, false) => Selection::Keep(Mirror::default()),
            _ => Selection::Remove,
        }
    }

    fn leave(&self, data: &Mirror) {
        data.close();
    }

    fn lend(&self, dir: &DirNode<RemoveDir<Mirror>>) -> Mirror {
        Mirror::beneath(&self.source, true, dir.relative_path())
    }
}

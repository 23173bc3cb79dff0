//! Attribute changes — chmod, chown, utimes, a truncate's new size — of inodes and of directories'
//! metadata objects, on the server in their id.

use super::apply::{Batch, internal};
use super::data::truncate;
use super::mutation::{Outcome, Refusal, failure};
use crate::ids::now_ns;
use crate::proto::{AttrChange, Attrs, FailureKind, Kind};

impl Batch<'_> {
    pub(super) fn set_object_attr(&mut self, id: u64, change: &AttrChange) -> Result<Outcome, Refusal> {
        let now = now_ns();
        if let Some(mut meta) = self.find_dir(id)? {
            if change.size.is_some() {
                return Err(failure(FailureKind::IsDirectory, "a directory has no size to set"));
            }
            apply_change(meta.attrs.get_or_insert_default(), change, now);
            record_set_times(change, now, (&mut meta.mtime_set_ns, &mut meta.atime_set_ns));
            self.put_dir(&meta);
            return self.object_outcome(id);
        }
        let Some(mut inode) = self.inode(id)? else {
            return Err(failure(FailureKind::NotFound, format!("no object with id {id:#x}")));
        };
        let attrs = inode.attrs.get_or_insert_default();
        if let Some(size) = change.size {
            if attrs.kind() != Kind::File {
                return Err(failure(FailureKind::NotPermitted, "only a regular file has a size to set"));
            }
            // Growing again must show zeros where the file was cut.
            truncate(self, id, size.min(attrs.size)).map_err(internal)?;
        }
        apply_change(attrs, change, now);
        record_set_times(change, now, (&mut inode.mtime_set_ns, &mut inode.atime_set_ns));
        self.put_inode(id, &inode)?;
        self.object_outcome(id)
    }
}

/// Remembers when utimes set each time, so touches from before the setting do not undo it.
fn record_set_times(change: &AttrChange, now: i64, (mtime_set, atime_set): (&mut i64, &mut i64)) {
    if change.mtime_ns.is_some() {
        *mtime_set = now;
    }
    if change.atime_ns.is_some() {
        *atime_set = now;
    }
}

/// Applies the fields `change` sets. Any change sets ctime; a new size sets mtime too unless the
/// change gives one (truncate(2) updates both).
pub fn apply_change(attrs: &mut Attrs, change: &AttrChange, now: i64) {
    if let Some(mode) = change.mode {
        attrs.mode = mode;
    }
    if let Some(uid) = change.uid {
        attrs.uid = uid;
    }
    if let Some(gid) = change.gid {
        attrs.gid = gid;
    }
    if let Some(size) = change.size {
        if size != attrs.size {
            attrs.mtime_ns = now;
        }
        attrs.size = size;
    }
    if let Some(atime) = change.atime_ns {
        attrs.atime_ns = atime;
    }
    if let Some(mtime) = change.mtime_ns {
        attrs.mtime_ns = mtime;
    }
    attrs.ctime_ns = now;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::proto::Attrs;

    #[test]
    fn changes_touch_only_what_they_name_and_always_ctime() {
        let mut attrs = Attrs { mode: 0o644, uid: 1, gid: 2, size: 10, mtime_ns: 5, ..Attrs::default() };
        apply_change(&mut attrs, &AttrChange { mode: Some(0o600), ..AttrChange::default() }, 100);
        assert_eq!(
            (attrs.mode, attrs.uid, attrs.gid, attrs.size, attrs.mtime_ns, attrs.ctime_ns),
            (0o600, 1, 2, 10, 5, 100)
        );
        apply_change(&mut attrs, &AttrChange { size: Some(3), ..AttrChange::default() }, 200);
        assert_eq!((attrs.size, attrs.mtime_ns, attrs.ctime_ns), (3, 200, 200));
        let utimes = AttrChange { atime_ns: Some(7), mtime_ns: Some(8), ..AttrChange::default() };
        apply_change(&mut attrs, &utimes, 300);
        assert_eq!((attrs.atime_ns, attrs.mtime_ns, attrs.ctime_ns), (7, 8, 300));
    }
}

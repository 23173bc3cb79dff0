//! Attribute changes — chmod, chown, a truncate's new size, utimes — of entries and of directories'
//! metadata objects (a directory's attributes live in its metadata object).

use prost::Message;

use super::apply::{Batch, not_found};
use super::mutation::{Outcome, PartKey, Refusal, failure};
use super::store::entry_key;
use crate::ids::now_ns;
use crate::proto::{AttrChange, Attrs, Entry, FailureKind};

impl Batch<'_> {
    pub(super) fn set_attr(
        &mut self,
        at: PartKey,
        name: &[u8],
        hash: u64,
        expect_id: u64,
        change: &AttrChange,
    ) -> Result<Outcome, Refusal> {
        self.routed(at, hash)?;
        let Some(mut record) = self.entry(at, name)? else {
            return Err(not_found(name));
        };
        if expect_id != 0 && record.id != expect_id {
            return Err(failure(FailureKind::Changed, "the entry was replaced meanwhile"));
        }
        apply_change(record.attrs.get_or_insert_default(), change, now_ns());
        let entries = self.store().entries.clone();
        self.tx_mut().insert(&entries, entry_key(at.0, at.1, name), record.encode_to_vec());
        Ok(Outcome::Entry(Entry {
            name: name.to_vec(),
            id: record.id,
            attrs: record.attrs,
            target: record.target,
        }))
    }

    pub(super) fn set_dir_attr(&mut self, dir: u64, change: &AttrChange) -> Result<Outcome, Refusal> {
        let mut meta = self.dir(dir)?;
        apply_change(meta.attrs.get_or_insert_default(), change, now_ns());
        self.put_dir(&meta);
        Ok(Outcome::Dir(meta))
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

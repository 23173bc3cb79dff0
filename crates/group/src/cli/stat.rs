//! `canopy group stat`: members grouped by what a user compares between copies of a file — type, mode,
//! owner, size and modification time to the second (nanoseconds, link counts, devices and inodes differ
//! between hosts without meaning anything) — and printed as `ls -l` prints them.

use crate::aggr::{Aggregation, Classes, Registry};
use crate::value::{FileStat, Value};
use canopy_expr::listing::{local_tm, mode_string, strftime};
use canopy_util::owners::{group_name, user_name};
use serde::{Deserialize, Serialize};
use serde_json::{Value as Json, json};

/// Registry name of [`StatClasses`].
pub const AGGREGATION: &str = "group-stat";

/// The part of a stat two copies of a file are compared by.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct StatKey {
    /// File type and permission bits (`st_mode`).
    pub mode: u32,
    /// Owner.
    pub uid: u32,
    /// Group.
    pub gid: u32,
    /// Size in bytes.
    pub size: u64,
    /// Modification time, whole seconds since the epoch.
    pub mtime: i64,
}

impl StatKey {
    fn of(stat: &FileStat) -> StatKey {
        StatKey { mode: stat.mode, uid: stat.uid, gid: stat.gid, size: stat.size, mtime: stat.mtime }
    }

    /// `-rw-r--r-- root root 1234 2025-01-12 10:00:01`: `ls -l`'s fields (the link count aside), the time
    /// in local time to the second.
    pub fn ls_line(&self) -> String {
        let name = |name: Option<Vec<u8>>, id: u32| {
            name.map_or_else(|| id.to_string(), |n| String::from_utf8_lossy(&n).into_owned())
        };
        format!(
            "{} {} {} {} {}",
            mode_string(self.mode),
            name(user_name(self.uid), self.uid),
            name(group_name(self.gid), self.gid),
            self.size,
            local_time(self.mtime, LS_TIME)
        )
    }

    /// The fields as JSON, names and numbers both.
    pub fn json(&self) -> Json {
        json!({
            "mode": mode_string(self.mode),
            "st_mode": self.mode,
            "user": user_name(self.uid).map(|n| String::from_utf8_lossy(&n).into_owned()),
            "uid": self.uid,
            "group": group_name(self.gid).map(|n| String::from_utf8_lossy(&n).into_owned()),
            "gid": self.gid,
            "size": self.size,
            "mtime": self.mtime,
            "mtime_text": local_time(self.mtime, LS_TIME),
        })
    }
}

/// `seconds` since the epoch in the local time zone (`TZ`) as `format` (strftime's) writes it, or the
/// seconds when the C library cannot say.
pub fn local_time(seconds: i64, format: &str) -> String {
    match local_tm(seconds) {
        Some(tm) => String::from_utf8_lossy(&strftime(&tm, format)).into_owned(),
        None => seconds.to_string(),
    }
}

const LS_TIME: &str = "%Y-%m-%d %H:%M:%S";

/// Members grouped by [`StatKey`], the default aggregation of `canopy group stat`.
pub struct StatClasses;

impl Aggregation for StatClasses {
    type Partial = Classes<StatKey>;

    fn leaf(&self, member: u64, value: &Value) -> Classes<StatKey> {
        match value {
            Value::Stat(stat) => Classes::leaf(StatKey::of(stat), member),
            // Only fstat binds this aggregation.
            _ => Classes(Vec::new()),
        }
    }

    fn merge(&self, left: Classes<StatKey>, right: Classes<StatKey>) -> Classes<StatKey> {
        left.merge(right)
    }
}

/// Registers [`StatClasses`] (every host must).
pub fn register(registry: &mut Registry) {
    registry.register(AGGREGATION, |_: &str| Ok(StatClasses));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nanoseconds_and_link_counts_do_not_split_a_class() {
        let stat = |mtime_nsec: u32, nlink: u64| FileStat {
            size: 6,
            mode: 0o100644,
            uid: 0,
            gid: 0,
            nlink,
            mtime: 1_700_000_000,
            mtime_nsec,
        };
        let merged = StatClasses.merge(
            StatClasses.leaf(0, &Value::Stat(stat(1, 1))),
            StatClasses.leaf(1, &Value::Stat(stat(999_999_999, 2))),
        );
        assert_eq!(merged.0.len(), 1);
        assert_eq!(merged.0[0].1.len(), 2);
        let line = merged.0[0].0.ls_line();
        assert!(line.starts_with("-rw-r--r-- root root 6 2023-11-1"), "{line}");
        let newer = StatClasses.leaf(2, &Value::Stat(FileStat { mtime: 1_700_000_001, ..stat(0, 1) }));
        assert_eq!(StatClasses.merge(merged, newer).0.len(), 2);
    }
}

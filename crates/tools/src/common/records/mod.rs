//! Per-entry records (`--output FILE`): one row per entry, as Parquet or JSON Lines.
//!
//! Every worker thread fills its own [`RecordBuffer`] (Arrow column builders, or JSON lines) and hands
//! full batches to one writer thread over a bounded channel: the walk never waits on a lock per
//! entry, and when the writer falls behind the workers block, so memory stays bounded however big
//! the tree. [`RecordOutput::create`] writes one file; a distributed run gives each rank its own
//! file (e.g. `DIR/part-RANK.parquet`) by calling it with that path.
//!
//! Columns (Parquet type / JSON Lines value), the same in both formats:
//!
//! | column        | Parquet                 | JSON Lines       | meaning                                        |
//! |---------------|-------------------------|------------------|------------------------------------------------|
//! | `path`        | string                  | string           | the path; exact when valid UTF-8, else lossy (U+FFFD) |
//! | `path_bytes` / `path_base64` | binary, null if UTF-8 | base64 string or null | the exact bytes when `path` is lossy |
//! | `type`        | string                  | string           | `file dir symlink fifo socket block char`      |
//! | `size`        | uint64                  | number           | `st_size` (apparent bytes)                     |
//! | `blocks`      | uint64                  | number           | `st_blocks`, 512-byte units                    |
//! | `mode`        | uint32                  | number           | full `st_mode` (type bits and permissions)     |
//! | `uid`, `gid`  | uint32                  | number           | owner and group ids                            |
//! | `atime`, `mtime`, `ctime` | timestamp(ns, UTC) | integer ns since the epoch | saturated outside 1677–2262 |
//! | `inode`, `nlink`, `dev` | uint64        | number           | `st_ino`, `st_nlink`, `st_dev`                 |
//! | `depth`       | uint32                  | number           | depth below the walk root (the root is 0)      |
//!
//! The exact path is `coalesce(path_bytes, encode(path))` in DuckDB for Parquet,
//! `coalesce(from_base64(path_base64), encode(path))` for JSON Lines; in jq, `select(.path_base64)`
//! finds the lossy ones (jq strings cannot hold invalid UTF-8). Read JSON Lines in DuckDB
//! with `read_json(FILE, sample_size = -1)`: with the default sample, a `path_base64` first seen
//! after the sampled rows is read as NULL. pandas reads both (`read_parquet`, `read_json(lines=True)`);
//! jq before 1.7 rounds the nanosecond times to doubles. Parquet files carry the key-value metadata
//! `canopy.records.version` = [`RECORDS_VERSION`].

#[cfg(feature = "parquet")]
mod arrow_rows;
mod file;
mod format;
mod jsonl;
mod output;
mod path_text;

pub use file::{finish_output, open_output, record_path};
pub use format::RecordFormat;
pub use output::{RecordBuffer, RecordOutput};
pub use path_text::EncodedPath;

use canopy_engine::{FileKind, Metadata, Timestamp};

/// Version of the record schema above; bumped when a column changes meaning or type.
pub const RECORDS_VERSION: u32 = 1;

/// One entry to write: its path (bytes, any length), type, metadata and depth.
#[derive(Clone, Copy, Debug)]
pub struct Record<'a> {
    pub path: &'a [u8],
    pub kind: FileKind,
    pub meta: &'a Metadata,
    pub depth: u32,
}

/// Nanoseconds since the epoch, saturated to what an `i64` holds (years 1677 to 2262).
pub fn timestamp_ns(t: Timestamp) -> i64 {
    let ns = i128::from(t.sec) * 1_000_000_000 + i128::from(t.nsec);
    i64::try_from(ns).unwrap_or(if ns < 0 { i64::MIN } else { i64::MAX })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timestamps_keep_nanoseconds_and_saturate() {
        let t = |sec, nsec| Timestamp { sec, nsec };
        assert_eq!(timestamp_ns(t(1, 5)), 1_000_000_005);
        assert_eq!(timestamp_ns(t(-1, 999_999_999)), -1);
        assert_eq!(timestamp_ns(t(i64::MAX / 1000, 0)), i64::MAX);
        assert_eq!(timestamp_ns(t(i64::MIN / 1000, 0)), i64::MIN);
    }
}

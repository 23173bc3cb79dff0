//! Bytes on the wire, from the real message types: a work batch is what `canopy walk` sends — its
//! origin rank and `RemoteTask<(), u64>`s (the walk's job and directory data) encoded with postcard,
//! as `canopy-distwalk` does — and a completion is an export id and that data. The sizes are computed
//! from encodings of real values made once (a directory's metadata as `statx` gives it); only the
//! lengths of paths and names vary, and the unit tests check the arithmetic against full encodings.

use canopy_distwalk::termination::Signal;
use canopy_engine::remote::{DirSpec, RemoteTask, RemoteWork};
use canopy_engine::{FileKind, Metadata, StartPoint, Timestamp};

/// An export id as a busy rank numbers them (a two-byte varint).
const EXPORT_ID: u64 = 1_000;
/// The walk's per-directory data (a count of entries).
const DIR_DATA: u64 = 100;

#[derive(Clone, Debug)]
pub struct Wire {
    /// A `Read` task whose path and name are empty and depth is 0.
    read_base: usize,
    /// A `Chunk` task likewise, with no names and no items.
    chunk_base: usize,
}

/// How a task travels: its directory's path and name lengths and depth, and for a chunk of a big
/// directory its entries.
#[derive(Clone, Copy, Debug)]
pub struct TaskShape {
    pub path_len: u32,
    pub name_len: u32,
    pub depth: u32,
    /// `Some(entries)` for a chunk: names of `name_len` bytes each.
    pub chunk: Option<(u32, u32)>,
}

impl Default for Wire {
    fn default() -> Self {
        Wire { read_base: encoded(&read_task(0, 0, 0)), chunk_base: encoded(&chunk_task(0, 0, 0, 0, 0)) }
    }
}

impl Wire {
    /// Bytes of one task inside a batch.
    pub fn task(&self, t: TaskShape) -> usize {
        let dir = varint_extra(t.path_len as u64)
            + t.path_len as usize
            + varint_extra(t.name_len as u64)
            + t.name_len as usize
            + varint_extra(u64::from(t.depth));
        match t.chunk {
            None => self.read_base + dir,
            Some((entries, name_len)) => {
                let names = u64::from(entries) * u64::from(name_len + 1);
                // Each item is (end of its name in `names`, kind): the end grows along the chunk.
                let items: usize =
                    (1..=u64::from(entries)).map(|i| varint_len(i * u64::from(name_len + 1)) + 1).sum();
                self.chunk_base
                    + dir
                    + varint_extra(names)
                    + names as usize
                    + varint_extra(u64::from(entries))
                    + items
            }
        }
    }

    /// Bytes of a batch of tasks (their sizes given) sent by `origin`.
    pub fn batch(&self, origin: u32, tasks: usize, task_bytes: usize) -> usize {
        varint_len(u64::from(origin)) + varint_len(tasks as u64) + task_bytes
    }

    /// Bytes of `n` completions: one message each as canopy sends them today (`n = 1`), or a batch.
    pub fn completions(&self, n: usize, batched: bool) -> usize {
        let one = varint_len(EXPORT_ID) + varint_len(DIR_DATA);
        if batched { varint_len(n as u64) + n * one } else { one }
    }

    /// Bytes of a number sent alone (a varint).
    pub fn count(&self, n: u64) -> usize {
        varint_len(n)
    }

    /// Bytes of a termination signal.
    pub fn signal(&self, signal: &Signal) -> usize {
        encoded(signal)
    }
}

fn encoded<T: serde::Serialize>(value: &T) -> usize {
    postcard::to_allocvec(value).expect("wire values serialise").len()
}

fn varint_len(n: u64) -> usize {
    (64 - n.max(1).leading_zeros() as usize).div_ceil(7)
}

/// Bytes a length prefix or number takes beyond the one byte of a zero.
fn varint_extra(n: u64) -> usize {
    varint_len(n) - 1
}

fn directory_metadata() -> Metadata {
    let t = Timestamp { sec: 1_732_400_000, nsec: 512_345_678 };
    Metadata {
        mode: 0o40755,
        nlink: 2,
        uid: 1000,
        gid: 1000,
        size: 4096,
        blocks: 8,
        blksize: 4096,
        ino: 1_234_567_890,
        dev: 0x0000_0030_0000_0036,
        rdev: 0,
        atime: t,
        mtime: t,
        ctime: t,
    }
}

fn spec(path_len: u32, name_len: u32, depth: u32) -> DirSpec<u64> {
    DirSpec {
        path: vec![b'p'; path_len as usize],
        name: vec![b'n'; name_len as usize],
        depth,
        follow: false,
        meta: Some(directory_metadata()),
        start: StartPoint {
            path: b"/lustre/scratch/tree".as_slice().into(),
            dev: Some(0x0000_0030_0000_0036),
            follow: false,
        },
        ancestors: Vec::new(),
        data: DIR_DATA,
    }
}

fn read_task(path_len: u32, name_len: u32, depth: u32) -> RemoteTask<(), u64> {
    RemoteTask { origin: Some(EXPORT_ID), work: RemoteWork::Read { dir: spec(path_len, name_len, depth) } }
}

fn chunk_task(
    path_len: u32,
    name_len: u32,
    depth: u32,
    entries: u32,
    entry_name_len: u32,
) -> RemoteTask<(), u64> {
    let mut names = Vec::new();
    let mut items = Vec::new();
    for _ in 0..entries {
        names.extend(std::iter::repeat_n(b'f', entry_name_len as usize));
        names.push(0);
        items.push((names.len() as u32, FileKind::File));
    }
    RemoteTask {
        origin: Some(EXPORT_ID),
        work: RemoteWork::Chunk { dir: spec(path_len, name_len, depth), names, items },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_sizes_match_real_encodings() {
        let wire = Wire::default();
        for (path_len, name_len, depth) in [(0, 0, 0), (31, 11, 1), (200, 11, 17), (5000, 300, 300)] {
            let shape = TaskShape { path_len, name_len, depth, chunk: None };
            assert_eq!(wire.task(shape), encoded(&read_task(path_len, name_len, depth)), "{shape:?}");
            for (entries, len) in [(1, 19), (256, 19), (300, 100)] {
                let shape = TaskShape { chunk: Some((entries, len)), ..shape };
                assert_eq!(
                    wire.task(shape),
                    encoded(&chunk_task(path_len, name_len, depth, entries, len)),
                    "{shape:?}"
                );
            }
        }
    }

    #[test]
    fn batches_and_completions_match_real_encodings() {
        let wire = Wire::default();
        let tasks = vec![read_task(40, 11, 2), read_task(52, 11, 3)];
        let task_bytes: usize = tasks.iter().map(encoded).sum();
        assert_eq!(wire.batch(300, 2, task_bytes), encoded(&(300u32, tasks)));
        assert_eq!(wire.completions(1, false), encoded(&(EXPORT_ID, DIR_DATA)));
        assert_eq!(wire.completions(3, true), encoded(&vec![(EXPORT_ID, DIR_DATA); 3]));
        assert!(
            wire.task(TaskShape { path_len: 40, name_len: 11, depth: 2, chunk: None }) > 80,
            "metadata travels"
        );
    }
}

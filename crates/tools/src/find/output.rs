//! Where find's output goes: per-worker buffers in front of stdout and `-fprint` files, or, with
//! `--sort`, records kept until the walk ends and written in path order.

use canopy_engine::output::{OutBuf, Sink};
use std::sync::Arc;

/// One worker's outputs, indexed like the program's outputs (0 = stdout, 1.. = files).
pub enum Outputs {
    Direct(Vec<OutBuf>),
    Sorted(Vec<Record>),
}

/// A piece of output held for `--sort`: the path it belongs to, its destination and its bytes.
#[derive(serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub path: Vec<u8>,
    pub sink: usize,
    pub bytes: Vec<u8>,
}

impl Outputs {
    pub fn new(sinks: &[Arc<Sink>], sorted: bool) -> Self {
        if sorted {
            Outputs::Sorted(Vec::new())
        } else {
            Outputs::Direct(sinks.iter().map(|s| OutBuf::new(Arc::clone(s))).collect())
        }
    }

    /// Appends output for the entry at `path` to destination `sink`, produced by `write`.
    pub fn emit(&mut self, sink: usize, path: impl FnOnce() -> Vec<u8>, write: impl FnOnce(&mut Vec<u8>)) {
        match self {
            Outputs::Direct(bufs) => {
                write(bufs[sink].buf());
                bufs[sink].end_record();
            }
            Outputs::Sorted(records) => {
                let mut bytes = Vec::new();
                write(&mut bytes);
                records.push(Record { path: path(), sink, bytes });
            }
        }
    }

    /// Lengths of the buffers, to undo one entry's output (see [`Outputs::truncate`]).
    pub fn marks(&self) -> Vec<usize> {
        match self {
            Outputs::Direct(bufs) => bufs.iter().map(|b| b.len()).collect(),
            Outputs::Sorted(records) => vec![records.len()],
        }
    }

    pub fn truncate(&mut self, marks: &[usize]) {
        match self {
            Outputs::Direct(bufs) => bufs.iter_mut().zip(marks).for_each(|(b, &m)| b.truncate(m)),
            Outputs::Sorted(records) => records.truncate(marks[0]),
        }
    }

    pub fn flush(&mut self) {
        if let Outputs::Direct(bufs) = self {
            bufs.iter_mut().for_each(OutBuf::flush);
        }
    }
}

//! The summary as printed: a versioned JSON document (`--json`) that the text output also renders.
//!
//! Schema `canopy.walk.summary`, version 1 (fields are only ever added within a version):
//!
//! ```text
//! format, version          "canopy.walk.summary", 1
//! roots                    [{path, path_base64}]            the PATH arguments
//! reference_time_ns        walk start, ns since the epoch   ages are measured from it
//! elapsed_secs, entries_per_sec, threads
//! errors                   failures reported (each also on stderr); exit status 1 when > 0
//! totals                   {entries, apparent_bytes, allocated_bytes} over every entry
//! by_type                  {file, dir, symlink, fifo, socket, block, char, unknown} → totals
//! file_sizes               [{min_bytes, max_bytes, entries, apparent_bytes, allocated_bytes}]
//!                          regular files, power-of-two buckets (bounds inclusive), non-empty only
//! file_ages                [{min_age_secs, max_age_secs, entries, apparent_bytes, allocated_bytes}]
//!                          regular files by mtime; min inclusive, max exclusive, null = unbounded
//!                          (the first bucket, max 0, is mtimes in the future)
//! users, groups            {distinct, by_allocated_bytes: [owner], by_entries: [owner]}
//!                          owner = {id, name (null when unknown), entries, apparent_bytes,
//!                          allocated_bytes}; the top N (--top) of every entry's owner/group
//! largest_files            [{path, path_base64, size}]     top N regular files by size
//! widest_dirs              [{path, path_base64, entries}]  top N directories by entry count
//! deepest                  {path, path_base64, depth} | null
//! records                  {path, format, records} | null  the --output file
//! ```
//!
//! Paths are text when valid UTF-8; otherwise `path` is lossy and `path_base64` holds the bytes.
//! Byte counts include every hard link of a file (as `find` lists them); allocated bytes are
//! `st_blocks` × 512.

use super::summary::TreeSummary;
use super::top::TopN;
use super::totals::{ByKind, Totals};
use crate::common::records::{EncodedPath, timestamp_ns};
use canopy_engine::Timestamp;
use canopy_util::owners::{group_name, user_name};
use serde::{Deserialize, Serialize};
use std::collections::HashMap;

pub const DOCUMENT_FORMAT: &str = "canopy.walk.summary";
pub const DOCUMENT_VERSION: u32 = 1;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SummaryDocument {
    pub format: String,
    pub version: u32,
    pub roots: Vec<EncodedPath>,
    pub reference_time_ns: i64,
    pub elapsed_secs: f64,
    pub entries_per_sec: f64,
    pub threads: usize,
    pub errors: u64,
    pub totals: Totals,
    pub by_type: ByKind,
    pub file_sizes: Vec<SizeBucket>,
    pub file_ages: Vec<AgeBucket>,
    pub users: Owners,
    pub groups: Owners,
    pub largest_files: Vec<LargeFile>,
    pub widest_dirs: Vec<WideDir>,
    pub deepest: Option<DeepPath>,
    pub records: Option<RecordsWritten>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SizeBucket {
    pub min_bytes: u64,
    pub max_bytes: u64,
    #[serde(flatten)]
    pub totals: Totals,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgeBucket {
    pub min_age_secs: Option<i64>,
    pub max_age_secs: Option<i64>,
    #[serde(flatten)]
    pub totals: Totals,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owners {
    pub distinct: usize,
    pub by_allocated_bytes: Vec<Owner>,
    pub by_entries: Vec<Owner>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Owner {
    pub id: u32,
    pub name: Option<String>,
    #[serde(flatten)]
    pub totals: Totals,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct LargeFile {
    #[serde(flatten)]
    pub path: EncodedPath,
    pub size: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct WideDir {
    #[serde(flatten)]
    pub path: EncodedPath,
    pub entries: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeepPath {
    #[serde(flatten)]
    pub path: EncodedPath,
    pub depth: u64,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordsWritten {
    pub path: EncodedPath,
    pub format: String,
    pub records: u64,
}

/// What the walk itself measured, besides the merged summary.
pub struct RunFacts<'a> {
    pub roots: &'a [Vec<u8>],
    pub reference: Timestamp,
    pub elapsed_secs: f64,
    pub entries_visited: u64,
    pub threads: usize,
    pub errors: u64,
    pub records: Option<RecordsWritten>,
}

impl SummaryDocument {
    /// Builds the report from the merged summary, keeping `top` owners per ranking.
    pub fn new(summary: &TreeSummary, facts: RunFacts<'_>, top: usize) -> Self {
        SummaryDocument {
            format: DOCUMENT_FORMAT.to_string(),
            version: DOCUMENT_VERSION,
            roots: facts.roots.iter().map(|r| EncodedPath::new(r)).collect(),
            reference_time_ns: timestamp_ns(facts.reference),
            elapsed_secs: facts.elapsed_secs,
            entries_per_sec: facts.entries_visited as f64 / facts.elapsed_secs.max(1e-9),
            threads: facts.threads,
            errors: facts.errors,
            totals: summary.by_kind.total(),
            by_type: summary.by_kind,
            file_sizes: summary
                .file_sizes
                .buckets()
                .filter(|(_, _, t)| t.entries > 0)
                .map(|(min_bytes, max_bytes, totals)| SizeBucket { min_bytes, max_bytes, totals: *totals })
                .collect(),
            file_ages: summary
                .file_ages
                .buckets()
                .map(|(min_age_secs, max_age_secs, totals)| AgeBucket {
                    min_age_secs,
                    max_age_secs,
                    totals: *totals,
                })
                .collect(),
            users: Owners::rank(&summary.users, top, user_name),
            groups: Owners::rank(&summary.groups, top, group_name),
            largest_files: ranked(&summary.largest_files, |path, size| LargeFile { path, size }),
            widest_dirs: ranked(&summary.widest_dirs, |path, entries| WideDir { path, entries }),
            deepest: ranked(&summary.deepest, |path, depth| DeepPath { path, depth }).into_iter().next(),
            records: facts.records,
        }
    }
}

impl Owners {
    fn rank(totals: &HashMap<u32, Totals>, top: usize, name: fn(u32) -> Option<Vec<u8>>) -> Self {
        let mut all: Vec<(u32, Totals)> = totals.iter().map(|(id, t)| (*id, *t)).collect();
        let mut take = |key: fn(&Totals) -> u64| -> Vec<Owner> {
            all.sort_by_key(|(id, t)| (std::cmp::Reverse(key(t)), *id));
            all.iter()
                .take(top)
                .map(|(id, totals)| Owner {
                    id: *id,
                    name: name(*id).map(|n| String::from_utf8_lossy(&n).into_owned()),
                    totals: *totals,
                })
                .collect()
        };
        Owners {
            by_allocated_bytes: take(|t| t.allocated_bytes),
            by_entries: take(|t| t.entries),
            distinct: totals.len(),
        }
    }
}

fn ranked<T>(top: &TopN, make: impl Fn(EncodedPath, u64) -> T) -> Vec<T> {
    top.items().iter().map(|r| make(EncodedPath::new(&r.path), r.value)).collect()
}

//! `canopy walk --output`: every record equals what GNU find reports for the same path, in JSON
//! Lines (parsed here with serde_json) and Parquet (read back by DuckDB's Python package).

mod tree;

use canopy_tools::common::records::EncodedPath;
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use tree::{Found, find, hostile_tree, run_canopy};

/// One record, with every column compared.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Row {
    kind: String,
    size: u64,
    blocks: u64,
    mode: u64,
    uid: u64,
    gid: u64,
    /// Directories' atimes are left out: reading a directory may update it between two walks.
    atime: Option<i64>,
    mtime: i64,
    ctime: i64,
    inode: u64,
    nlink: u64,
    dev: u64,
    depth: u64,
}

fn expected_rows(found: &[Found]) -> BTreeMap<Vec<u8>, Row> {
    found
        .iter()
        .map(|e| {
            let row = Row {
                kind: e.type_name().to_string(),
                size: e.size,
                blocks: e.blocks,
                mode: u64::from(e.mode()),
                uid: u64::from(e.uid),
                gid: u64::from(e.gid),
                atime: (e.letter != 'd').then_some(e.atime_ns),
                mtime: e.mtime_ns,
                ctime: e.ctime_ns,
                inode: e.inode,
                nlink: e.nlink,
                dev: e.dev,
                depth: u64::from(e.depth),
            };
            (e.path.clone(), row)
        })
        .collect()
}

/// A row from a JSON object with the record columns (`path` already decoded by the caller).
fn row_of(v: &Value) -> Row {
    let u = |k: &str| v[k].as_u64().unwrap_or_else(|| panic!("{k} in {v}"));
    let i = |k: &str| v[k].as_i64().unwrap_or_else(|| panic!("{k} in {v}"));
    let kind = v["type"].as_str().unwrap().to_string();
    Row {
        atime: (kind != "dir").then(|| i("atime")),
        kind,
        size: u("size"),
        blocks: u("blocks"),
        mode: u("mode"),
        uid: u("uid"),
        gid: u("gid"),
        mtime: i("mtime"),
        ctime: i("ctime"),
        inode: u("inode"),
        nlink: u("nlink"),
        dev: u("dev"),
        depth: u("depth"),
    }
}

fn walk_with_output(root: &Path, output: &Path) -> String {
    let out = run_canopy(&["walk".as_ref(), root.as_os_str(), "--output".as_ref(), output.as_os_str()]);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout).unwrap()
}

fn assert_same_rows(got: BTreeMap<Vec<u8>, Row>, expected: &BTreeMap<Vec<u8>, Row>, source: &str) {
    let missing: Vec<_> = expected.keys().filter(|p| !got.contains_key(*p)).collect();
    let extra: Vec<_> = got.keys().filter(|p| !expected.contains_key(*p)).collect();
    assert!(missing.is_empty() && extra.is_empty(), "{source}: missing {missing:?}, extra {extra:?}");
    for (path, row) in expected {
        assert_eq!(&got[path], row, "{source}: {}", String::from_utf8_lossy(path));
    }
}

#[test]
fn json_lines_records_match_find() {
    let tmp = tempfile::tempdir().unwrap();
    let root = hostile_tree(tmp.path());
    let output = tmp.path().join("records.jsonl");
    let summary = walk_with_output(&root, &output);
    let (found, _) = find(&[&root], &[]);

    let text = std::fs::read(&output).unwrap();
    let mut rows = BTreeMap::new();
    let mut lines = 0;
    for line in text.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        lines += 1;
        let v: Value = serde_json::from_slice(line).unwrap();
        let path: EncodedPath = serde_json::from_value(v.clone()).unwrap();
        let raw = path.to_bytes().unwrap();
        assert_eq!(path.path_base64.is_some(), std::str::from_utf8(&raw).is_err());
        rows.insert(raw, row_of(&v));
    }
    assert_eq!(lines, found.len(), "one line per entry");
    assert_same_rows(rows, &expected_rows(&found), "jsonl");
    assert!(summary.contains(&format!("{} records written to", found.len())), "{summary}");
}

/// Reads both files with DuckDB (and the Parquet file with pyarrow) and prints one JSON object per
/// record, the exact path in hex.
const READ_BACK: &str = r#"
import json, sys, duckdb, pyarrow.parquet as pq
parquet, jsonl = sys.argv[1], sys.argv[2]
columns = "type, size, blocks, mode, uid, gid, inode, nlink, dev, depth"
queries = {
    "parquet": f"select coalesce(path_bytes, encode(path)) as p, {columns}, epoch_ns(atime) as atime,"
               f" epoch_ns(mtime) as mtime, epoch_ns(ctime) as ctime from read_parquet('{parquet}')",
    "jsonl": f"select coalesce(from_base64(path_base64), encode(path)) as p, {columns}, atime, mtime, ctime"
             f" from read_json('{jsonl}', format = 'newline_delimited', sample_size = -1)",
}
for source, sql in queries.items():
    rel = duckdb.sql(sql)
    for values in rel.fetchall():
        row = dict(zip(rel.columns, values))
        row["p"] = row["p"].hex()
        row["source"] = source
        print(json.dumps(row))
meta = pq.read_metadata(parquet)
print(json.dumps({"source": "pyarrow", "rows": pq.read_table(parquet).num_rows,
                  "version": meta.metadata[b"canopy.records.version"].decode()}))
"#;

fn from_hex(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn parquet_and_json_lines_read_back_by_duckdb_match_find() {
    let Some(python) = std::env::var_os("CANOPY_TEST_PYTHON") else {
        canopy_testkit::skip(
            "CANOPY_TEST_PYTHON is \
             not set (scripts/test sets it to a venv with duckdb and pyarrow)",
        );
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let root = hostile_tree(tmp.path());
    let parquet = tmp.path().join("records.parquet");
    let jsonl = tmp.path().join("records.jsonl");
    walk_with_output(&root, &parquet);
    walk_with_output(&root, &jsonl);
    let (found, _) = find(&[&root], &[]);
    let expected = expected_rows(&found);

    let out = Command::new(python)
        .args(["-c", READ_BACK])
        .arg(&parquet)
        .arg(&jsonl)
        .output()
        .expect("the test python runs");
    assert!(out.status.success(), "python: {}", String::from_utf8_lossy(&out.stderr));
    let mut by_source: BTreeMap<String, BTreeMap<Vec<u8>, Row>> = BTreeMap::new();
    let mut pyarrow = None;
    for line in String::from_utf8(out.stdout).unwrap().lines() {
        let v: Value = serde_json::from_str(line).unwrap();
        let source = v["source"].as_str().unwrap().to_string();
        if source == "pyarrow" {
            pyarrow = Some(v);
            continue;
        }
        let rows = by_source.entry(source.clone()).or_default();
        let previous = rows.insert(from_hex(v["p"].as_str().unwrap()), row_of(&v));
        assert!(previous.is_none(), "{source}: a path appears twice: {v}");
    }
    for source in ["parquet", "jsonl"] {
        let rows = by_source.remove(source).unwrap_or_default();
        assert_eq!(rows.len(), found.len(), "{source}: row count");
        assert_same_rows(rows, &expected, source);
    }
    let pyarrow = pyarrow.expect("pyarrow line");
    assert_eq!(pyarrow["rows"].as_u64(), Some(found.len() as u64));
    assert_eq!(pyarrow["version"], "1");
}

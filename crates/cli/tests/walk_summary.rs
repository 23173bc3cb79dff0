//! `canopy walk --json` and the text summary against GNU find on a hostile tree.

mod tree;

use canopy_tools::walk::{Owner, SummaryDocument, Totals};
use std::collections::{BTreeMap, HashMap};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use tree::{Found, find, hostile_tree, run_canopy};

const TOP: usize = 5;

fn walk_json(roots: &[&Path]) -> (SummaryDocument, serde_json::Value) {
    let mut args: Vec<&OsStr> = vec!["walk".as_ref(), "--json".as_ref(), "--top".as_ref()];
    let top = TOP.to_string();
    args.push(top.as_ref());
    args.extend(roots.iter().map(|r| r.as_os_str()));
    let out = run_canopy(&args);
    assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let value: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let report: SummaryDocument = serde_json::from_value(value.clone()).unwrap();
    (report, value)
}

fn totals<'a>(entries: impl IntoIterator<Item = &'a Found>) -> Totals {
    let mut t = Totals::default();
    for e in entries {
        t.entries += 1;
        t.apparent_bytes += e.size;
        t.allocated_bytes += e.blocks * 512;
    }
    t
}

fn bytes(path: &canopy_tools::common::records::EncodedPath) -> Vec<u8> {
    path.to_bytes().unwrap()
}

/// The names the system's user/group databases give, by `getent`.
fn getent(database: &str, id: u32) -> Option<String> {
    let out = std::process::Command::new("getent").args([database, &id.to_string()]).output().unwrap();
    let line = String::from_utf8(out.stdout).unwrap();
    line.split(':').next().filter(|n| !n.is_empty()).map(str::to_string)
}

/// The top owners by `key`, as the report should list them.
fn expected_owners(
    found: &[Found],
    id: fn(&Found) -> u32,
    key: fn(&Totals) -> u64,
    database: &str,
) -> Vec<Owner> {
    let mut by_id: BTreeMap<u32, Vec<&Found>> = BTreeMap::new();
    for e in found {
        by_id.entry(id(e)).or_default().push(e);
    }
    let mut owners: Vec<Owner> = by_id
        .into_iter()
        .map(|(id, entries)| Owner { id, name: getent(database, id), totals: totals(entries) })
        .collect();
    owners.sort_by_key(|o| (std::cmp::Reverse(key(&o.totals)), o.id));
    owners.truncate(TOP);
    owners
}

#[test]
fn json_summary_matches_find_and_round_trips() {
    let tmp = tempfile::tempdir().unwrap();
    let root = hostile_tree(tmp.path());
    let (found, status) = find(&[&root], &[]);
    assert_eq!(status, 0);
    let (report, value) = walk_json(&[&root]);

    // Round trip: the typed report holds every field of the document, and nothing else.
    assert_eq!(serde_json::to_value(&report).unwrap(), value);
    assert_eq!(report.format, "canopy.walk.summary");
    assert_eq!(report.version, 1);
    assert_eq!(report.errors, 0);
    assert_eq!(bytes(&report.roots[0]), root.as_os_str().as_bytes());

    // Counts and bytes by type, and in total.
    assert_eq!(report.totals, totals(&found));
    for (name, got) in report.by_type.iter() {
        let expected = totals(found.iter().filter(|e| e.type_name() == name));
        assert_eq!(*got, expected, "type {name}");
    }
    assert!(report.by_type.fifo.entries == 1 && report.by_type.socket.entries == 1);

    // Owners, with names from the system's databases and numbers when there are none.
    let allocated = |t: &Totals| t.allocated_bytes;
    let entries = |t: &Totals| t.entries;
    let uid = |e: &Found| e.uid;
    let gid = |e: &Found| e.gid;
    assert_eq!(report.users.by_allocated_bytes, expected_owners(&found, uid, allocated, "passwd"));
    assert_eq!(report.users.by_entries, expected_owners(&found, uid, entries, "passwd"));
    assert_eq!(report.groups.by_allocated_bytes, expected_owners(&found, gid, allocated, "group"));
    assert_eq!(report.groups.by_entries, expected_owners(&found, gid, entries, "group"));
    let distinct =
        |id: fn(&Found) -> u32| found.iter().map(id).collect::<std::collections::HashSet<_>>().len();
    assert_eq!(report.users.distinct, distinct(uid));
    assert_eq!(report.groups.distinct, distinct(gid));

    // Largest files: size descending, ties by path.
    let mut files: Vec<&Found> = found.iter().filter(|e| e.letter == 'f').collect();
    files.sort_by(|a, b| b.size.cmp(&a.size).then_with(|| a.path.cmp(&b.path)));
    let expected: Vec<(Vec<u8>, u64)> = files.iter().take(TOP).map(|e| (e.path.clone(), e.size)).collect();
    let got: Vec<(Vec<u8>, u64)> = report.largest_files.iter().map(|f| (bytes(&f.path), f.size)).collect();
    assert_eq!(got, expected);
    assert_eq!(got[0].0, root.join("sizes/sparse").as_os_str().as_bytes());

    // Widest directories: entries per directory, empty ones included.
    let mut width: HashMap<&[u8], u64> =
        found.iter().filter(|e| e.letter == 'd').map(|e| (e.path.as_slice(), 0)).collect();
    for e in found.iter().filter(|e| e.depth > 0) {
        *width.get_mut(e.parent()).unwrap() += 1;
    }
    let mut widest: Vec<(Vec<u8>, u64)> = width.into_iter().map(|(p, n)| (p.to_vec(), n)).collect();
    widest.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    widest.truncate(TOP);
    let got: Vec<(Vec<u8>, u64)> = report.widest_dirs.iter().map(|d| (bytes(&d.path), d.entries)).collect();
    assert_eq!(got, widest);

    // Deepest: the file at the bottom of the chain longer than PATH_MAX.
    let deepest =
        found.iter().max_by(|a, b| a.depth.cmp(&b.depth).then_with(|| b.path.cmp(&a.path))).unwrap();
    let got = report.deepest.as_ref().unwrap();
    assert_eq!((bytes(&got.path), got.depth), (deepest.path.clone(), u64::from(deepest.depth)));
    assert!(deepest.path.len() > 4096 && deepest.path.ends_with(b"/bottom.txt"));

    // Size histogram: regular files in power-of-two buckets, non-empty buckets only.
    let mut sizes: BTreeMap<(u64, u64), Vec<&Found>> = BTreeMap::new();
    for e in &files {
        let bounds = match e.size {
            0 => (0, 0),
            s => {
                let low = 1u64 << (63 - s.leading_zeros());
                (low, low.saturating_mul(2) - 1)
            }
        };
        sizes.entry(bounds).or_default().push(e);
    }
    let expected: Vec<((u64, u64), Totals)> = sizes.into_iter().map(|(b, es)| (b, totals(es))).collect();
    let got: Vec<((u64, u64), Totals)> =
        report.file_sizes.iter().map(|b| ((b.min_bytes, b.max_bytes), b.totals)).collect();
    assert_eq!(got, expected);

    // Age histogram: regular files by mtime, measured from the reported reference time.
    const DAY: i64 = 86_400;
    let limits = [0, DAY, 7 * DAY, 30 * DAY, 90 * DAY, 365 * DAY, 3 * 365 * DAY];
    let bucket = |e: &Found| {
        let age_ns = i128::from(report.reference_time_ns) - i128::from(e.mtime_ns);
        limits.iter().take_while(|&&l| age_ns >= i128::from(l) * 1_000_000_000).count()
    };
    let got: Vec<(Option<i64>, Option<i64>, u64)> =
        report.file_ages.iter().map(|b| (b.min_age_secs, b.max_age_secs, b.totals.entries)).collect();
    let mut expected: Vec<(Option<i64>, Option<i64>, u64)> = (0..=limits.len())
        .map(|k| (k.checked_sub(1).map(|i| limits[i]), limits.get(k).copied(), 0))
        .collect();
    for e in &files {
        expected[bucket(e)].2 += 1;
    }
    assert_eq!(got, expected);
    assert!(got.iter().all(|bucket| bucket.2 > 0), "the tree has a file of every age: {got:?}");
}

#[test]
fn several_roots_add_up() {
    let tmp = tempfile::tempdir().unwrap();
    let root = hostile_tree(tmp.path());
    let (a, wide) = (root.join("sub"), root.join("wide"));
    let (found, _) = find(&[&a, &wide], &[]);
    let (report, _) = walk_json(&[&a, &wide]);
    assert_eq!(report.totals, totals(&found));
    assert_eq!(report.roots.len(), 2);
}

#[test]
fn text_summary_shows_the_totals() {
    let tmp = tempfile::tempdir().unwrap();
    let root = hostile_tree(tmp.path());
    let (found, _) = find(&[&root], &[]);
    let out = run_canopy(&["walk".as_ref(), root.as_os_str()]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let first = text.lines().next().unwrap();
    assert!(first.starts_with(&format!("{} entries,", found.len())), "{first}");
    let apparent: u64 = found.iter().map(|e| e.size).sum();
    assert!(first.contains(&format!("({} bytes)", grouped(apparent))), "{first}");
    let max_depth = found.iter().map(|e| e.depth).max().unwrap();
    assert!(text.contains(&format!("deepest (depth {max_depth})")), "{text}");
    assert!(text.contains("  fifo "), "{text}");
}

/// `12,345,678`, as the text summary prints counts.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, d) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(d);
    }
    out
}

//! `canopy walk` errors: unreadable directories (as an unprivileged user), missing paths, bad
//! options — reported per path with the errno, exit status 1 for errors and 2 for usage.

mod tree;

use canopy_tools::walk::{SummaryDocument, Totals};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Command;
use tree::{find, root_or_skip, run_canopy, write_file};

const NOBODY: [&str; 4] = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"];

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).unwrap();
}

#[test]
fn unreadable_directory_is_reported_and_the_walk_goes_on() {
    if !root_or_skip("switch to an unprivileged user") {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    chmod(tmp.path(), 0o755);
    let root = tmp.path().join("tree");
    fs::create_dir_all(root.join("sub/inner")).unwrap();
    write_file(&root.join("top"), 10);
    write_file(&root.join("sub/inner/file"), 300);
    fs::create_dir(root.join("locked")).unwrap();
    write_file(&root.join("locked/hidden"), 5000);
    chmod(&root.join("locked"), 0o000);
    let out_dir = tmp.path().join("out");
    fs::create_dir(&out_dir).unwrap();
    chmod(&out_dir, 0o777);
    let records = out_dir.join("records.jsonl");

    let (found, find_status) = find(&[&root], &NOBODY);
    assert_eq!(find_status, 1, "find as nobody fails on the locked directory too");
    let out = Command::new(NOBODY[0])
        .args(&NOBODY[1..])
        .arg(env!("CARGO_BIN_EXE_canopy"))
        .args(["walk".as_ref(), "--json".as_ref(), root.as_os_str()])
        .args(["--output".as_ref(), records.as_os_str()])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "stderr: {stderr}");
    let locked = root.join("locked");
    assert_eq!(stderr.trim_end(), format!("canopy: '{}': Permission denied", locked.display()));

    let report: SummaryDocument = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report.errors, 1);
    let mut expected = Totals::default();
    for e in &found {
        expected.entries += 1;
        expected.apparent_bytes += e.size;
        expected.allocated_bytes += e.blocks * 512;
    }
    assert_eq!(report.totals, expected, "everything find could see, nothing more");
    assert!(found.iter().any(|e| e.path == locked.as_os_str().as_encoded_bytes()));
    let written = fs::read_to_string(&records).unwrap();
    assert_eq!(written.lines().count(), found.len());
    assert_eq!(report.records.unwrap().records, found.len() as u64);
}

#[test]
fn missing_path_is_an_error_with_its_errno() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("no-such-dir");
    let out = run_canopy(&["walk".as_ref(), "--json".as_ref(), missing.as_os_str(), tmp.path().as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("'{}': No such file or directory", missing.display())), "{stderr}");
    let report: SummaryDocument = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!((report.errors, report.totals.entries), (1, 1));
}

#[test]
fn usage_errors_exit_2_and_create_nothing() {
    let tmp = tempfile::tempdir().unwrap();
    let csv = tmp.path().join("records.csv");
    let out = run_canopy(&["walk".as_ref(), tmp.path().as_os_str(), "--output".as_ref(), csv.as_os_str()]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("must end in .parquet or .jsonl"));
    assert!(!csv.exists());

    let out = run_canopy(&["walk".as_ref(), "--no-such-flag".as_ref()]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn uncreatable_output_is_an_error_before_the_walk() {
    let tmp = tempfile::tempdir().unwrap();
    let output = tmp.path().join("missing-dir/records.parquet");
    let out = run_canopy(&["walk".as_ref(), tmp.path().as_os_str(), "-o".as_ref(), output.as_os_str()]);
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cannot create") && stderr.contains("missing-dir"), "{stderr}");
    assert!(out.stdout.is_empty(), "no summary without a walk");
}

#[test]
fn help_shows_examples() {
    let out = run_canopy(&[OsStr::new("walk"), OsStr::new("--help")]);
    assert_eq!(out.status.code(), Some(0));
    let help = String::from_utf8(out.stdout).unwrap();
    assert!(help.contains("Examples:") && help.contains("-o scratch.parquet"), "{help}");
}

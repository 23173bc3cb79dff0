//! `canopy report` on the statistics of a single-process walk, and on files it cannot use.

mod common;

use common::*;

#[test]
fn one_process_walk_gives_one_rank_row_and_one_bar() {
    let tmp = tempfile::tempdir().unwrap();
    let tree = tmp.path().join("tree");
    for d in 0..5 {
        std::fs::create_dir_all(tree.join(format!("d{d}"))).unwrap();
        std::fs::write(tree.join(format!("d{d}/f")), b"x").unwrap();
    }
    let stats = tmp.path().join("stats.json");
    let mut walk = canopy();
    walk.arg("walk").arg("--stats").arg(&stats).arg(&tree);
    assert_eq!(run(walk, None).status.code(), Some(0));

    let balance = tmp.path().join("work.svg");
    let mut report = canopy();
    report.arg("report").arg(&stats).arg("--balance").arg(&balance);
    let out = run(report, None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    assert!(table.starts_with("scheduler local  ranks 1  messages 0  bytes 0"), "{table}");
    let row: Vec<&str> = table.lines().nth(2).unwrap().split_whitespace().collect();
    assert_eq!(row[3], "11", "the root, 5 directories and 5 files: {table}");
    assert_eq!(std::fs::read_to_string(&balance).unwrap().matches("fill=\"#3182BD\"").count(), 1);
}

#[test]
fn unreadable_or_malformed_statistics_are_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let missing = tmp.path().join("missing.json");
    let mut report = canopy();
    report.arg("report").arg(&missing);
    let out = run(report, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("missing.json"));

    let garbage = tmp.path().join("garbage.json");
    std::fs::write(&garbage, b"{\"ranks\": 3}").unwrap();
    let mut report = canopy();
    report.arg("report").arg(&garbage);
    let out = run(report, None);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("garbage.json"));
    assert!(out.stdout.is_empty());
}

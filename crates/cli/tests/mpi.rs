//! The distributed walk under `mpirun`, built with the `mpi` feature: for every scheduler and rank
//! count the multiset of results equals the single-process run (which the GNU oracle tests check),
//! on random trees and on the shapes that stress work distribution and termination — one long
//! chain, one huge directory, thousands of tiny directories, an empty tree. Every run has a time
//! limit: a termination bug fails the test instead of hanging it.
#![cfg(feature = "mpi")]

mod common;

use common::mpirun::mpirun;
use common::random_tree::random_tree;
use common::*;
use std::path::{Path, PathBuf};
use std::process::Output;

const SCHEDULERS: [&str; 5] = ["h-drqs", "drqs", "deqs", "pa-drqs", "cp"];

fn local(args: &[&str]) -> Output {
    let mut c = canopy();
    c.args(args);
    run(c, None)
}

fn nul_records(out: &Output, context: &str) -> Vec<Vec<u8>> {
    assert_eq!(out.status.code(), Some(0), "{context}: {}", String::from_utf8_lossy(&out.stderr));
    records(&out.stdout, 0)
}

fn shapes(base: &Path) -> Vec<(&'static str, PathBuf)> {
    let chain = base.join("chain");
    let mut dir = chain.clone();
    for i in 0..150 {
        dir = dir.join(format!("level{i}"));
    }
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("bottom"), b"").unwrap();
    let huge = base.join("huge");
    std::fs::create_dir(&huge).unwrap();
    for f in 0..20_000 {
        std::fs::write(huge.join(format!("entry{f:05}")), b"").unwrap();
    }
    let tiny = base.join("tiny");
    for d in 0..2_000 {
        std::fs::create_dir_all(tiny.join(format!("t{:02}/d{d}", d % 40))).unwrap();
    }
    let empty = base.join("empty");
    std::fs::create_dir(&empty).unwrap();
    vec![("chain", chain), ("huge directory", huge), ("tiny directories", tiny), ("empty", empty)]
}

#[test]
fn every_scheduler_and_rank_count_finds_what_one_process_finds() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("random");
    random_tree(&root, 11);
    let root = root.to_str().unwrap();
    let want = nul_records(&local(&["find", root, "-print0"]), "single process");
    assert!(want.len() > 500);
    for n in [1, 2, 3, 4, 8, 16] {
        for sched in SCHEDULERS {
            let got = nul_records(&mpirun(n, &["find", "--sched", sched, root, "-print0"], &[]), sched);
            assert_same_records(&got, &want, &format!("mpirun -n {n} --sched {sched}"));
        }
    }
}

#[test]
fn adversarial_shapes_terminate_with_every_entry_once() {
    let tmp = tempfile::tempdir().unwrap();
    for (shape, root) in shapes(tmp.path()) {
        let root = root.to_str().unwrap();
        let want = nul_records(&local(&["find", root, "-print0"]), shape);
        for n in [4, 16] {
            for sched in SCHEDULERS {
                let got = nul_records(&mpirun(n, &["find", "--sched", sched, root, "-print0"], &[]), shape);
                assert_same_records(&got, &want, &format!("{shape}: mpirun -n {n} --sched {sched}"));
            }
        }
    }
}

#[test]
fn post_order_holds_across_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    for sched in ["h-drqs", "drqs", "cp"] {
        let root = tmp.path().join(format!("tree-{sched}"));
        random_tree(&root, 23);
        let root_s = root.to_str().unwrap();
        // -depth: the same entries; every directory after its contents is what -delete relies on.
        let want = nul_records(&local(&["find", root_s, "-depth", "-print0"]), "local -depth");
        let got =
            nul_records(&mpirun(4, &["find", "--sched", sched, root_s, "-depth", "-print0"], &[]), sched);
        assert_same_records(&got, &want, &format!("-depth under {sched}"));
        // -delete removes directories only once they are empty: any rank deleting a directory
        // before a subtree stolen by another rank finished would fail with "Directory not empty".
        let out = mpirun(4, &["find", "--sched", sched, root_s, "-mindepth", "1", "-delete"], &[]);
        assert_eq!(out.status.code(), Some(0), "{sched}: {}", String::from_utf8_lossy(&out.stderr));
        assert_eq!(std::fs::read_dir(&root).unwrap().count(), 0, "{sched}: everything deleted");
    }
}

#[test]
fn walk_summaries_and_statistics_agree_with_one_process() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("random");
    random_tree(&root, 5);
    let root = root.to_str().unwrap();
    let stable = |out: &Output| -> serde_json::Value {
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let obj = v.as_object_mut().unwrap();
        for volatile in ["reference_time_ns", "elapsed_secs", "entries_per_sec", "threads", "file_ages"] {
            obj.remove(volatile);
        }
        v
    };
    let want = stable(&local(&["walk", "--json", root]));
    for (n, sched) in [(1, "h-drqs"), (4, "h-drqs"), (4, "cp"), (3, "drqs")] {
        let got = stable(&mpirun(n, &["walk", "--json", "--sched", sched, root], &[]));
        assert_eq!(got, want, "walk --json under mpirun -n {n} --sched {sched}");
    }
    let stats = tmp.path().join("stats.json");
    let out = mpirun(4, &["find", "--sched", "drqs", "--stats", stats.to_str().unwrap(), root], &[]);
    assert_eq!(out.status.code(), Some(0));
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let ranks = stats["ranks"].as_array().unwrap();
    assert_eq!(ranks.len(), 4);
    let entries: u64 = ranks.iter().map(|r| r["entries"].as_u64().unwrap()).sum();
    assert_eq!(
        entries as usize,
        records(&out.stdout, b'\n').len(),
        "every entry counted once over the ranks"
    );
    for rank in ranks {
        let peers = rank["top_peers"].as_array().unwrap();
        let listed: u64 = peers.iter().map(|p| p["messages"].as_u64().unwrap()).sum();
        assert_eq!(listed, rank["messages_sent"].as_u64().unwrap(), "3 peers: all listed, {rank}");
        let by_size: u64 =
            rank["message_sizes"].as_array().unwrap().iter().map(|c| c.as_u64().unwrap()).sum();
        assert_eq!(by_size, listed, "every message in the size histogram, {rank}");
    }
}

#[test]
fn dataset_output_writes_one_part_per_rank() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("random");
    random_tree(&root, 9);
    let dataset = tmp.path().join("scan");
    let out =
        mpirun(3, &["walk", "--json", root.to_str().unwrap(), "-o", &format!("{}/", dataset.display())], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let mut parts: Vec<String> =
        std::fs::read_dir(&dataset).unwrap().map(|e| e.unwrap().file_name().into_string().unwrap()).collect();
    parts.sort();
    assert_eq!(parts, ["part-0.parquet", "part-1.parquet", "part-2.parquet"]);
    let summary: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let entries = summary["totals"]["entries"].as_u64().unwrap();
    assert_eq!(
        summary["records"]["records"].as_u64(),
        Some(entries),
        "one record per entry across the parts"
    );
    let single_file = mpirun(
        2,
        &["walk", root.to_str().unwrap(), "-o", tmp.path().join("one.parquet").to_str().unwrap()],
        &[],
    );
    assert_eq!(single_file.status.code(), Some(2), "one file cannot be written by several ranks");
}

#[test]
fn proximity_order_with_simulated_nodes_and_quit() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("random");
    random_tree(&root, 17);
    let root = root.to_str().unwrap();
    let want = nul_records(&local(&["find", root, "-print0"]), "local");
    for sched in ["pa-drqs", "h-drqs"] {
        let got = nul_records(
            &mpirun(6, &["find", "--sched", sched, root, "-print0"], &[("CANOPY_RANKS_PER_NODE", "3")]),
            sched,
        );
        assert_same_records(&got, &want, &format!("{sched} with two simulated nodes"));
    }
    // -quit stops every rank; each prints at most the match it had when the stop arrived.
    let out = mpirun(4, &["find", root, "-type", "f", "-print", "-quit"], &[]);
    assert_eq!(out.status.code(), Some(0));
    let lines = records(&out.stdout, b'\n').len();
    assert!((1..=4).contains(&lines), "-quit printed {lines} lines");
}

#[test]
fn report_tables_and_draws_the_statistics_of_a_run() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("random");
    random_tree(&root, 23);
    let stats_path = tmp.path().join("stats.json");
    let out = mpirun(
        3,
        &["walk", "--sched", "drqs", "--stats", stats_path.to_str().unwrap(), root.to_str().unwrap()],
        &[],
    );
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats_path).unwrap()).unwrap();
    let ranks = stats["ranks"].as_array().unwrap();
    let total_bytes: u64 = ranks.iter().map(|r| r["bytes_sent"].as_u64().unwrap()).sum();
    let total_messages: u64 = ranks.iter().map(|r| r["messages_sent"].as_u64().unwrap()).sum();

    let (heatmap, balance) = (tmp.path().join("bytes.svg"), tmp.path().join("work.svg"));
    let mut report = canopy();
    report.arg("report").arg(&stats_path).arg("--heatmap").arg(&heatmap).arg("--balance").arg(&balance);
    let out = run(report, None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let table = String::from_utf8(out.stdout).unwrap();
    for rank in ranks {
        let columns: Vec<&str> = table
            .lines()
            .map(str::split_whitespace)
            .map(Iterator::collect)
            .find(|c: &Vec<&str>| c.first() == Some(&rank["rank"].to_string().as_str()))
            .unwrap_or_else(|| panic!("no row for rank {} in\n{table}", rank["rank"]));
        assert_eq!(columns[3], rank["entries"].to_string(), "entries of rank {}", rank["rank"]);
    }
    let heatmap = std::fs::read_to_string(&heatmap).unwrap();
    assert!(heatmap.starts_with("<svg") && heatmap.trim_end().ends_with("</svg>"));
    assert!(
        heatmap.contains(&format!("100 % of {total_messages} messages, {total_bytes} B in all")),
        "the heat maps' title names the totals, all of them shown at 3 ranks"
    );
    assert!(heatmap.contains("messages sent") && heatmap.contains("bytes sent"), "both heat maps drawn");
    let balance = std::fs::read_to_string(&balance).unwrap();
    let bars = balance.matches("fill=\"#3182BD\"").count();
    assert_eq!(bars, ranks.len(), "one bar of entries per rank");
    let asked: u64 = ranks.iter().map(|r| r["work_requests_sent"].as_u64().unwrap()).sum();
    assert!(balance.contains(&format!("work requests sent ({asked}, pale)")), "requests drawn");
}

/// A random tree with sizes, a sparse file and hard links across directories (so the rule that
/// picks the directory charged for a shared inode matters).
fn sized_tree(root: &Path, seed: u64) {
    random_tree(root, seed);
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut dirs = vec![root.to_path_buf()];
    let mut i = 0;
    while i < dirs.len() {
        for entry in std::fs::read_dir(&dirs[i]).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                dirs.push(entry.path());
            }
        }
        i += 1;
    }
    for (n, dir) in dirs.iter().enumerate() {
        std::fs::write(dir.join(format!("data{n}")), vec![b'x'; rng.usize(0..40_000)]).unwrap();
        if n % 3 == 0 {
            let other = &dirs[rng.usize(0..dirs.len())];
            let _ = std::fs::hard_link(dir.join(format!("data{n}")), other.join(format!("link{n}")));
        }
    }
    let sparse = std::fs::File::create(root.join("sparse")).unwrap();
    sparse.set_len(50 << 20).unwrap();
}

#[test]
fn du_on_the_cluster_prints_what_one_process_prints() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("sized");
    sized_tree(&root, 41);
    let root = root.to_str().unwrap();
    let runs: [&[&str]; 4] = [
        &["du", "-B1", "-a", "--sort", root],
        &["du", "--inodes", "-c", "--max-depth=2", "--sort", root],
        &["du", "-sb", root],
        &["du", "--json", "--depth=100", "--min-ratio=0", "--files", root],
    ];
    for args in runs {
        let want = local(args);
        assert_eq!(want.status.code(), Some(0), "{}", String::from_utf8_lossy(&want.stderr));
        for n in [1, 2, 4] {
            for sched in ["h-drqs", "drqs", "cp"] {
                let mut with_sched = vec![args[0], "--sched", sched];
                with_sched.extend_from_slice(&args[1..]);
                let got = mpirun(n, &with_sched, &[]);
                assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
                assert_eq!(
                    String::from_utf8_lossy(&got.stdout),
                    String::from_utf8_lossy(&want.stdout),
                    "mpirun -n {n} {with_sched:?}"
                );
            }
        }
    }
    // Those runs really were spread: ranks other than 0 walked part of the tree.
    let stats = tmp.path().join("du-stats.json");
    let out = mpirun(4, &["du", "--sched", "drqs", "--stats", stats.to_str().unwrap(), "-s", root], &[]);
    assert_eq!(out.status.code(), Some(0));
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats).unwrap()).unwrap();
    let busy = stats["ranks"].as_array().unwrap().iter().filter(|r| r["entries"].as_u64() > Some(0)).count();
    assert!(busy >= 2, "{busy} ranks walked entries");
    // The ncdu export travels between ranks in memory: the same entries, in any order.
    let entries = |file: &Path| -> Vec<String> {
        let text = std::fs::read_to_string(file).unwrap();
        let doc: serde_json::Value = serde_json::from_str(&text).unwrap();
        let mut out = Vec::new();
        fn walk(dir: &serde_json::Value, prefix: &str, out: &mut Vec<String>) {
            let items = dir.as_array().unwrap();
            let path = format!("{prefix}/{}", items[0]["name"].as_str().unwrap());
            out.push(format!("{path} {} {}", items[0]["asize"], items[0]["dsize"]));
            for item in &items[1..] {
                match item {
                    serde_json::Value::Array(_) => walk(item, &path, out),
                    file => out.push(format!(
                        "{path}/{} {} {}",
                        file["name"].as_str().unwrap(),
                        file["asize"],
                        file["dsize"]
                    )),
                }
            }
        }
        walk(&doc[3], "", &mut out);
        out.sort();
        out
    };
    let single = tmp.path().join("single.json");
    assert_eq!(local(&["du", "--ncdu-json", single.to_str().unwrap(), root]).status.code(), Some(0));
    let spread = tmp.path().join("spread.json");
    let out = mpirun(4, &["du", "--ncdu-json", spread.to_str().unwrap(), root], &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(entries(&spread), entries(&single));
}

//! The distributed walk under `mpirun`, built with the `mpi` feature: for every scheduler and rank
//! count the multiset of results equals the single-process run (which the GNU oracle tests check),
//! on random trees and on the shapes that stress work distribution and termination — one long
//! chain, one huge directory, thousands of tiny directories, an empty tree. Every run has a time
//! limit: a termination bug fails the test instead of hanging it.
#![cfg(feature = "mpi")]

mod common;

use common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

const SCHEDULERS: [&str; 5] = ["h-drqs", "drqs", "deqs", "pa-drqs", "cp"];
const LIMIT: Duration = Duration::from_secs(120);

/// `mpirun -n N canopy ARGS`, killed (and the test failed) if it runs past the limit.
fn mpirun(n: usize, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new("mpirun");
    cmd.args(["--oversubscribe", "-n", &n.to_string()])
        .arg(env!("CARGO_BIN_EXE_canopy"))
        .args(args)
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .env("LC_ALL", "C")
        .envs(env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("mpirun (Open MPI) is installed by scripts/setup");
    let started = Instant::now();
    let pid = child.id();
    let watchdog = std::thread::spawn(move || {
        while started.elapsed() < LIMIT {
            std::thread::sleep(Duration::from_millis(200));
            if !Path::new(&format!("/proc/{pid}")).exists() {
                return false;
            }
        }
        let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
        true
    });
    let out = child.wait_with_output().unwrap();
    let timed_out = started.elapsed() >= LIMIT || watchdog.join().unwrap_or(false);
    assert!(!timed_out, "mpirun -n {n} {args:?} did not terminate within {LIMIT:?}");
    out
}

fn local(args: &[&str]) -> Output {
    let mut c = canopy();
    c.args(args);
    run(c, None)
}

fn nul_records(out: &Output, context: &str) -> Vec<Vec<u8>> {
    assert_eq!(out.status.code(), Some(0), "{context}: {}", String::from_utf8_lossy(&out.stderr));
    records(&out.stdout, 0)
}

/// A random tree: directories of random fan-out, files, the odd big directory.
fn random_tree(root: &Path, seed: u64) {
    let mut rng = fastrand::Rng::with_seed(seed);
    let mut stack = vec![(root.to_path_buf(), 0)];
    while let Some((dir, depth)) = stack.pop() {
        std::fs::create_dir_all(&dir).unwrap();
        let files = if rng.u8(..) < 8 { rng.usize(200..600) } else { rng.usize(0..10) };
        for f in 0..files {
            std::fs::write(dir.join(format!("f{f}")), b"").unwrap();
        }
        if depth < 5 {
            for d in 0..rng.usize(1..5) {
                stack.push((dir.join(format!("d{d}")), depth + 1));
            }
        }
    }
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
    assert!(ranks.iter().all(|r| r["messages_to"].as_array().unwrap().len() == 4));
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
    let total_bytes: u64 =
        ranks.iter().flat_map(|r| r["bytes_to"].as_array().unwrap()).map(|b| b.as_u64().unwrap()).sum();

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
        heatmap.contains(&format!("drqs ({total_bytes} B total)")),
        "the heat map's title names the total"
    );
    let balance = std::fs::read_to_string(&balance).unwrap();
    let bars = balance.matches("fill=\"#3182BD\"").count();
    assert_eq!(bars, ranks.len(), "one bar per rank");
}

//! `canopy find` under `mpirun` with what the drop-in work added: starting points from
//! `-files0-from`, file operands beside directories, `-exec`, and an `-fprint` file that cannot
//! be created (every rank stops, none hangs). The results equal one process's, which the GNU
//! oracle tests check; what an entry knows of its starting point (`%P`, `%H`) is checked against
//! GNU find itself, since it is what a subtree moved to another rank could lose.
#![cfg(feature = "mpi")]

mod common;

use common::mpirun::mpirun;
use common::random_tree::random_tree;
use common::*;

fn local(args: &[&str]) -> std::process::Output {
    let mut c = canopy();
    c.args(args);
    run(c, None)
}

fn tree(base: &std::path::Path) {
    for d in 0..12 {
        let dir = base.join(format!("d{d}"));
        std::fs::create_dir_all(dir.join("sub")).unwrap();
        for f in 0..40 {
            std::fs::write(dir.join(format!("f{f}")), b"x").unwrap();
        }
        std::fs::write(dir.join("sub/leaf"), b"").unwrap();
    }
}

#[test]
fn files0_from_operands_and_exec_give_one_process_results() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    let path = |p: &str| tmp.path().join(p).to_str().unwrap().to_string();
    let list = tmp.path().join("list");
    std::fs::write(&list, [path("d1"), path("d2/f3"), path("d3"), path("missing")].join("\0")).unwrap();
    let list = list.to_str().unwrap();
    let (d0, f1, d4, f2) = (path("d0"), path("d1/f1"), path("d4"), path("d2/f2"));
    let cases: Vec<Vec<&str>> = vec![
        vec!["find", "-files0-from", list, "-print0"],
        vec!["find", f1.as_str(), d0.as_str(), f2.as_str(), d4.as_str(), "-print0"],
        vec!["find", d0.as_str(), "-type", "f", "-exec", "printf", "%s\\0", "{}", ";"],
        vec!["find", d0.as_str(), d4.as_str(), "-type", "f", "-exec", "printf", "%s\\0", "{}", "+"],
    ];
    for args in cases {
        let want = local(&args);
        for n in [1, 3] {
            let got = mpirun(n, &args, &[]);
            assert_eq!(
                got.status.code(),
                want.status.code(),
                "{args:?} -n {n}: {}",
                String::from_utf8_lossy(&got.stderr)
            );
            assert_eq!(records(&got.stdout, 0), records(&want.stdout, 0), "{args:?} -n {n}");
        }
    }
}

#[test]
fn an_output_file_that_cannot_be_created_stops_every_rank() {
    let tmp = tempfile::tempdir().unwrap();
    tree(tmp.path());
    let root = tmp.path().to_str().unwrap();
    for n in [2, 4] {
        let out = mpirun(n, &["find", root, "-fprint", "/nonexistent/x"], &[]);
        assert_eq!(out.status.code(), Some(1), "-n {n}");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(stderr.contains("canopy find: '/nonexistent/x': No such file or directory"), "{stderr}");
        assert!(out.stdout.is_empty());
    }
}

/// Tasks imported over the ranks of a run, from its `--stats` file: subtrees and chunks that moved.
fn tasks_imported(stats: &std::path::Path) -> u64 {
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(stats).unwrap()).unwrap();
    stats["ranks"].as_array().unwrap().iter().map(|r| r["tasks_imported"].as_u64().unwrap()).sum()
}

#[test]
fn start_point_fields_match_gnu_find_when_subtrees_move_between_ranks() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("random");
    random_tree(&root, 31);
    // Two starting points, one inside the other and written with a trailing slash: the same
    // entries print with different `%P` and `%H`.
    let (whole, part) = (root.to_str().unwrap().to_string(), format!("{}/d0/", root.to_str().unwrap()));
    let format = ["-printf", "%P|%H|%d|%h\\n"];
    let mut find = gnu("find");
    find.args([&whole, &part]).args(format);
    let want = run(find, None);
    assert_eq!(want.status.code(), Some(0), "{}", String::from_utf8_lossy(&want.stderr));
    let want = records(&want.stdout, b'\n');
    assert!(want.len() > 500);
    let stats = tmp.path().join("stats.json");
    for n in [1, 2, 4, 8] {
        for sched in ["h-drqs", "drqs", "deqs", "pa-drqs", "cp"] {
            let context = format!("mpirun -n {n} --sched {sched}");
            let args = ["find", "--sched", sched, "--stats", stats.to_str().unwrap(), &whole, &part];
            let got = mpirun(n, &[&args[..], &format[..]].concat(), &[]);
            assert_eq!(got.status.code(), Some(0), "{context}: {}", String::from_utf8_lossy(&got.stderr));
            assert_same_records(&records(&got.stdout, b'\n'), &want, &context);
            if n > 1 {
                assert!(tasks_imported(&stats) > 0, "{context}: no subtree moved to another rank");
            }
        }
    }
}

/// CP is the seed's per-directory master/worker: every directory's read (and the starting point's
/// stat before it) is handed out by rank 0, which walks nothing, one per answered request.
#[test]
fn cp_hands_out_every_directory_from_the_master_one_at_a_time() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    tree(&root);
    let directories = 1 + 12 * 2;
    let tasks = 1 + directories as u64;
    let stats_file = tmp.path().join("stats.json");
    let args = ["find", "--sched", "cp", "--stats", stats_file.to_str().unwrap(), root.to_str().unwrap()];
    let got = mpirun(4, &args, &[]);
    assert_eq!(got.status.code(), Some(0), "{}", String::from_utf8_lossy(&got.stderr));
    assert_eq!(records(&got.stdout, b'\n').len(), directories + 12 * 41);
    let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats_file).unwrap()).unwrap();
    let ranks = stats["ranks"].as_array().unwrap();
    let field = |rank: &serde_json::Value, name: &str| rank[name].as_u64().unwrap();
    assert_eq!(field(&ranks[0], "entries"), 0, "the master walks nothing");
    assert_eq!(field(&ranks[0], "tasks_exported"), tasks, "every directory passes the master");
    let workers = &ranks[1..];
    assert_eq!(workers.iter().map(|r| field(r, "tasks_imported")).sum::<u64>(), tasks);
    for rank in workers {
        assert_eq!(
            field(rank, "tasks_imported"),
            field(rank, "work_requests_fruitful"),
            "one task per answer"
        );
    }
}

#[test]
fn the_politeness_budget_is_split_among_the_ranks_or_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("tree");
    tree(&root);
    let root = root.to_str().unwrap();
    let want = local(&["find", root, "-print0"]);
    let stats_file = tmp.path().join("stats.json");
    let stats = stats_file.to_str().unwrap();
    for sched in ["h-drqs", "drqs", "cp"] {
        let limits = ["--max-rate", "20000", "--max-in-flight", "5"];
        let args = [&["find", "--sched", sched, "--stats", stats][..], &limits, &[root, "-print0"]].concat();
        let got = mpirun(4, &args, &[]);
        assert_eq!(got.status.code(), Some(0), "{sched}: {}", String::from_utf8_lossy(&got.stderr));
        assert_same_records(&records(&got.stdout, 0), &records(&want.stdout, 0), sched);
        // The parts move between ranks with the work (not under cp); wherever they ended, they add
        // up to no more than the limits, and every rank kept a call in flight and some rate.
        let stats: serde_json::Value = serde_json::from_slice(&std::fs::read(&stats_file).unwrap()).unwrap();
        let ranks = stats["ranks"].as_array().unwrap();
        let slots: Vec<u64> = ranks.iter().map(|r| r["max_in_flight_end"].as_u64().unwrap()).collect();
        let rates: Vec<f64> = ranks.iter().map(|r| r["max_rate_end"].as_f64().unwrap()).collect();
        assert!(slots.iter().sum::<u64>() <= 5 && slots.iter().all(|&n| n >= 1), "{sched}: {slots:?}");
        assert!(
            rates.iter().sum::<f64>() <= 20000.0 + 1e-6 && rates.iter().all(|&r| r > 0.0),
            "{sched}: {rates:?}"
        );
    }
    // Each rank needs a call in flight: 3 for 4 ranks is refused before anything is walked.
    let out = mpirun(4, &["find", "--max-in-flight", "3", root, "-print0"], &[]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--max-in-flight 3 is fewer than the 4 processes"), "{stderr}");
    assert!(out.stdout.is_empty());
}

//! `canopy group` under `mpirun`, built with the `mpi` feature: every rank is a host with its own root
//! and name. Results equal the planned contents for every rank count and tree shape, failed members
//! are named, and a rank that hangs, is stopped or is killed becomes a named missing set instead of a
//! hang.
#![cfg(feature = "mpi")]

mod common;

use common::mpirun::{mpirun_command, output_within, rank_process, run_within};
use common::*;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::Output;
use std::time::{Duration, Instant};

const LIMIT: Duration = Duration::from_secs(120);
const RULE: &str = "---------------";
const RANK_COUNTS: [usize; 5] = [1, 2, 4, 8, 16];
const FANOUTS: [&str; 4] = ["2", "8", "64", "flat"];

/// Host roots `base/{rank}` for `n` ranks with `path` holding `content(rank)` (none for `None`).
fn plant(base: &Path, n: usize, path: &str, content: impl Fn(usize) -> Option<String>) {
    for rank in 0..n {
        let file = base.join(rank.to_string()).join(path.trim_start_matches('/'));
        std::fs::create_dir_all(file.parent().unwrap()).unwrap();
        if let Some(text) = content(rank) {
            std::fs::write(file, text).unwrap();
        }
    }
}

fn root_template(base: &Path) -> String {
    format!("{}/{{rank}}", base.display())
}

fn group_args<'a>(root: &'a str, op_args: &[&'a str]) -> Vec<&'a str> {
    let mut args = vec!["group"];
    args.extend_from_slice(op_args);
    args.extend_from_slice(&["--host-root", root, "--host-name", "host{rank}"]);
    args
}

fn mpirun(n: usize, args: &[&str]) -> Output {
    run_within(mpirun_command(n, &[], args), LIMIT)
}

#[track_caller]
fn succeeded(out: &Output, context: &str) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{context}: {stderr}");
    String::from_utf8(out.stdout.clone()).unwrap()
}

/// canopy's own lines on stderr (Open MPI adds its own reports around them).
fn canopy_messages(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.starts_with("canopy"))
        .map(str::to_owned)
        .collect()
}

fn block(label: &str, content: &str) -> String {
    format!("{RULE}\n{label}\n{RULE}\n{content}")
}

/// The planned contents: three classes by rank modulo 3, and the last rank of 4 or more different.
fn motd(n: usize, rank: usize) -> String {
    if n >= 4 && rank == n - 1 { "odd one out\n".to_owned() } else { format!("config {}\n", rank % 3) }
}

#[test]
fn read_returns_every_members_bytes_in_member_order_for_every_rank_count_and_tree() {
    let tmp = tempfile::tempdir().unwrap();
    for n in RANK_COUNTS {
        let base = tmp.path().join(n.to_string());
        plant(&base, n, "/etc/motd", |rank| Some(motd(n, rank)));
        plant(&base, n, "/etc/conf.d/a", |rank| Some(format!("a{}\n", rank % 2)));
        plant(&base, n, "/etc/conf.d/b", |rank| Some(format!("b{rank}\n")));
        let root = root_template(&base);

        let concat: String = (0..n).map(|rank| block(&format!("host{rank}"), &motd(n, rank))).collect();
        // Members of a directory group: host by host in rank order, files sorted by name.
        let dir_concat: String = (0..n)
            .flat_map(|rank| {
                [
                    block(&format!("host{rank}:/etc/conf.d/a"), &format!("a{}\n", rank % 2)),
                    block(&format!("host{rank}:/etc/conf.d/b"), &format!("b{rank}\n")),
                ]
            })
            .collect();
        // The thread simulation of the same hosts is the oracle for the classes (its folding has
        // literal golden tests); it must not depend on the transport.
        let mut simulated = canopy();
        simulated.args(group_args(&root, &["read", "/etc/motd", "--hosts", &n.to_string()]));
        let classes = succeeded(&run(simulated, None), "simulated hosts");
        for fanout in FANOUTS {
            let context = format!("mpirun -n {n} --fanout {fanout}");
            let with_fanout = |op: &[&'static str]| {
                let mut args = group_args(&root, op);
                args.extend_from_slice(&["--fanout", fanout]);
                succeeded(&mpirun(n, &args), &context)
            };
            assert_eq!(with_fanout(&["read", "/etc/motd", "--agg", "concat"]), concat, "{context}");
            assert_eq!(with_fanout(&["read", "/etc/conf.d", "--agg", "concat"]), dir_concat, "{context}");
            assert_eq!(with_fanout(&["read", "/etc/motd"]), classes, "{context}: classes");
        }
    }
}

#[test]
fn equivalence_classes_are_exact() {
    let tmp = tempfile::tempdir().unwrap();
    plant(tmp.path(), 8, "/etc/motd", |rank| Some(motd(8, rank)));
    let root = root_template(tmp.path());
    let out = succeeded(&mpirun(8, &group_args(&root, &["read", "/etc/motd"])), "classes");
    let expected = [
        block("host[0,3,6] (3)", "config 0\n"),
        block("host[1,4] (2)", "config 1\n"),
        block("host[2,5] (2)", "config 2\n"),
        block("host7", "odd one out\n"),
    ]
    .concat();
    assert_eq!(out, expected);
    // Stat and checksum classes: identical files in one class, the odd one alone.
    let out = succeeded(&mpirun(8, &group_args(&root, &["checksum", "/etc/motd"])), "checksum");
    let labels: Vec<&str> = out.lines().filter(|l| l.starts_with("host")).collect();
    assert_eq!(labels, ["host[0,3,6] (3)", "host[1,4] (2)", "host[2,5] (2)", "host7"]);
}

#[test]
fn gstatus_names_members_whose_file_is_missing() {
    let tmp = tempfile::tempdir().unwrap();
    plant(tmp.path(), 4, "/etc/motd", |rank| (rank % 2 == 0).then(|| "here\n".to_owned()));
    let root = root_template(tmp.path());
    let missing = ["canopy group: host[1,3]:/etc/motd: No such file or directory"];
    // --strict: any failure fails the open, and nothing is read.
    let out = mpirun(4, &group_args(&root, &["read", "/etc/motd", "--strict"]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(String::from_utf8_lossy(&out.stdout), "");
    assert_eq!(canopy_messages(&out), missing, "{out:?}");
    // By default, as clush -b: the others are read, the failures named, exit 0 (-S: 1, cat's status).
    for (flags, code) in [(&[][..], 0), (&["-S"], 1)] {
        let out = mpirun(4, &group_args(&root, &[&["read", "/etc/motd"][..], flags].concat()));
        assert_eq!(out.status.code(), Some(code), "{flags:?}");
        assert_eq!(String::from_utf8_lossy(&out.stdout), block("host[0,2] (2)", "here\n"));
        assert_eq!(canopy_messages(&out), missing, "{out:?}");
    }
}

#[test]
fn gstatus_names_members_an_unprivileged_user_may_not_read() {
    let tmp = tempfile::tempdir().unwrap();
    plant(tmp.path(), 4, "/etc/secret", |_| Some("public\n".to_owned()));
    for rank in 0..4 {
        let mode = if rank == 1 || rank == 3 { 0o000 } else { 0o644 };
        let host = tmp.path().join(rank.to_string());
        for (path, mode) in
            [(host.clone(), 0o755), (host.join("etc"), 0o755), (host.join("etc/secret"), mode)]
        {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
        }
    }
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let root = root_template(tmp.path());
    let mpirun = mpirun_command(4, &[], &group_args(&root, &["read", "/etc/secret", "-S"]));
    // Root ignores permission bits: run the whole job as nobody.
    let command = if is_root() {
        let mut c = as_nobody(mpirun.get_program());
        c.args(mpirun.get_args())
            .env("HOME", "/tmp")
            .envs(mpirun.get_envs().filter_map(|(k, v)| Some((k, v?))))
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        c
    } else {
        mpirun
    };
    let out = run_within(command, LIMIT);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert_eq!(String::from_utf8_lossy(&out.stdout), block("host[0,2] (2)", "public\n"));
    assert_eq!(canopy_messages(&out), ["canopy group: host[1,3]:/etc/secret: Permission denied"], "{out:?}");
}

/// How a test takes one rank out while it is busy opening its member.
#[derive(Clone, Copy, Debug)]
enum Fault {
    /// Left blocked in `open` of a FIFO nobody writes to: a host stuck in I/O.
    Hang,
    /// Blocked as for `Hang`, then stopped with SIGSTOP.
    Stop,
    /// Blocked as for `Hang`, then killed with SIGKILL.
    Kill,
}

/// Runs a 4-rank read where rank 1's member is a FIFO, and applies `fault` to rank 1
/// once it is blocked opening it.
fn with_faulty_rank(fault: Fault, fanout: &str) -> Output {
    let tmp = tempfile::tempdir().unwrap();
    plant(tmp.path(), 4, "/etc/motd", |rank| (rank != 1).then(|| format!("config {}\n", rank % 2)));
    let fifo = tmp.path().join("1/etc/motd");
    mkfifo(&fifo);
    let root = root_template(tmp.path());
    let mut args = group_args(&root, &["read", "/etc/motd", "-S", "--timeout", "2"]);
    args.extend_from_slice(&["--fanout", fanout]);
    // Open MPI aborts a job whose rank dies unless it runs with recovery enabled.
    let options: &[&str] = if matches!(fault, Fault::Kill) { &["--enable-recovery"] } else { &[] };
    let child = mpirun_command(4, options, &args).spawn().unwrap();
    let context = format!("{fault:?} rank 1, fan-out {fanout}");
    let rank1 = blocked_in_fifo_open(child.id(), 1, &context);
    match fault {
        Fault::Hang => {}
        Fault::Stop => rustix::process::kill_process(rank1, rustix::process::Signal::STOP).unwrap(),
        Fault::Kill => rustix::process::kill_process(rank1, rustix::process::Signal::KILL).unwrap(),
    }
    output_within(child, LIMIT, &context)
}

/// Waits until rank `rank` of the job under `launcher` sleeps waiting for a FIFO's writer.
fn blocked_in_fifo_open(launcher: u32, rank: usize, context: &str) -> rustix::process::Pid {
    let deadline = Instant::now() + LIMIT;
    while Instant::now() < deadline {
        if let Some(pid) = rank_process(launcher, rank)
            && std::fs::read_to_string(format!("/proc/{pid}/wchan")).is_ok_and(|w| w == "wait_for_partner")
        {
            return rustix::process::Pid::from_raw(pid as i32).unwrap();
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    panic!("{context}: rank {rank} never blocked opening its FIFO");
}

#[test]
fn a_hung_or_stopped_rank_is_a_missing_set_and_the_job_ends() {
    // Fan-out 2 puts rank 2 below rank 1, so it goes missing with it; a flat tree loses rank 1 only.
    for (fanout, answered, missing) in [
        ("2", block("host0", "config 0\n") + &block("host3", "config 1\n"), "rank[1-2]"),
        ("flat", block("host[0,2] (2)", "config 0\n") + &block("host3", "config 1\n"), "rank1"),
    ] {
        for fault in [Fault::Hang, Fault::Stop] {
            let out = with_faulty_rank(fault, fanout);
            let context = format!("{fault:?}, fan-out {fanout}: {out:?}");
            assert_eq!(String::from_utf8_lossy(&out.stdout), answered, "{context}");
            // Rank 0 ends the job instead of waiting for the hung rank in MPI's shutdown.
            let expected = [
                format!("canopy group: no answer from {missing} within 2s"),
                "canopy: some MPI rank did not finish within 2s (hung or dead): ending the job".to_owned(),
            ];
            assert_eq!(canopy_messages(&out), expected, "{context}");
            assert_eq!(out.status.code(), Some(1), "{context}");
        }
    }
}

#[test]
fn a_killed_rank_is_a_missing_set_when_the_job_survives_it() {
    let out = with_faulty_rank(Fault::Kill, "flat");
    let context = format!("{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        block("host[0,2] (2)", "config 0\n") + &block("host3", "config 1\n"),
        "{context}"
    );
    let expected = [
        "canopy group: no answer from rank1 within 2s",
        "canopy: some MPI rank did not finish within 2s (hung or dead): ending the job",
    ];
    assert_eq!(canopy_messages(&out), expected, "{context}");
    // Open MPI reports no exit status in this mode: the job ends 0 whatever the ranks return.
    assert_eq!(out.status.code(), Some(0), "{context}");
}

//! `canopy ptail` as a user runs it on simulated hosts: lines equal after the syslog strip rules are merged
//! under the NodeSet of the hosts that logged them with the earliest of their timestamps, distinct lines
//! stay distinct, the line count is the paper's L((1-P)G + P), and a follow ends cleanly on Ctrl-C with
//! the held lines printed.

mod common;

use common::*;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Command, Stdio};

/// G hosts logging L lines each, the first P·L of them the same event on every host (different
/// timestamps, hostnames and pids), the rest private to each host.
fn logs(dir: &Path, hosts: usize, lines: usize, shared: usize) -> String {
    for rank in 0..hosts {
        let log = dir.join(format!("h/{rank}/var/log/syslog"));
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        let mut text = String::new();
        for i in 0..lines {
            let second = (i + rank) % 60;
            if i < shared {
                text +=
                    &format!("Nov 24 10:00:{second:02} node{rank} sshd[{}]: event {i}\n", 100 + rank * 7 + i);
            } else {
                text +=
                    &format!("Nov 24 10:00:{second:02} node{rank} app[{}]: private {rank}.{i}\n", 9 + rank);
            }
        }
        std::fs::write(log, text).unwrap();
    }
    format!("{}/h/{{rank}}", dir.display())
}

#[test]
fn equal_lines_merge_to_the_papers_line_count_and_distinct_lines_stay_distinct() {
    let dir = tempfile::tempdir().unwrap();
    let (g, l, shared) = (6, 10, 4); // P = 0.4
    let root = logs(dir.path(), g, l, shared);
    let mut c = canopy();
    c.args(["ptail", "-n", "10", "/var/log/syslog", "--hosts", "6", "--host-root", &root, "--fanout", "2"]);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    let mut got: Vec<&str> = text.lines().collect();
    // L((1-P)G + P) = 10 (0.6·6 + 0.4) = 40 instead of LG = 60.
    assert_eq!(got.len(), 40, "{text}");
    // Host r logs line i at second i + r: a merged line keeps host0's, the earliest.
    let mut want: Vec<String> =
        (0..shared).map(|i| format!("host[0-5]: Nov 24 10:00:{i:02} sshd: event {i}")).collect();
    for rank in 0..g {
        want.extend(
            (shared..l).map(|i| format!("host{rank}: Nov 24 10:00:{:02} app: private {rank}.{i}", i + rank)),
        );
    }
    got.sort();
    want.sort();
    assert_eq!(got, want);
    // Without the strip rules nothing is equal (timestamps, hostnames and pids differ), nor when the
    // timestamps are compared too.
    for no_strip in ["--no-strip", "--no-strip-time"] {
        let mut c = canopy();
        c.args(["ptail", no_strip, "-n", "10", "/var/log/syslog", "--hosts", "6", "--host-root", &root]);
        let text = String::from_utf8(run(c, None).stdout).unwrap();
        assert_eq!(text.lines().count(), 60, "{no_strip}: {text}");
        if no_strip == "--no-strip-time" {
            assert!(text.contains("host0: Nov 24 10:00:00 sshd: event 0\n"), "{text}");
        }
    }
}

#[test]
fn a_custom_strip_rule_and_json_output() {
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..3 {
        let log = dir.path().join(format!("h/{rank}/app.log"));
        std::fs::create_dir_all(log.parent().unwrap()).unwrap();
        std::fs::write(
            log,
            format!("GET /a req={rank}1 ok\nGET /b req={rank}2 {}\n", if rank == 1 { "fail" } else { "ok" }),
        )
        .unwrap();
    }
    let root = format!("{}/h/{{rank}}", dir.path().display());
    let mut c = canopy();
    c.args(["ptail", "--strip", r"req=(\d+)", "--json", "/app.log", "--hosts", "3", "--host-root", &root]);
    let out = run(c, None);
    let rows: Vec<serde_json::Value> =
        String::from_utf8(out.stdout).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let shown: Vec<(String, String)> = rows
        .iter()
        .map(|r| (r["hosts"].as_str().unwrap().into(), r["line"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        shown,
        [
            ("host[0-2]".into(), "GET /a req= ok".into()),
            ("host[0,2]".into(), "GET /b req= ok".into()),
            ("host1".into(), "GET /b req= fail".into())
        ]
    );
}

#[test]
fn follow_merges_new_lines_and_ctrl_c_prints_what_it_holds_and_exits_zero() {
    let dir = tempfile::tempdir().unwrap();
    let root = logs(dir.path(), 3, 1, 1);
    // A long window: followed lines are only printed when Ctrl-C flushes them.
    let mut child = Command::new(env!("CARGO_BIN_EXE_canopy"))
        .args([
            "ptail",
            "-f",
            "-n",
            "1",
            "--window",
            "600",
            "/var/log/syslog",
            "--hosts",
            "3",
            "--host-root",
            &root,
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, "host[0-2]: Nov 24 10:00:00 sshd: event 0\n");
    for rank in 0..3 {
        let mut log = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join(format!("h/{rank}/var/log/syslog")))
            .unwrap();
        writeln!(log, "Nov 24 11:00:00 node{rank} kernel: eth0 link down").unwrap();
        if rank == 1 {
            writeln!(log, "Nov 24 11:00:00 node1 kernel: disk error").unwrap();
        }
    }
    // Whether or not a poll picked the lines up yet (they would wait in the window), Ctrl-C reads once more
    // and prints everything held.
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stdout, &mut rest).unwrap();
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    assert_eq!(
        rest,
        "host[0-2]: Nov 24 11:00:00 kernel: eth0 link down\nhost1: Nov 24 11:00:00 kernel: disk error\n"
    );
}

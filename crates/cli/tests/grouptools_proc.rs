//! `canopy ptop` on simulated hosts whose `/proc` files are planted under their roots (a snapshot of this
//! machine's processes), so every total can be computed directly from the same files; lines cut to the
//! terminal's width. (`canopy monitor`'s tests are in `grouptools_monitor.rs`.)

mod common;

use common::*;
use std::collections::BTreeMap;

use std::path::Path;

/// Copies this machine's processes' stat, statm and status into `root/proc/PID/`, every `step`-th process
/// from `offset`; returns (pid, command, uid, resident pages) of each one copied.
fn snapshot(root: &Path, offset: usize, step: usize) -> Vec<(u32, String, u32, u64)> {
    let mut pids: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok())
        .collect();
    pids.sort();
    let mut copied = Vec::new();
    for pid in pids.into_iter().skip(offset).step_by(step) {
        let read = |f: &str| std::fs::read_to_string(format!("/proc/{pid}/{f}")).ok();
        let (Some(stat), Some(statm), Some(status)) = (read("stat"), read("statm"), read("status")) else {
            continue;
        };
        let dir = root.join(format!("proc/{pid}"));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("stat"), &stat).unwrap();
        std::fs::write(dir.join("statm"), &statm).unwrap();
        std::fs::write(dir.join("status"), &status).unwrap();
        let close = stat.rfind(')').unwrap();
        let command = stat[stat.find(" (").unwrap() + 2..close].to_string();
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let pages: u64 = fields[24 - 3].parse().unwrap();
        let uid: u32 = status
            .lines()
            .find_map(|l| l.strip_prefix("Uid:"))
            .unwrap()
            .split_whitespace()
            .nth(1)
            .unwrap()
            .parse()
            .unwrap();
        copied.push((pid, command, uid, pages));
    }
    copied
}

#[test]
fn ptop_batch_totals_and_command_groups_equal_a_direct_scan_of_the_same_files() {
    let dir = tempfile::tempdir().unwrap();
    let hosts: Vec<Vec<(u32, String, u32, u64)>> =
        (0..3).map(|rank| snapshot(&dir.path().join(format!("h/{rank}")), rank, 2)).collect();
    let root = format!("{}/h/{{rank}}", dir.path().display());
    let mut c = canopy();
    c.args([
        "ptop",
        "-b",
        "-n",
        "1",
        "--json",
        "--top",
        "5",
        "--hosts",
        "3",
        "--host-root",
        &root,
        "--fanout",
        "2",
    ]);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let frame: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) } as u64;
    let all: Vec<&(u32, String, u32, u64)> = hosts.iter().flatten().collect();
    assert_eq!(frame["processes"], all.len());
    assert_eq!(frame["rss_bytes"], all.iter().map(|p| p.3 * page).sum::<u64>());
    // The files do not change between samples: no CPU use anywhere.
    assert_eq!(frame["cpu_centipercent"], 0);
    let mut commands: BTreeMap<String, (u64, u64, u64)> = BTreeMap::new();
    for (_, command, _, pages) in &all {
        let e = commands.entry(command.clone()).or_default();
        e.0 += 1;
        e.1 += pages * page;
        e.2 = e.2.max(pages * page);
    }
    let got: BTreeMap<String, (u64, u64, u64)> = frame["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            let rss = &g["rss_bytes"];
            (
                g["command"].as_str().unwrap().to_owned(),
                (g["count"].as_u64().unwrap(), rss["total"].as_u64().unwrap(), rss["max"].as_u64().unwrap()),
            )
        })
        .collect();
    assert_eq!(got, commands);
    let users: u64 =
        frame["user_commands"].as_array().unwrap().iter().map(|g| g["count"].as_u64().unwrap()).sum();
    assert_eq!(users, all.len() as u64);
    // The top 5 by memory are the 5 largest resident sizes, with their hosts.
    let mut sizes: Vec<u64> = all.iter().map(|p| p.3 * page).collect();
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let top: Vec<u64> =
        frame["top_rss"].as_array().unwrap().iter().map(|p| p["rss_bytes"].as_u64().unwrap()).collect();
    assert_eq!(top, sizes[..5]);
    let largest = &frame["top_rss"][0];
    let rank: usize = largest["host"].as_str().unwrap().trim_start_matches("host").parse().unwrap();
    let pid = largest["pid"].as_u64().unwrap() as u32;
    assert!(hosts[rank].iter().any(|p| p.0 == pid && p.3 * page == sizes[0]));
}

#[test]
fn ptop_on_the_real_proc_counts_this_machines_processes() {
    let mut c = canopy();
    c.args(["ptop", "-b", "-n", "1", "--json", "--hosts", "2"]);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let frame: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let here = std::fs::read_dir("/proc")
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_str().unwrap().parse::<u32>().is_ok())
        .count() as u64;
    let seen = frame["processes"].as_u64().unwrap();
    // Both simulated hosts read this /proc; processes come and go between the two scans.
    assert!(seen.abs_diff(2 * here) <= 40, "{seen} processes seen, {here} here");
    assert_eq!(frame["host_count"], 2);
}

/// `text` without terminal escape sequences (CSI `ESC [ ... letter`, charset `ESC ( X`, and `ESC X`).
fn without_escapes(text: &str) -> String {
    let mut out = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c != '\x1b' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('[') => {
                for c in chars.by_ref() {
                    if c.is_ascii_alphabetic() {
                        break;
                    }
                }
            }
            Some('(' | ')') => {
                chars.next();
            }
            _ => {}
        }
    }
    out
}

/// The longest line of `text`, in characters.
fn widest(text: &str) -> usize {
    text.lines().map(|l| l.chars().count()).max().unwrap_or(0)
}

#[test]
fn ptop_cuts_its_lines_to_the_width_as_top_does() {
    let batch = |extra: &[&str], columns: Option<&str>| {
        let mut c = canopy();
        c.args(["ptop", "-b", "-n", "1", "-d", "0", "--hosts", "2", "--top", "30"]).args(extra);
        match columns {
            Some(columns) => c.env("COLUMNS", columns),
            None => c.env_remove("COLUMNS"),
        };
        let out = run(c, None);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8(out.stdout).unwrap()
    };
    // Not cut by default: the group table is wider than 80 columns.
    assert!(widest(&batch(&[], None)) > 80);
    let cut = batch(&["-w", "60"], None);
    assert!(widest(&cut) == 60 && cut.contains("COMMAND"), "{cut}");
    assert_eq!(widest(&batch(&[], Some("72"))), 72);

    // The refreshing view on a 70-column terminal (a pty from script(1)).
    let command =
        format!("stty cols 70 rows 40; exec {} ptop -n 1 -d 0 --hosts 2", env!("CARGO_BIN_EXE_canopy"));
    let mut c = gnu("script");
    c.args(["-q", "-e", "-c", &command, "/dev/null"]);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let screen = String::from_utf8_lossy(&out.stdout);
    let visible = without_escapes(&screen).replace('\r', "");
    assert!(visible.contains("COMMAND") && visible.contains("keys: c sort"), "{visible}");
    assert_eq!(widest(&visible), 70, "{visible}");
}

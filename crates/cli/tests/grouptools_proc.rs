//! `canopy ptop` and `canopy monitor` on simulated hosts whose `/proc` files are planted under their roots
//! (a snapshot of this machine's processes, or planned metric files), so every total can be computed
//! directly from the same files; a host that hangs is reported, not waited for.

mod common;

use common::*;
use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};

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

const LOADAVG: [&str; 3] =
    ["0.50 0.40 0.30 1/100 10\n", "2.25 1.00 0.75 3/200 20\n", "0.50 2.00 0.10 2/150 30\n"];

/// /proc/loadavg, meminfo, stat and net/dev planted under each host's root.
fn metric_hosts(dir: &Path) -> String {
    for (rank, load) in LOADAVG.iter().enumerate() {
        let proc = dir.join(format!("h/{rank}/proc"));
        std::fs::create_dir_all(proc.join("net")).unwrap();
        std::fs::write(proc.join("loadavg"), load).unwrap();
        std::fs::write(
            proc.join("meminfo"),
            format!("MemTotal: {} kB\nMemAvailable: {} kB\n", 1000 * (rank + 1), 100 + rank),
        )
        .unwrap();
        std::fs::write(
            proc.join("stat"),
            format!("cpu  {} 0 100 1000 0 0 0 0 0 0\nctxt {}\nbtime 1700000000\n", 100 * rank, 7 + rank),
        )
        .unwrap();
        std::fs::write(
            proc.join("net/dev"),
            format!(
                "Inter-|   Receive\n face |bytes packets\n  eth0: {} 1 0 0 0 0 0 0 {} 2 0 0 0 0 0 0\n",
                1000 + rank,
                10 * rank
            ),
        )
        .unwrap();
    }
    format!("{}/h/{{rank}}", dir.display())
}

fn sample<'a>(exposition: &'a str, series: &str) -> &'a str {
    exposition
        .lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {series} in\n{exposition}"))
}

#[test]
fn monitor_exposition_equals_a_direct_computation_and_passes_promtool() {
    let dir = tempfile::tempdir().unwrap();
    let root = metric_hosts(dir.path());
    let mut c = canopy();
    c.args(["monitor", "--once", "--hosts", "3", "--host-root", &root, "--fanout", "2"]);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(sample(&text, "canopy_hosts_up"), "3");
    assert_eq!(sample(&text, "canopy_hosts_down"), "0");
    assert_eq!(sample(&text, "node_load1_sum"), "3.25");
    assert_eq!(sample(&text, "node_load1_count"), "3");
    assert_eq!(sample(&text, "node_load1_min{host=\"host[0,2]\"}"), "0.5");
    assert_eq!(sample(&text, "node_load1_max{host=\"host1\"}"), "2.25");
    assert_eq!(sample(&text, "node_load5_max{host=\"host2\"}"), "2");
    assert_eq!(sample(&text, "node_memory_mem_total_bytes_sum"), (6000 * 1024).to_string());
    assert_eq!(sample(&text, "node_cpu_seconds_sum{mode=\"user\"}"), "3");
    assert_eq!(sample(&text, "node_context_switches_sum"), "24");
    assert_eq!(sample(&text, "node_network_transmit_bytes_max{device=\"eth0\",host=\"host2\"}"), "20");
    let mut promtool = Command::new("promtool");
    promtool.args(["check", "metrics"]);
    let checked = run(promtool, Some(&out.stdout));
    assert!(
        checked.status.success(),
        "promtool: {}{}",
        String::from_utf8_lossy(&checked.stdout),
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[test]
fn monitor_reports_a_hung_host_down_instead_of_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let root = metric_hosts(dir.path());
    let loadavg = dir.path().join("h/1/proc/loadavg");
    std::fs::remove_file(&loadavg).unwrap();
    let path = std::ffi::CString::new(loadavg.to_str().unwrap()).unwrap();
    // SAFETY: a valid path. Opening a FIFO without a writer blocks: host1 hangs.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    let mut c = canopy();
    c.args(["monitor", "--once", "--hosts", "3", "--host-root", &root, "--timeout", "1"]);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(sample(&text, "canopy_hosts_down"), "1");
    assert_eq!(sample(&text, "canopy_hosts_up"), "2");
    assert_eq!(sample(&text, "node_load1_sum"), "1");
}

fn get(address: &str, path: &str) -> String {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    response
}

#[test]
fn monitor_serves_metrics_and_a_page_that_renders_in_chromium() {
    let dir = tempfile::tempdir().unwrap();
    let root = metric_hosts(dir.path());
    let mut child = Command::new(env!("CARGO_BIN_EXE_canopy"))
        .args(["monitor", "--listen", "127.0.0.1:0", "--hosts", "3", "--host-root", &root, "--interval", "1"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    BufReader::new(child.stderr.take().unwrap()).read_line(&mut banner).unwrap();
    let address = banner.split("http://").nth(1).unwrap().split('/').next().unwrap().to_owned();
    let metrics = get(&address, "/metrics");
    assert!(metrics.starts_with("HTTP/1.0 200") || metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    assert!(metrics.contains("\nnode_load1_sum 3.25\n"), "{metrics}");
    let host = get(&address, "/api/host/host1");
    let body: serde_json::Value = serde_json::from_str(host.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(body["hosts"], serde_json::json!(["host1"]));
    let load = body["series"].as_array().unwrap().iter().find(|s| s["name"] == "node_load1").unwrap();
    assert_eq!(load["sum"], "2.25");
    assert!(get(&address, "/nothing").contains(" 404 "));

    let profile = tempfile::tempdir().unwrap();
    let dom = headless_chromium(profile.path())
        .args(["--virtual-time-budget=5000", "--dump-dom"])
        .arg(format!("http://{address}/"))
        .stderr(Stdio::null())
        .output()
        .expect("chromium is installed by scripts/setup");
    let dom = String::from_utf8_lossy(&dom.stdout);
    assert!(dom.contains("3 hosts up (host[0-2]), down: none"), "{dom}");
    assert!(dom.contains("<td>node_load1</td><td>3</td><td>1.083333333</td><td>3.25</td><td>0.5</td><td class=\"where\">host[0,2]</td>"), "{dom}");
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    assert_eq!(child.wait().unwrap().code(), Some(0));
}

//! `canopy monitor` against node_exporter and the tools that read it. On simulated hosts whose `/proc` files
//! are planted under their roots: the exposition's families have node_exporter's names, types and labels
//! (a fixed list node_exporter 1.5.0 printed for the same files, `fixtures/node`), values equal a direct
//! computation per host and over the cluster, promtool finds nothing but the camelCase it also finds in
//! node_exporter's own output, a hung host is reported down and hosts with nothing readable are an error.
//! Served: the JSON has the exposition's names, a client that vanishes harms nothing, the page renders in
//! headless Chromium within a laptop's width without console messages (a screenshot is kept under
//! `target/test-artifacts/`), and every PromQL expression of the Grafana dashboard returns data from a
//! Prometheus server scraping two monitors (per-host series and cluster aggregates).

mod common;

use common::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// What node_exporter 1.5.0 (Debian's prometheus-node-exporter) printed for the files of `fixtures/node`:
/// each family's name, type and label names, with the collectors cpu, loadavg, meminfo, stat, netdev
/// (`--no-collector.netdev.netlink`), diskstats, filesystem, uname and time, and upstream's default
/// excludes (`--collector.netdev.device-exclude='^$'`, the upstream `mount-points-exclude`).
const NODE_EXPORTER: &[(&str, &str, &[&str])] = &[
    ("node_boot_time_seconds", "gauge", &[]),
    ("node_context_switches_total", "counter", &[]),
    ("node_cpu_guest_seconds_total", "counter", &["cpu", "mode"]),
    ("node_cpu_seconds_total", "counter", &["cpu", "mode"]),
    ("node_disk_discard_time_seconds_total", "counter", &["device"]),
    ("node_disk_discarded_sectors_total", "counter", &["device"]),
    ("node_disk_discards_completed_total", "counter", &["device"]),
    ("node_disk_discards_merged_total", "counter", &["device"]),
    ("node_disk_flush_requests_time_seconds_total", "counter", &["device"]),
    ("node_disk_flush_requests_total", "counter", &["device"]),
    ("node_disk_info", "gauge", &["device", "major", "minor", "model", "path", "revision", "serial", "wwn"]),
    ("node_disk_io_now", "gauge", &["device"]),
    ("node_disk_io_time_seconds_total", "counter", &["device"]),
    ("node_disk_io_time_weighted_seconds_total", "counter", &["device"]),
    ("node_disk_read_bytes_total", "counter", &["device"]),
    ("node_disk_read_time_seconds_total", "counter", &["device"]),
    ("node_disk_reads_completed_total", "counter", &["device"]),
    ("node_disk_reads_merged_total", "counter", &["device"]),
    ("node_disk_write_time_seconds_total", "counter", &["device"]),
    ("node_disk_writes_completed_total", "counter", &["device"]),
    ("node_disk_writes_merged_total", "counter", &["device"]),
    ("node_disk_written_bytes_total", "counter", &["device"]),
    ("node_filesystem_avail_bytes", "gauge", &["device", "fstype", "mountpoint"]),
    ("node_filesystem_device_error", "gauge", &["device", "fstype", "mountpoint"]),
    ("node_filesystem_files", "gauge", &["device", "fstype", "mountpoint"]),
    ("node_filesystem_files_free", "gauge", &["device", "fstype", "mountpoint"]),
    ("node_filesystem_free_bytes", "gauge", &["device", "fstype", "mountpoint"]),
    ("node_filesystem_readonly", "gauge", &["device", "fstype", "mountpoint"]),
    ("node_filesystem_size_bytes", "gauge", &["device", "fstype", "mountpoint"]),
    ("node_forks_total", "counter", &[]),
    ("node_intr_total", "counter", &[]),
    ("node_load1", "gauge", &[]),
    ("node_load15", "gauge", &[]),
    ("node_load5", "gauge", &[]),
    ("node_memory_Active_anon_bytes", "gauge", &[]),
    ("node_memory_Active_bytes", "gauge", &[]),
    ("node_memory_Active_file_bytes", "gauge", &[]),
    ("node_memory_AnonHugePages_bytes", "gauge", &[]),
    ("node_memory_AnonPages_bytes", "gauge", &[]),
    ("node_memory_Balloon_bytes", "gauge", &[]),
    ("node_memory_Bounce_bytes", "gauge", &[]),
    ("node_memory_Buffers_bytes", "gauge", &[]),
    ("node_memory_Cached_bytes", "gauge", &[]),
    ("node_memory_CommitLimit_bytes", "gauge", &[]),
    ("node_memory_Committed_AS_bytes", "gauge", &[]),
    ("node_memory_DirectMap1G_bytes", "gauge", &[]),
    ("node_memory_DirectMap2M_bytes", "gauge", &[]),
    ("node_memory_DirectMap4k_bytes", "gauge", &[]),
    ("node_memory_Dirty_bytes", "gauge", &[]),
    ("node_memory_FileHugePages_bytes", "gauge", &[]),
    ("node_memory_FilePmdMapped_bytes", "gauge", &[]),
    ("node_memory_HugePages_Free", "gauge", &[]),
    ("node_memory_HugePages_Rsvd", "gauge", &[]),
    ("node_memory_HugePages_Surp", "gauge", &[]),
    ("node_memory_HugePages_Total", "gauge", &[]),
    ("node_memory_Hugepagesize_bytes", "gauge", &[]),
    ("node_memory_Hugetlb_bytes", "gauge", &[]),
    ("node_memory_Inactive_anon_bytes", "gauge", &[]),
    ("node_memory_Inactive_bytes", "gauge", &[]),
    ("node_memory_Inactive_file_bytes", "gauge", &[]),
    ("node_memory_KReclaimable_bytes", "gauge", &[]),
    ("node_memory_KernelStack_bytes", "gauge", &[]),
    ("node_memory_Mapped_bytes", "gauge", &[]),
    ("node_memory_MemAvailable_bytes", "gauge", &[]),
    ("node_memory_MemFree_bytes", "gauge", &[]),
    ("node_memory_MemTotal_bytes", "gauge", &[]),
    ("node_memory_Mlocked_bytes", "gauge", &[]),
    ("node_memory_NFS_Unstable_bytes", "gauge", &[]),
    ("node_memory_PageTables_bytes", "gauge", &[]),
    ("node_memory_Percpu_bytes", "gauge", &[]),
    ("node_memory_SReclaimable_bytes", "gauge", &[]),
    ("node_memory_SUnreclaim_bytes", "gauge", &[]),
    ("node_memory_SecPageTables_bytes", "gauge", &[]),
    ("node_memory_ShmemHugePages_bytes", "gauge", &[]),
    ("node_memory_ShmemPmdMapped_bytes", "gauge", &[]),
    ("node_memory_Shmem_bytes", "gauge", &[]),
    ("node_memory_Slab_bytes", "gauge", &[]),
    ("node_memory_SwapCached_bytes", "gauge", &[]),
    ("node_memory_SwapFree_bytes", "gauge", &[]),
    ("node_memory_SwapTotal_bytes", "gauge", &[]),
    ("node_memory_Unevictable_bytes", "gauge", &[]),
    ("node_memory_VmallocChunk_bytes", "gauge", &[]),
    ("node_memory_VmallocTotal_bytes", "gauge", &[]),
    ("node_memory_VmallocUsed_bytes", "gauge", &[]),
    ("node_memory_WritebackTmp_bytes", "gauge", &[]),
    ("node_memory_Writeback_bytes", "gauge", &[]),
    ("node_memory_Zswap_bytes", "gauge", &[]),
    ("node_memory_Zswapped_bytes", "gauge", &[]),
    ("node_network_receive_bytes_total", "counter", &["device"]),
    ("node_network_receive_compressed_total", "counter", &["device"]),
    ("node_network_receive_drop_total", "counter", &["device"]),
    ("node_network_receive_errs_total", "counter", &["device"]),
    ("node_network_receive_fifo_total", "counter", &["device"]),
    ("node_network_receive_frame_total", "counter", &["device"]),
    ("node_network_receive_multicast_total", "counter", &["device"]),
    ("node_network_receive_packets_total", "counter", &["device"]),
    ("node_network_transmit_bytes_total", "counter", &["device"]),
    ("node_network_transmit_carrier_total", "counter", &["device"]),
    ("node_network_transmit_colls_total", "counter", &["device"]),
    ("node_network_transmit_compressed_total", "counter", &["device"]),
    ("node_network_transmit_drop_total", "counter", &["device"]),
    ("node_network_transmit_errs_total", "counter", &["device"]),
    ("node_network_transmit_fifo_total", "counter", &["device"]),
    ("node_network_transmit_packets_total", "counter", &["device"]),
    ("node_procs_blocked", "gauge", &[]),
    ("node_procs_running", "gauge", &[]),
    ("node_time_seconds", "gauge", &[]),
    ("node_time_zone_offset_seconds", "gauge", &["time_zone"]),
    ("node_uname_info", "gauge", &["domainname", "machine", "nodename", "release", "sysname", "version"]),
];

/// node_exporter's labels of `node_disk_info` that come from udev's database, which canopy does not read.
const UDEV_LABELS: [&str; 5] = ["model", "path", "revision", "serial", "wwn"];

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/node")
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// `count` hosts with the fixture's /proc and its mount points; the `--host-root` template.
fn fixture_hosts(dir: &Path, count: usize) -> String {
    for rank in 0..count {
        let root = dir.join(format!("h/{rank}"));
        copy_tree(&fixtures().join("proc"), &root.join("proc"));
        for mount_point in ["run", "data", "srv/with space"] {
            std::fs::create_dir_all(root.join(mount_point)).unwrap();
        }
    }
    format!("{}/h/{{rank}}", dir.display())
}

const LOADAVG: [&str; 3] =
    ["0.50 0.40 0.30 1/100 10\n", "2.25 1.00 0.75 3/200 20\n", "0.50 2.00 0.10 2/150 30\n"];

/// Three hosts with small planned metric files.
fn planned_hosts(dir: &Path) -> String {
    for (rank, load) in LOADAVG.iter().enumerate() {
        let proc = dir.join(format!("h/{rank}/proc"));
        std::fs::create_dir_all(proc.join("net")).unwrap();
        std::fs::create_dir_all(proc.join("sys/kernel")).unwrap();
        std::fs::write(proc.join("loadavg"), load).unwrap();
        std::fs::write(
            proc.join("meminfo"),
            format!("MemTotal: {} kB\nMemAvailable: {} kB\n", 1000 * (rank + 1), 100 + rank),
        )
        .unwrap();
        let user = 100 * rank;
        std::fs::write(
            proc.join("stat"),
            format!("cpu  {user} 0 100 1000 0 0 0 0 0 0\ncpu0 {user} 0 100 1000 0 0 0 0 0 0\nctxt {}\nbtime 1700000000\n", 7 + rank),
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
        std::fs::write(proc.join("sys/kernel/osrelease"), if rank == 1 { "6.2.0\n" } else { "6.1.0\n" })
            .unwrap();
        std::fs::write(proc.join("sys/kernel/ostype"), "Linux\n").unwrap();
        std::fs::write(proc.join("sys/kernel/arch"), "x86_64\n").unwrap();
        std::fs::write(proc.join("sys/kernel/hostname"), format!("node{rank}\n")).unwrap();
    }
    format!("{}/h/{{rank}}", dir.display())
}

fn monitor_once(root: &str, hosts: usize, extra: &[&str]) -> Output {
    let mut c = canopy();
    c.args(["monitor", "--once", "--hosts", &hosts.to_string(), "--host-root", root, "--fanout", "2"])
        .args(extra);
    run(c, None)
}

fn sample<'a>(exposition: &'a str, series: &str) -> &'a str {
    exposition
        .lines()
        .find_map(|l| l.strip_prefix(series).and_then(|rest| rest.strip_prefix(' ')))
        .unwrap_or_else(|| panic!("no {series} in\n{exposition}"))
}

/// Each family of an exposition: its type and the label names of its samples.
fn families(exposition: &str) -> BTreeMap<String, (String, BTreeSet<String>)> {
    let mut out: BTreeMap<String, (String, BTreeSet<String>)> = BTreeMap::new();
    for line in exposition.lines() {
        if let Some(rest) = line.strip_prefix("# TYPE ") {
            let (name, kind) = rest.split_once(' ').unwrap();
            out.insert(name.to_owned(), (kind.to_owned(), BTreeSet::new()));
        } else if !line.starts_with('#') {
            let (name, labels) = line.split_once('{').unwrap_or((line.split(' ').next().unwrap(), ""));
            let names =
                labels.split("\",").filter_map(|pair| pair.split_once('=')).map(|(k, _)| k.to_owned());
            out.get_mut(name).unwrap_or_else(|| panic!("{name} has no TYPE")).1.extend(names);
        }
    }
    out
}

/// `promtool check metrics`: the problems it reports, one per line.
fn promtool_problems(exposition: &[u8]) -> Vec<String> {
    let mut promtool = Command::new("promtool");
    promtool.args(["check", "metrics"]);
    let checked = run(promtool, Some(exposition));
    let text =
        String::from_utf8_lossy(&checked.stdout).into_owned() + &String::from_utf8_lossy(&checked.stderr);
    let problems: Vec<String> = text.lines().map(str::to_owned).collect();
    assert_eq!(checked.status.success(), problems.is_empty(), "promtool: {text}");
    problems
}

/// promtool's lint of node_exporter's own memory names (`node_memory_MemTotal_bytes`) is the only one
/// allowed: renaming them would break every dashboard.
fn assert_promtool_clean_but_node_exporters_camel_case(exposition: &[u8]) {
    for problem in promtool_problems(exposition) {
        let (name, message) = problem.split_once(' ').unwrap();
        let ours = name.strip_prefix("canopy_cluster_").unwrap_or(name);
        assert!(
            message == "metric names should be written in 'snake_case' not 'camelCase'"
                && NODE_EXPORTER.iter().any(|(n, _, _)| *n == ours),
            "promtool: {problem}"
        );
    }
}

#[test]
fn families_types_and_labels_are_node_exporters_for_the_same_proc_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = fixture_hosts(dir.path(), 2);
    let out = monitor_once(&root, 2, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    let ours = families(&text);
    let mut compared = 0;
    for (name, kind, labels) in NODE_EXPORTER {
        let (our_kind, our_labels) =
            ours.get(*name).unwrap_or_else(|| panic!("node_exporter has {name}, we do not"));
        assert_eq!(our_kind, kind, "{name}");
        let mut want: BTreeSet<String> = labels.iter().map(|l| l.to_string()).collect();
        if *name == "node_disk_info" {
            want.retain(|l| !UDEV_LABELS.contains(&l.as_str()));
        }
        want.insert("instance".into());
        assert_eq!(our_labels, &want, "{name}");
        compared += 1;
    }
    let extra: Vec<&String> = ours
        .keys()
        .filter(|n| n.starts_with("node_") && !NODE_EXPORTER.iter().any(|(e, _, _)| e == n))
        .collect();
    assert!(extra.is_empty(), "families node_exporter does not have: {extra:?}");
    assert_eq!(compared, 109);
    // The host of each sample, and the file system with a space in its mount point.
    assert!(text.contains("node_filesystem_readonly{instance=\"host1\",device=\"/dev/sdb1\",fstype=\"xfs\",mountpoint=\"/data\"} 1\n"), "{text}");
    assert!(text.contains("mountpoint=\"/srv/with space\""), "{text}");
    assert!(text.contains("node_uname_info{instance=\"host0\",domainname=\"(none)\",machine=\"x86_64\",nodename=\"vm\",release=\"6.18.44-fc-v595\",sysname=\"Linux\",version=\"#1 SMP PREEMPT_DYNAMIC @0\"} 1\n"), "{text}");
    assert_promtool_clean_but_node_exporters_camel_case(&out.stdout);
}

#[test]
fn values_equal_a_direct_computation_per_host_and_over_the_cluster() {
    let dir = tempfile::tempdir().unwrap();
    let root = planned_hosts(dir.path());
    let out = monitor_once(&root, 3, &[]);
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout.clone()).unwrap();
    assert_eq!(sample(&text, "canopy_cluster_hosts_up"), "3");
    assert_eq!(sample(&text, "canopy_cluster_hosts_down"), "0");
    assert_eq!(sample(&text, "canopy_host_up{instance=\"host2\"}"), "1");
    assert_eq!(sample(&text, "node_load1{instance=\"host1\"}"), "2.25");
    assert_eq!(sample(&text, "node_memory_MemTotal_bytes{instance=\"host2\"}"), (3000 * 1024).to_string());
    // USER_HZ is 100 on Linux.
    assert_eq!(sample(&text, "node_cpu_seconds_total{instance=\"host1\",cpu=\"0\",mode=\"user\"}"), "1");
    assert_eq!(sample(&text, "node_network_transmit_bytes_total{instance=\"host2\",device=\"eth0\"}"), "20");
    assert_promtool_clean_but_node_exporters_camel_case(&out.stdout);

    // Over the cluster: forced, or above --instances hosts.
    for extra in [&["--aggregate"][..], &["--instances", "2"]] {
        let out = monitor_once(&root, 3, extra);
        assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout.clone()).unwrap();
        assert!(!text.contains("instance=") && !text.contains("\nnode_"), "{extra:?}: {text}");
        assert_eq!(sample(&text, "canopy_cluster_node_load1{agg=\"sum\"}"), "3.25");
        assert_eq!(sample(&text, "canopy_cluster_node_load1{agg=\"min\"}"), "0.5");
        assert_eq!(sample(&text, "canopy_cluster_node_load1{agg=\"max\"}"), "2.25");
        assert_eq!(sample(&text, "canopy_cluster_node_load1{agg=\"avg\"}"), "1.083333333");
        assert_eq!(
            sample(
                &text,
                "canopy_cluster_extreme_hosts_info{metric=\"node_load1\",agg=\"min\",hosts=\"host[0,2]\"}"
            ),
            "1"
        );
        assert_eq!(
            sample(
                &text,
                "canopy_cluster_extreme_hosts_info{metric=\"node_load5\",agg=\"max\",hosts=\"host2\"}"
            ),
            "1"
        );
        assert_eq!(
            sample(&text, "canopy_cluster_node_memory_MemTotal_bytes{agg=\"sum\"}"),
            (6000 * 1024).to_string()
        );
        assert_eq!(sample(&text, "canopy_cluster_node_cpu_seconds_total{agg=\"sum\",mode=\"user\"}"), "3");
        assert_eq!(sample(&text, "canopy_cluster_node_context_switches_total{agg=\"max\"}"), "9");
        // Info series count the hosts of each kind.
        assert_eq!(sample(&text, "canopy_cluster_node_uname_info{agg=\"sum\",machine=\"x86_64\",release=\"6.1.0\",sysname=\"Linux\",version=\"\"}").parse::<u32>().ok(), Some(2), "{text}");
        assert_promtool_clean_but_node_exporters_camel_case(&out.stdout);
    }
}

#[test]
fn a_hung_host_is_reported_down_instead_of_waited_for() {
    let dir = tempfile::tempdir().unwrap();
    let root = planned_hosts(dir.path());
    let loadavg = dir.path().join("h/1/proc/loadavg");
    std::fs::remove_file(&loadavg).unwrap();
    let path = std::ffi::CString::new(loadavg.to_str().unwrap()).unwrap();
    // SAFETY: a valid path. Opening a FIFO without a writer blocks: host1 hangs.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o644) }, 0);
    let out = monitor_once(&root, 3, &["--timeout", "1"]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(sample(&text, "canopy_cluster_hosts_down"), "1");
    assert_eq!(sample(&text, "canopy_cluster_hosts_up"), "2");
    assert_eq!(sample(&text, "node_load1{instance=\"host2\"}"), "0.5");
    assert!(!text.contains("{instance=\"host1\"} 0.5"), "{text}");
}

#[test]
fn hosts_with_nothing_readable_are_an_error() {
    let dir = tempfile::tempdir().unwrap();
    for rank in 0..3 {
        std::fs::create_dir_all(dir.path().join(format!("h/{rank}"))).unwrap();
    }
    let root = format!("{}/h/{{rank}}", dir.path().display());
    let out = monitor_once(&root, 3, &[]);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(out.stdout, b"");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("canopy monitor: no host had a readable metric file (/proc/loadavg, "),
        "{stderr}"
    );
}

/// A monitor serving on a free port, stopped (Ctrl-C) when dropped.
struct Served {
    child: Child,
    address: String,
}

impl Served {
    fn start(root: &str, hosts: usize, extra: &[&str]) -> Served {
        let mut child = Command::new(env!("CARGO_BIN_EXE_canopy"))
            .args(["monitor", "--listen", "127.0.0.1:0", "--interval", "1", "--hosts", &hosts.to_string()])
            .args(["--host-root", root])
            .args(extra)
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut banner = String::new();
        BufReader::new(child.stderr.take().unwrap()).read_line(&mut banner).unwrap();
        let address =
            banner.split("http://").nth(1).unwrap_or_else(|| panic!("{banner}")).split('/').next().unwrap();
        Served { child, address: address.to_owned() }
    }

    fn get(&self, path: &str) -> (String, String) {
        http_get(&self.address, path)
    }

    /// Waits until the monitor has made `count` more collections (the `at` of /api/cluster moved).
    fn wait_collections(&self, count: usize) {
        let deadline = Instant::now() + Duration::from_secs(120);
        let at = || {
            serde_json::from_str::<serde_json::Value>(&self.get("/api/cluster").1).unwrap()["at"]
                .as_f64()
                .unwrap()
        };
        let mut last = at();
        let mut seen = 0;
        while seen < count {
            assert!(Instant::now() < deadline, "the monitor made no new collection");
            std::thread::sleep(Duration::from_millis(100));
            let now = at();
            if now != last {
                (last, seen) = (now, seen + 1);
            }
        }
    }

    fn stop(mut self) -> Option<i32> {
        // SAFETY: signalling our own child.
        unsafe { libc::kill(self.child.id() as i32, libc::SIGINT) };
        self.child.wait().unwrap().code()
    }
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Status line and body of `GET path`.
fn http_get(address: &str, path: &str) -> (String, String) {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    (head.lines().next().unwrap_or_default().to_owned(), body.to_owned())
}

#[test]
fn served_json_has_the_expositions_names_and_vanishing_clients_harm_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = planned_hosts(dir.path());
    let served = Served::start(&root, 3, &[]);
    let (status, metrics) = served.get("/metrics");
    assert!(status.contains(" 200"), "{status}");
    assert!(metrics.contains("\nnode_load1{instance=\"host1\"} 2.25\n"), "{metrics}");
    // The JSON's families are the exposition's, sample for sample.
    let cluster: serde_json::Value = serde_json::from_str(&served.get("/api/cluster").1).unwrap();
    let exposed = families(&metrics);
    let json: BTreeMap<String, (String, BTreeSet<String>)> = cluster["families"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let labels = f["samples"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|s| s["labels"].as_object().unwrap().keys().cloned());
            (
                f["name"].as_str().unwrap().to_owned(),
                (f["type"].as_str().unwrap().to_owned(), labels.collect()),
            )
        })
        .collect();
    assert_eq!(json, exposed);
    let host: serde_json::Value = serde_json::from_str(&served.get("/api/host/host1").1).unwrap();
    assert_eq!(host["hosts"], serde_json::json!(["host1"]));
    let load = host["families"].as_array().unwrap().iter().find(|f| f["name"] == "node_load1").unwrap();
    assert_eq!(load["samples"], serde_json::json!([{"labels": {"instance": "host1"}, "value": 2.25}]));
    assert!(served.get("/nothing").0.contains(" 404"));
    assert!(served.get("/host/nobody").0.contains(" 404"));
    // Clients that hang up before the answer (EPIPE or a reset on the server's write), many times over.
    for _ in 0..50 {
        let mut stream = std::net::TcpStream::connect(&served.address).unwrap();
        write!(stream, "GET /metrics HTTP/1.0\r\n\r\n").unwrap();
        drop(stream);
    }
    assert!(served.get("/metrics").1.contains("node_load1{instance=\"host0\"} 0.5"));
    assert_eq!(served.stop(), Some(0));
}

/// Where tests keep what people look at afterwards.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target/test-artifacts");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn the_page_renders_in_chromium_within_a_laptops_width_and_logs_nothing() {
    // Four hosts reading this machine's /proc: counters that move, so rates and charts have something.
    let dir = tempfile::tempdir().unwrap();
    let served = Served::start("/", 4, &[]);
    served.wait_collections(4);
    let url = format!("http://{}/", served.address);
    let profile = tempfile::tempdir().unwrap();
    let mut c = headless_chromium(profile.path());
    c.args(["--enable-logging=stderr", "--v=0", "--window-size=1280,800", "--dump-dom"]).arg(&url);
    let out = run(c, None);
    assert_eq!(out.status.code(), Some(0), "chromium (installed by scripts/setup) runs headless");
    let log = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = log.lines().filter(|l| l.contains(":CONSOLE")).collect();
    assert!(console.is_empty(), "the page logs nothing (no errors): {console:#?}");
    let dom = String::from_utf8_lossy(&out.stdout);
    for card in
        ["CPU busy", "Load (1 min)", "Memory used", "Network in", "Disk read", "File systems used", "Uptime"]
    {
        assert!(dom.contains(&format!("<h3>{card}</h3>")), "card {card}: {dom}");
    }
    // Human units, rates and charts.
    assert!(dom.contains(" GiB</div>") || dom.contains(" MiB</div>"), "{dom}");
    assert!(dom.contains("/s</div>") && dom.contains(" %</div>"), "{dom}");
    assert!(dom.contains("4 hosts up (host[0-3])"), "{dom}");
    assert!(dom.matches("<polyline").count() >= 6, "a chart per card: {dom}");
    assert!(dom.contains("<a href=\"/host/host3\">host3</a>"), "{dom}");
    assert!(!dom.contains("<script"), "JS-free");

    // Laid out at 1280 px, nothing is wider than the window: a copy of the page with a probe script.
    let (_, html) = served.get("/");
    let probe = dir.path().join("probe.html");
    let script = "<script>addEventListener('load', () => { document.title = 'width ' + \
                  document.documentElement.scrollWidth + ' of ' + innerWidth; });</script>";
    std::fs::write(
        &probe,
        html.replacen("</head>", &format!("{script}</head>"), 1)
            .replace("http-equiv=\"refresh\"", "name=\"x\""),
    )
    .unwrap();
    let mut c = headless_chromium(profile.path());
    c.args(["--window-size=1280,800", "--dump-dom"]).arg(format!("file://{}", probe.display()));
    let dom = String::from_utf8_lossy(&run(c, None).stdout).into_owned();
    let title = dom.split("<title>").nth(1).unwrap().split("</title>").next().unwrap();
    assert_eq!(title, "width 1280 of 1280", "the page fits a 1280-px laptop screen");

    let shot = artifacts().join("monitor-page.png");
    let mut c = headless_chromium(profile.path());
    c.args(["--window-size=1280,800", "--hide-scrollbars"])
        .arg(format!("--screenshot={}", shot.display()))
        .arg(&url);
    assert_eq!(run(c, None).status.code(), Some(0));
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000, "a screenshot at {}", shot.display());

    let (status, host_page) = served.get("/host/host2");
    assert!(status.contains(" 200") && host_page.contains("<h2>File systems</h2>"), "{host_page}");
    assert!(host_page.contains("<td title=\"/\">/</td>"), "the root file system: {host_page}");
    let (_, by_form) = served.get("/host?name=host2");
    assert!(by_form.contains("canopy monitor: host2"));
    assert_eq!(served.stop(), Some(0));
}

/// `%`-encodes a query parameter.
fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => (b as char).to_string(),
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Prometheus scraping `targets` every second; stopped when dropped.
struct Prometheus {
    child: Child,
    address: String,
    _dir: tempfile::TempDir,
}

impl Prometheus {
    fn start(targets: &[(&str, &str)]) -> Prometheus {
        let dir = tempfile::tempdir().unwrap();
        let mut config =
            String::from("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n");
        for (job, address) in targets {
            config += &format!(
                "  - job_name: {job}\n    honor_labels: true\n    static_configs:\n      - targets: ['{address}']\n"
            );
        }
        std::fs::write(dir.path().join("prometheus.yml"), config).unwrap();
        let mut child = Command::new("prometheus")
            .arg(format!("--config.file={}", dir.path().join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.path().join("data").display()))
            .args(["--web.listen-address=127.0.0.1:0", "--log.level=info"])
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("prometheus is installed by scripts/setup");
        let mut log = BufReader::new(child.stderr.take().unwrap());
        let mut address = None;
        let mut line = String::new();
        while address.is_none() && log.read_line(&mut line).unwrap() > 0 {
            if line.contains("msg=\"Listening on\"") {
                address = line.split("address=").nth(1).map(|a| a.trim().to_owned());
            }
            line.clear();
        }
        // Keep reading its log so it never blocks on a full pipe.
        std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
        let prometheus =
            Prometheus { child, address: address.expect("prometheus says where it listens"), _dir: dir };
        // It listens before its storage is open; until then it answers 503.
        let deadline = Instant::now() + Duration::from_secs(120);
        while !http_get(&prometheus.address, "/-/ready").0.contains(" 200") {
            assert!(Instant::now() < deadline, "prometheus never got ready");
            std::thread::sleep(Duration::from_millis(100));
        }
        prometheus
    }

    /// The result of an instant query (the expression must be valid: status success).
    fn query(&self, expr: &str) -> Vec<serde_json::Value> {
        let (status, body) = http_get(&self.address, &format!("/api/v1/query?query={}", encode(expr)));
        let answer: serde_json::Value =
            serde_json::from_str(&body).unwrap_or_else(|_| panic!("{status}: {body}"));
        assert_eq!(answer["status"], "success", "{expr}: {answer}");
        answer["data"]["result"].as_array().cloned().unwrap_or_default()
    }

    /// Waits until every job has been scraped `count` times.
    fn wait_scrapes(&self, count: u64) {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            let scrapes = self.query("count_over_time(canopy_cluster_hosts_up[5m])");
            let done = scrapes.len() == 2
                && scrapes.iter().all(|r| r["value"][1].as_str().unwrap().parse::<u64>().unwrap() >= count);
            if done {
                return;
            }
            assert!(Instant::now() < deadline, "prometheus scraped too little: {scrapes:?}");
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Every PromQL expression of the dashboard (its panels' and its variables').
fn dashboard_queries() -> Vec<String> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grouptools/dashboards/canopy-monitor.json");
    let dashboard: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let mut queries: Vec<String> = dashboard["panels"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|p| p["targets"].as_array().cloned().unwrap_or_default())
        .map(|t| t["expr"].as_str().unwrap().to_owned())
        .collect();
    for variable in dashboard["templating"]["list"].as_array().unwrap() {
        if let Some(query) = variable["query"]["query"].as_str() {
            // Grafana's label_values(METRIC, LABEL): the series of METRIC that have LABEL.
            let inner = query.strip_prefix("label_values(").unwrap().strip_suffix(')').unwrap();
            let (metric, label) = inner.split_once(", ").unwrap();
            queries.push(format!("{metric}{{{label}!=\"\"}}"));
        }
    }
    queries
}

#[test]
fn every_dashboard_query_returns_data_from_prometheus_scraping_the_monitor() {
    let dir = tempfile::tempdir().unwrap();
    let root = fixture_hosts(dir.path(), 3);
    let hosts = Served::start(&root, 3, &[]);
    let cluster = Served::start(&root, 3, &["--aggregate"]);
    let prometheus =
        Prometheus::start(&[("canopy-hosts", &hosts.address), ("canopy-cluster", &cluster.address)]);
    prometheus.wait_scrapes(4);
    let queries = dashboard_queries();
    assert!(queries.len() >= 20, "{queries:?}");
    for query in &queries {
        // Grafana's variables: every host, and a rate window of several scrapes.
        let expr = query.replace("$instance", ".+").replace("$__rate_interval", "30s");
        let result = prometheus.query(&expr);
        assert!(!result.is_empty(), "no data for {expr}");
    }
    // The per-host series keep their instance label through the scrape (honor_labels).
    let instances = prometheus.query("count by (instance) (node_uname_info)");
    let mut names: Vec<&str> = instances.iter().map(|r| r["metric"]["instance"].as_str().unwrap()).collect();
    names.sort_unstable();
    assert_eq!(names, ["host0", "host1", "host2"]);
    eprintln!("{} dashboard queries returned data from prometheus", queries.len());
}

//! node_exporter's collectors for what the monitor reads: each host turns one of its `/proc` files into
//! samples with node_exporter's metric names, labels and units (the file-system collector also stats the
//! mount points its `/proc/mounts` lists, under the host's root; the stat collector also reads the host's
//! clock, as node_exporter's time collector does). Defaults follow node_exporter 1.5's: partitions, loop
//! and RAM disks are left out of the disk series, pseudo file systems out of the file-system series.

use canopy_group::HostConfig;
use canopy_group::aggr::decimal::Decimal;
use regex::Regex;
use serde::{Deserialize, Serialize};
use std::sync::LazyLock;

/// A file every host reads, and how its contents become samples.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Source {
    /// `node_load1`, `node_load5`, `node_load15`.
    Loadavg,
    /// `node_memory_*`.
    Meminfo,
    /// `node_cpu_*`, `node_boot_time_seconds`, `node_context_switches_total`, ... and `node_time_*`.
    Stat,
    /// `node_network_*`.
    NetDev,
    /// `node_disk_*`.
    Diskstats,
    /// `node_filesystem_*`.
    Mounts,
    /// `node_uname_info`, from the host's `/proc/sys/kernel` files.
    Uname,
}

impl Source {
    /// Every collector, in exposition order.
    pub const ALL: [Source; 7] = [
        Source::Loadavg,
        Source::Meminfo,
        Source::Stat,
        Source::NetDev,
        Source::Diskstats,
        Source::Mounts,
        Source::Uname,
    ];

    /// The file the hosts read (under their roots).
    pub fn path(self) -> &'static str {
        match self {
            Source::Loadavg => "/proc/loadavg",
            Source::Meminfo => "/proc/meminfo",
            Source::Stat => "/proc/stat",
            Source::NetDev => "/proc/net/dev",
            Source::Diskstats => "/proc/diskstats",
            Source::Mounts => "/proc/mounts",
            Source::Uname => "/proc/sys/kernel/osrelease",
        }
    }
}

/// A series: a metric name and its labels, in the order they are printed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Series {
    /// node_exporter's metric name.
    pub name: String,
    /// Label names and values.
    pub labels: Vec<(String, String)>,
}

impl Series {
    fn new(name: impl Into<String>, labels: &[(&str, &str)]) -> Series {
        Series {
            name: name.into(),
            labels: labels.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        }
    }

    /// The value of label `name`, if the series has it.
    pub fn label(&self, name: &str) -> Option<&str> {
        self.labels.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// One value of a series.
pub type Sample = (Series, Decimal);

/// How a host reports: per CPU and with its own identity (`cpu`, `nodename` labels), or ready to be summed
/// over many hosts (the CPUs' total, no per-host labels).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Detail {
    /// node_exporter's series exactly.
    PerHost,
    /// Series whose sum, minimum and maximum over hosts mean something.
    Cluster,
}

/// The samples of one file's contents on `host`.
pub fn collect(source: Source, text: &str, host: &HostConfig, detail: Detail) -> Vec<Sample> {
    match source {
        Source::Loadavg => loadavg(text),
        Source::Meminfo => meminfo(text),
        Source::Stat => [stat(text, detail), clock()].concat(),
        Source::NetDev => net_dev(text),
        Source::Diskstats => diskstats(text),
        Source::Mounts => filesystems(text, host),
        Source::Uname => uname(text, host, detail),
    }
}

/// Help text of a family, as node_exporter 1.5 writes it.
pub fn help(name: &str) -> String {
    if let Some(field) = name.strip_prefix("node_memory_") {
        return format!("Memory information field {field}.");
    }
    if let Some(stat) = name.strip_prefix("node_network_").and_then(|n| n.strip_suffix("_total")) {
        return format!("Network device statistic {stat}.");
    }
    let text = match name {
        "node_load1" => "1m load average.",
        "node_load5" => "5m load average.",
        "node_load15" => "15m load average.",
        "node_cpu_seconds_total" => "Seconds the CPUs spent in each mode.",
        "node_cpu_guest_seconds_total" => "Seconds the CPUs spent in guests (VMs) for each mode.",
        "node_boot_time_seconds" => "Node boot time, in unixtime.",
        "node_context_switches_total" => "Total number of context switches.",
        "node_forks_total" => "Total number of forks.",
        "node_intr_total" => "Total number of interrupts serviced.",
        "node_procs_blocked" => "Number of processes blocked waiting for I/O to complete.",
        "node_procs_running" => "Number of processes in runnable state.",
        "node_time_seconds" => "System time in seconds since epoch (1970).",
        "node_time_zone_offset_seconds" => "System time zone offset in seconds.",
        "node_disk_info" => "Info of /sys/block/<block_device>.",
        "node_disk_reads_completed_total" => "The total number of reads completed successfully.",
        "node_disk_reads_merged_total" => "The total number of reads merged.",
        "node_disk_read_bytes_total" => "The total number of bytes read successfully.",
        "node_disk_read_time_seconds_total" => "The total number of seconds spent by all reads.",
        "node_disk_writes_completed_total" => "The total number of writes completed successfully.",
        "node_disk_writes_merged_total" => "The number of writes merged.",
        "node_disk_written_bytes_total" => "The total number of bytes written successfully.",
        "node_disk_write_time_seconds_total" => "This is the total number of seconds spent by all writes.",
        "node_disk_io_now" => "The number of I/Os currently in progress.",
        "node_disk_io_time_seconds_total" => "Total seconds spent doing I/Os.",
        "node_disk_io_time_weighted_seconds_total" => "The weighted # of seconds spent doing I/Os.",
        "node_disk_discards_completed_total" => "The total number of discards completed successfully.",
        "node_disk_discards_merged_total" => "The total number of discards merged.",
        "node_disk_discarded_sectors_total" => "The total number of sectors discarded successfully.",
        "node_disk_discard_time_seconds_total" => {
            "This is the total number of seconds spent by all discards."
        }
        "node_disk_flush_requests_total" => "The total number of flush requests completed successfully",
        "node_disk_flush_requests_time_seconds_total" => {
            "This is the total number of seconds spent by all flush requests."
        }
        "node_filesystem_size_bytes" => "Filesystem size in bytes.",
        "node_filesystem_free_bytes" => "Filesystem free space in bytes.",
        "node_filesystem_avail_bytes" => "Filesystem space available to non-root users in bytes.",
        "node_filesystem_files" => "Filesystem total file nodes.",
        "node_filesystem_files_free" => "Filesystem total free file nodes.",
        "node_filesystem_readonly" => "Filesystem read-only status.",
        "node_filesystem_device_error" => {
            "Whether an error occurred while getting statistics for the given device."
        }
        "node_uname_info" => "Labeled system information as provided by the uname system call.",
        _ => "A node_exporter series.",
    };
    text.to_owned()
}

fn number(word: &str) -> Option<Decimal> {
    word.parse::<u64>().ok().map(Decimal::from_u64)
}

fn loadavg(text: &str) -> Vec<Sample> {
    let words: Vec<&str> = text.split_whitespace().collect();
    ["node_load1", "node_load5", "node_load15"]
        .into_iter()
        .enumerate()
        .filter_map(|(i, name)| Some((Series::new(name, &[]), Decimal::parse(words.get(i)?)?)))
        .collect()
}

/// `MemTotal: 16 kB` is `node_memory_MemTotal_bytes 16384`; `HugePages_Total: 0` keeps its name;
/// `Active(anon)` is `Active_anon`.
fn meminfo(text: &str) -> Vec<Sample> {
    let mut out = Vec::new();
    for line in text.lines() {
        let Some((key, rest)) = line.split_once(':') else { continue };
        let mut words = rest.split_whitespace();
        let Some(value) = words.next().and_then(|w| w.parse::<u64>().ok()) else { continue };
        let key = key.replace('(', "_").replace(')', "");
        let (name, value) = match words.next() {
            Some(_) => (format!("node_memory_{key}_bytes"), value.saturating_mul(1024)),
            None => (format!("node_memory_{key}"), value),
        };
        out.push((Series::new(name, &[]), Decimal::from_u64(value)));
    }
    out
}

/// The clock tick `/proc/stat` counts in (USER_HZ).
fn ticks() -> u64 {
    // SAFETY: sysconf has no preconditions.
    (unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).max(1) as u64
}

fn stat(text: &str, detail: Detail) -> Vec<Sample> {
    const MODES: [&str; 8] = ["user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"];
    let ticks = ticks();
    let mut out = Vec::new();
    let mut single = |name: &str, word: Option<&str>| {
        if let Some(value) = word.and_then(number) {
            out.push((Series::new(name, &[]), value));
        }
    };
    let mut cpus = Vec::new();
    for line in text.lines() {
        let mut words = line.split_whitespace();
        match words.next().unwrap_or("") {
            "intr" => single("node_intr_total", words.next()),
            "ctxt" => single("node_context_switches_total", words.next()),
            "btime" => single("node_boot_time_seconds", words.next()),
            "processes" => single("node_forks_total", words.next()),
            "procs_running" => single("node_procs_running", words.next()),
            "procs_blocked" => single("node_procs_blocked", words.next()),
            // The CPUs' total for a cluster sum; each CPU for one host.
            "cpu" if detail == Detail::Cluster => cpus.push((None, line)),
            key if detail == Detail::PerHost && key.starts_with("cpu") && key != "cpu" => {
                cpus.push((Some(&key[3..]), line))
            }
            _ => {}
        }
    }
    for (cpu, line) in cpus {
        let times: Vec<Decimal> =
            line.split_whitespace().skip(1).filter_map(number).map(|t| t.div_count(ticks)).collect();
        for (mode, time) in MODES.iter().zip(&times) {
            out.push((Series::new("node_cpu_seconds_total", &cpu_labels(cpu, mode)), *time));
        }
        for (mode, time) in ["user", "nice"].iter().zip(times.iter().skip(8)) {
            out.push((Series::new("node_cpu_guest_seconds_total", &cpu_labels(cpu, mode)), *time));
        }
    }
    out
}

fn cpu_labels<'a>(cpu: Option<&'a str>, mode: &'a str) -> Vec<(&'a str, &'a str)> {
    match cpu {
        Some(cpu) => vec![("cpu", cpu), ("mode", mode)],
        None => vec![("mode", mode)],
    }
}

/// node_exporter's time collector: the host's clock and time zone.
fn clock() -> Vec<Sample> {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let seconds = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
    let mut out =
        vec![(Series::new("node_time_seconds", &[]), Decimal::from_seconds(seconds, now.subsec_nanos()))];
    // SAFETY: an all-zero tm is valid to be overwritten; both pointers are valid for the call.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let time: libc::time_t = seconds;
    if !unsafe { libc::localtime_r(&time, &mut tm) }.is_null() && !tm.tm_zone.is_null() {
        // SAFETY: localtime_r set tm_zone to a NUL-terminated string that lives as long as the process.
        let zone = unsafe { std::ffi::CStr::from_ptr(tm.tm_zone) }.to_string_lossy();
        out.push((
            Series::new("node_time_zone_offset_seconds", &[("time_zone", &zone)]),
            Decimal::from_int(tm.tm_gmtoff),
        ));
    }
    out
}

fn net_dev(text: &str) -> Vec<Sample> {
    const COLUMNS: [&str; 16] = [
        "receive_bytes",
        "receive_packets",
        "receive_errs",
        "receive_drop",
        "receive_fifo",
        "receive_frame",
        "receive_compressed",
        "receive_multicast",
        "transmit_bytes",
        "transmit_packets",
        "transmit_errs",
        "transmit_drop",
        "transmit_fifo",
        "transmit_colls",
        "transmit_carrier",
        "transmit_compressed",
    ];
    let mut out = Vec::new();
    for line in text.lines().skip(2) {
        let Some((device, rest)) = line.split_once(':') else { continue };
        let device = device.trim();
        for (column, value) in COLUMNS.iter().zip(rest.split_whitespace().map(number)) {
            if let Some(value) = value {
                let name = format!("node_network_{column}_total");
                out.push((Series::new(name, &[("device", device)]), value));
            }
        }
    }
    out
}

/// node_exporter's default `--collector.diskstats.device-exclude`: partitions, RAM, loop and floppy disks.
static DISK_EXCLUDE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"^(ram|loop|fd|(h|s|v|xv)d[a-z]|nvme\d+n\d+p)\d+$").expect("a valid regex"));

fn diskstats(text: &str) -> Vec<Sample> {
    // (field after major, minor and name; series; what one unit of the field is)
    enum Unit {
        Count,
        Sectors,
        Milliseconds,
    }
    const FIELDS: [(usize, &str, Unit); 17] = [
        (0, "node_disk_reads_completed_total", Unit::Count),
        (1, "node_disk_reads_merged_total", Unit::Count),
        (2, "node_disk_read_bytes_total", Unit::Sectors),
        (3, "node_disk_read_time_seconds_total", Unit::Milliseconds),
        (4, "node_disk_writes_completed_total", Unit::Count),
        (5, "node_disk_writes_merged_total", Unit::Count),
        (6, "node_disk_written_bytes_total", Unit::Sectors),
        (7, "node_disk_write_time_seconds_total", Unit::Milliseconds),
        (8, "node_disk_io_now", Unit::Count),
        (9, "node_disk_io_time_seconds_total", Unit::Milliseconds),
        (10, "node_disk_io_time_weighted_seconds_total", Unit::Milliseconds),
        (11, "node_disk_discards_completed_total", Unit::Count),
        (12, "node_disk_discards_merged_total", Unit::Count),
        // node_exporter counts discarded sectors as sectors.
        (13, "node_disk_discarded_sectors_total", Unit::Count),
        (14, "node_disk_discard_time_seconds_total", Unit::Milliseconds),
        (15, "node_disk_flush_requests_total", Unit::Count),
        (16, "node_disk_flush_requests_time_seconds_total", Unit::Milliseconds),
    ];
    let mut out = Vec::new();
    for line in text.lines() {
        let words: Vec<&str> = line.split_whitespace().collect();
        let [major, minor, device, fields @ ..] = &words[..] else { continue };
        if DISK_EXCLUDE.is_match(device) {
            continue;
        }
        let labels = [("device", *device)];
        out.push((
            Series::new("node_disk_info", &[("device", device), ("major", major), ("minor", minor)]),
            Decimal::from_u64(1),
        ));
        for (field, name, unit) in &FIELDS {
            let Some(raw) = fields.get(*field).and_then(|w| w.parse::<u64>().ok()) else { continue };
            let value = match unit {
                Unit::Count => Decimal::from_u64(raw),
                Unit::Sectors => Decimal::from_u64(raw.saturating_mul(512)),
                Unit::Milliseconds => Decimal::from_u64(raw).div_count(1000),
            };
            out.push((Series::new(*name, &labels), value));
        }
    }
    out
}

/// node_exporter's default `--collector.filesystem.mount-points-exclude`.
static MOUNT_POINT_EXCLUDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^/(dev|proc|run/credentials/.+|sys|var/lib/docker/.+|var/lib/containers/storage/.+)($|/)")
        .expect("a valid regex")
});

/// node_exporter's default `--collector.filesystem.fs-types-exclude`.
static FS_TYPE_EXCLUDE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^(autofs|binfmt_misc|bpf|cgroup2?|configfs|debugfs|devpts|devtmpfs|fusectl|hugetlbfs|iso9660|mqueue|nsfs|overlay|proc|procfs|pstore|rpc_pipefs|securityfs|selinuxfs|squashfs|sysfs|tracefs)$",
    )
    .expect("a valid regex")
});

/// `/proc/mounts` escapes space, tab, newline and backslash in octal (`\040`).
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes
            .get(i + 1..i + 4)
            .filter(|d| bytes[i] == b'\\' && d.iter().all(|b| (b'0'..=b'7').contains(b)));
        match octal {
            Some(digits) => {
                out.push(digits.iter().fold(0u8, |acc, d| acc.wrapping_mul(8).wrapping_add(d - b'0')));
                i += 4;
            }
            None => {
                out.push(bytes[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// One sample per file system the host's `/proc/mounts` lists (each mount point statted under the host's
/// root): sizes, free and available space, inodes, whether it is read-only, and whether statfs failed.
fn filesystems(text: &str, host: &HostConfig) -> Vec<Sample> {
    let mut out = Vec::new();
    let mut seen = std::collections::BTreeSet::new();
    for line in text.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        let [device, mount_point, fs_type, options, ..] = &fields[..] else { continue };
        let (device, mount_point) = (unescape(device), unescape(mount_point));
        if MOUNT_POINT_EXCLUDE.is_match(&mount_point)
            || FS_TYPE_EXCLUDE.is_match(fs_type)
            || !seen.insert((device.clone(), mount_point.clone()))
        {
            continue;
        }
        let labels =
            [("device", device.as_str()), ("fstype", *fs_type), ("mountpoint", mount_point.as_str())];
        let series = |name: &str| Series::new(name, &labels);
        let read_only = options.split(',').any(|o| o == "ro");
        let local = host.root.join(mount_point.trim_start_matches('/'));
        let stats = rustix::fs::statfs(&local).ok();
        out.push((series("node_filesystem_device_error"), Decimal::from_u64(u64::from(stats.is_none()))));
        out.push((series("node_filesystem_readonly"), Decimal::from_u64(u64::from(read_only))));
        let Some(st) = stats else { continue };
        let block = st.f_bsize as u64;
        for (name, value) in [
            ("node_filesystem_size_bytes", st.f_blocks.saturating_mul(block)),
            ("node_filesystem_free_bytes", st.f_bfree.saturating_mul(block)),
            ("node_filesystem_avail_bytes", st.f_bavail.saturating_mul(block)),
            ("node_filesystem_files", st.f_files),
            ("node_filesystem_files_free", st.f_ffree),
        ] {
            out.push((series(name), Decimal::from_u64(value)));
        }
    }
    out
}

/// `node_uname_info`: the release is the file read; the host reads the other fields next to it (as the
/// uname system call would give them, for its root). Across a cluster only the fields hosts share are
/// kept (no nodename or domainname), so the info counts the hosts of each kind.
fn uname(release: &str, host: &HostConfig, detail: Detail) -> Vec<Sample> {
    let kernel = host.root.join("proc/sys/kernel");
    let read = |name: &str| std::fs::read_to_string(kernel.join(name)).ok().map(|t| t.trim_end().to_owned());
    let machine =
        read("arch").unwrap_or_else(|| rustix::system::uname().machine().to_string_lossy().into_owned());
    let mut fields = vec![
        ("machine", machine),
        ("release", release.trim_end().to_owned()),
        ("sysname", read("ostype").unwrap_or_default()),
        ("version", read("version").unwrap_or_default()),
    ];
    if detail == Detail::PerHost {
        fields.push(("domainname", read("domainname").unwrap_or_default()));
        fields.push(("nodename", read("hostname").unwrap_or_default()));
        fields.sort();
    }
    let labels: Vec<(&str, &str)> = fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
    vec![(Series::new("node_uname_info", &labels), Decimal::from_u64(1))]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(samples: &[Sample]) -> Vec<String> {
        samples.iter().map(|(s, _)| s.name.clone()).collect()
    }

    #[test]
    fn files_become_node_exporter_series() {
        let host = HostConfig { name: "h".into(), root: "/".into() };
        let load = collect(Source::Loadavg, "0.50 1.25 2.00 3/456 789\n", &host, Detail::PerHost);
        assert_eq!(load[1], (Series::new("node_load5", &[]), Decimal::parse("1.25").unwrap()));
        let mem = meminfo("MemTotal:       1000 kB\nActive(anon):      2 kB\nHugePages_Total:   0\n");
        assert_eq!(
            names(&mem),
            ["node_memory_MemTotal_bytes", "node_memory_Active_anon_bytes", "node_memory_HugePages_Total"]
        );
        assert_eq!(mem[0].1, Decimal::from_u64(1_024_000));
        let text =
            "cpu  150 0 50 1000 0 0 0 0 7 0\ncpu0 150 0 50 1000 0 0 0 0 7 0\nctxt 77\nbtime 1700000000\n";
        let per_host = stat(text, Detail::PerHost);
        let user = Series::new("node_cpu_seconds_total", &[("cpu", "0"), ("mode", "user")]);
        assert!(per_host.contains(&(user, Decimal::from_u64(150).div_count(ticks()))));
        let guest = Series::new("node_cpu_guest_seconds_total", &[("cpu", "0"), ("mode", "user")]);
        assert!(per_host.contains(&(guest, Decimal::from_u64(7).div_count(ticks()))));
        let cluster = stat(text, Detail::Cluster);
        assert!(
            cluster
                .iter()
                .any(|(s, _)| s.name == "node_cpu_seconds_total"
                    && s.labels == [("mode".into(), "idle".into())])
        );
        assert!(cluster.contains(&(Series::new("node_context_switches_total", &[]), Decimal::from_u64(77))));
        let net =
            net_dev("Inter-|   Receive\n face |bytes packets\n  lo: 10 2 0 0 0 0 0 0 30 4 0 0 0 0 0 0\n");
        assert_eq!(
            net[8],
            (Series::new("node_network_transmit_bytes_total", &[("device", "lo")]), Decimal::from_u64(30))
        );
        let disks = diskstats(
            "   8 0 sda 1 0 8 500 0 0 0 0 0 0 0\n   8 1 sda1 1 0 8 500 0 0 0 0 0 0 0\n   7 0 loop0 0 0 0 0 0 0 0 0 0 0 0\n",
        );
        assert!(disks.iter().all(|(s, _)| s.label("device") == Some("sda")), "{disks:?}");
        let read = Series::new("node_disk_read_bytes_total", &[("device", "sda")]);
        assert!(disks.contains(&(read, Decimal::from_u64(4096))));
        let time = Series::new("node_disk_read_time_seconds_total", &[("device", "sda")]);
        assert!(disks.contains(&(time, Decimal::parse("0.5").unwrap())));
        assert_eq!(unescape(r"/srv/with\040space"), "/srv/with space");
    }

    #[test]
    fn file_systems_are_statted_under_the_host_root_and_pseudo_ones_left_out() {
        let root = tempfile::tempdir().unwrap();
        std::fs::create_dir(root.path().join("data")).unwrap();
        let host = HostConfig { name: "h".into(), root: root.path().to_owned() };
        let mounts = "/dev/sda1 / ext4 rw 0 0\nproc /proc proc rw 0 0\n/dev/sdb1 /data xfs ro,relatime 0 0\n\
                      /dev/sdc1 /gone ext4 rw 0 0\n";
        let samples = filesystems(mounts, &host);
        let value = |name: &str, mount_point: &str| {
            samples
                .iter()
                .find(|(s, _)| s.name == name && s.label("mountpoint") == Some(mount_point))
                .map(|(_, v)| *v)
        };
        assert_eq!(value("node_filesystem_readonly", "/data"), Some(Decimal::from_u64(1)));
        assert_eq!(value("node_filesystem_device_error", "/data"), Some(Decimal::ZERO));
        assert!(value("node_filesystem_size_bytes", "/").is_some_and(|v| v > Decimal::ZERO));
        assert_eq!(value("node_filesystem_device_error", "/gone"), Some(Decimal::from_u64(1)));
        assert_eq!(value("node_filesystem_size_bytes", "/gone"), None);
        assert!(samples.iter().all(|(s, _)| s.label("mountpoint") != Some("/proc")));
    }
}

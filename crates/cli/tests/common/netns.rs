//! Several hosts on one machine for multi-host MPI tests: each host is a network namespace with a
//! veth on a bridge of its own and an address on [`SUBNET`]; commands entered into it (the rsh
//! stand-in below, [`Hosts::on_host`]) also get a UTS namespace with the host's own hostname.
//! Open MPI's rsh launcher reaches the hosts through the stand-in as it would reach nodes through
//! ssh, so ranks on different hosts talk TCP over the veths, whose counters the test can read.
//!
//! Concurrent runs cannot collide: names carry the test process's id and a sequence number, and the
//! subnet lives only inside the namespaces (the bridge has no address, nothing is routed). Dropping
//! [`Hosts`] removes everything it made — the processes left in the namespaces, the namespaces,
//! veths and bridge — also when the test fails; what a killed test process left is removed by the
//! next run.

use super::run;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The hosts' addresses: 10.77.0.1, 10.77.0.2, …
pub const SUBNET: &str = "10.77.0.0/24";

/// Host networks made by this process so far (names must differ between tests of one process).
static MADE: AtomicUsize = AtomicUsize::new(0);

pub struct Hosts {
    bridge: Option<String>,
    hosts: Vec<Host>,
    rsh_agent: PathBuf,
}

struct Host {
    netns: String,
    /// The veth end on the bridge (outside the namespace); the other end is `eth0` inside.
    veth: String,
    hostname: String,
    address: String,
}

impl Hosts {
    /// `n` hosts on a new bridge, the rsh stand-in written into `dir`. Needs root.
    #[track_caller]
    pub fn create(n: usize, dir: &Path) -> Hosts {
        remove_leftovers();
        let tag = format!("{}x{}", std::process::id(), MADE.fetch_add(1, Ordering::Relaxed));
        let bridge = format!("cn{tag}b");
        let mut hosts = Hosts { bridge: None, hosts: Vec::new(), rsh_agent: dir.join("rsh") };
        ip(&["link", "add", &bridge, "type", "bridge"]);
        hosts.bridge = Some(bridge.clone());
        ip(&["link", "set", &bridge, "up"]);
        for i in 0..n {
            let host = Host {
                netns: format!("canopy-{tag}-host{i}"),
                veth: format!("cn{tag}v{i}"),
                hostname: format!("host{i}"),
                address: format!("10.77.0.{}", i + 1),
            };
            assert!(host.veth.len() <= 15, "interface names are at most 15 bytes: {}", host.veth);
            ip(&["netns", "add", &host.netns]);
            let (netns, veth, address) = (host.netns.clone(), host.veth.clone(), host.address.clone());
            hosts.hosts.push(host);
            ip(&["link", "add", &veth, "type", "veth", "peer", "name", "eth0", "netns", &netns]);
            ip(&["link", "set", &veth, "master", &bridge, "up"]);
            ip(&["-n", &netns, "addr", "add", &format!("{address}/24"), "dev", "eth0"]);
            ip(&["-n", &netns, "link", "set", "eth0", "up"]);
            ip(&["-n", &netns, "link", "set", "lo", "up"]);
        }
        hosts.write_rsh_agent();
        hosts
    }

    /// The rsh stand-in: `rsh HOST COMMAND…` runs COMMAND as a shell command line (as ssh does) in
    /// HOST's namespaces, HOST being an address of [`SUBNET`].
    fn write_rsh_agent(&self) {
        let mut script = String::from("#!/bin/sh\n# rsh stand-in: HOST COMMAND...\ncase $1 in\n");
        for h in &self.hosts {
            script += &format!("  {}) netns={} name={} ;;\n", h.address, h.netns, h.hostname);
        }
        script += "  *) echo \"rsh stand-in: unknown host $1\" >&2; exit 255 ;;\nesac\nshift\n";
        script += "exec ip netns exec \"$netns\" unshare --uts -- sh -c 'hostname \"$0\" && eval \"$1\"' \
                   \"$name\" \"$*\"\n";
        std::fs::write(&self.rsh_agent, script).unwrap();
        std::fs::set_permissions(&self.rsh_agent, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    }

    /// mpirun options that put `slots` ranks on each host, launched through the rsh stand-in, all
    /// traffic (runtime and MPI) on the hosts' subnet.
    pub fn mpirun_options(&self, slots: usize) -> Vec<String> {
        let agent = self.rsh_agent.display().to_string();
        let host_list: Vec<String> = self.hosts.iter().map(|h| format!("{}:{slots}", h.address)).collect();
        let mut options = Vec::new();
        for (name, value) in [
            ("plm_rsh_agent", agent.as_str()),
            ("plm_rsh_no_tree_spawn", "1"),
            ("oob_tcp_if_include", SUBNET),
            ("btl_tcp_if_include", SUBNET),
        ] {
            options.extend(["--mca".to_string(), name.to_string(), value.to_string()]);
        }
        options.extend(["--host".to_string(), host_list.join(",")]);
        options
    }

    /// `cmd` (program, arguments, environment, directory) run on host `i`, output captured.
    pub fn on_host(&self, i: usize, cmd: &Command) -> Command {
        let host = &self.hosts[i];
        let mut wrapped = Command::new("ip");
        wrapped
            .args(["netns", "exec", &host.netns, "unshare", "--uts", "--", "sh", "-c"])
            .arg("hostname \"$0\" && exec \"$@\"")
            .arg(&host.hostname)
            .arg(cmd.get_program())
            .args(cmd.get_args());
        for (name, value) in cmd.get_envs() {
            match value {
                Some(value) => wrapped.env(name, value),
                None => wrapped.env_remove(name),
            };
        }
        if let Some(dir) = cmd.get_current_dir() {
            wrapped.current_dir(dir);
        }
        wrapped.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        wrapped
    }

    pub fn hostnames(&self) -> Vec<&str> {
        self.hosts.iter().map(|h| h.hostname.as_str()).collect()
    }

    /// Bytes host `i` has sent and received over its veth so far.
    pub fn traffic(&self, i: usize) -> (u64, u64) {
        let counter = |name: &str| -> u64 {
            let path = format!("/sys/class/net/{}/statistics/{name}", self.hosts[i].veth);
            std::fs::read_to_string(&path).unwrap().trim().parse().unwrap()
        };
        // The bridge-side end receives what the host sends.
        (counter("rx_bytes"), counter("tx_bytes"))
    }
}

impl Drop for Hosts {
    fn drop(&mut self) {
        for host in &self.hosts {
            remove_netns(&host.netns);
            // Usually gone with its peer in the namespace; not if the namespace was never reached.
            run(ip_command(&["link", "del", &host.veth]), None);
        }
        if let Some(bridge) = &self.bridge {
            run(ip_command(&["link", "del", bridge]), None);
        }
    }
}

/// Ends the processes left in a namespace (Open MPI's daemons of a failed run), which would keep it
/// alive after `ip netns del`, and deletes it.
fn remove_netns(netns: &str) {
    let pids = run(ip_command(&["netns", "pids", netns]), None).stdout;
    for pid in String::from_utf8_lossy(&pids).split_whitespace().filter_map(|p| p.parse().ok()) {
        if let Some(pid) = rustix::process::Pid::from_raw(pid) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
    run(ip_command(&["netns", "del", netns]), None);
}

/// Removes what test processes killed before they could clean up left behind: namespaces and
/// links whose name carries the id of a process that no longer exists.
fn remove_leftovers() {
    let orphaned = |name: &str, prefix: &str| {
        let pid = name.strip_prefix(prefix).and_then(|rest| rest.split_once('x')).map(|(pid, _)| pid);
        pid.and_then(|pid| pid.parse::<u32>().ok())
            .is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists())
    };
    let netns = run(ip_command(&["netns", "list"]), None).stdout;
    for line in String::from_utf8_lossy(&netns).lines() {
        let name = line.split_whitespace().next().unwrap_or_default();
        if orphaned(name, "canopy-") {
            remove_netns(name);
        }
    }
    // `ip -o link` lines: "7: NAME@PEER: <FLAGS> ..." (no @PEER for a bridge).
    let links = run(ip_command(&["-o", "link", "show"]), None).stdout;
    for line in String::from_utf8_lossy(&links).lines() {
        let name = line.split(": ").nth(1).unwrap_or_default().split('@').next().unwrap_or_default();
        if orphaned(name, "cn") {
            run(ip_command(&["link", "del", name]), None);
        }
    }
}

fn ip_command(args: &[&str]) -> Command {
    let mut cmd = Command::new("ip");
    cmd.args(args);
    cmd
}

#[track_caller]
fn ip(args: &[&str]) {
    let out = run(ip_command(args), None);
    assert!(out.status.success(), "ip {}: {}", args.join(" "), String::from_utf8_lossy(&out.stderr));
}

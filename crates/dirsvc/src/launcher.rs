//! Local clusters: `canopy dirsvc start` creates the cluster directory (ports, secret) and spawns
//! one detached server process per index; `stop` signals them through their pid files.

use std::ffi::OsString;
use std::fs;
use std::net::{Ipv4Addr, SocketAddr, TcpListener};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use rustix::process::{Pid, Signal, kill_process, test_kill_process};

use crate::client::Client;
use crate::cluster::{CLUSTER_FILE, ClusterConfig, ClusterDir};
use crate::error::{Error, Result};

pub const PID_FILE: &str = "pid";
pub const LOG_FILE: &str = "log";

/// How to run one server: `program args... --cluster DIR --index I`.
#[derive(Clone, Debug)]
pub struct ServerCommand {
    pub program: PathBuf,
    pub args: Vec<OsString>,
}

impl ServerCommand {
    /// This executable's `dirsvc serve` (the `canopy` binary).
    pub fn current_canopy() -> Result<Self> {
        let program = std::env::current_exe()
            .map_err(|e| Error::io(format!("cannot find the canopy executable: {e}")))?;
        Ok(Self { program, args: vec!["dirsvc".into(), "serve".into()] })
    }
}

/// What a new local cluster looks like.
#[derive(Clone, Debug)]
pub struct ClusterPlan {
    pub servers: usize,
    /// Server i listens on base_port + i; `None`: free ports chosen by the kernel.
    pub base_port: Option<u16>,
    pub root_partitions: u32,
    pub split_threshold: u64,
}

/// Creates the cluster directory, or loads it when it exists (then `plan.servers` must match).
pub fn init_cluster(dir: &Path, plan: &ClusterPlan) -> Result<ClusterDir> {
    if dir.join(CLUSTER_FILE).exists() {
        let cluster = ClusterDir::load(dir)?;
        if cluster.config.servers.len() != plan.servers {
            return Err(Error::invalid(format!(
                "{} holds a {}-server cluster, not {}",
                dir.display(),
                cluster.config.servers.len(),
                plan.servers
            )));
        }
        return Ok(cluster);
    }
    let servers = match plan.base_port {
        Some(base) => (0..plan.servers)
            .map(|i| {
                let port =
                    u16::try_from(usize::from(base) + i).map_err(|_| Error::invalid("ports beyond 65535"))?;
                Ok(SocketAddr::from((Ipv4Addr::LOCALHOST, port)))
            })
            .collect::<Result<Vec<_>>>()?,
        None => free_ports(plan.servers)?,
    };
    let config = ClusterConfig {
        servers,
        root_partitions: plan.root_partitions.clamp(1, plan.servers as u32),
        split_threshold: plan.split_threshold,
    };
    ClusterDir::create(dir, config)
}

/// Distinct free loopback ports: all held open at once so none repeats, then released for the
/// servers (another process could grab one in between; the server then fails to start, loudly).
fn free_ports(count: usize) -> Result<Vec<SocketAddr>> {
    let listeners = (0..count)
        .map(|_| TcpListener::bind((Ipv4Addr::LOCALHOST, 0)))
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io(format!("cannot find free ports: {e}")))?;
    listeners
        .iter()
        .map(|l| l.local_addr())
        .collect::<std::io::Result<Vec<_>>>()
        .map_err(|e| Error::io(format!("cannot find free ports: {e}")))
}

/// The pid of server `index` if its pid file names a live server process.
pub fn running_pid(cluster: &ClusterDir, index: u32) -> Option<i32> {
    let text = fs::read_to_string(cluster.server_dir(index).join(PID_FILE)).ok()?;
    let pid: i32 = text.trim().parse().ok()?;
    let alive = test_kill_process(Pid::from_raw(pid)?).is_ok();
    let zombie = fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')))
        .unwrap_or(true);
    (alive && !zombie).then_some(pid)
}

/// Spawns server `index` detached (own process group, output appended to its log file).
pub fn spawn_server(cluster: &ClusterDir, index: u32, command: &ServerCommand) -> Result<Child> {
    let dir = cluster.server_dir(index);
    fs::create_dir_all(&dir).map_err(|e| Error::io(format!("cannot create {}: {e}", dir.display())))?;
    let log_path = dir.join(LOG_FILE);
    let log = fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log_path)
        .map_err(|e| Error::io(format!("cannot open {}: {e}", log_path.display())))?;
    let log_err =
        log.try_clone().map_err(|e| Error::io(format!("cannot open {}: {e}", log_path.display())))?;
    Command::new(&command.program)
        .args(&command.args)
        .arg("--cluster")
        .arg(&cluster.dir)
        .arg("--index")
        .arg(index.to_string())
        .stdin(Stdio::null())
        .stdout(log)
        .stderr(log_err)
        .process_group(0)
        .spawn()
        .map_err(|e| Error::io(format!("cannot start {}: {e}", command.program.display())))
}

/// Waits until server `index` answers an authenticated ping; fails early if `child` exits.
pub async fn wait_ready(
    client: &Client,
    index: u32,
    mut child: Option<&mut Child>,
    timeout: Duration,
) -> Result<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let error = match client.ping(index).await {
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        if let Some(child) = child.as_deref_mut()
            && let Ok(Some(status)) = child.try_wait()
        {
            return Err(Error::io(format!(
                "server {index} exited ({status}) while starting; see {}",
                client.cluster().server_dir(index).join(LOG_FILE).display()
            )));
        }
        if Instant::now() > deadline {
            return Err(Error::io(format!(
                "server {index} did not answer within {} s: {error}",
                timeout.as_secs()
            )));
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// Server index, pid, and whether it needed SIGKILL.
pub type Stopped = (u32, i32, bool);

/// Sends SIGTERM to every running server, waits up to `grace` for them to exit, then SIGKILLs.
pub fn stop_cluster(cluster: &ClusterDir, grace: Duration) -> Result<Vec<Stopped>> {
    let mut running = Vec::new();
    for index in 0..cluster.config.server_count() {
        if let Some(pid) = running_pid(cluster, index) {
            signal(pid, Signal::TERM)?;
            running.push((index, pid));
        }
    }
    let deadline = Instant::now() + grace;
    let mut stopped = Vec::new();
    for (index, pid) in running {
        let mut killed = false;
        while running_pid(cluster, index) == Some(pid) {
            if Instant::now() > deadline {
                signal(pid, Signal::KILL)?;
                killed = true;
                std::thread::sleep(Duration::from_millis(50));
                break;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = fs::remove_file(cluster.server_dir(index).join(PID_FILE));
        stopped.push((index, pid, killed));
    }
    Ok(stopped)
}

fn signal(pid: i32, signal: Signal) -> Result<()> {
    let target = Pid::from_raw(pid).ok_or_else(|| Error::invalid(format!("bad pid {pid}")))?;
    match kill_process(target, signal) {
        Ok(()) | Err(rustix::io::Errno::SRCH) => Ok(()),
        Err(e) => Err(Error::io(format!("cannot signal server process {pid}: {e}"))),
    }
}

/// Writes this process's pid for `stop` (atomically, so `stop` never reads half a number).
pub fn write_pid_file(cluster: &ClusterDir, index: u32) -> Result<PathBuf> {
    let dir = cluster.server_dir(index);
    fs::create_dir_all(&dir).map_err(|e| Error::io(format!("cannot create {}: {e}", dir.display())))?;
    let path = dir.join(PID_FILE);
    let tmp = dir.join(".pid.tmp");
    fs::write(&tmp, format!("{}\n", std::process::id()))
        .and_then(|()| fs::rename(&tmp, &path))
        .map_err(|e| Error::io(format!("cannot write {}: {e}", path.display())))?;
    Ok(path)
}

/// A server process this call started.
pub struct Started {
    pub index: u32,
    pub child: Child,
}

/// Creates or loads the cluster in `dir` and starts every server that is not running, waiting
/// until each answers. Returns the cluster and the processes started now. If any server fails to
/// start, the ones this call started are stopped again: nothing is left half-started.
pub fn start_cluster(
    dir: &Path,
    plan: &ClusterPlan,
    command: &ServerCommand,
) -> Result<(ClusterDir, Vec<Started>)> {
    let cluster = init_cluster(dir, plan)?;
    let mut started = Vec::new();
    for index in 0..cluster.config.server_count() {
        if running_pid(&cluster, index).is_none() {
            match spawn_server(&cluster, index, command) {
                Ok(child) => started.push(Started { index, child }),
                Err(e) => {
                    abandon(&cluster, &mut started);
                    return Err(e);
                }
            }
        }
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start a runtime: {e}")))?;
    let ready = runtime.block_on(async {
        let client = Client::connect(&cluster);
        for server in &mut started {
            wait_ready(&client, server.index, Some(&mut server.child), Duration::from_secs(20)).await?;
        }
        Ok::<_, Error>(())
    });
    if let Err(e) = ready {
        abandon(&cluster, &mut started);
        return Err(e);
    }
    Ok((cluster, started))
}

/// Stops servers this start launched (SIGTERM, SIGKILL after a grace period) and removes their
/// pid files.
fn abandon(cluster: &ClusterDir, started: &mut [Started]) {
    for server in started.iter() {
        if let Some(pid) = Pid::from_raw(server.child.id() as i32) {
            let _ = kill_process(pid, Signal::TERM);
        }
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    for server in started.iter_mut() {
        while matches!(server.child.try_wait(), Ok(None)) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(20));
        }
        if matches!(server.child.try_wait(), Ok(None)) {
            let _ = server.child.kill();
        }
        let _ = server.child.wait();
        let pid_file = cluster.server_dir(server.index).join(PID_FILE);
        if fs::read_to_string(&pid_file).is_ok_and(|text| text.trim() == server.child.id().to_string()) {
            let _ = fs::remove_file(pid_file);
        }
    }
}

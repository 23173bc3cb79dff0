//! A private single-node Slurm for the launcher tests: munged, slurmctld and slurmd, started by the
//! test in its own temporary directory, with this host as controller and node, and stopped when
//! the cluster is dropped — after its jobs are cancelled, also when the test fails.
//!
//! Concurrent test runs on one machine cannot collide, so no lock is needed: every cluster has its
//! own munge socket and key, its own controller and node ports (free ones asked from the kernel; a
//! port taken in between fails the start, which is retried with new ports), its own spool, state,
//! log and temporary (PMIx) directories, and job ids starting at a number derived from its
//! controller port (PMIx names its files after the job). The daemons run in the foreground as
//! children of the test thread and get SIGKILL if that thread dies (`setpriv --pdeathsig`), so a
//! cluster lives on the thread that started it.

use super::mpirun::{LIMIT, run_within};
use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

/// How long the daemons may take to bring the node up.
const START_LIMIT: Duration = Duration::from_secs(60);
/// Starts retried when a daemon exits at once (a port taken between choosing and binding it).
const START_TRIES: usize = 3;

pub struct Slurm {
    dir: tempfile::TempDir,
    conf: PathBuf,
    /// Stopped in reverse order: slurmd, slurmctld, munged.
    daemons: Vec<(&'static str, Child)>,
}

impl Slurm {
    /// A running cluster whose node is idle and takes jobs. Panics with the daemons' logs when it
    /// cannot start.
    #[track_caller]
    pub fn start() -> Slurm {
        let mut failures = String::new();
        for _ in 0..START_TRIES {
            let mut slurm = Slurm::configure();
            match slurm.launch() {
                Ok(()) => return slurm,
                Err(why) => failures += &format!("{why}\n{}\n", slurm.logs()),
            }
        }
        panic!("the test's Slurm did not start ({START_TRIES} tries):\n{failures}");
    }

    /// The temporary directory with its munge key, slurm.conf and the directories it names.
    fn configure() -> Slurm {
        let dir = tempfile::Builder::new().prefix("canopy-slurm-").tempdir().unwrap();
        // munged refuses a socket in a directory others cannot search.
        std::fs::set_permissions(dir.path(), std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        for sub in ["spool", "state", "log", "tmp"] {
            std::fs::create_dir(dir.path().join(sub)).unwrap();
        }
        let key = dir.path().join("munge.key");
        let out =
            Command::new("mungekey").arg("--create").arg(format!("--keyfile={}", key.display())).output();
        let out = out.expect("mungekey (package munge) is installed by scripts/setup");
        assert!(out.status.success(), "mungekey: {}", String::from_utf8_lossy(&out.stderr));
        let conf = dir.path().join("slurm.conf");
        // Both listeners held until both ports are known: two different ports.
        let (controller, node) = (free_port(), free_port());
        let ports = (controller.local_addr().unwrap().port(), node.local_addr().unwrap().port());
        std::fs::write(&conf, slurm_conf(dir.path(), ports.0, ports.1)).unwrap();
        Slurm { dir, conf, daemons: Vec::new() }
    }

    fn launch(&mut self) -> Result<(), String> {
        let d = self.dir.path().to_path_buf();
        let conf = self.conf.display().to_string();
        let munged = [
            "munged",
            "--foreground",
            &format!("--socket={}", d.join("munge.sock").display()),
            &format!("--key-file={}", d.join("munge.key").display()),
            &format!("--pid-file={}", d.join("munged.pid").display()),
            &format!("--seed-file={}", d.join("munged.seed").display()),
            &format!("--log-file={}", d.join("log/munged.log").display()),
        ];
        self.spawn("munged", &munged)?;
        self.wait_for("munge's socket", || d.join("munge.sock").exists())?;
        self.spawn("slurmctld", &["slurmctld", "-D", "-f", &conf])?;
        self.spawn("slurmd", &["slurmd", "-D", "-f", &conf])?;
        let mut sinfo = self.command("sinfo");
        sinfo.args(["--noheader", "--Node", "--format=%T"]);
        self.wait_for("the node to be idle", || {
            sinfo.output().is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "idle")
        })
    }

    /// Starts daemon `name` in the foreground, its output in `log/NAME.out`.
    fn spawn(&mut self, name: &'static str, argv: &[&str]) -> Result<(), String> {
        let log = File::create(self.dir.path().join(format!("log/{name}.out"))).unwrap();
        let child = Command::new("setpriv")
            .args(["--pdeathsig", "KILL", "--"])
            .args(argv)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .map_err(|e| {
                format!("{name}: {e} (slurmctld, slurmd and munge are installed by scripts/setup)")
            })?;
        self.daemons.push((name, child));
        Ok(())
    }

    /// Polls `ready` until it holds; fails when a daemon has exited or past [`START_LIMIT`].
    fn wait_for(&mut self, what: &str, mut ready: impl FnMut() -> bool) -> Result<(), String> {
        let started = Instant::now();
        loop {
            for (name, child) in &mut self.daemons {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("{name} exited ({status}) while waiting for {what}"));
                }
            }
            if ready() {
                return Ok(());
            }
            if started.elapsed() > START_LIMIT {
                return Err(format!("no {what} within {START_LIMIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// A Slurm client command (`srun`, `sbatch`, `squeue`…) talking to this cluster only: its
    /// slurm.conf, no job environment inherited from a Slurm the tests might run under, Open MPI
    /// allowed to run as root.
    pub fn command(&self, program: &str) -> Command {
        let mut cmd = Command::new(program);
        for (name, _) in std::env::vars_os() {
            if name.to_string_lossy().starts_with("SLURM_") {
                cmd.env_remove(name);
            }
        }
        cmd.env("SLURM_CONF", &self.conf)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("LC_ALL", "C")
            .current_dir(self.dir.path())
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        cmd
    }

    /// `srun OPTIONS canopy ARGS` (a time limit for Slurm, another for the test), output captured.
    #[track_caller]
    pub fn srun(&self, options: &[&str], args: &[&str]) -> Output {
        let mut cmd = self.command("srun");
        cmd.args(["--time=5", "--overcommit"]).args(options).arg(env!("CARGO_BIN_EXE_canopy")).args(args);
        run_within(cmd, LIMIT)
    }

    /// Submits a batch job of `sbatch OPTIONS` that runs `job` (program, arguments and environment)
    /// and waits for it: `sbatch --wait`'s output, and the job's stdout and stderr.
    #[track_caller]
    pub fn sbatch(&self, options: &[&str], job: &Command) -> (Output, Vec<u8>, Vec<u8>) {
        let script = self.dir.path().join("job.sh");
        std::fs::write(&script, "#!/bin/sh\nexec \"$@\"\n").unwrap();
        let (stdout, stderr) = (self.dir.path().join("job.out"), self.dir.path().join("job.err"));
        let mut cmd = self.command("sbatch");
        for (name, value) in job.get_envs() {
            match value {
                Some(value) => cmd.env(name, value),
                None => cmd.env_remove(name),
            };
        }
        cmd.args(["--wait", "--time=5", "--overcommit"])
            .arg(format!("--output={}", stdout.display()))
            .arg(format!("--error={}", stderr.display()))
            .args(options)
            .arg(&script)
            .arg(job.get_program())
            .args(job.get_args());
        let out = run_within(cmd, LIMIT);
        let read = |path: &Path| std::fs::read(path).unwrap_or_default();
        (out, read(&stdout), read(&stderr))
    }

    /// The daemons' logs, for a failure message.
    pub fn logs(&self) -> String {
        let mut text = String::new();
        let mut names: Vec<_> = std::fs::read_dir(self.dir.path().join("log")).unwrap().flatten().collect();
        names.sort_by_key(|e| e.file_name());
        for entry in names {
            let (name, log) = (entry.file_name(), std::fs::read_to_string(entry.path()).unwrap_or_default());
            let name = name.to_string_lossy();
            let tail: Vec<&str> = log.lines().rev().take(15).collect();
            text += &format!("--- {name}\n{}\n", tail.into_iter().rev().collect::<Vec<_>>().join("\n"));
        }
        text
    }

    /// Cancels every job of the cluster and waits (a while) until they are gone.
    fn cancel_jobs(&self) {
        let Ok(out) = self.command("squeue").args(["--noheader", "--format=%A"]).output() else { return };
        let jobs: Vec<String> =
            String::from_utf8_lossy(&out.stdout).split_whitespace().map(String::from).collect();
        if jobs.is_empty() {
            return;
        }
        let _ = self.command("scancel").args(&jobs).output();
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(20) {
            let out = self.command("squeue").args(["--noheader", "--format=%A"]).output();
            if out.is_ok_and(|o| o.stdout.iter().all(u8::is_ascii_whitespace)) {
                return;
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }
}

impl Drop for Slurm {
    fn drop(&mut self) {
        if self.daemons.len() == 3 {
            self.cancel_jobs();
        }
        for (_, child) in self.daemons.iter_mut().rev() {
            // SIGTERM lets slurmd and slurmctld save their state and munged its seed; SIGKILL after.
            let pid = rustix::process::Pid::from_raw(child.id() as i32).unwrap();
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
            let started = Instant::now();
            while matches!(child.try_wait(), Ok(None)) && started.elapsed() < Duration::from_secs(10) {
                std::thread::sleep(Duration::from_millis(50));
            }
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A listener on a port the kernel picked: free until the listener is dropped.
fn free_port() -> TcpListener {
    TcpListener::bind("0.0.0.0:0").unwrap()
}

/// One node (this host at 127.0.0.1) that is also the controller; every path under `dir`; tasks
/// may outnumber CPUs; MpiDefault left at Slurm's default (none), as on most sites.
fn slurm_conf(dir: &Path, controller_port: u16, node_port: u16) -> String {
    let host = rustix::system::uname().nodename().to_string_lossy().split('.').next().unwrap().to_string();
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    let d = dir.display();
    format!(
        "ClusterName=canopytest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={controller_port}
SlurmdPort={node_port}
FirstJobId={first_job}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={d}/munge.sock
SlurmUser=root
SlurmdUser=root
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
ReturnToService=2
MailProg=/bin/true
StateSaveLocation={d}/state
SlurmdSpoolDir={d}/spool
TmpFS={d}/tmp
SlurmctldPidFile={d}/slurmctld.pid
SlurmdPidFile={d}/slurmd.pid
SlurmctldLogFile={d}/log/slurmctld.log
SlurmdLogFile={d}/log/slurmd.log
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=canopy Nodes={host} Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:4
",
        first_job = u32::from(controller_port) * 1000,
    )
}

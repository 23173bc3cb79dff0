//! `canopy dirsvc ...`: the command-line face of the service. The `canopy` binary nests
//! `DirsvcArgs` as its `dirsvc` subcommand and calls `run`.

mod bench_cmd;
mod cluster_cmds;
mod fsck_cmd;
mod mount_cmd;
mod namespace_cmds;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Subcommand};

use crate::error::{Error, Result};

const EXAMPLES: &str = "\
Examples:
  canopy dirsvc start --servers 4 --data /tmp/ds      start a local 4-server cluster
  export CANOPY_DIRSVC_CLUSTER=/tmp/ds                 point the other commands at it
  canopy dirsvc mkdir /big --partitions 4              a directory spread over 4 servers
  canopy dirsvc create /big/a /big/b
  canopy dirsvc ls -l /big
  canopy dirsvc locate /big a                          which partition and server hold /big/a
  canopy dirsvc bench --cluster /tmp/ds --clients 8    mdtest-style shared-directory benchmark
  canopy dirsvc mount /mnt/ds --daemon                 the namespace as a file system (ls, find...)
  canopy dirsvc umount /mnt/ds
  canopy dirsvc fsck -y                                check and repair link counts and orphans
  canopy dirsvc stop --data /tmp/ds";

/// Scalable distributed directories: metadata servers, GIGA+ partitioned directories, and an
/// mdtest-style benchmark.
#[derive(Args, Debug)]
#[command(after_help = EXAMPLES)]
pub struct DirsvcArgs {
    #[command(subcommand)]
    pub command: DirsvcCommand,
}

#[derive(Subcommand, Debug)]
pub enum DirsvcCommand {
    Serve(cluster_cmds::ServeArgs),
    Start(cluster_cmds::StartArgs),
    Stop(cluster_cmds::StopArgs),
    Status(cluster_cmds::StatusArgs),
    Mkdir(namespace_cmds::MkdirArgs),
    Create(namespace_cmds::CreateArgs),
    Stat(namespace_cmds::StatArgs),
    Ls(namespace_cmds::LsArgs),
    Rm(namespace_cmds::RmArgs),
    Rmdir(namespace_cmds::RmdirArgs),
    Mv(namespace_cmds::MvArgs),
    Ln(namespace_cmds::LnArgs),
    Fsck(fsck_cmd::FsckArgs),
    Locate(namespace_cmds::LocateArgs),
    Bench(bench_cmd::BenchArgs),
    Mount(mount_cmd::MountArgs),
    Umount(mount_cmd::UmountArgs),
}

/// Where the cluster is: its directory (with cluster.json and secret).
#[derive(Args, Debug, Clone)]
pub struct ClusterArg {
    /// ClusterDir directory (or its cluster.json), as created by `canopy dirsvc start`
    #[arg(long, env = "CANOPY_DIRSVC_CLUSTER", value_name = "DIR")]
    pub cluster: PathBuf,
}

/// Runs a `canopy dirsvc` command: exit status 0 on success, 1 on failure (clap exits with 2 on
/// usage errors before this is called).
pub fn run(args: DirsvcArgs) -> ExitCode {
    let result = match args.command {
        DirsvcCommand::Mount(a) => return mount_cmd::mount(a),
        DirsvcCommand::Umount(a) => return mount_cmd::umount(a),
        DirsvcCommand::Fsck(a) => return fsck_cmd::fsck(a),
        DirsvcCommand::Serve(a) => cluster_cmds::serve(a),
        DirsvcCommand::Start(a) => cluster_cmds::start(a),
        DirsvcCommand::Stop(a) => cluster_cmds::stop(a),
        DirsvcCommand::Status(a) => cluster_cmds::status(a),
        DirsvcCommand::Mkdir(a) => namespace_cmds::mkdir(a),
        DirsvcCommand::Create(a) => namespace_cmds::create(a),
        DirsvcCommand::Stat(a) => namespace_cmds::stat(a),
        DirsvcCommand::Ls(a) => namespace_cmds::ls(a),
        DirsvcCommand::Rm(a) => namespace_cmds::rm(a),
        DirsvcCommand::Rmdir(a) => namespace_cmds::rmdir(a),
        DirsvcCommand::Mv(a) => namespace_cmds::mv(a),
        DirsvcCommand::Ln(a) => namespace_cmds::ln(a),
        DirsvcCommand::Locate(a) => namespace_cmds::locate(a),
        DirsvcCommand::Bench(a) => bench_cmd::bench(a),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // One write: a server's error lands whole in its log file.
            let _ =
                std::io::Write::write_all(&mut std::io::stderr(), format!("canopy dirsvc: {e}\n").as_bytes());
            ExitCode::from(1)
        }
    }
}

fn block_on<F: Future>(future: F) -> Result<F::Output> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start a runtime: {e}")))?;
    Ok(runtime.block_on(future))
}

fn parse_mode(text: &str) -> std::result::Result<u32, String> {
    u32::from_str_radix(text, 8)
        .ok()
        .filter(|mode| *mode <= 0o7777)
        .ok_or_else(|| format!("'{text}' is not an octal mode up to 7777"))
}

fn print_json(value: &impl serde::Serialize) {
    println!("{}", serde_json::to_string_pretty(value).expect("report serialises"));
}

//! `canopy dirsvc mount` and `canopy dirsvc umount`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

use canopy_fusekit::duration::{format_duration, parse_duration};
use canopy_fusekit::{Daemon, Foreground, Unmounted, signals};
use clap::Args;

use super::ClusterArg;
use crate::cluster::ClusterDir;
use crate::mount::{MountOptions, session};

const DAEMON: Daemon = Daemon { env: "CANOPY_DIRSVC_MOUNT_BACKGROUND", program: "canopy dirsvc mount" };

/// Mount the service's namespace with FUSE: ls, find, cp, mdtest... work on it unchanged
#[derive(Args, Debug)]
#[command(after_help = "\
Serves in the foreground until unmounted (Ctrl-C, SIGTERM, `canopy dirsvc umount`); --daemon
returns once mounted and prints the server's pid. Before mounting, every server is asked once: a
wrong secret or an unreachable root server fails the mount with the reason. Requests to a server
that is down fail with EIO at once or after --timeout; the mount recovers by itself when the
server is back. A mountpoint that is not empty, or already a mountpoint, is refused unless
-o nonempty (as fusermount did).

Examples:
  canopy dirsvc mount /mnt/ds --cluster /tmp/ds
  pid=$(canopy dirsvc mount /mnt/ds --cluster /tmp/ds --daemon)   scripts: return once mounted
  canopy dirsvc mount /mnt/ds --allow-other --ttl 0                 other users; no kernel caching
  canopy dirsvc mount /mnt/ds --partitions 0                        new directories use every server
  canopy dirsvc umount /mnt/ds")]
pub struct MountArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Where to mount
    mountpoint: PathBuf,
    /// How long the kernel may cache names and attributes (another client's changes show after it)
    #[arg(long, default_value = "1s", value_parser = parse_duration, value_name = "DURATION")]
    ttl: Duration,
    /// How long a request may wait for a server before failing with EIO
    #[arg(long, default_value = "10s", value_parser = parse_duration, value_name = "DURATION")]
    timeout: Duration,
    /// Active partitions of new directories: 1 grows by GIGA+ splits, 0 uses every server at once
    #[arg(long, default_value_t = 1)]
    partitions: u32,
    /// Threads reading requests from the kernel
    #[arg(long, default_value_t = 2, value_name = "N")]
    threads: usize,
    /// Threads driving requests to the servers
    #[arg(long, default_value_t = 2, value_name = "N")]
    workers: usize,
    /// Let other users use the mount (root, or user_allow_other in /etc/fuse.conf)
    #[arg(long)]
    allow_other: bool,
    /// Create FILE (holding the server's pid) once mounted; removed at exit
    #[arg(long, value_name = "FILE")]
    ready_file: Option<PathBuf>,
    /// Return once mounted, serving from a background process whose pid is printed
    #[arg(long)]
    daemon: bool,
    /// With --daemon: append the background server's messages to FILE (default: discard them)
    #[arg(long, value_name = "FILE", requires = "daemon")]
    log: Option<PathBuf>,
    /// Mount options, comma-separated: nonempty (mount over a non-empty directory or a mountpoint)
    #[arg(short = 'o', value_name = "OPTIONS", value_parser = parse_mount_options)]
    options: Option<MountFlags>,
}

/// What `-o` may say.
#[derive(Clone, Copy, Debug, Default)]
struct MountFlags {
    nonempty: bool,
}

fn parse_mount_options(text: &str) -> Result<MountFlags, String> {
    let mut flags = MountFlags::default();
    for option in text.split(',').filter(|o| !o.is_empty()) {
        match option {
            "nonempty" => flags.nonempty = true,
            other => return Err(format!("unknown mount option '{other}' (known: nonempty)")),
        }
    }
    Ok(flags)
}

/// Unmount a dirsvc mount (lazily when it is busy; also one whose server died)
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc umount /mnt/ds")]
pub struct UmountArgs {
    /// The mountpoint
    mountpoint: PathBuf,
}

/// 0 once unmounted, 1 when mounting or serving failed (usage errors exit 2 before this).
pub fn mount(args: MountArgs) -> ExitCode {
    if !args.mountpoint.is_dir() {
        eprintln!("canopy dirsvc mount: {} is not a directory", args.mountpoint.display());
        return ExitCode::from(2);
    }
    if !args.options.unwrap_or_default().nonempty
        && let Err(message) = canopy_fusekit::mounts::check_mountpoint(&args.mountpoint)
    {
        eprintln!("canopy dirsvc mount: {message} (-o nonempty mounts over it)");
        return ExitCode::FAILURE;
    }
    if args.daemon && !DAEMON.is_background_server() {
        return DAEMON.start();
    }
    match serve(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("canopy dirsvc mount: {message}");
            ExitCode::FAILURE
        }
    }
}

fn serve(args: &MountArgs) -> Result<(), String> {
    let cluster = ClusterDir::load(&args.cluster.cluster).map_err(|e| e.to_string())?;
    // Before any thread starts: they all inherit the blocked signals.
    let signals = signals::block().map_err(|e| format!("cannot block signals: {e}"))?;
    let options = MountOptions {
        cluster,
        mountpoint: args.mountpoint.clone(),
        ttl: args.ttl,
        timeout: args.timeout,
        threads: args.threads,
        workers: args.workers,
        initial_partitions: args.partitions,
        allow_other: args.allow_other,
    };
    let prepared = session(&options).map_err(|e| e.to_string())?;
    for warning in &prepared.warnings {
        eprintln!("canopy dirsvc mount: warning: {warning}");
    }
    let banner = format!(
        "{} ({} servers) mounted at {}: ttl {}, timeout {}",
        options.cluster.dir.display(),
        options.cluster.config.servers.len(),
        args.mountpoint.display(),
        format_duration(args.ttl),
        format_duration(args.timeout),
    );
    let foreground = Foreground {
        daemon: DAEMON,
        mountpoint: &args.mountpoint,
        ready_file: args.ready_file.as_deref(),
        log: args.log.as_deref(),
        banner,
    };
    canopy_fusekit::serve(prepared.session, signals, &foreground, || {})
        .map_err(|e| format!("serving {}: {e}", args.mountpoint.display()))?;
    eprintln!("canopy dirsvc mount: unmounted {}", args.mountpoint.display());
    Ok(())
}

pub fn umount(args: UmountArgs) -> ExitCode {
    match canopy_fusekit::unmount(&args.mountpoint) {
        Ok(Unmounted::Now) => ExitCode::SUCCESS,
        Ok(Unmounted::Lazily) => {
            eprintln!(
                "canopy dirsvc umount: {} is busy: detached; it goes away when its last user leaves",
                args.mountpoint.display()
            );
            ExitCode::SUCCESS
        }
        Err(error) => {
            eprintln!("canopy dirsvc umount: {error}");
            ExitCode::FAILURE
        }
    }
}

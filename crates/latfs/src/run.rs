//! `canopy latfs`: validate, mount, serve in the foreground until a signal or an outside unmount,
//! report the counters.

use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use canopy_fusekit::signals::Blocked;
use canopy_fusekit::{Daemon, Foreground, signals, write_atomically};
use fuser::{Filesystem, Session};

use crate::args::Args;
use crate::filesystem::LatencyFs;
use crate::mount;
use crate::options::Options;
use crate::stats::{Snapshot, Stats};
use crate::synthetic::{SyntheticFs, describe};
use canopy_fusekit::duration::format_duration;

const DAEMON: Daemon = Daemon { env: "CANOPY_LATFS_BACKGROUND", program: "canopy latfs" };

/// Runs `canopy latfs`: 0 after a clean unmount, 1 when mounting or serving failed, 2 on usage errors.
pub fn run(args: Args) -> ExitCode {
    if let (true, Some(spec)) = (args.describe, &args.synthetic) {
        println!("{}", describe(spec).to_json(spec));
        return ExitCode::SUCCESS;
    }
    let options = match args.options().and_then(|options| options.validate().map(|()| options)) {
        Ok(options) => options,
        Err(message) => {
            eprintln!("canopy latfs: {message}");
            return ExitCode::from(2);
        }
    };
    if args.daemon && !DAEMON.is_background_server() {
        return DAEMON.start();
    }
    match serve(&args, &options) {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("canopy latfs: {error}");
            ExitCode::FAILURE
        }
    }
}

fn serve(args: &Args, options: &Options) -> io::Result<()> {
    let signals = signals::block()?;
    let stats = Arc::new(Stats::default());
    let cannot_mount = |error: io::Error| {
        io::Error::new(error.kind(), format!("cannot mount at {}: {error}", options.mountpoint.display()))
    };
    match &options.synthetic {
        None => {
            let filesystem = LatencyFs::new(options, Arc::clone(&stats)).map_err(cannot_mount)?;
            let session = mount::session(filesystem, options).map_err(cannot_mount)?;
            serve_session(session, signals, stats, args, options)
        }
        Some(spec) => {
            let filesystem = SyntheticFs::new(spec, options, Arc::clone(&stats));
            let session = mount::session(filesystem, options).map_err(cannot_mount)?;
            serve_session(session, signals, stats, args, options)
        }
    }
}

fn serve_session<FS: Filesystem>(
    session: Session<FS>,
    signals: Blocked,
    stats: Arc<Stats>,
    args: &Args,
    options: &Options,
) -> io::Result<()> {
    let stats_file = args.stats_file.clone();
    let counters = Arc::clone(&stats);
    let stats_writes = AtomicU64::new(0);
    let write_stats_now = move || {
        if let Some(file) = &stats_file {
            let sequence = stats_writes.fetch_add(1, Ordering::Relaxed) + 1;
            let snapshot = counters.snapshot_and_restart_window();
            if let Err(error) = write_stats(file, &snapshot, sequence) {
                eprintln!("canopy latfs: cannot write {}: {error}", file.display());
            }
        }
    };
    let served = match &options.synthetic {
        None => options.source.display().to_string(),
        Some(spec) => format!("synthetic tree {spec} ({} entries)", spec.entries()),
    };
    let banner = format!(
        "{served} mounted at {}: {} per metadata request, {} per data request, {} threads, ttl {}",
        options.mountpoint.display(),
        format_duration(options.delay),
        format_duration(options.data_delay),
        options.threads,
        format_duration(options.ttl),
    );
    let foreground = Foreground {
        daemon: DAEMON,
        mountpoint: &options.mountpoint,
        ready_file: args.ready_file.as_deref(),
        log: args.log.as_deref(),
        banner,
    };
    let served = canopy_fusekit::serve(session, signals, &foreground, write_stats_now);
    eprintln!("canopy latfs: unmounted {}: {}", options.mountpoint.display(), stats.snapshot().summary());
    if let Some(file) = &args.stats_file {
        write_stats(file, &stats.snapshot(), 0)?;
    }
    served
}

/// The counters as JSON; `sequence` numbers the SIGUSR1 snapshots (0 is the final one at exit).
fn write_stats(file: &Path, snapshot: &Snapshot, sequence: u64) -> io::Result<()> {
    let mut json = snapshot.to_json();
    json["sequence"] = sequence.into();
    write_atomically(file, format!("{json}\n").as_bytes())
}

//! `canopy latfs`: validate, mount, serve in the foreground until a signal or an outside unmount,
//! report the counters.

use std::io;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use fuser::SessionUnmounter;

use crate::args::Args;
use crate::daemon;
use crate::duration::format_duration;
use crate::mount;
use crate::options::Options;
use crate::signals::{self, Signal};
use crate::stats::Snapshot;

/// Runs `canopy latfs`: 0 after a clean unmount, 1 when mounting or serving failed, 2 on usage errors.
pub fn run(args: Args) -> ExitCode {
    let options = args.options();
    if let Err(message) = options.validate() {
        eprintln!("canopy latfs: {message}");
        return ExitCode::from(2);
    }
    if args.daemon && !daemon::is_background_server() {
        return daemon::start();
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
    let (mut session, stats) = mount::session(options).map_err(|error| {
        io::Error::new(error.kind(), format!("cannot mount at {}: {error}", options.mountpoint.display()))
    })?;
    let mut unmounter = session.unmount_callable();
    let mountpoint = options.mountpoint.clone();
    let stats_file = args.stats_file.clone();
    let counters = Arc::clone(&stats);
    let stats_writes = AtomicU64::new(0);
    let mut stop_requests = 0;
    signals.handle(move |signal| match signal {
        Signal::Stop => {
            stop_requests += 1;
            if stop_requests > 1 {
                eprintln!("canopy latfs: second stop signal: exiting without waiting for users to leave");
                std::process::exit(1);
            }
            unmount(&mut unmounter, &mountpoint);
        }
        Signal::WriteStats => {
            if let Some(file) = &stats_file {
                let sequence = stats_writes.fetch_add(1, Ordering::Relaxed) + 1;
                let snapshot = counters.snapshot_and_restart_window();
                if let Err(error) = write_stats(file, &snapshot, sequence) {
                    eprintln!("canopy latfs: cannot write {}: {error}", file.display());
                }
            }
        }
    })?;
    if let Some(ready) = &args.ready_file {
        write_atomically(ready, format!("{}\n", std::process::id()).as_bytes())?;
    }
    eprintln!(
        "canopy latfs: {} mounted at {}: {} per metadata request, {} per data request, {} threads, ttl {}",
        options.source.display(),
        options.mountpoint.display(),
        format_duration(options.delay),
        format_duration(options.data_delay),
        options.threads,
        format_duration(options.ttl),
    );
    if daemon::is_background_server() {
        daemon::detach(args.log.as_deref())?;
    }
    let served = session.run();
    if let Some(ready) = &args.ready_file {
        let _ = std::fs::remove_file(ready);
    }
    eprintln!("canopy latfs: unmounted {}: {}", options.mountpoint.display(), stats.snapshot().summary());
    if let Some(file) = &args.stats_file {
        write_stats(file, &stats.snapshot(), 0)?;
    }
    served
}

/// Unmounts; a busy mount is detached lazily, and the server exits when its last user leaves.
fn unmount(unmounter: &mut SessionUnmounter, mountpoint: &Path) {
    if let Err(error) = unmounter.unmount() {
        eprintln!(
            "canopy latfs: cannot unmount {} ({error}); detaching it: the server exits when its last user leaves",
            mountpoint.display()
        );
        if let Err(error) = rustix::mount::unmount(mountpoint, rustix::mount::UnmountFlags::DETACH) {
            eprintln!("canopy latfs: cannot detach {}: {error}", mountpoint.display());
        }
    }
}

/// The counters as JSON; `sequence` numbers the SIGUSR1 snapshots (0 is the final one at exit).
fn write_stats(file: &Path, snapshot: &Snapshot, sequence: u64) -> io::Result<()> {
    let mut json = snapshot.to_json();
    json["sequence"] = sequence.into();
    write_atomically(file, format!("{json}\n").as_bytes())
}

/// Writes through a temporary file and a rename, so a reader never sees half a file.
fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    std::fs::write(&temporary, contents)?;
    std::fs::rename(&temporary, path)
}

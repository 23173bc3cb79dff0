//! Serving a mounted session in the foreground until it is unmounted: SIGINT, SIGTERM and SIGHUP
//! unmount (lazily when the mount is busy; a second one exits at once), SIGUSR1 calls back, a ready
//! file holds the pid while mounted, and a background server lets go of its starter once mounted.

use std::io;
use std::path::{Path, PathBuf};

use fuser::{Filesystem, Session, SessionUnmounter};

use crate::daemon::{Daemon, detach};
use crate::signals::{Blocked, Signal};

/// How a mount is served.
pub struct Foreground<'a> {
    pub daemon: Daemon,
    pub mountpoint: &'a Path,
    /// Created (holding the pid) once mounted, removed when the session ends.
    pub ready_file: Option<&'a Path>,
    /// Where a background server's messages go once it is mounted (default: nowhere).
    pub log: Option<&'a Path>,
    /// Printed once mounted, before a background server detaches.
    pub banner: String,
}

/// Serves `session` until it is unmounted, by a signal or from outside. `signals` must have been
/// blocked before any thread of the file system started (see `signals::block`).
pub fn serve<FS: Filesystem>(
    mut session: Session<FS>,
    signals: Blocked,
    foreground: &Foreground<'_>,
    mut on_usr1: impl FnMut() + Send + 'static,
) -> io::Result<()> {
    crate::signals::ignore_sigpipe()?;
    let mut unmounter = session.unmount_callable();
    let mountpoint = foreground.mountpoint.to_path_buf();
    let program = foreground.daemon.program;
    let mut stop_requests = 0;
    signals.handle(move |signal| match signal {
        Signal::Stop => {
            stop_requests += 1;
            if stop_requests > 1 {
                eprintln!("{program}: second stop signal: exiting without waiting for users to leave");
                std::process::exit(1);
            }
            unmount_or_detach(&mut unmounter, &mountpoint, program);
        }
        Signal::WriteStats => on_usr1(),
    })?;
    if let Some(ready) = foreground.ready_file {
        write_atomically(ready, format!("{}\n", std::process::id()).as_bytes())?;
    }
    eprintln!("{program}: {}", foreground.banner);
    if foreground.daemon.is_background_server() {
        detach(foreground.log)?;
    }
    let served = session.run();
    if let Some(ready) = foreground.ready_file {
        let _ = std::fs::remove_file(ready);
    }
    served
}

/// Unmounts; a busy mount is detached lazily, and the server exits when its last user leaves.
fn unmount_or_detach(unmounter: &mut SessionUnmounter, mountpoint: &PathBuf, program: &str) {
    if let Err(error) = unmounter.unmount() {
        eprintln!(
            "{program}: cannot unmount {} ({error}); detaching it: the server exits when its last user leaves",
            mountpoint.display()
        );
        if let Err(error) = rustix::mount::unmount(mountpoint, rustix::mount::UnmountFlags::DETACH) {
            eprintln!("{program}: cannot detach {}: {error}", mountpoint.display());
        }
    }
}

/// Writes through a temporary file and a rename, so a reader never sees half a file.
pub fn write_atomically(path: &Path, contents: &[u8]) -> io::Result<()> {
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(format!(".{}.tmp", std::process::id()));
    std::fs::write(&temporary, contents)?;
    std::fs::rename(&temporary, path)
}

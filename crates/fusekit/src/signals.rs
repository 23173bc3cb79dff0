//! Signals for the foreground server: SIGINT, SIGTERM and SIGHUP unmount; SIGUSR1 writes the stats file.
//!
//! The signals are blocked before any worker thread starts (threads inherit the mask) and taken by one
//! thread with `sigwait`, so no handler runs in async-signal context.

use std::io;
use std::mem::MaybeUninit;

pub enum Signal {
    Stop,
    WriteStats,
}

/// Makes a long-running process (a server, a mount) immune to SIGPIPE: a peer that hangs up turns
/// into EPIPE on that one connection, handled there, instead of killing the process. The
/// printing tools leave SIGPIPE at its default and die of it quietly, as find does.
pub fn ignore_sigpipe() -> io::Result<()> {
    // SAFETY: setting a signal's disposition to SIG_IGN has no handler to be async-signal-safe.
    if unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) } == libc::SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// The blocked set; hand it to [`Blocked::handle`] once the session is up.
pub struct Blocked {
    set: libc::sigset_t,
}

const STOP_SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Blocks the signals in the calling thread, and so in every thread it starts afterwards.
pub fn block() -> io::Result<Blocked> {
    let mut set = MaybeUninit::<libc::sigset_t>::uninit();
    // SAFETY: sigemptyset initialises the set before any other use; sigaddset and pthread_sigmask get
    // valid pointers to it and valid signal numbers.
    let set = unsafe {
        libc::sigemptyset(set.as_mut_ptr());
        let mut set = set.assume_init();
        for signal in STOP_SIGNALS.into_iter().chain([libc::SIGUSR1]) {
            libc::sigaddset(&mut set, signal);
        }
        let status = libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        if status != 0 {
            return Err(io::Error::from_raw_os_error(status));
        }
        set
    };
    Ok(Blocked { set })
}

impl Blocked {
    /// Calls `handler` on a new thread for each signal that arrives, for the rest of the process.
    pub fn handle(self, mut handler: impl FnMut(Signal) + Send + 'static) -> io::Result<()> {
        std::thread::Builder::new()
            .name("fuse-signals".to_string())
            .spawn(move || {
                loop {
                    let mut signal: libc::c_int = 0;
                    // SAFETY: the set is initialised and the signals in it are blocked in this thread.
                    if unsafe { libc::sigwait(&self.set, &mut signal) } != 0 {
                        continue;
                    }
                    handler(if signal == libc::SIGUSR1 { Signal::WriteStats } else { Signal::Stop });
                }
            })
            .map(drop)
    }
}

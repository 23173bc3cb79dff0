//! `--daemon`: the command re-runs itself as a background server and returns once that server has
//! mounted, relaying its messages until then. The server says "mounted" by writing a marker on the
//! pipe that is its stderr; the starting command succeeds only on that marker. If the pipe ends
//! without it, the server failed, and the command waits for its exit status and passes it on — the
//! pipe closing says nothing by itself (a dying server closes it before it can be reaped).

use std::fs::{File, OpenOptions};
use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitCode, ExitStatus, Stdio};

/// What the background server writes once mounted: NUL bytes never appear in its messages.
const MOUNTED: &[u8] = b"\0canopy-fuse-mounted\0";

/// A file system command that can put its server in the background.
#[derive(Clone, Copy, Debug)]
pub struct Daemon {
    /// Set in the background server's environment (one variable per file system).
    pub env: &'static str,
    /// How messages name the command, e.g. "canopy latfs".
    pub program: &'static str,
}

impl Daemon {
    /// Whether this process is the background server `start` launched.
    pub fn is_background_server(&self) -> bool {
        std::env::var_os(self.env).is_some()
    }

    /// Starts the background server with this process's own arguments, waits until it is mounted
    /// (or has failed), and prints its pid.
    pub fn start(&self) -> ExitCode {
        match self.spawn_and_wait() {
            Ok(code) => code,
            Err(error) => {
                eprintln!("{}: cannot start the background server: {error}", self.program);
                ExitCode::FAILURE
            }
        }
    }

    fn spawn_and_wait(&self) -> io::Result<ExitCode> {
        let mut server = Command::new(std::env::current_exe()?)
            .args(std::env::args_os().skip(1))
            .env(self.env, "1")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            // Its own process group: a Ctrl-C meant for the calling shell does not unmount it.
            .process_group(0)
            .spawn()?;
        let messages = server.stderr.take().expect("stderr is piped");
        if relay_until_mounted(messages, &mut io::stderr())? {
            println!("{}", server.id());
            return Ok(ExitCode::SUCCESS);
        }
        Ok(exit_code(server.wait()?))
    }
}

/// Copies `messages` to `out` until the mounted marker (true) or the end of the stream (false).
fn relay_until_mounted(mut messages: impl Read, out: &mut impl Write) -> io::Result<bool> {
    let mut pending: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let read = messages.read(&mut chunk)?;
        if read == 0 {
            out.write_all(&pending)?;
            return Ok(false);
        }
        pending.extend_from_slice(&chunk[..read]);
        if let Some(at) = pending.windows(MOUNTED.len()).position(|w| w == MOUNTED) {
            out.write_all(&pending[..at])?;
            return Ok(true);
        }
        // Keep what could be the start of a marker split over two reads.
        let keep = (MOUNTED.len() - 1).min(pending.len());
        let flushed = pending.len() - keep;
        out.write_all(&pending[..flushed])?;
        pending.drain(..flushed);
    }
}

/// The server's exit status as this command's: its code, or failure when a signal ended it.
fn exit_code(status: ExitStatus) -> ExitCode {
    match status.code() {
        Some(code @ 1..=255) => ExitCode::from(code as u8),
        _ => ExitCode::FAILURE,
    }
}

/// In the background server, once mounted: tells the starting command, then sends further messages
/// to `log` (or discards them).
pub fn detach(log: Option<&Path>) -> io::Result<()> {
    let target = match log {
        Some(path) => OpenOptions::new().create(true).append(true).open(path)?,
        None => File::options().write(true).open("/dev/null")?,
    };
    let mut stderr = io::stderr().lock();
    stderr.write_all(MOUNTED)?;
    stderr.flush()?;
    rustix::stdio::dup2_stderr(&target)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader that hands out its bytes a few at a time, as a pipe may.
    struct Trickle<'a>(&'a [u8]);

    impl Read for Trickle<'_> {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            let n = self.0.len().min(buf.len()).min(3);
            buf[..n].copy_from_slice(&self.0[..n]);
            self.0 = &self.0[n..];
            Ok(n)
        }
    }

    #[test]
    fn messages_before_the_marker_are_relayed_and_the_marker_is_not() {
        let stream = [b"mounted at /x\n".as_slice(), MOUNTED, b"after"].concat();
        let mut out = Vec::new();
        assert!(relay_until_mounted(Trickle(&stream), &mut out).unwrap());
        assert_eq!(out, b"mounted at /x\n");
    }

    #[test]
    fn a_stream_that_ends_without_the_marker_is_a_failure_relayed_in_full() {
        let stream = b"cannot read cluster secret: no such file\n\0canopy";
        let mut out = Vec::new();
        assert!(!relay_until_mounted(Trickle(stream), &mut out).unwrap());
        assert_eq!(out, stream);
    }
}

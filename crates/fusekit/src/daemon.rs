//! `--daemon`: the command re-runs itself as a background server and returns once that server has
//! mounted, relaying its messages until then. The server reports readiness by letting go of the pipe
//! that is its stderr; if it exits instead, the mount failed and its exit status is passed on.

use std::fs::{File, OpenOptions};
use std::io;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, ExitCode, Stdio};

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
        if let Some(mut messages) = server.stderr.take() {
            io::copy(&mut messages, &mut io::stderr())?;
        }
        Ok(match server.try_wait()? {
            None => {
                println!("{}", server.id());
                ExitCode::SUCCESS
            }
            Some(status) => match status.code() {
                Some(code @ 1..=255) => ExitCode::from(code as u8),
                _ => ExitCode::FAILURE,
            },
        })
    }
}

/// In the background server, once mounted: sends further messages to `log` (or discards them), which
/// closes the pipe the starting command waits on.
pub fn detach(log: Option<&Path>) -> io::Result<()> {
    let target = match log {
        Some(path) => OpenOptions::new().create(true).append(true).open(path)?,
        None => File::options().write(true).open("/dev/null")?,
    };
    rustix::stdio::dup2_stderr(&target)?;
    Ok(())
}

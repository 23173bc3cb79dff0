//! A server's messages: one line each, written with one `write` so that lines from concurrent
//! threads, or from a server killed mid-message, never run together in the log file (stderr is
//! unbuffered, and `eprintln!` writes a line in pieces).

use std::io::Write;

/// Writes `dirsvc server INDEX: MESSAGE` and a newline to stderr.
pub fn line(index: u32, message: &str) {
    let line = format!("dirsvc server {index}: {message}\n");
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

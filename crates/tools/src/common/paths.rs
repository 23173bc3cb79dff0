use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Command-line paths are bytes: any name the kernel accepts, UTF-8 or not.
pub fn os_to_bytes(s: &OsStr) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// Splits a path relative to a walk's roots into its directory (empty at the top) and its name.
pub fn split_relative(path: &[u8]) -> (&[u8], &[u8]) {
    match path.iter().rposition(|&b| b == b'/') {
        Some(i) => (&path[..i], &path[i + 1..]),
        None => (&[], path),
    }
}

/// The C library's text for an I/O error, without Rust's " (os error N)" suffix.
pub fn io_error_message(error: &std::io::Error) -> String {
    match error.raw_os_error() {
        Some(code) => canopy_engine::errno_message(canopy_engine::Errno::from_raw_os_error(code)),
        None => error.to_string(),
    }
}

/// Prints `canopy TOOL: message` on stderr.
pub fn print_error(tool: &str, message: impl std::fmt::Display) {
    eprintln!("canopy {tool}: {message}");
}

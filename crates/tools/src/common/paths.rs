use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;

/// Command-line paths are bytes: any name the kernel accepts, UTF-8 or not.
pub fn os_to_bytes(s: &OsStr) -> Vec<u8> {
    s.as_bytes().to_vec()
}

/// Prints `canopy TOOL: message` on stderr.
pub fn print_error(tool: &str, message: impl std::fmt::Display) {
    eprintln!("canopy {tool}: {message}");
}

/// Prints `canopy TOOL: message` on stderr.
pub fn print_error(tool: &str, message: impl std::fmt::Display) {
    eprintln!("canopy {tool}: {message}");
}

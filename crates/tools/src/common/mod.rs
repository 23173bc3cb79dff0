//! What every tool shares: walk flags, progress display, exit codes, byte-safe paths.

mod exit;
mod owner_names;
mod paths;
mod progress;
pub mod records;
mod walk_args;

pub use exit::Exit;
pub use owner_names::{group_name, user_name};
pub use paths::{io_error_message, os_to_bytes, print_error};
pub use progress::terminal_progress;
pub use walk_args::WalkArgs;

//! What every tool shares: walk flags, progress display, exit codes, byte-safe paths, the
//! counterpart of a directory in another tree, the directories no tool may destroy, and what
//! travels between the processes of a distributed walk (big files' pieces, serde forms).

mod exit;
pub mod guard;
mod lookup;
mod mirror;
mod owner_names;
mod paths;
pub mod pieces;
mod progress;
pub mod records;
mod walk_args;
pub mod wire;

pub use exit::Exit;
pub use lookup::lookup;
pub use mirror::Mirror;
pub use owner_names::{group_name, user_name};
pub use paths::{io_error_message, os_to_bytes, print_error};
pub use progress::{terminal_progress, terminal_progress_with};
pub use walk_args::WalkArgs;

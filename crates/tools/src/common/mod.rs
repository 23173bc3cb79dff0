//! What every tool shares: walk flags, progress display, exit codes, error lines, names quoted
//! as coreutils quotes them, the locale's character set, whether output goes to the user's
//! terminal, the counterpart of a directory in another tree, the directories no tool may destroy,
//! and what travels between the processes of a distributed walk (big files' pieces, serde forms).

mod exit;
pub mod fnmatch;
pub mod guard;
mod locale;
mod lookup;
mod messages;
mod mirror;
pub mod pieces;
mod progress;
mod quote;
pub mod records;
mod walk_args;
pub mod wire;
mod write_errors;

pub use canopy_distwalk::users_terminal;
pub use exit::Exit;
pub use locale::utf8_locale;
pub use lookup::lookup;
pub use messages::print_error;
pub use mirror::Mirror;
pub use progress::Progress;
pub use quote::quote;
pub use walk_args::WalkArgs;
pub use write_errors::{print_stdout, report_write_errors};

/// Standard output for results: under MPI every rank's goes to rank 0, which prints it (call
/// `Cluster::finish_output` once at the end). Collective.
pub fn cluster_stdout(cluster: &canopy_distwalk::Cluster) -> std::sync::Arc<canopy_engine::output::Sink> {
    let mut outputs = cluster.outputs(&[]).expect("stdout alone has nothing to create");
    outputs.swap_remove(0)
}

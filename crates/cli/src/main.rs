//! `canopy`: one parallel engine under find, du, walk, cp, sync, rm and grep.

mod commands;

use clap::Parser;
use std::process::ExitCode;

fn main() -> ExitCode {
    restore_sigpipe();
    let cli = commands::Cli::parse();
    // Joins the MPI job when started by mpirun/srun; it goes out of scope (MPI is finalised) before
    // the process exits.
    let cluster = canopy_dist::Cluster::init();
    cli.command.run(&cluster)
}

/// Rust ignores SIGPIPE, turning `canopy find | head` into write errors; like find and du, die
/// quietly instead when the reader goes away.
fn restore_sigpipe() {
    // SAFETY: setting a signal disposition to the default at startup, before any threads exist.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

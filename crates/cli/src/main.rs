//! `canopy`: one parallel engine under find, du, walk, cp, sync, rm and grep.

mod commands;

#[cfg(not(feature = "tree"))]
compile_error!(
    "canopy is built with the `tree` feature at least (`--features tree`): the tools' shared parts live there"
);

use canopy_distwalk::Cluster;
use canopy_engine::panic_message;
use canopy_tools::common::Exit;
use clap::Parser;
use commands::Command;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::process::ExitCode;

fn main() -> ExitCode {
    let cli = commands::Cli::parse();
    if !ignores_sigpipe(&cli.command) {
        die_quietly_on_sigpipe();
    }
    std::panic::set_hook(Box::new(show_panic));
    let cluster = if joins_cluster(&cli.command) {
        // Joins the MPI job when started by mpirun/srun; it goes out of scope (MPI is finalised)
        // before the process exits.
        match Cluster::init() {
            Ok(cluster) => cluster,
            Err(refused) => {
                eprintln!("canopy: {refused}");
                return Exit::Usage.into();
            }
        }
    } else {
        Cluster::local()
    };
    match catch_unwind(AssertUnwindSafe(|| cli.command.run(&cluster))) {
        Ok(code) => code,
        Err(payload) => ExitCode::from(cluster.fail(&*payload)),
    }
}

/// Rust's runtime reopens a closed standard stream on /dev/null, read-write, before `main` — so a
/// tool started with stdout closed (`canopy find >&-`) would print into nothing and exit 0. This
/// runs earlier (from `.init_array`, as C constructors do) and puts /dev/null opened the other way
/// in its place: writes to a closed stdout or stderr fail with EBADF, reads from a closed stdin
/// too, as they would on the closed descriptor — and no file a tool opens can take its number
/// and receive its output.
#[used]
#[unsafe(link_section = ".init_array")]
static KEEP_CLOSED_STREAMS_CLOSED: extern "C" fn() = keep_closed_streams_closed;

extern "C" fn keep_closed_streams_closed() {
    for fd in 0..=2 {
        // SAFETY: plain system calls on the process's first three descriptors, before any thread.
        unsafe {
            if libc::fcntl(fd, libc::F_GETFD) == -1 && *libc::__errno_location() == libc::EBADF {
                let opposite = if fd == 0 { libc::O_WRONLY } else { libc::O_RDONLY };
                // The lowest free descriptor: `fd` itself, the lower ones being open by now.
                libc::open(c"/dev/null".as_ptr(), opposite | libc::O_CLOEXEC);
            }
        }
    }
}

/// The subcommands that run on every rank of an MPI job (the others are one process wherever
/// they are started, and are not refused under a launcher).
fn joins_cluster(command: &Command) -> bool {
    match command {
        #[cfg(feature = "dirsvc")]
        Command::Dirsvc(_) => false,
        #[cfg(feature = "latfs")]
        Command::Latfs(_) => false,
        #[cfg(feature = "report")]
        Command::Report(_) => false,
        Command::Completions { .. } => false,
        _ => true,
    }
}

/// Servers, mounts and other long-running processes keep SIGPIPE ignored (Rust's default): a
/// client or reader that hangs up must cost one connection or one write (EPIPE, handled there),
/// never the process. (Sockets never raise SIGPIPE here — Rust sends with MSG_NOSIGNAL — but a
/// closed stdout or stderr pipe, or a child's pipe, does.)
fn ignores_sigpipe(command: &Command) -> bool {
    match command {
        #[cfg(feature = "dirsvc")]
        Command::Dirsvc(args) => {
            use canopy_dirsvc::cli::DirsvcCommand;
            matches!(
                args.command,
                DirsvcCommand::Serve(_)
                    | DirsvcCommand::Start(_)
                    | DirsvcCommand::Mount(_)
                    | DirsvcCommand::Bench(_)
            )
        }
        #[cfg(feature = "latfs")]
        Command::Latfs(_) => true,
        #[cfg(feature = "monitor")]
        Command::Monitor(_) => true,
        _ => false,
    }
}

/// The printing tools die quietly when their reader goes away, as find, du, grep and cp do:
/// `canopy find | head` ends canopy by SIGPIPE instead of with write errors.
fn die_quietly_on_sigpipe() {
    // SAFETY: setting a signal disposition to the default at startup, before any threads exist.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

/// Every panic, on any thread, is shown as one line (and a backtrace with RUST_BACKTRACE=1); what
/// happens next — the walk stopping, the job being aborted — is said by [`Cluster::fail`].
fn show_panic(info: &std::panic::PanicHookInfo<'_>) {
    let thread = std::thread::current();
    let location = info.location().map(|l| format!(" at {l}")).unwrap_or_default();
    eprintln!(
        "canopy: thread '{}' panicked{location}: {}",
        thread.name().unwrap_or("unnamed"),
        panic_message(info.payload())
    );
    let backtrace = std::backtrace::Backtrace::capture();
    if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
        eprintln!("{backtrace}");
    }
}

#[cfg(all(test, feature = "dirsvc", feature = "latfs", feature = "monitor", feature = "report"))]
mod tests {
    use super::*;

    fn command(argv: &[&str]) -> Command {
        commands::Cli::try_parse_from(argv).expect("valid arguments").command
    }

    #[test]
    fn only_servers_mounts_and_long_running_clients_ignore_sigpipe() {
        for long_running in [
            &["canopy", "dirsvc", "serve", "--cluster", "/c", "--index", "0"][..],
            &["canopy", "dirsvc", "mount", "--cluster", "/c", "/mnt"],
            &["canopy", "dirsvc", "start", "--servers", "2", "--data", "/d"],
            &["canopy", "dirsvc", "bench", "--cluster", "/c"],
            &["canopy", "latfs", "/src", "/mnt"],
            &["canopy", "monitor", "--listen", "127.0.0.1:0"],
        ] {
            assert!(ignores_sigpipe(&command(long_running)), "{long_running:?}");
        }
        for printing in [
            &["canopy", "find", "/"][..],
            &["canopy", "du", "/"],
            &["canopy", "grep", "x", "/"],
            &["canopy", "walk", "/"],
            &["canopy", "cmp", "/a", "/b"],
            &["canopy", "cp", "/a", "/b"],
            &["canopy", "rm", "/a"],
            &["canopy", "dirsvc", "ls", "--cluster", "/c", "/"],
            &["canopy", "ptail", "-f", "/var/log/syslog"],
            &["canopy", "completions", "bash"],
        ] {
            assert!(!ignores_sigpipe(&command(printing)), "{printing:?}");
        }
    }

    #[test]
    fn tree_and_group_tools_join_the_cluster_servers_do_not() {
        assert!(joins_cluster(&command(&["canopy", "find", "/"])));
        assert!(joins_cluster(&command(&["canopy", "pcp", "/etc/hosts", "/tmp/"])));
        assert!(!joins_cluster(&command(&["canopy", "latfs", "/src", "/mnt"])));
        assert!(!joins_cluster(&command(&["canopy", "report", "stats.json"])));
    }
}

//! `canopy dirsvc fsck`.

use std::process::ExitCode;

use clap::Args;

use super::{ClusterArg, block_on, print_json};
use crate::client::Client;
use crate::cluster::ClusterDir;
use crate::fsck::{self, FsckReport};

/// Check link counts, names, orphans and directories over the whole cluster; repair with -y
#[derive(Args, Debug)]
#[command(after_help = "\
Run it on an idle cluster, as e2fsck on an unmounted file system: it settles every hard link in
progress, waits for the servers to deliver what they hold for each other, reads every server and
checks: each file's link count against its names, unlinked files no mount has open any more,
names that lead nowhere, data without a file, directories' names, parent pointers and
subdirectory counts. A repair applies only to an object still as the check saw it.

Exit status (as e2fsck): 0 no problem, 1 problems found and all repaired, 4 problems left,
8 the check could not run (a server is down).

Examples:
  canopy dirsvc fsck --cluster /tmp/ds          check only
  canopy dirsvc fsck --cluster /tmp/ds -y       check and repair
  canopy dirsvc fsck --json")]
pub struct FsckArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Repair what the check finds
    #[arg(short = 'y', long)]
    repair: bool,
    /// Print the report as JSON
    #[arg(long)]
    json: bool,
}

pub fn fsck(args: FsckArgs) -> ExitCode {
    let report = ClusterDir::load(&args.cluster.cluster)
        .and_then(|cluster| block_on(async { fsck::run(&Client::connect(&cluster), args.repair).await })?);
    let report = match report {
        Ok(report) => report,
        Err(e) => {
            eprintln!("canopy dirsvc fsck: {e}");
            return ExitCode::from(8);
        }
    };
    if args.json {
        print_json(&report);
    } else {
        print_report(&report, args.repair);
    }
    ExitCode::from(report.exit_code())
}

fn print_report(report: &FsckReport, repair: bool) {
    let findings = &report.findings;
    for problem in &findings.problems {
        let what = if repair { problem.what.clone() } else { unrepaired(&problem.what) };
        println!("{what}");
    }
    for refused in &report.not_repaired {
        println!("NOT REPAIRED: {refused}");
    }
    println!(
        "{} files, {} names, {} directories checked; {} unlinked files still open; {} problems, {} repaired",
        findings.inodes,
        findings.entries,
        findings.directories,
        findings.open_unlinked,
        findings.problems.len(),
        report.repaired
    );
}

/// A problem's description without its repair ("...: removed") when nothing is repaired.
fn unrepaired(what: &str) -> String {
    match what.rsplit_once(": ") {
        Some((problem, _)) => format!("{problem} (repair with -y)"),
        None => what.to_string(),
    }
}

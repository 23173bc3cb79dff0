//! `canopy pcp SRC DEST`: multicast one file to DEST on every host. The source is read once and streamed
//! down the aggregation tree in chunks (posted writes, a window of them in flight), written under a
//! temporary name on each host, verified by SHA-256 digests computed on the hosts (only digests come back
//! up), and renamed over DEST where it verified. Failures are reported grouped by host set.

use crate::hosts::{HostsArgs, with_runtime};
use crate::problems::Problems;
use crate::units;
use crate::verify::{SpanDigests, verify};
use canopy_group::{FileOp, Group, GroupError, OpenFlags, Registry, Runtime, Transport, Whence};
use canopy_nodeset::RangeSet;
use canopy_transport::World;
use canopy_util::size::parse_size;
use clap::Args;
use std::ffi::CString;
use std::fs::File;
use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::ExitCode;

const EXAMPLES: &str = "\
Examples:
  canopy pcp app.conf /etc/app.conf                      # to every host
  canopy pcp job.tar /scratch/                           # into a directory: /scratch/job.tar
  canopy pcp big.dat /data/big.dat --hosts 16 --host-root /srv/sim/{rank}
  canopy pcp image.sif /opt/image.sif --fsync --json

SRC is read once on this machine; DEST is a path under each host's root (ending in / for a
directory). Each host writes a temporary file next to DEST, checks its SHA-256 digests against the
source's and only then renames it over DEST: DEST is the old file or the complete new one, never
half-written. A line sums up what was copied where (-q: none; -v also names the source and the
hosts the way clush --copy -v does); failures are printed on stderr once per distinct error with
the set of hosts that had it.
Exit status: 0 when every host has the copy, 1 when any host failed, 2 on usage errors.";

/// Copy one file to every host (read once, streamed down the tree, verified, renamed into place).
#[derive(Args, Debug, Clone)]
#[command(after_help = EXAMPLES)]
pub struct PcpArgs {
    /// The file to copy (on this machine)
    pub src: PathBuf,

    /// Where to put it on every host (a directory when it ends with /)
    pub dest: String,

    /// Size of the pieces streamed down the tree (suffixes K, M, G)
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    pub chunk_size: u64,

    /// Pieces in flight before waiting for every host to acknowledge
    #[arg(long, value_name = "N", default_value_t = 8, value_parser = clap::value_parser!(u64).range(1..))]
    pub window: u64,

    /// Flush each copy to stable storage before renaming it into place
    #[arg(long)]
    pub fsync: bool,

    /// Skip the read-back checksum on the hosts
    #[arg(long)]
    pub no_verify: bool,

    /// Print a JSON report on stdout
    #[arg(long)]
    pub json: bool,

    /// Also name the source and the hosts it went to
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,

    /// No summary line
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub hosts: HostsArgs,
}

/// Runs `canopy pcp`.
pub fn run(args: PcpArgs, cluster: &World) -> ExitCode {
    let mut err = std::io::stderr().lock();
    let (source, target) = match prepare(&args) {
        Ok(prepared) => prepared,
        Err((code, message)) => {
            let _ = writeln!(err, "canopy pcp: {message}");
            return ExitCode::from(code);
        }
    };
    let started = std::time::Instant::now();
    let outcome =
        with_runtime(&args.hosts, cluster, Registry::new(), |runtime| copy(runtime, source, &target));
    let copied = match outcome {
        // Another MPI rank: it served its host; rank 0 reports for the job.
        Ok(None) => return ExitCode::SUCCESS,
        Ok(Some(Ok(copied))) => copied,
        Ok(Some(Err(message))) => {
            let _ = writeln!(err, "canopy pcp: {message}");
            return ExitCode::from(1);
        }
        Err(usage) => {
            let _ = writeln!(err, "canopy pcp: {usage}");
            return ExitCode::from(2);
        }
    };
    let _ = copied.problems.print("pcp", &mut err);
    let seconds = started.elapsed().as_secs_f64();
    if args.json {
        let report = serde_json::json!({
            "source": args.src.display().to_string(),
            "dest": target.dest,
            "bytes": copied.bytes,
            "copied": copied.hosts,
            "copied_count": copied.host_count,
            "failures": copied.problems.json(),
            "seconds": seconds,
        });
        println!("{report}");
    } else if copied.host_count > 0 && !args.quiet {
        if args.verbose {
            println!("`{}' -> {}:`{}'", args.src.display(), copied.hosts, target.dest);
        }
        println!(
            "pcp: {} to {} on {} ({} {}) in {}",
            units::bytes(copied.bytes as f64),
            target.dest,
            copied.hosts,
            copied.host_count,
            if copied.host_count == 1 { "host" } else { "hosts" },
            units::duration(seconds)
        );
    }
    ExitCode::from(if copied.problems.is_empty() { 0 } else { 1 })
}

/// What to write where.
struct CopyTarget {
    /// DEST as a group path.
    dest: String,
    /// The temporary file next to DEST.
    temp: String,
    /// DEST's file name, which the temporary file is renamed to.
    name: Vec<u8>,
    mode: u32,
    chunk: u64,
    window: u64,
    fsync: bool,
    verify: bool,
}

fn prepare(args: &PcpArgs) -> Result<(File, CopyTarget), (u8, String)> {
    let source =
        File::open(&args.src).map_err(|e| (1, format!("{}: {}", args.src.display(), strerror(&e))))?;
    let meta = source.metadata().map_err(|e| (1, format!("{}: {}", args.src.display(), strerror(&e))))?;
    if !meta.is_file() {
        return Err((1, format!("{}: not a regular file", args.src.display())));
    }
    let dest = if args.dest.ends_with('/') {
        let name = args.src.file_name().ok_or((2, format!("{}: no file name", args.src.display())))?;
        let name = name.to_str().ok_or((2, format!("{}: the name is not UTF-8", args.src.display())))?;
        format!("{}{name}", args.dest)
    } else {
        args.dest.clone()
    };
    let (dir, name) = match dest.rsplit_once('/') {
        Some((dir, name)) => (dir, name),
        None => ("", dest.as_str()),
    };
    if name.is_empty() || name == "." || name == ".." {
        return Err((2, format!("{dest}: not a file name")));
    }
    let temp_name = canopy_util::temp_name::temp_name(
        &CString::new(name).map_err(|_| (2, format!("{dest}: NUL in the name")))?,
    );
    let temp = format!("{dir}/{}", temp_name.to_str().expect("hex digits"));
    let target = CopyTarget {
        dest: dest.clone(),
        temp,
        name: name.as_bytes().to_vec(),
        mode: meta.permissions().mode() & 0o7777,
        chunk: args.chunk_size,
        window: args.window,
        fsync: args.fsync,
        verify: !args.no_verify,
    };
    Ok((source, target))
}

pub(crate) fn strerror(e: &std::io::Error) -> String {
    canopy_util::errors::io_error_message(e)
}

/// What a copy achieved.
pub struct Copied {
    /// Bytes read from the source.
    pub bytes: u64,
    /// The hosts that have the new file, as a NodeSet.
    pub hosts: String,
    /// How many.
    pub host_count: u64,
    /// What failed where.
    pub problems: Problems,
}

/// Copies `source` to every host as `target` says. `Err` when the copy could not run at all.
fn copy<T: Transport>(runtime: &Runtime<T>, mut source: File, target: &CopyTarget) -> Result<Copied, String> {
    let mut problems = Problems::about(&target.dest);
    // Read-write: each host reads its copy back to verify it.
    let flags = OpenFlags::RDWR | OpenFlags::CREAT | OpenFlags::TRUNC | OpenFlags::BESTEFFORT;
    let mut temp = match runtime.gopen_mode(&target.temp, flags, target.mode) {
        Ok(group) => group,
        Err(GroupError::Open(report)) => {
            problems.add_open(&report, "cannot create");
            return Ok(Copied { bytes: 0, hosts: String::new(), host_count: 0, problems });
        }
        Err(other) => return Err(other.to_string()),
    };
    problems.add_open(temp.open_report(), "cannot create");
    let mut ok = temp.all_members();
    let streamed = stream(&mut temp, &mut source, target, &mut ok, &mut problems);
    let digests = match streamed {
        Ok(digests) => digests,
        Err(e) => {
            // The source failed mid-way: no host may get a partial copy.
            let all = temp.all_members();
            remove_temporaries(&mut temp, &all, &mut problems);
            return Err(format!("{}: {e}", target.dest));
        }
    };
    let bytes = digests.bytes;
    let length = temp.run_on(FileOp::Lseek { offset: 0, whence: Whence::Cur }, &ok);
    let (outcome, failed) = problems.check(&temp, length, "write").map_err(|e| e.to_string())?;
    ok = ok.difference(&failed);
    if outcome.status_value().ok().flatten().is_some_and(|end| end as u64 != bytes) {
        return Err(format!("{}: the hosts' copies do not end at {bytes} bytes", target.dest));
    }
    if target.fsync {
        ok = step(&mut temp, FileOp::Fsync, &ok, "fsync", &mut problems)?;
    }
    if target.verify {
        ok = verify(&mut temp, &digests, &ok, &mut problems)?;
    }
    ok = step(&mut temp, FileOp::Rename { name: target.name.clone() }, &ok, "rename", &mut problems)?;
    let failed = temp.all_members().difference(&ok);
    remove_temporaries(&mut temp, &failed, &mut problems);
    let hosts = temp.hosts_of(&ok);
    let (host_count, hosts) = (hosts.len(), hosts.to_string());
    let closed = temp.close();
    if let Err(GroupError::Members(outcome)) = &closed {
        // Hosts already reported silent are not reported again.
        for failure in
            outcome.failures().iter().filter(|f| f.status != canopy_group::MemberStatus::Unreachable)
        {
            problems.add(&failure.hosts, format!("{}: close: {}", target.dest, failure.status));
        }
    }
    Ok(Copied { bytes, hosts, host_count, problems })
}

/// Runs `op` on the members in `ok` and returns those that succeeded.
pub(crate) fn step<T: Transport>(
    group: &mut Group<'_, T>,
    op: FileOp,
    ok: &RangeSet,
    what: &str,
    problems: &mut Problems,
) -> Result<RangeSet, String> {
    if ok.is_empty() {
        return Ok(RangeSet::new());
    }
    let result = group.run_on(op, ok);
    let (_, failed) = problems.check(group, result, what).map_err(|e| e.to_string())?;
    Ok(ok.difference(&failed))
}

pub(crate) fn remove_temporaries<T: Transport>(
    group: &mut Group<'_, T>,
    members: &RangeSet,
    problems: &mut Problems,
) {
    let plan_temp = group.gfiles().first().map(|m| m.path.display().to_string()).unwrap_or_default();
    if !members.is_empty() {
        let result = group.run_on(FileOp::Unlink, members);
        // Hosts that already failed are not told twice; a temporary that cannot go is worth a line.
        if let Err(GroupError::Members(outcome)) = result {
            for failure in
                outcome.failures().iter().filter(|f| f.status != canopy_group::MemberStatus::Unreachable)
            {
                problems.add(
                    &failure.hosts,
                    format!("{}: cannot remove the temporary file: {}", plan_temp, failure.status),
                );
            }
        }
    }
}

/// Reads the source once and posts it down the tree in chunks, acknowledging every `window`-th chunk (so
/// at most a window is in flight and failing hosts drop out early).
fn stream<T: Transport>(
    temp: &mut Group<'_, T>,
    source: &mut File,
    target: &CopyTarget,
    ok: &mut RangeSet,
    problems: &mut Problems,
) -> std::io::Result<SpanDigests> {
    let mut digests = SpanDigests::default();
    let mut buffer = vec![0u8; target.chunk as usize];
    for chunk in 1u64.. {
        let n = fill(source, &mut buffer)?;
        if n == 0 {
            break;
        }
        let data = &buffer[..n];
        digests.update(data);
        if ok.is_empty() {
            continue;
        }
        let op = FileOp::Write { data: data.to_vec() };
        if chunk % target.window == 0 {
            let result = temp.run_on(op, ok);
            match problems.check(temp, result, "write") {
                Ok((_, failed)) => *ok = ok.difference(&failed),
                Err(e) => return Err(std::io::Error::other(e.to_string())),
            }
        } else if let Err(e) = temp.post_on(op, ok) {
            return Err(std::io::Error::other(e.to_string()));
        }
    }
    digests.finish();
    Ok(digests)
}

/// Reads until `buffer` is full or the source ends.
fn fill(source: &mut File, buffer: &mut [u8]) -> std::io::Result<usize> {
    let mut filled = 0;
    while filled < buffer.len() {
        match source.read(&mut buffer[filled..]) {
            Ok(0) => break,
            Ok(n) => filled += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(filled)
}

//! `canopy psync SRC DEST`: rsync's algorithm over a group of hosts (TBON-FS §4.1.1). One group read of
//! every host's copy, with an aggregation that turns each host's bytes into block signatures on the host
//! and groups hosts whose signatures are identical (the sub-groups); the delta against the source is then
//! computed once per sub-group and only the new bytes and block references are written to that sub-group,
//! where each host rebuilds the file from its old copy under a temporary name. Every copy is checked by
//! SHA-256 on its host before it is renamed over DEST.

pub mod delta;
pub mod signature;
mod table;

use crate::hosts::{HostsArgs, with_runtime};
use crate::pcp::{remove_temporaries, step, strerror};
use crate::problems::Problems;
use crate::verify::{SpanDigests, verify};
use canopy_group::aggr::{Classes, Extremes};
use canopy_group::{
    AggrSpec, AggrType, Builtin, FileOp, Group, GroupError, OpKind, OpenFlags, Registry, Runtime, Transport,
    Whence,
};
use canopy_nodeset::{NodeSet, RangeSet};
use canopy_transport::World;
use canopy_util::size::parse_size;
use clap::Args;
use signature::BlockSig;
use std::ffi::CString;
use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::process::ExitCode;
pub use table::{Row, Table};

const EXAMPLES: &str = "\
Examples:
  canopy psync /etc/services /etc/services           # update every host's copy
  canopy psync app.conf /etc/app.conf --hosts 16 --host-root /srv/sim/{rank}
  canopy psync -v model.bin /data/model.bin          # with the sub-groups' table
  canopy psync model.bin /data/model.bin --json      # the report as JSON

Hosts whose copies are identical form one sub-group: its block signatures travel up the tree
once, the delta is computed once, and only new bytes and references to old blocks are sent to
it. Each host rebuilds the file next to DEST, checks its SHA-256 digests and renames it over DEST.
A line on stdout sums up the hosts updated and the bytes sent (-q: none). -v (and --json) adds
the report: one row per sub-group with file size, new bytes, block-reference bytes and what was
sent as a share of the file, as in the TBON-FS paper's Table 3. Failures go to stderr, once per
distinct error with the set of hosts that had it.
Exit status: 0 when every host has the new file, 1 when any host failed, 2 on usage errors.";

/// Update a file on every host with rsync's algorithm: only changed blocks travel, once per sub-group of
/// identical copies.
#[derive(Args, Debug, Clone)]
#[command(after_help = EXAMPLES)]
pub struct PsyncArgs {
    /// The new version of the file (on this machine)
    pub src: PathBuf,

    /// The file to update on every host
    pub dest: String,

    /// Block size of the signatures [default: rsync's, from the file size: 700 B to 128 KiB]
    #[arg(long, value_name = "SIZE", value_parser = parse_size)]
    pub block_size: Option<u64>,

    /// New bytes per group write (suffixes K, M, G)
    #[arg(long, value_name = "SIZE", default_value = "1M", value_parser = parse_size)]
    pub chunk_size: u64,

    /// Flush each copy to stable storage before renaming it into place
    #[arg(long)]
    pub fsync: bool,

    /// Print the report as JSON
    #[arg(long)]
    pub json: bool,

    /// Print the sub-groups' table before the summary
    #[arg(short, long, conflicts_with = "quiet")]
    pub verbose: bool,

    /// No summary line
    #[arg(short, long)]
    pub quiet: bool,

    #[command(flatten)]
    pub hosts: HostsArgs,
}

/// The aggregations psync needs on every host.
pub fn registry() -> Registry {
    let mut registry = Registry::new();
    signature::register(&mut registry);
    registry
}

/// Runs `canopy psync`.
pub fn run(args: PsyncArgs, cluster: &World) -> ExitCode {
    let mut err = std::io::stderr().lock();
    let source = match std::fs::read(&args.src) {
        Ok(data) => data,
        Err(e) => {
            let _ = writeln!(err, "canopy psync: {}: {}", args.src.display(), strerror(&e));
            return ExitCode::from(1);
        }
    };
    let mode = std::fs::metadata(&args.src).map(|m| m.permissions().mode() & 0o7777).unwrap_or(0o644);
    let Some((dir, name)) = split_dest(&args.dest) else {
        let _ = writeln!(err, "canopy psync: {}: not a file name", args.dest);
        return ExitCode::from(2);
    };
    let block = args.block_size.map_or_else(|| signature::block_size(source.len() as u64), |b| b as usize);
    let target = SyncTarget {
        dest: args.dest.clone(),
        temp: format!("{dir}/{}", temp_name(name)),
        name: name.as_bytes().to_vec(),
        mode,
        block,
        chunk: args.chunk_size as usize,
        fsync: args.fsync,
    };
    let started = std::time::Instant::now();
    let synced = with_runtime(&args.hosts, cluster, registry(), |runtime| sync(runtime, &source, &target));
    let Synced { table, problems, hosts } = match synced {
        // Another MPI rank: it served its host; rank 0 reports for the job.
        Ok(None) => return ExitCode::SUCCESS,
        Ok(Some(Ok(done))) => done,
        Ok(Some(Err(message))) => {
            let _ = writeln!(err, "canopy psync: {}: {message}", args.dest);
            return ExitCode::from(1);
        }
        Err(usage) => {
            let _ = writeln!(err, "canopy psync: {usage}");
            return ExitCode::from(2);
        }
    };
    let mut out = std::io::stdout().lock();
    let seconds = started.elapsed().as_secs_f64();
    let printed = if args.json {
        let mut report = table.json();
        report["failures"] = problems.json();
        report["hosts"] = serde_json::json!(hosts.to_string());
        report["seconds"] = serde_json::json!(seconds);
        writeln!(out, "{report}")
    } else {
        let rows = if args.verbose { table.print(&mut out) } else { Ok(()) };
        rows.and_then(|()| match args.quiet || hosts.is_empty() {
            true => Ok(()),
            false => writeln!(out, "{}", table.summary(&args.dest, &hosts, seconds)),
        })
    };
    if let Err(e) = printed {
        let _ = writeln!(err, "canopy psync: cannot write the report: {e}");
    }
    let _ = problems.print("psync", &mut err);
    ExitCode::from(if problems.is_empty() { 0 } else { 1 })
}

fn split_dest(dest: &str) -> Option<(&str, &str)> {
    let (dir, name) = dest.rsplit_once('/').unwrap_or(("", dest));
    (!name.is_empty() && name != "." && name != ".." && !name.contains('\0')).then_some((dir, name))
}

fn temp_name(name: &str) -> String {
    let name = CString::new(name).expect("checked for NUL");
    canopy_util::temp_name::temp_name(&name).to_str().expect("hex digits").to_owned()
}

struct SyncTarget {
    dest: String,
    temp: String,
    name: Vec<u8>,
    mode: u32,
    block: usize,
    chunk: usize,
    fsync: bool,
}

/// A sub-group: hosts whose copies have the same signatures.
struct SubGroup {
    /// Members of the old-copy group (empty for hosts that had no copy).
    old_members: RangeSet,
    /// Ranks of its hosts.
    ranks: RangeSet,
    signatures: Vec<BlockSig>,
}

/// What a sync did.
struct Synced {
    table: Table,
    problems: Problems,
    /// The hosts that have the new file (up to date before, or updated).
    hosts: NodeSet,
}

/// Brings every host's DEST to `source`. `Err` when nothing could run.
fn sync<T: Transport>(runtime: &Runtime<T>, source: &[u8], target: &SyncTarget) -> Result<Synced, String> {
    let mut problems = Problems::about(&target.dest);
    let mut table = Table::new(source.len() as u64, target.block);
    let source_sigs = signature::signatures(source, target.block);
    let mut old = match runtime.gopen(&target.dest, OpenFlags::RDONLY | OpenFlags::BESTEFFORT) {
        Ok(group) => Some(group),
        // No host has a copy (or none answered): everyone gets the whole file.
        Err(GroupError::Open(report)) => {
            add_read_failures(&mut problems, &report);
            None
        }
        Err(other) => return Err(other.to_string()),
    };
    let mut groups = match old.as_mut() {
        Some(old) => {
            let mut groups = read_signatures(old, target, &mut problems)?;
            add_hosts_without_copy(old, &mut groups);
            groups
        }
        None => Vec::new(),
    };
    let (up_to_date, stale): (Vec<SubGroup>, Vec<SubGroup>) =
        groups.drain(..).partition(|g| g.signatures == source_sigs);
    let mut hosts = NodeSet::new();
    for group in &up_to_date {
        let current = old_hosts(&old, &group.old_members);
        hosts = hosts.union(&current);
        table.rows.push(Row::up_to_date(current, source.len() as u64));
    }
    let new_flags = OpenFlags::RDWR | OpenFlags::CREAT | OpenFlags::TRUNC | OpenFlags::BESTEFFORT;
    let temp = match &old {
        Some(_) if stale.is_empty() => return Ok(Synced { table, problems, hosts }),
        Some(_) => {
            let ranks = stale.iter().fold(RangeSet::new(), |all, g| all.union(&g.ranks));
            runtime.gopen_on(&target.temp, new_flags, target.mode, &ranks)
        }
        None => runtime.gopen_mode(&target.temp, new_flags, target.mode),
    };
    let mut temp = match temp {
        Ok(temp) => temp,
        Err(GroupError::Open(report)) => {
            problems.add_open(&report, "cannot create");
            return Ok(Synced { table, problems, hosts });
        }
        Err(other) => return Err(other.to_string()),
    };
    problems.add_open(temp.open_report(), "cannot create");
    // Without any old copy, the one sub-group is every host that could create the file.
    let stale = if old.is_none() {
        let ranks = temp.ranks_of(&temp.all_members());
        vec![SubGroup { old_members: RangeSet::new(), ranks, signatures: Vec::new() }]
    } else {
        stale
    };
    let mut ok = RangeSet::new();
    for group in &stale {
        let members = temp.members_on(&group.ranks);
        if members.is_empty() {
            continue;
        }
        let pieces = delta::delta(source, &group.signatures, target.block);
        table.rows.push(Row::updated(
            temp.hosts_of(&members),
            &pieces,
            source.len() as u64,
            &group.signatures,
        ));
        let written = send(&mut temp, old.as_ref(), pieces, &members, target, &mut problems)?;
        ok = ok.union(&written);
    }
    let length = temp.run_on(FileOp::Lseek { offset: 0, whence: Whence::Cur }, &ok);
    let (_, failed) = problems.check(&temp, length, "write").map_err(|e| e.to_string())?;
    ok = ok.difference(&failed);
    if target.fsync {
        ok = step(&mut temp, FileOp::Fsync, &ok, "fsync", &mut problems)?;
    }
    ok = verify(&mut temp, &SpanDigests::of(source), &ok, &mut problems)?;
    ok = step(&mut temp, FileOp::Rename { name: target.name.clone() }, &ok, "rename", &mut problems)?;
    let failed = temp.all_members().difference(&ok);
    remove_temporaries(&mut temp, &failed, &mut problems);
    let hosts = hosts.union(&temp.hosts_of(&ok));
    Ok(Synced { table, problems, hosts })
}

fn old_hosts<T: Transport>(old: &Option<Group<'_, T>>, members: &RangeSet) -> canopy_nodeset::NodeSet {
    old.as_ref().map(|g| g.hosts_of(members)).unwrap_or_default()
}

/// Reads every copy's block signatures span by span and splits the members into sub-groups whose
/// signatures are equal everywhere.
fn read_signatures<T: Transport>(
    old: &mut Group<'_, T>,
    target: &SyncTarget,
    problems: &mut Problems,
) -> Result<Vec<SubGroup>, String> {
    add_read_failures(problems, old.open_report());
    let mut ok = old.all_members();
    let longest = longest(old, &ok, problems)?;
    let span = target.block * (crate::verify::VERIFY_SPAN as usize / target.block).max(1);
    let spec = AggrSpec::Registered { name: signature::AGGREGATION.into(), params: target.block.to_string() };
    old.gbindaggr(OpKind::Pread, AggrType::Data, spec).map_err(|e| e.to_string())?;
    let mut classes: Vec<(RangeSet, Vec<BlockSig>)> = vec![(ok.clone(), Vec::new())];
    let mut offset = 0u64;
    loop {
        let result = old.run_on(FileOp::Pread { len: span as u64, offset }, &ok);
        let (outcome, failed) = problems.check(old, result, "read").map_err(|e| e.to_string())?;
        ok = ok.difference(&failed);
        let chunk = outcome
            .data()
            .map(|d| d.decode::<Classes<Vec<BlockSig>>>())
            .transpose()
            .map_err(|e| e.to_string())?
            .flatten()
            .map(|c| c.0)
            .unwrap_or_default();
        let mut refined = Vec::new();
        for (members, sigs) in classes {
            for (key, holders) in &chunk {
                let both = members.intersection(holders);
                if !both.is_empty() {
                    let mut longer = sigs.clone();
                    longer.extend_from_slice(key);
                    refined.push((both, longer));
                }
            }
        }
        classes = refined;
        offset += span as u64;
        if offset >= longest || ok.is_empty() {
            break;
        }
    }
    Ok(classes
        .into_iter()
        .map(|(old_members, signatures)| SubGroup {
            ranks: old.ranks_of(&old_members),
            old_members,
            signatures,
        })
        .collect())
}

/// Reports why copies could not be opened, except that they do not exist (those hosts get the whole file).
fn add_read_failures(problems: &mut Problems, report: &canopy_group::OpenReport) {
    let mut real = report.clone();
    real.failures.retain(|f| f.errno != canopy_group::Errno(libc::ENOENT));
    problems.add_open(&real, "cannot read");
}

/// The size of the longest copy (group fstat, maximum aggregation).
fn longest<T: Transport>(
    old: &mut Group<'_, T>,
    ok: &RangeSet,
    problems: &mut Problems,
) -> Result<u64, String> {
    old.gbindaggr(OpKind::Fstat, AggrType::Data, Builtin::Max.into()).map_err(|e| e.to_string())?;
    let result = old.run_on(FileOp::Fstat, ok);
    let (outcome, _) = problems.check(old, result, "stat").map_err(|e| e.to_string())?;
    let max =
        outcome.data().map(|d| d.decode::<Extremes>()).transpose().map_err(|e| e.to_string())?.flatten();
    Ok(max
        .and_then(|m| m.0.first().cloned().flatten())
        .and_then(|size| size.value.to_i64())
        .map_or(0, |v| v.max(0) as u64))
}

/// Hosts that answered without a copy: those where DEST does not exist join the sub-group of empty copies
/// (they get every byte); other failures (permissions, a directory in the way) were reported already.
fn add_hosts_without_copy<T: Transport>(old: &Group<'_, T>, groups: &mut Vec<SubGroup>) {
    let holding = old.ranks_of(&old.all_members());
    let report = old.open_report();
    let missing_file: RangeSet = RangeSet::from_values(
        old.host_ranks()
            .into_iter()
            .filter(|(_, rank)| !holding.contains_value(*rank as u64))
            .filter(|(name, _)| {
                report
                    .failures
                    .iter()
                    .any(|f| f.host == *name && f.errno == canopy_group::Errno(libc::ENOENT))
            })
            .map(|(_, rank)| rank as u64),
    );
    if missing_file.is_empty() {
        return;
    }
    match groups.iter_mut().find(|g| g.signatures.is_empty()) {
        Some(empty) => empty.ranks = empty.ranks.union(&missing_file),
        None => groups.push(SubGroup {
            old_members: RangeSet::new(),
            ranks: missing_file,
            signatures: Vec::new(),
        }),
    }
}

/// Writes one sub-group's delta in batches, a window of them in flight; returns the members that took it.
fn send<T: Transport>(
    temp: &mut Group<'_, T>,
    old: Option<&Group<'_, T>>,
    pieces: Vec<canopy_group::Piece>,
    members: &RangeSet,
    target: &SyncTarget,
    problems: &mut Problems,
) -> Result<RangeSet, String> {
    const WINDOW: usize = 8;
    let mut ok = members.clone();
    let batches = delta::batches(pieces, target.chunk.max(1));
    let count = batches.len();
    for (index, batch) in batches.into_iter().enumerate() {
        if ok.is_empty() {
            break;
        }
        let op = match old {
            Some(old) => temp.assemble_op(old, batch),
            None => FileOp::Write { data: batch.into_iter().flat_map(piece_bytes).collect() },
        };
        if (index + 1) % WINDOW == 0 || index + 1 == count {
            let result = temp.run_on(op, &ok);
            let (_, failed) = problems.check(temp, result, "write").map_err(|e| e.to_string())?;
            ok = ok.difference(&failed);
        } else {
            temp.post_on(op, &ok).map_err(|e| e.to_string())?;
        }
    }
    Ok(ok)
}

/// The bytes of a literal piece (without an old copy there are no others).
fn piece_bytes(piece: canopy_group::Piece) -> Vec<u8> {
    match piece {
        canopy_group::Piece::Data(data) => data,
        canopy_group::Piece::Copy { .. } => unreachable!("no old copy, no block to copy"),
    }
}

//! mkdir, create, stat, ls, rm, rmdir, mv, locate: the namespace through the client library.
//! Paths are slash-separated from the service's root directory.

use std::io::Write;

use clap::Args;
use serde::Serialize;

use super::{ClusterArg, block_on, parse_mode, print_json};
use crate::client::{Attributes, Client, DirEntry, FileKind, MkdirOptions, Owner};
use crate::cluster::ClusterDir;
use crate::error::Result;

/// Runs `work` with a client of the cluster, inside a runtime (channels need one to exist).
fn with_client<T, F>(arg: &ClusterArg, work: impl FnOnce(Client) -> F) -> Result<T>
where
    F: Future<Output = Result<T>>,
{
    let cluster = ClusterDir::load(&arg.cluster)?;
    block_on(async { work(Client::connect(&cluster)).await })?
}

/// Create a directory, choosing how many partitions start active
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc mkdir /big                              all N partitions active from the start
  canopy dirsvc mkdir /grow --partitions 1 --split-threshold 2000   start on one, split as it fills
  canopy dirsvc mkdir /one --partitions 1 --split-threshold 0       never split (one server)")]
pub struct MkdirArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Path of the new directory
    path: String,
    /// Initially active partitions (0: all N, one per server)
    #[arg(long, default_value_t = 0)]
    partitions: u32,
    /// Split a partition holding more entries than this (0: never; default: the cluster's)
    #[arg(long)]
    split_threshold: Option<u64>,
    /// Permission bits, octal
    #[arg(long, default_value = "755", value_parser = parse_mode)]
    mode: u32,
}

pub fn mkdir(args: MkdirArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    with_client(&cluster, |client| async move {
        let (parent, name) = client.resolve_parent(&args.path).await?;
        let options = MkdirOptions {
            owner: Owner::current(args.mode),
            initial_partitions: args.partitions,
            split_threshold: args.split_threshold,
        };
        client.mkdir(parent, name.as_bytes(), options).await.map(drop)
    })
}

/// Create empty files
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc create /big/a /big/b
  canopy dirsvc create --mode 600 /big/private")]
pub struct CreateArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Paths of the new files
    #[arg(required = true)]
    paths: Vec<String>,
    /// Permission bits, octal
    #[arg(long, default_value = "644", value_parser = parse_mode)]
    mode: u32,
}

pub fn create(args: CreateArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    with_client(&cluster, |client| async move {
        for path in &args.paths {
            let (dir, name) = client.resolve_parent(path).await?;
            client
                .create(dir, name.as_bytes(), FileKind::File, Owner::current(args.mode))
                .await
                .map_err(|e| in_path(path, e))?;
        }
        Ok(())
    })
}

fn in_path(path: &str, e: crate::error::Error) -> crate::error::Error {
    crate::error::Error::new(e.kind, format!("{path}: {}", e.message))
}

/// Show an entry's attributes; for a directory also its partitions
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc stat /big/a
  canopy dirsvc stat /big                 bitmap, and entries and level of every partition
  canopy dirsvc stat --json /big")]
pub struct StatArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Path of the entry
    path: String,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

#[derive(Serialize)]
struct PartitionRow {
    partition: u32,
    server: u32,
    address: String,
    active: bool,
    level: u32,
    entries: u64,
    splitting: bool,
}

#[derive(Serialize)]
struct StatReport {
    path: String,
    id: u64,
    #[serde(flatten)]
    attrs: Attributes,
    #[serde(skip_serializing_if = "Option::is_none")]
    bitmap: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    split_threshold: Option<u64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    partitions: Vec<PartitionRow>,
}

pub fn stat(args: StatArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    let report = with_client(&cluster, |client| async move {
        let resolved = client.resolve(&args.path).await?;
        let mut report = StatReport {
            path: args.path.clone(),
            id: resolved.id,
            attrs: resolved.attrs,
            bitmap: None,
            split_threshold: None,
            partitions: Vec::new(),
        };
        if resolved.attrs.kind == FileKind::Directory {
            let info = client.fetch_dir(resolved.id).await?;
            report.bitmap = Some(info.bitmap.render());
            report.split_threshold = Some(info.split_threshold);
            for stat in client.partition_stats(resolved.id).await? {
                let server = info.servers[stat.partition as usize];
                report.partitions.push(PartitionRow {
                    partition: stat.partition,
                    server,
                    address: client.cluster().config.servers[server as usize].to_string(),
                    active: stat.active,
                    level: stat.level,
                    entries: stat.entries,
                    splitting: stat.splitting,
                });
            }
        }
        Ok::<_, crate::error::Error>(report)
    })?;
    if args.json {
        print_json(&report);
        return Ok(());
    }
    let a = &report.attrs;
    println!("path       {}", report.path);
    println!("id         {:#018x}", report.id);
    println!("kind       {}", format!("{:?}", a.kind).to_lowercase());
    println!("mode       {:o}  uid {}  gid {}  size {}  links {}", a.mode, a.uid, a.gid, a.size, a.nlink);
    println!("mtime      {}", seconds(a.mtime_ns));
    println!("ctime      {}", seconds(a.ctime_ns));
    if let (Some(bitmap), Some(threshold)) = (&report.bitmap, report.split_threshold) {
        let threshold = if threshold == 0 { "never".to_string() } else { threshold.to_string() };
        println!("bitmap     {bitmap}  (split threshold {threshold})");
        println!("partition  server  address                active  level  entries");
        for p in &report.partitions {
            println!(
                "{:<10} {:<7} {:<22} {:<7} {:<6} {}{}",
                p.partition,
                p.server,
                p.address,
                if p.active { "yes" } else { "no" },
                p.level,
                p.entries,
                if p.splitting { "  (splitting)" } else { "" }
            );
        }
    }
    Ok(())
}

fn seconds(ns: i64) -> String {
    format!("{}.{:09}", ns.div_euclid(1_000_000_000), ns.rem_euclid(1_000_000_000))
}

/// List a directory (all partitions)
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc ls /
  canopy dirsvc ls -l /big
  canopy dirsvc ls --json /big")]
pub struct LsArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Directory to list
    #[arg(default_value = "/")]
    path: String,
    /// Long format: kind, mode, links, uid, gid, size, mtime, id, name
    #[arg(short, long)]
    long: bool,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

pub fn ls(args: LsArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    let with_attributes = args.long || args.json;
    let listing = with_client(&cluster, |client| async move {
        let dir = client.resolve_dir(&args.path).await?;
        let mut lister = client.list(dir);
        let mut names = Vec::new();
        let mut entries = Vec::new();
        while let Some(page) = lister.next_page(&client).await? {
            if with_attributes {
                entries.extend(client.with_attributes(page).await?);
            } else {
                names.extend(page.into_iter().map(|listed| listed.name));
            }
        }
        Ok((names, entries))
    })?;
    let (mut names, mut entries) = listing;
    names.sort();
    entries.sort_by(|a, b| a.name.cmp(&b.name));
    if args.json {
        print_json(&entries);
        return Ok(());
    }
    let mut out = std::io::stdout().lock();
    for name in &names {
        writeln!(out, "{}", String::from_utf8_lossy(name)).map_err(stdout_error)?;
    }
    drop(out);
    for entry in &entries {
        print_entry(entry);
    }
    Ok(())
}

fn stdout_error(e: std::io::Error) -> crate::error::Error {
    crate::error::Error::io(format!("writing the listing: {e}"))
}

fn print_entry(entry: &DirEntry) {
    let a = &entry.attrs;
    let kind = match a.kind {
        FileKind::File => "file",
        FileKind::Directory => "dir",
        FileKind::Symlink => "link",
        FileKind::Fifo => "fifo",
        FileKind::Socket => "sock",
        FileKind::CharDevice => "char",
        FileKind::BlockDevice => "block",
    };
    let target = if entry.target.is_empty() {
        String::new()
    } else {
        format!(" -> {}", String::from_utf8_lossy(&entry.target))
    };
    println!(
        "{kind:<5} {:04o} {:>3} {:>6} {:>6} {:>10} {} {:#018x} {}{target}",
        a.mode,
        a.nlink,
        a.uid,
        a.gid,
        a.size,
        seconds(a.mtime_ns),
        entry.id,
        entry.name_lossy()
    );
}

/// Remove files
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  canopy dirsvc rm /big/a /big/b")]
pub struct RmArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Files to remove
    #[arg(required = true)]
    paths: Vec<String>,
}

pub fn rm(args: RmArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    with_client(&cluster, |client| async move {
        for path in &args.paths {
            let (dir, name) = client.resolve_parent(path).await?;
            client.unlink(dir, name.as_bytes()).await.map_err(|e| in_path(path, e))?;
        }
        Ok(())
    })
}

/// Remove empty directories (every partition on every server, then the metadata object)
#[derive(Args, Debug)]
#[command(after_help = "Example:\n  canopy dirsvc rmdir /big")]
pub struct RmdirArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Empty directories to remove
    #[arg(required = true)]
    paths: Vec<String>,
}

pub fn rmdir(args: RmdirArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    with_client(&cluster, |client| async move {
        for path in &args.paths {
            let (dir, name) = client.resolve_parent(path).await?;
            client.rmdir(dir, name.as_bytes()).await.map_err(|e| in_path(path, e))?;
        }
        Ok(())
    })
}

/// Rename or move an entry (replacing a destination of the same type)
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc mv /big/a /big/b
  canopy dirsvc mv /big/sub /other/sub")]
pub struct MvArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Entry to move
    source: String,
    /// Its new path
    destination: String,
}

pub fn mv(args: MvArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    with_client(&cluster, |client| async move {
        let (src_dir, src_name) = client.resolve_parent(&args.source).await?;
        let (dst_dir, dst_name) = client.resolve_parent(&args.destination).await?;
        client.rename(src_dir, src_name.as_bytes(), dst_dir, dst_name.as_bytes()).await.map(drop)
    })
}

/// Make a hard link: another name for a file (possibly in a directory on other servers)
#[derive(Args, Debug)]
#[command(after_help = "\
Examples:
  canopy dirsvc ln /big/a /big/also-a
  canopy dirsvc ln /big/a /other/a")]
pub struct LnArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// The existing file
    target: String,
    /// The new name
    link_name: String,
}

pub fn ln(args: LnArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    with_client(&cluster, |client| async move {
        let target = client.resolve(&args.target).await?;
        if target.attrs.kind == FileKind::Directory {
            return Err(crate::error::Error::new(
                crate::error::ErrorKind::NotPermitted,
                format!("{}: hard link not allowed for directory", args.target),
            ));
        }
        let (dir, name) = client.resolve_parent(&args.link_name).await?;
        client.link(target.id, dir, name.as_bytes()).await.map(drop).map_err(|e| in_path(&args.link_name, e))
    })
}

/// Print a name's hash, partition and server in a directory (like `lfs getdirstripe`)
#[derive(Args, Debug)]
#[command(after_help = "\
The name need not exist: this is where it would be created.

Examples:
  canopy dirsvc locate /big file.mdtest.0.17
  canopy dirsvc locate --json / etc")]
pub struct LocateArgs {
    #[command(flatten)]
    cluster: ClusterArg,
    /// Directory path
    dir: String,
    /// Entry name in it (need not exist)
    name: String,
    /// Print JSON
    #[arg(long)]
    json: bool,
}

pub fn locate(args: LocateArgs) -> Result<()> {
    let cluster = args.cluster.clone();
    let name = args.name.clone();
    let placement = with_client(&cluster, |client| async move {
        let dir = client.resolve_dir(&args.dir).await?;
        client.locate(dir, name.as_bytes()).await
    })?;
    if args.json {
        print_json(&placement);
        return Ok(());
    }
    println!("name       {}", args.name);
    println!(
        "hash       {:#018x}  (MD5 bytes 8..16, little-endian; low {} bits: {:#b})",
        placement.hash,
        placement.tree_height,
        crate::mapping::low_bits(placement.hash, placement.tree_height)
    );
    println!("bitmap     {}  ({} partitions)", placement.bitmap, placement.partitions);
    println!("partition  {}  (level {})", placement.partition, placement.level);
    println!("server     {}  {}", placement.server, placement.address);
    Ok(())
}

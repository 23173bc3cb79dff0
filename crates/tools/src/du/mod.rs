//! `canopy du`: disk usage on the parallel engine — a chart of the largest directories (pdu and
//! dust's view), GNU du's lines for scripts, JSON, ncdu's export, an HTML treemap.
//!
//! Sizes are summed per directory as the walk goes: each entry is added to its directory's
//! [`Tally`](tally::Tally), and when the walk leaves a directory (the engine's post-order hook) its
//! sums go to its parent, its line is printed and its node is kept only if an output can still
//! show it — so memory follows the output, not the number of entries. Hard links are counted once
//! by a rule that does not depend on timing ([`links`]). GNU du's lines come out argument after
//! argument ([`order`]). Under MPI each rank sums what it walks; directories split between ranks
//! are folded together by the engine (`DistributedVisitor::absorb`), and rank 0 prints.

mod args;
mod chart;
mod exclude;
mod export;
mod finish;
mod html;
pub mod json;
mod links;
mod list;
mod order;
mod roots;
mod spool;
mod tally;
mod time;
mod tree;
mod units;
mod usage;
mod visitor;

pub use args::DuArgs;

use crate::common::records::{RecordOutput, finish_output, open_output, record_path};
use crate::common::{Exit, Progress, print_error, report_write_errors, users_terminal};
use args::{ColorWhen, Settings};
use canopy_distwalk::Cluster;
use canopy_engine::{Follow, WalkOutcome};
use canopy_util::path::os_to_bytes;
use export::Export;
use finish::{Gathered, Settled, settle};
use order::Ordered;
use roots::Roots;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};
use visitor::DuVisitor;

pub fn run(args: DuArgs, cluster: &Cluster) -> Exit {
    let settings = match Settings::new(&args) {
        Ok(settings) => settings,
        Err(message) => {
            if cluster.is_root() {
                print_error("du", message);
            }
            return Exit::Usage;
        }
    };
    if cluster.is_root() {
        for warning in Settings::warnings(&args) {
            print_error("du", warning);
        }
    }
    let arguments: Vec<Vec<u8>> = if args.paths.is_empty() {
        vec![b".".to_vec()]
    } else {
        args.paths.iter().map(|p| os_to_bytes(p)).collect()
    };
    let overlaps = !settings.count_every_inode_once && !settings.count_links && arguments.len() > 1;
    let roots = Roots::new(&arguments, settings.follow != Follow::Never, overlaps, settings.count_links);

    // Every rank takes part in the walk or none: agree on the setup first.
    let records = match &args.output {
        None => Ok(None),
        Some(path) => record_path("du", path, cluster)
            .and_then(|file| open_output("du", &file).map(|o| Some((path, o)))),
    };
    let export = match &args.ncdu_json {
        None => Ok(None),
        Some(_) if cluster.size() > 1 => Ok(Some(Export::in_memory())),
        Some(path) => Export::spooled(directory_of(path)).map(Some).map_err(|e| {
            print_error("du", format_args!("cannot create a spool file next to '{}': {e}", path.display()));
            Exit::Errors
        }),
    };
    let sinks = cluster.outputs(&[]);
    let setup = [records.as_ref().err().copied(), export.as_ref().err().copied()]
        .into_iter()
        .flatten()
        .fold(if sinks.is_ok() { Exit::Ok } else { Exit::Errors }, Exit::max);
    let agreed = Exit::from_code(cluster.agree_exit(setup.code()));
    let (Ok(records), Ok(export), Ok(sinks)) = (records, export, sinks) else { return agreed };
    if agreed != Exit::Ok {
        return agreed;
    }
    let stdout = Arc::clone(&sinks[0]);

    // Lines go out while walking, in argument order; with --sort, or under MPI where rank 0
    // prints, they wait for the end.
    let streamed = settings.list.as_ref().is_some_and(|l| !l.sorted) && cluster.size() == 1;
    let ordered =
        streamed.then(|| Ordered::new(Arc::clone(&stdout), roots.len(), users_terminal(&std::io::stdout())));
    let visitor = DuVisitor::new(
        &settings,
        &roots,
        ordered.as_ref(),
        records.as_ref().map(|(_, o): &(&PathBuf, RecordOutput)| o),
        export.as_ref(),
    );
    let mut options = args.walk.options();
    options.follow = settings.follow;
    options.each_dir_once = settings.count_every_inode_once;
    // Lines printed while walking would be garbled by a spinner on the same terminal.
    let progress = Progress::start(!(streamed && users_terminal(&std::io::stdout())), "du", &mut options);
    let WalkOutcome { states, errors, .. } =
        cluster.walk(roots.paths(), &options, &visitor, &args.walk.plan());
    progress.finish();
    let mut gathered = Gathered { errors, ..Gathered::default() };
    for state in states {
        gathered.add_state(state);
    }
    gathered.links = visitor.into_open_links();
    let mut exit = Exit::from_errors(errors);
    if let Some((path, output)) = records
        && finish_output("du", path, output).is_none()
    {
        exit = exit.max(Exit::Errors);
    }
    // The lines printed while walking reach rank 0's stdout before the ones that had to wait.
    cluster.finish_output();
    if let Some(all) = cluster.reduce(gathered, Gathered::merge) {
        let errors = all.errors;
        let settled = settle(&settings, &roots, all);
        exit =
            exit.max(print(&settings, &args, &settled, errors, &stdout, ordered.as_ref(), export.as_ref()));
    }
    if report_write_errors([&*stdout]) {
        exit = exit.max(Exit::Errors);
    }
    Exit::from_code(cluster.agree_exit(exit.code()))
}

/// Rank 0's output: the lines that waited, the chart or JSON, and the files.
fn print(
    settings: &Settings,
    args: &DuArgs,
    settled: &Settled,
    errors: u64,
    stdout: &canopy_engine::output::Sink,
    ordered: Option<&Ordered>,
    export: Option<&Export>,
) -> Exit {
    let mut exit = Exit::Ok;
    if settings.list.is_some() {
        match ordered {
            Some(ordered) => ordered.finish(&settled.lines),
            None => {
                let lines: Vec<u8> =
                    settled.lines.iter().flat_map(|line| line.bytes.iter().copied()).collect();
                let _ = stdout.write_all(&lines);
            }
        }
        let _ = stdout.write_all(&settled.total_line);
    }
    if let Some(shape) = &settings.shape {
        if settings.chart {
            let style = chart::Style {
                width: args.width.unwrap_or_else(terminal_width),
                color: match args.color {
                    ColorWhen::Always => true,
                    ColorWhen::Never => false,
                    ColorWhen::Auto => {
                        users_terminal(&std::io::stdout())
                            && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
                    }
                },
                top_down: args.top_down,
                metric: settings.metric,
            };
            let _ = stdout.write_all(chart::render(&settled.measured, &style).as_bytes());
        }
        let doc = json::DuJson::new(shape, &settled.measured, settled.total, errors);
        if args.json {
            let text = serde_json::to_string_pretty(&doc).expect("the tree serialises") + "\n";
            let _ = stdout.write_all(text.as_bytes());
        }
        if let Some(path) = &args.html {
            exit = exit.max(write_file(path, |out| out.write_all(html::page(&doc).as_bytes())));
        }
    }
    if let (Some(path), Some(export)) = (&args.ncdu_json, export)
        && let Some(root) = settled.measured.first()
    {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0);
        exit = exit.max(write_file(path, |out| export.write(out, &root.export, now)));
    }
    exit
}

fn write_file(
    path: &Path,
    write: impl FnOnce(&mut std::io::BufWriter<std::fs::File>) -> std::io::Result<()>,
) -> Exit {
    let result = std::fs::File::create(path).and_then(|file| {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, file);
        write(&mut out)?;
        out.flush()
    });
    match result {
        Ok(()) => Exit::Ok,
        Err(e) => {
            print_error("du", format_args!("writing '{}': {e}", path.display()));
            Exit::Errors
        }
    }
}

fn directory_of(path: &Path) -> &Path {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    }
}

/// Columns of the user's terminal on stdout, else `COLUMNS`, else 100.
fn terminal_width() -> usize {
    if !users_terminal(&std::io::stdout()) {
        return columns_variable();
    }
    let mut size = libc::winsize { ws_row: 0, ws_col: 0, ws_xpixel: 0, ws_ypixel: 0 };
    // SAFETY: TIOCGWINSZ fills a winsize; the pointer is valid for the call.
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut size) };
    if rc == 0 && size.ws_col > 0 {
        return usize::from(size.ws_col);
    }
    columns_variable()
}

fn columns_variable() -> usize {
    std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()).filter(|&c| c > 0).unwrap_or(100)
}

//! `canopy grep`: GNU grep's command line on the parallel engine (and under mpirun on every rank),
//! directories searched recursively, with `--group` to fold identical lines across files.

mod args;
mod colors;
mod dialect;
mod fold;
mod output;
mod pattern;
mod search;
mod select;
mod visitor;

pub use args::GrepArgs;
pub use pattern::{Dialect, Pattern, Spec};

use crate::common::{Exit, Progress, print_error, report_write_errors, users_terminal, utf8_locale};
use args::{Devices, Directories, GrepOptions};
use canopy_distwalk::Cluster;
use canopy_engine::sys::stat_path;
use canopy_engine::{FileKind, Follow};
use canopy_util::path::os_to_bytes;
use colors::Colors;
use fold::Folded;
use grep_matcher::LineTerminator;
use grep_searcher::{BinaryDetection, SearcherBuilder};
use output::{BinaryFiles, Mode, Output, Show};
use select::Selection;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, Ordering};
use visitor::Grep;

/// What to search: standard input and the paths for the walk.
struct Operands {
    stdin: Option<Vec<u8>>,
    roots: Vec<Vec<u8>>,
    /// Operands refused before the walk (`-d read` on a directory…), already reported.
    errors: u64,
}

pub fn run(args: GrepArgs, cluster: &Cluster) -> Exit {
    let GrepArgs { options, file_rules } = args;
    if options.max_count == Some(0) {
        // GNU grep stops before reading anything.
        return Exit::NothingSelected;
    }
    let (grep, operands) = match prepare(&options, &file_rules, cluster) {
        Ok(prepared) => prepared,
        Err(message) => {
            if cluster.is_root() {
                print_error("grep", message);
            }
            return Exit::Usage;
        }
    };
    let mut errors = operands.errors;
    let mut selected = 0;
    let mut folded = Folded::default();
    if let Some(label) = operands.stdin.as_ref().filter(|_| cluster.is_root()) {
        let mut state = grep.new_state();
        let stdin = std::io::stdin().lock();
        let searched = grep.search(&mut state, label, |pattern, searcher, mut sink| {
            pattern.search_reader(searcher, stdin, &mut sink)?;
            Ok(sink.finish())
        });
        if let Err(e) = searched {
            grep.report(
                label,
                canopy_engine::Errno::from_raw_os_error(e.raw_os_error().unwrap_or(libc::EIO)),
            );
            errors += 1;
        }
        grep.flush(&mut state);
        selected += state.selected;
        folded = folded.merge(state.folded);
    }
    if !operands.roots.is_empty() && !grep.done.load(Ordering::Relaxed) {
        let mut walk = options.walk.options();
        // grep -r follows a symlink named on the command line, none met inside; -R follows all.
        walk.follow = if options.dereference_recursive { Follow::Always } else { Follow::Roots };
        let progress = Progress::start(!users_terminal(&std::io::stdout()), "grep", &mut walk);
        let outcome = cluster.walk(&operands.roots, &walk, &grep, &options.walk.plan());
        progress.finish();
        for mut state in outcome.states {
            grep.flush(&mut state);
            selected += state.selected;
            folded = folded.merge(state.folded);
        }
        errors += outcome.errors;
    }
    let totals = cluster.reduce((selected, errors, folded), |a, b| (a.0 + b.0, a.1 + b.1, a.2.merge(b.2)));
    if grep.show.group
        && let Some((_, _, folded)) = &totals
    {
        let mut out = Vec::new();
        for block in folded.clone().blocks() {
            grep.show.block(&mut out, &block);
        }
        let _ = grep.output.sink().write_all(&out);
    }
    cluster.finish_output();
    let write_failed = report_write_errors([&**grep.output.sink()]);
    match totals {
        // Another rank: rank 0 speaks for the job.
        None => Exit::Ok,
        // -q: a selected line is success whatever else happened.
        Some((selected, _, _)) if options.quiet && selected > 0 => Exit::Ok,
        Some((_, errors, _)) if errors > 0 || write_failed => Exit::Trouble,
        Some((0, _, _)) => Exit::NothingSelected,
        Some(_) => Exit::Ok,
    }
}

fn prepare(o: &GrepOptions, rules: &[select::Rule], cluster: &Cluster) -> Result<(Grep, Operands), String> {
    let dialect = o.dialect()?;
    let (patterns, files) = patterns_and_files(o)?;
    let mode = o.mode();
    let context = o.context().filter(|_| mode == Mode::Lines);
    if (o.json || o.group) && (context.is_some() || o.only_matching) {
        return Err("--json and --group show whole lines: they cannot be combined with -o or -A/-B/-C".into());
    }
    let unicode = utf8_locale();
    let colors = o.color.unwrap_or(colors::When::Auto).enabled() && !o.json && !o.group;
    let spec = Spec {
        patterns,
        dialect,
        ignore_case: o.ignore_case,
        word: o.word_regexp,
        line: o.line_regexp,
        null_data: o.null_data,
        unicode,
        positions: o.only_matching || colors,
    };
    let (pattern, warnings) = Pattern::new(&spec)?;
    if cluster.is_root() {
        for warning in warnings {
            print_error("grep", format_args!("warning: {warning}"));
        }
    }
    let operands = operands(o, &files, cluster);
    let recursing = o.recursive || o.dereference_recursive;
    let with_filename = if o.with_filename {
        true
    } else if o.no_filename {
        false
    } else {
        files.len() > 1 || (files.is_empty() && recursing) || operands.roots.iter().any(|r| is_dir(r))
    };
    let binary = o.binary();
    let colors = colors.then(|| Colors::from_env(o.invert_match));
    let separator = match (&o.group_separator, o.no_group_separator) {
        (_, true) => None,
        (Some(sep), false) => Some(sep.as_bytes().to_vec()),
        (None, false) => Some(b"--".to_vec()),
    };
    let terminator = if o.null_data { b'\0' } else { b'\n' };
    let show = Show {
        mode,
        only_matching: o.only_matching,
        line_numbers: o.line_number,
        with_filename,
        null_after_name: o.null,
        terminator,
        max_count: o.max_count.and_then(|m| u64::try_from(m).ok()),
        after: context.map_or(0, |(_, after)| after),
        separator: separator.filter(|_| context.is_some()),
        binary,
        check_encoding: unicode && binary != BinaryFiles::Text,
        colors,
        invert: o.invert_match,
        json: o.json,
        group: o.group,
    };
    let mut separator_line = Vec::new();
    show.group_separator(&mut separator_line);
    let mut searcher = SearcherBuilder::new();
    let (before, after) = context.unwrap_or((0, 0));
    searcher
        .line_terminator(LineTerminator::byte(terminator))
        .invert_match(o.invert_match)
        // Line numbers also tell where a group of context ends.
        .line_number(o.line_number || o.json || o.group || context.is_some())
        .before_context(before)
        .after_context(after)
        .binary_detection(if o.null_data || binary == BinaryFiles::Text {
            BinaryDetection::none()
        } else {
            // A NUL makes the file binary; as GNU grep, NULs then end lines.
            BinaryDetection::convert(0)
        });
    let stdout = cluster.outputs(&[]).map_err(|e| format!("cannot open the output: {e}"))?.remove(0);
    let each_file = o.line_buffered || users_terminal(&std::io::stdout());
    let grep = Grep {
        pattern,
        output: Output::new(stdout, (!separator_line.is_empty()).then_some(separator_line), each_file),
        show,
        selection: Selection::new(rules, &o.exclude_dir),
        searcher,
        silent: o.no_messages,
        implicit_root: files.is_empty() && recursing,
        follow_all: o.dereference_recursive,
        done: AtomicBool::new(false),
    };
    Ok((grep, operands))
}

/// Patterns (or operands) as bytes.
type Strings = Vec<Vec<u8>>;

/// The patterns (from -e and -f, else the first argument), one per line, and the file operands.
fn patterns_and_files(o: &GrepOptions) -> Result<(Strings, Strings), String> {
    let mut args: Vec<Vec<u8>> = o.args.iter().map(|a| os_to_bytes(a)).collect();
    let mut patterns = Vec::new();
    for list in &o.regexp {
        patterns.extend(list.as_bytes().split(|&b| b == b'\n').map(<[u8]>::to_vec));
    }
    for file in &o.file {
        let mut text = Vec::new();
        let read = if file.as_os_str() == "-" {
            std::io::stdin().lock().read_to_end(&mut text)
        } else {
            std::fs::File::open(file).and_then(|mut f| f.read_to_end(&mut text))
        };
        read.map_err(|e| format!("{}: {}", file.display(), canopy_util::errors::io_error_message(&e)))?;
        // An empty file holds no pattern; a file with an empty line holds the empty pattern.
        if text.is_empty() {
            continue;
        }
        if text.last() == Some(&b'\n') {
            text.pop();
        }
        patterns.extend(text.split(|&b| b == b'\n').map(<[u8]>::to_vec));
    }
    if o.regexp.is_empty() && o.file.is_empty() {
        if args.is_empty() {
            return Err("no pattern\nUsage: canopy grep [OPTION]... PATTERNS [FILE]...\nTry 'canopy grep --help' for more information.".into());
        }
        let first = args.remove(0);
        patterns.extend(first.split(|&b| b == b'\n').map(<[u8]>::to_vec));
    }
    Ok((patterns, args))
}

/// Standard input (`-`, or no file without -r) and the paths to walk, after `-d` and `-D`.
fn operands(o: &GrepOptions, files: &[Vec<u8>], cluster: &Cluster) -> Operands {
    let label = o.label.as_ref().map_or(b"(standard input)".to_vec(), |l| l.as_bytes().to_vec());
    let recursing = o.recursive || o.dereference_recursive;
    let mut operands = Operands { stdin: None, roots: Vec::new(), errors: 0 };
    if files.is_empty() {
        if recursing {
            operands.roots.push(b".".to_vec());
        } else {
            operands.stdin = Some(label);
        }
        return operands;
    }
    for file in files {
        if file == b"-" {
            operands.stdin = Some(label.clone());
            continue;
        }
        let kind = stat_path(file, true).map(|m| m.kind()).ok();
        match (kind, o.directories, o.devices) {
            (Some(FileKind::Dir), Some(Directories::Skip), _) => continue,
            (Some(FileKind::Dir), Some(Directories::Read), _) => {
                if cluster.is_root() && !o.no_messages {
                    print_error("grep", format_args!("{}: Is a directory", String::from_utf8_lossy(file)));
                }
                operands.errors += u64::from(cluster.is_root());
                continue;
            }
            (
                Some(FileKind::Fifo | FileKind::Socket | FileKind::CharDevice | FileKind::BlockDevice),
                _,
                Some(Devices::Skip),
            ) => {
                continue;
            }
            _ => operands.roots.push(file.clone()),
        }
    }
    operands
}

fn is_dir(path: &[u8]) -> bool {
    stat_path(path, true).is_ok_and(|m| m.is_dir())
}

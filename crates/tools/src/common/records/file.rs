//! Opening and closing a tool's `--output` record file: one file, or `DIR/part-RANK.parquet` per
//! process of a distributed run.

use super::{RecordFormat, RecordOutput};
use crate::common::{Exit, print_error};
use canopy_distwalk::Cluster;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The file this process writes records to: the one named, or `DIR/part-RANK.parquet` when a
/// directory is named (the only choice with several ranks).
pub fn record_path(tool: &str, output: &Path, cluster: &Cluster) -> Result<PathBuf, Exit> {
    if output.as_os_str().as_bytes().ends_with(b"/") || output.is_dir() {
        if let Err(e) = std::fs::create_dir_all(output) {
            print_error(tool, format_args!("cannot create '{}': {e}", output.display()));
            return Err(Exit::Errors);
        }
        return Ok(output.join(format!("part-{}.parquet", cluster.rank())));
    }
    if cluster.size() > 1 {
        if cluster.is_root() {
            print_error(
                tool,
                format_args!(
                    "--output '{}': with {} processes, name a directory (DIR/) — each writes DIR/part-RANK.parquet",
                    output.display(),
                    cluster.size()
                ),
            );
        }
        return Err(Exit::Usage);
    }
    Ok(output.to_path_buf())
}

/// Creates the `--output` file; a name without a known extension is a usage error.
pub fn open_output(tool: &str, path: &Path) -> Result<RecordOutput, Exit> {
    let Some(format) = RecordFormat::from_path(path) else {
        print_error(
            tool,
            format_args!("--output '{}': the file name must end in .parquet or .jsonl", path.display()),
        );
        return Err(Exit::Usage);
    };
    RecordOutput::create(path, format).map_err(|e| {
        print_error(tool, format_args!("cannot create '{}': {e}", path.display()));
        Exit::Errors
    })
}

/// Completes the `--output` file; the records written, or `None` (with the error shown) when
/// writing it failed.
pub fn finish_output(tool: &str, path: &Path, output: RecordOutput) -> Option<u64> {
    match output.finish() {
        Ok(records) => Some(records),
        Err(e) => {
            print_error(tool, format_args!("writing '{}': {e}", path.display()));
            None
        }
    }
}

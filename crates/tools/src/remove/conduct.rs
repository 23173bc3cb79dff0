//! How a removal talks to the user, beyond removing: `rm`'s `-v` lines, its questions, `-f`,
//! `--one-file-system` and coreutils' wording of failures. Sync's prune pass keeps the defaults:
//! silent, never asks, the engine's messages.

use super::prompt::Prompter;
use canopy_engine::output::Sink;
use std::sync::Arc;

#[derive(Default)]
pub struct Conduct {
    /// `-v`: `removed 'x'` and `removed directory 'x'` written here.
    pub verbose: Option<Arc<Sink>>,
    /// `-f`: names that do not exist are not errors.
    pub force: bool,
    /// `--one-file-system`: a directory below an argument on another file system is skipped (and
    /// reported).
    pub one_file_system: bool,
    /// `-i`, or the questions about write-protected files when stdin is a terminal.
    pub prompter: Option<Prompter>,
    /// Failures worded as coreutils rm words them: `cannot remove 'x': Permission denied`.
    pub rm_messages: bool,
}

//! Whether a standard stream is the user's interactive terminal: the one decision behind colours,
//! line buffering, progress, chart widths and questions in every tool.
//!
//! A terminal is not enough under a launcher (mpirun, mpiexec, srun): Open MPI gives each rank a
//! pseudo-terminal whatever mpirun's own output is (a file, a pipe), so a rank's "terminal" says
//! nothing about where the output goes. There the answer is no: plain output, no progress.

use crate::World;
use std::io::IsTerminal;

/// Whether `stream` (stdin, stdout or stderr) is an interactive terminal of the user: a terminal,
/// in a process no launcher started.
pub fn users_terminal(stream: &impl IsTerminal) -> bool {
    stream.is_terminal() && !World::launched()
}

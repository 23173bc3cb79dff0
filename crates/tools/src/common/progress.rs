//! Progress on stderr, only when stderr is the user's terminal (never under a launcher): by default
//! entries, rate, errors and threads; tools with more to say (bytes copied, an ETA) describe the
//! line themselves.

use canopy_engine::{ProgressFn, WalkProgress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Arc;
use std::time::Duration;

/// A progress callback for the engine, or `None` when stderr is not the user's terminal (pipes,
/// files, CI, a rank's pseudo-terminal under mpirun).
/// The returned bar must be finished (`finish_and_clear`) by the caller after the walk.
pub fn terminal_progress(label: &'static str) -> Option<(ProgressFn, ProgressBar)> {
    terminal_progress_with(move |p| describe(label, p))
}

/// Like [`terminal_progress`], with the line written by `describe` at each refresh.
pub fn terminal_progress_with(
    describe: impl Fn(&WalkProgress) -> String + Send + Sync + 'static,
) -> Option<(ProgressFn, ProgressBar)> {
    if !super::users_terminal(&std::io::stderr()) {
        return None;
    }
    let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
    bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"));
    bar.enable_steady_tick(Duration::from_millis(125));
    let shown = bar.clone();
    let callback: ProgressFn = Arc::new(move |p: &WalkProgress| shown.set_message(describe(p)));
    Some((callback, bar))
}

fn describe(label: &str, p: &WalkProgress) -> String {
    let secs = p.elapsed.as_secs_f64().max(1e-3);
    format!(
        "{label}: {} entries, {} dirs, {:.0}/s, {} errors, {} threads",
        p.entries,
        p.dirs,
        p.entries as f64 / secs,
        p.errors,
        p.threads
    )
}

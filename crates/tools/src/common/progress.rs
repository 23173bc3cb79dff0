//! Progress on stderr while a tool walks, only when stderr is the user's terminal (never in pipes,
//! files, CI or a rank's pseudo-terminal under a launcher): by default entries, rate, errors and
//! threads; tools with more to say (bytes copied, an ETA) describe the line themselves. The line is
//! a plain spinner and text without colors, so it looks the same whether `NO_COLOR` is set or not.

use canopy_engine::{WalkOptions, WalkProgress};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::Arc;
use std::time::Duration;

/// The progress line of one walk: shown from [`Progress::start`] until [`Progress::finish`] (or
/// until dropped, so an early return leaves no spinner behind).
pub struct Progress(Option<ProgressBar>);

impl Progress {
    /// Shows `label`'s walk progress through `options`, when the tool `wants` it (not while its
    /// results go to the same terminal, say) and stderr is a terminal.
    pub fn start(wanted: bool, label: &'static str, options: &mut WalkOptions) -> Progress {
        Progress::start_with(wanted, options, move |p| describe(label, p))
    }

    /// Like [`Progress::start`], with the line written by `describe` at each refresh.
    pub fn start_with(
        wanted: bool,
        options: &mut WalkOptions,
        describe: impl Fn(&WalkProgress) -> String + Send + Sync + 'static,
    ) -> Progress {
        if !wanted || !super::users_terminal(&std::io::stderr()) {
            return Progress(None);
        }
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr_with_hz(8));
        bar.set_style(ProgressStyle::with_template("{spinner} {msg}").expect("static template"));
        bar.enable_steady_tick(Duration::from_millis(125));
        let shown = bar.clone();
        options.progress = Some(Arc::new(move |p: &WalkProgress| shown.set_message(describe(p))));
        Progress(Some(bar))
    }

    /// Clears the line, before the tool prints what comes after the walk.
    pub fn finish(mut self) {
        self.clear();
    }

    fn clear(&mut self) {
        if let Some(bar) = self.0.take() {
            bar.finish_and_clear();
        }
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.clear();
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_unwanted_line_leaves_the_walk_without_a_callback() {
        let mut options = WalkOptions::default();
        let progress = Progress::start(false, "find", &mut options);
        assert!(options.progress.is_none());
        assert!(progress.0.is_none());
        progress.finish();
    }

    #[test]
    fn the_default_line_counts_entries_dirs_rate_errors_and_threads() {
        let p =
            WalkProgress { entries: 300, dirs: 7, errors: 2, threads: 4, elapsed: Duration::from_secs(3) };
        assert_eq!(describe("du", &p), "du: 300 entries, 7 dirs, 100/s, 2 errors, 4 threads");
    }
}

use canopy_engine::output::Sink;

/// Flushes each sink and reports its first write failure with its errno, in GNU find's words
/// (`canopy: standard output: No space left on device`). Returns whether any output was lost, for
/// the exit status. A reader that went away (EPIPE) loses output too, but is not worth a message:
/// the printing tools die of SIGPIPE then, as find and du do.
pub fn report_write_errors<'a>(sinks: impl IntoIterator<Item = &'a Sink>) -> bool {
    let mut lost = false;
    for sink in sinks {
        if let Err(error) = sink.finish() {
            lost = true;
            if !error.is_broken_pipe() {
                eprintln!("canopy: {error}");
            }
        }
    }
    lost
}

/// Writes `bytes` to standard output, reporting a failure as [`report_write_errors`] does;
/// returns whether output was lost.
pub fn print_stdout(bytes: &[u8]) -> bool {
    let stdout = Sink::stdout();
    let _ = stdout.write_all(bytes);
    report_write_errors([&*stdout])
}

//! When a walk cannot go on: a visitor panicked (a bug), or not one worker thread could be
//! started. The first failure stops the scheduler; once every worker has returned, the walk
//! unwinds out of [`crate::walk`] / [`crate::Session::run`] with a [`WalkFailure`] as the panic
//! payload, for the program's top level to report and exit (70 for a bug, 71 for the system) —
//! under MPI, after aborting the job. Nothing waits forever for work that will never finish.

use std::any::Any;
use std::fmt;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

/// Why a walk stopped before its work was done.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WalkFailure {
    pub kind: FailureKind,
    /// The panic's message, or the system's reason.
    pub message: String,
    /// The entry (or directory) being visited when it happened, if known.
    pub path: Option<Vec<u8>>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FailureKind {
    /// A visitor (or the engine) panicked: a bug.
    Panic,
    /// No worker thread could be started.
    NoThreads,
}

impl WalkFailure {
    /// The exit status: sysexits' EX_SOFTWARE for a bug, EX_OSERR when the system refused.
    pub fn exit_code(&self) -> u8 {
        match self.kind {
            FailureKind::Panic => 70,
            FailureKind::NoThreads => 71,
        }
    }

    pub(crate) fn panic(payload: &(dyn Any + Send), path: Option<Vec<u8>>) -> Self {
        WalkFailure { kind: FailureKind::Panic, message: panic_message(payload), path }
    }
}

impl fmt::Display for WalkFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.kind {
            FailureKind::Panic => write!(f, "internal error: {}", self.message)?,
            FailureKind::NoThreads => write!(f, "cannot start a worker thread: {}", self.message)?,
        }
        if let Some(path) = &self.path {
            write!(f, " (while visiting '{}')", String::from_utf8_lossy(path))?;
        }
        Ok(())
    }
}

/// The text a panic was raised with (`panic!("…")`, `expect("…")`), or a placeholder.
pub fn panic_message(payload: &(dyn Any + Send)) -> String {
    if let Some(failure) = payload.downcast_ref::<WalkFailure>() {
        failure.message.clone()
    } else if let Some(text) = payload.downcast_ref::<&str>() {
        (*text).to_owned()
    } else if let Some(text) = payload.downcast_ref::<String>() {
        text.clone()
    } else {
        "panic with a non-text payload".to_owned()
    }
}

/// Runs one visitor call; a panic inside it unwinds on as a [`WalkFailure`] naming `path` (built
/// only then), so the worker that catches it knows what was being visited.
pub(crate) fn visiting<T>(path: impl FnOnce() -> Option<Vec<u8>>, call: impl FnOnce() -> T) -> T {
    match catch_unwind(AssertUnwindSafe(call)) {
        Ok(value) => value,
        Err(payload) if payload.is::<WalkFailure>() => resume_unwind(payload),
        Err(payload) => resume_unwind(Box::new(WalkFailure::panic(&*payload, path()))),
    }
}

/// The failure a worker's unwinding payload stands for.
pub(crate) fn into_failure(payload: Box<dyn Any + Send>) -> WalkFailure {
    match payload.downcast::<WalkFailure>() {
        Ok(failure) => *failure,
        Err(payload) => WalkFailure::panic(&*payload, None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_visitor_panic_becomes_a_failure_naming_the_path() {
        let caught =
            catch_unwind(|| visiting(|| Some(b"/t/x".to_vec()), || -> u8 { panic!("bad entry {}", 7) }));
        let payload = caught.unwrap_err();
        let failure = payload.downcast_ref::<WalkFailure>().expect("a WalkFailure");
        assert_eq!(failure.kind, FailureKind::Panic);
        assert_eq!(failure.to_string(), "internal error: bad entry 7 (while visiting '/t/x')");
        assert_eq!(failure.exit_code(), 70);
    }

    #[test]
    fn an_inner_failure_keeps_its_own_path() {
        let caught = catch_unwind(|| {
            visiting(
                || Some(b"/outer".to_vec()),
                || visiting(|| Some(b"/outer/inner".to_vec()), || panic!("deep")),
            )
        });
        let failure = caught.unwrap_err().downcast::<WalkFailure>().unwrap();
        assert_eq!(failure.path.as_deref(), Some(&b"/outer/inner"[..]));
    }
}

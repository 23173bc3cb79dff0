//! Running find's actions for the evaluator: printing, formatting, deleting, executing.

use super::visitor::{Find, FindState, Reporter};
use canopy_engine::{Entry, Errno, FileKind, Op, WalkError};
use canopy_expr::{Action, Actions, Output, RenderError};
use rustix::fs::{AtFlags, CWD, unlinkat};

pub struct FindActions<'a, 'p> {
    pub find: &'a Find<'p>,
    pub cx: &'a mut dyn Reporter,
    pub state: &'a mut FindState,
}

fn sink_index(output: Output) -> usize {
    match output {
        Output::Stdout => 0,
        Output::File(i) => i + 1,
    }
}

impl<'p> Actions<()> for FindActions<'_, 'p> {
    fn action(&mut self, index: usize, entry: &Entry<'_, ()>) -> bool {
        match &self.find.program.actions[index] {
            Action::Print { terminator, output } => {
                self.state.outputs.emit(
                    sink_index(*output),
                    || entry.path(),
                    |out| {
                        entry.write_path(out);
                        out.push(*terminator);
                    },
                );
                true
            }
            Action::Printf { format, output } => {
                let mut failure = None;
                self.state.outputs.emit(
                    sink_index(*output),
                    || entry.path(),
                    |out| failure = format.render(entry, out).err(),
                );
                match failure {
                    Some(RenderError::Stat(errno)) => self.error(entry, errno),
                    Some(RenderError::Context(errno)) => {
                        let path = String::from_utf8_lossy(&entry.path()).into_owned();
                        crate::common::print_error(
                            "find",
                            format_args!(
                                "getfilecon failed: '{path}': {}",
                                canopy_engine::errno_message(errno)
                            ),
                        );
                        self.find.failed.store(true, std::sync::atomic::Ordering::Relaxed);
                    }
                    None => {}
                }
                true
            }
            Action::Ls { output } => {
                let (ls, now) = (&mut self.state.ls, self.find.program.start);
                let mut failure = None;
                self.state.outputs.emit(
                    sink_index(*output),
                    || entry.path(),
                    |out| {
                        if let Err(errno) = ls.render(entry, now, out) {
                            failure = Some(errno);
                        }
                    },
                );
                if let Some(errno) = failure {
                    self.error(entry, errno);
                }
                true
            }
            Action::Delete => self.delete(entry),
            Action::Exec(exec) => {
                if exec.batch {
                    self.state.batches.add(self.find, index, exec, entry, &mut self.state.outputs);
                    true
                } else {
                    self.find.exec.run_one(exec, entry, &mut self.state.outputs)
                }
            }
        }
    }

    fn error(&mut self, entry: &Entry<'_, ()>, errno: Errno) {
        self.cx.report(WalkError::io(entry.path(), Op::Stat, errno));
    }
}

impl FindActions<'_, '_> {
    /// `-delete`: unlink relative to the parent directory; directories were reached after their
    /// contents (`-delete` implies `-depth`). Like GNU find, `.` itself is never removed.
    fn delete(&mut self, entry: &Entry<'_, ()>) -> bool {
        if entry.is_root() && entry.file_name() == b"." {
            return true;
        }
        let flags = if entry.kind() == FileKind::Dir { AtFlags::REMOVEDIR } else { AtFlags::empty() };
        let result = match entry.dir_fd() {
            Some(fd) => unlinkat(fd, entry.name_cstr(), flags),
            None => unlinkat(CWD, entry.name_cstr(), flags),
        };
        match result {
            Ok(()) => true,
            Err(errno) => {
                self.cx.report(WalkError::io(entry.path(), Op::Tool("delete"), errno));
                false
            }
        }
    }
}

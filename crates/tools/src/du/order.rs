//! GNU du's order of output: the arguments one after another, in the order given, each one's lines
//! as its walk produces them. The walk runs every argument at once, so a line of an argument whose
//! predecessors are not finished waits — in memory, and past [`WAIT_IN_MEMORY`] in a spool file —
//! and goes out as soon as they are. An argument whose sizes are still open when its walk ends
//! (hard links charged at the end) holds everything after it until the end of the walk.

use super::list::Line;
use super::spool::{Piece, Spool, write_pieces};
use canopy_engine::output::Sink;
use std::sync::{Arc, Mutex, MutexGuard};

/// Bytes written to stdout at once.
const BATCH: usize = 64 << 10;
/// Waiting lines kept in memory, over all arguments, before they go to the spool file.
const WAIT_IN_MEMORY: usize = 16 << 20;

pub struct Ordered {
    sink: Arc<Sink>,
    /// On a terminal every line goes out at once, as du's do.
    each_line: bool,
    state: Mutex<State>,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Walk {
    Running,
    Done,
    /// Done, with lines that can only be printed at the end.
    DoneOpen,
}

struct State {
    /// The argument whose lines go straight out.
    current: usize,
    walks: Vec<Walk>,
    /// Lines of `current` not written yet.
    out: Vec<u8>,
    /// Lines of each later argument, waiting for their turn.
    waiting: Vec<Vec<Piece>>,
    waiting_in_memory: usize,
    spool: Option<Spool>,
}

impl Ordered {
    pub fn new(sink: Arc<Sink>, arguments: usize, each_line: bool) -> Ordered {
        let state = State {
            current: 0,
            walks: vec![Walk::Running; arguments],
            out: Vec::new(),
            waiting: vec![Vec::new(); arguments],
            waiting_in_memory: 0,
            spool: None,
        };
        Ordered { sink, each_line, state: Mutex::new(state) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A line of argument `root`.
    pub fn line(&self, root: u32, bytes: &[u8]) {
        let mut state = self.lock();
        let root = root as usize;
        let streaming = state.walks.get(state.current) != Some(&Walk::DoneOpen);
        if root == state.current && streaming {
            state.out.extend_from_slice(bytes);
            if self.each_line || state.out.len() >= BATCH {
                self.write_out(&mut state);
            }
        } else {
            state.wait(root, bytes);
        }
    }

    /// The walk of argument `root` is over (`open`: some of its lines come at the end).
    pub fn finished(&self, root: u32, open: bool) {
        let mut state = self.lock();
        let Some(walk) = state.walks.get_mut(root as usize) else { return };
        *walk = if open { Walk::DoneOpen } else { Walk::Done };
        while state.walks.get(state.current) == Some(&Walk::Done) {
            state.current += 1;
            let current = state.current;
            if current == state.walks.len() {
                break;
            }
            let waiting = std::mem::take(&mut state.waiting[current]);
            self.write_out(&mut state);
            let _ = write_pieces(&waiting, state.spool.as_ref(), &mut SinkWriter(&self.sink));
            for piece in &waiting {
                if let Piece::Inline(bytes) = piece {
                    state.waiting_in_memory -= bytes.len();
                }
            }
        }
        self.write_out(&mut state);
    }

    /// After the walk: what waited, each argument's followed by its lines settled at the end
    /// (`late`, in argument order).
    pub fn finish(&self, late: &[Line]) {
        let mut state = self.lock();
        self.write_out(&mut state);
        let mut late = late.iter().peekable();
        for root in 0..state.walks.len() {
            let waiting = std::mem::take(&mut state.waiting[root]);
            let _ = write_pieces(&waiting, state.spool.as_ref(), &mut SinkWriter(&self.sink));
            while let Some(line) = late.next_if(|line| line.place.root as usize == root) {
                let _ = self.sink.write_all(&line.bytes);
            }
        }
        for line in late {
            let _ = self.sink.write_all(&line.bytes);
        }
    }

    fn write_out(&self, state: &mut State) {
        if !state.out.is_empty() {
            // A failed write is recorded in the sink and reported once at exit.
            let _ = self.sink.write_all(&state.out);
            state.out.clear();
        }
    }
}

impl State {
    fn wait(&mut self, root: usize, bytes: &[u8]) {
        match self.waiting[root].last_mut() {
            Some(Piece::Inline(run)) => run.extend_from_slice(bytes),
            _ => self.waiting[root].push(Piece::Inline(bytes.to_vec())),
        }
        self.waiting_in_memory += bytes.len();
        if self.waiting_in_memory >= WAIT_IN_MEMORY {
            self.spill();
        }
    }

    /// Moves every waiting run in memory to the spool file (if one can be made; else they stay).
    fn spill(&mut self) {
        if self.spool.is_none() {
            self.spool = Spool::create(&std::env::temp_dir()).ok();
        }
        let Some(spool) = self.spool.as_mut() else { return };
        for pieces in &mut self.waiting {
            for piece in pieces.iter_mut() {
                if let Piece::Inline(bytes) = piece
                    && let Ok(spooled) = spool.append(bytes)
                {
                    self.waiting_in_memory -= bytes.len();
                    *piece = spooled;
                }
            }
        }
    }
}

/// `std::io::Write` over a sink, for copying spooled lines out.
struct SinkWriter<'a>(&'a Sink);

impl std::io::Write for SinkWriter<'_> {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.write_all(bytes)?;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.0.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::du::links::Place;
    use std::io::Write;

    #[derive(Clone, Default)]
    struct Shared(Arc<Mutex<Vec<u8>>>);

    impl Write for Shared {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(bytes);
            Ok(bytes.len())
        }

        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    fn text(out: &Shared) -> String {
        String::from_utf8(out.0.lock().unwrap().clone()).unwrap()
    }

    #[test]
    fn arguments_come_out_in_order_as_soon_as_their_turn_comes() {
        let out = Shared::default();
        let ordered = Ordered::new(Sink::new(Box::new(out.clone())), 3, true);
        ordered.line(2, b"c1\n");
        ordered.line(0, b"a1\n");
        ordered.line(1, b"b1\n");
        assert_eq!(text(&out), "a1\n", "the first argument streams");
        ordered.finished(2, false);
        ordered.line(0, b"a2\n");
        ordered.finished(0, false);
        assert_eq!(text(&out), "a1\na2\nb1\n", "the second argument's turn: what waited goes out");
        ordered.line(1, b"b2\n");
        assert_eq!(text(&out), "a1\na2\nb1\nb2\n");
        ordered.finished(1, false);
        assert_eq!(text(&out), "a1\na2\nb1\nb2\nc1\n", "the third was done: all out");
        ordered.finish(&[]);
        assert_eq!(text(&out), "a1\na2\nb1\nb2\nc1\n");
    }

    #[test]
    fn an_open_argument_holds_the_rest_until_the_end() {
        let out = Shared::default();
        let ordered = Ordered::new(Sink::new(Box::new(out.clone())), 2, true);
        ordered.line(0, b"a1\n");
        ordered.finished(0, true);
        ordered.line(1, b"b1\n");
        ordered.finished(1, false);
        assert_eq!(text(&out), "a1\n");
        let late =
            |root, bytes: &[u8]| Line { place: Place { root, rel: Vec::new() }, bytes: bytes.to_vec() };
        ordered.finish(&[late(0, b"a\n"), late(1, b"b\n")]);
        assert_eq!(text(&out), "a1\na\nb1\nb\n");
    }

    #[test]
    fn waiting_lines_spill_to_the_spool_and_come_back_in_order() {
        let out = Shared::default();
        let ordered = Ordered::new(Sink::new(Box::new(out.clone())), 2, false);
        let line = vec![b'x'; 1 << 20];
        for _ in 0..20 {
            ordered.line(1, &line);
        }
        assert!(ordered.lock().spool.is_some(), "past the memory limit the lines were spooled");
        ordered.line(1, b"end\n");
        ordered.finished(0, false);
        ordered.finished(1, false);
        ordered.finish(&[]);
        let bytes = out.0.lock().unwrap().clone();
        assert_eq!(bytes.len(), 20 * line.len() + 4);
        assert!(bytes.ends_with(b"xend\n"));
    }
}

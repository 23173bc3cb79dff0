//! Time spent in the engine's metadata system calls, per thread: the I/O side of the seed's time
//! profile (readdir/stat versus communication), and the signal the adaptive thread count follows.
//! Two clock reads per call, from the vDSO.

use std::cell::Cell;
use std::time::Instant;

/// Nanoseconds and calls so far on the calling thread.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoTime {
    pub readdir_ns: u64,
    pub stat_ns: u64,
    pub open_ns: u64,
    pub calls: u64,
}

impl IoTime {
    pub fn total_ns(&self) -> u64 {
        self.readdir_ns + self.stat_ns + self.open_ns
    }
}

thread_local! {
    static IO: Cell<IoTime> = const { Cell::new(IoTime { readdir_ns: 0, stat_ns: 0, open_ns: 0, calls: 0 }) };
}

pub(crate) fn timed_readdir<T>(f: impl FnOnce() -> T) -> T {
    timed(f, |io, ns| io.readdir_ns += ns)
}

pub(crate) fn timed_stat<T>(f: impl FnOnce() -> T) -> T {
    timed(f, |io, ns| io.stat_ns += ns)
}

pub(crate) fn timed_open<T>(f: impl FnOnce() -> T) -> T {
    timed(f, |io, ns| io.open_ns += ns)
}

/// One metadata call, within the walk's politeness budget (the wait for its turn is not I/O time).
fn timed<T>(f: impl FnOnce() -> T, add: impl FnOnce(&mut IoTime, u64)) -> T {
    let (start, value) = crate::politeness::polite(|| (Instant::now(), f()));
    let spent = start.elapsed().as_nanos() as u64;
    IO.with(|cell| {
        let mut io = cell.get();
        add(&mut io, spent);
        io.calls += 1;
        cell.set(io);
    });
    value
}

/// The calling thread's totals.
pub fn thread_io() -> IoTime {
    IO.with(Cell::get)
}

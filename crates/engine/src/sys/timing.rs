//! Time spent in directory reads and stats, per thread: the I/O side of the seed's time profile
//! (readdir/stat versus communication). Two clock reads per call, from the vDSO.

use std::cell::Cell;
use std::time::Instant;

thread_local! {
    static READDIR_NS: Cell<u64> = const { Cell::new(0) };
    static STAT_NS: Cell<u64> = const { Cell::new(0) };
}

pub(crate) fn timed_readdir<T>(f: impl FnOnce() -> T) -> T {
    timed(&READDIR_NS, f)
}

pub(crate) fn timed_stat<T>(f: impl FnOnce() -> T) -> T {
    timed(&STAT_NS, f)
}

fn timed<T>(counter: &'static std::thread::LocalKey<Cell<u64>>, f: impl FnOnce() -> T) -> T {
    let start = Instant::now();
    let value = f();
    let spent = start.elapsed().as_nanos() as u64;
    counter.with(|c| c.set(c.get() + spent));
    value
}

/// (readdir, stat) nanoseconds spent so far by the calling thread.
pub fn thread_io_ns() -> (u64, u64) {
    (READDIR_NS.with(Cell::get), STAT_NS.with(Cell::get))
}

//! The seam between the benchmark and whatever runs its clients. A `Team` runs one piece of work
//! per member, all at once, and hands back every member's report. Threads implement it here; an
//! MPI transport implements it with one member per rank (barrier = MPI_Barrier, reports gathered
//! to rank 0 — `RankReport` is serde-serialisable for that).

use std::sync::Barrier;

use super::RankReport;

/// One participant's view: who it is and how to wait for the others.
pub trait Member {
    fn rank(&self) -> usize;
    fn size(&self) -> usize;
    /// Returns once every member has called it (the same number of times).
    fn barrier(&self);
}

pub trait Team {
    fn size(&self) -> usize;
    /// Runs `work` once per member concurrently. Returns all reports, in rank order, on the member
    /// that reports (every member for threads; rank 0 under MPI), `None` on the others.
    fn run(&self, work: &(dyn Fn(&dyn Member) -> RankReport + Sync)) -> Option<Vec<RankReport>>;
}

/// Members are threads of this process.
pub struct ThreadTeam {
    pub size: usize,
}

struct ThreadMember<'b> {
    rank: usize,
    size: usize,
    barrier: &'b Barrier,
}

impl Member for ThreadMember<'_> {
    fn rank(&self) -> usize {
        self.rank
    }

    fn size(&self) -> usize {
        self.size
    }

    fn barrier(&self) {
        self.barrier.wait();
    }
}

impl Team for ThreadTeam {
    fn size(&self) -> usize {
        self.size
    }

    fn run(&self, work: &(dyn Fn(&dyn Member) -> RankReport + Sync)) -> Option<Vec<RankReport>> {
        let barrier = Barrier::new(self.size);
        std::thread::scope(|scope| {
            let handles: Vec<_> = (0..self.size)
                .map(|rank| {
                    let member = ThreadMember { rank, size: self.size, barrier: &barrier };
                    std::thread::Builder::new()
                        .name(format!("bench-client-{rank}"))
                        .spawn_scoped(scope, move || work(&member))
                        .expect("spawn a benchmark client thread")
                })
                .collect();
            Some(handles.into_iter().map(|h| h.join().expect("benchmark client thread panicked")).collect())
        })
    }
}

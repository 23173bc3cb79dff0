//! The engine's per-worker queue: the owner's push and pop (LIFO), a thief's steal from the front
//! with either split, and push and pop on one queue from several threads at once (the mutex under
//! contention). `cargo bench -p canopy-engine --bench work_queue`.

use canopy_engine::SplitMode;
use canopy_engine::sched::WorkQueue;
use divan::counter::ItemsCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

/// Items pushed before they are popped or stolen.
const DEPTHS: [usize; 3] = [1, 64, 4096];

/// The owner pushes `depth` items, then pops them all.
#[divan::bench(args = DEPTHS)]
fn push_then_pop(bencher: Bencher, depth: usize) {
    let queue = WorkQueue::default();
    bencher.counter(ItemsCount::new(depth)).bench_local(|| {
        for item in 0..depth {
            queue.push(black_box(item));
        }
        while let Some(item) = queue.pop() {
            black_box(item);
        }
    });
}

/// A thief takes from a queue of 1,024 items until it is empty (DEQS: half each time; DRQS: a
/// random share, seeded).
#[divan::bench(args = [SplitMode::Equal, SplitMode::Random])]
fn steal_until_empty(bencher: Bencher, split: SplitMode) {
    const QUEUED: usize = 1024;
    let queue = WorkQueue::default();
    let mut rng = fastrand::Rng::with_seed(7);
    bencher.counter(ItemsCount::new(QUEUED)).bench_local(|| {
        queue.push_all(0..QUEUED);
        while !queue.is_empty() {
            black_box(queue.steal(split, &mut rng));
        }
    });
}

/// A pop from an empty queue: what an idle worker pays before it looks elsewhere.
#[divan::bench]
fn pop_empty(bencher: Bencher) {
    let queue = WorkQueue::<usize>::default();
    bencher.bench_local(|| queue.pop());
}

/// One push and one pop on a queue shared by 1, 2 or 4 threads.
#[divan::bench(threads = [1, 2, 4])]
fn push_pop_shared(bencher: Bencher) {
    let queue = WorkQueue::default();
    bencher.bench(|| {
        queue.push(black_box(1usize));
        queue.pop()
    });
}

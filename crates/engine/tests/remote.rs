//! Work crossing between two sessions in one process, over channels standing in for MPI: every
//! entry is visited exactly once, and every directory is left once, after all its entries were
//! visited — on whichever side its parent lives — even when its work was split between the sides.

mod common;

use canopy_engine::remote::{Completion, RemoteTask};
use canopy_engine::{
    Action, Cx, DirNode, DistributedVisitor, Entry, Session, SplitMode, ThreadPolicy, Visitor, WalkOptions,
};
use common::*;
use crossbeam_channel::{Receiver, Sender, unbounded};
use serde::{Deserialize, Serialize};
use std::os::unix::ffi::OsStrExt;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Per directory, transferable between sides: children visited, the directory's own path as the
/// context entries below it must see (handed to stand-ins), the names of files whose jobs ran (on
/// whichever side), and whether it passed through `leave_stand_in` before going back.
#[derive(Default, Serialize, Deserialize)]
struct Seen {
    children: AtomicU64,
    context: Vec<u8>,
    jobs_done: Mutex<Vec<Vec<u8>>>,
    left_as_stand_in: AtomicBool,
}

#[derive(Default)]
struct Walked {
    visited: Vec<Vec<u8>>,
    /// (directory, children visited, files whose jobs reported to it) at `leave_dir`.
    left: Vec<(Vec<u8>, u64, Vec<Vec<u8>>)>,
    /// Entries that did not see their directory's context or their starting point, completions
    /// that skipped `leave_stand_in`.
    violations: Vec<String>,
}

/// The two sides' visitors. The first holds its entries below the top level until the second has
/// visited something, so some work moves whatever the timing: under a CPU hog the first side could
/// otherwise walk the whole tree before it exported anything.
struct Walker {
    holds_until_moved: bool,
    moved: Arc<AtomicBool>,
    /// The walk's starting point, which every entry must know on either side.
    root: Vec<u8>,
    /// Slashes in the root's path: entries deeper than its children are held.
    root_depth: usize,
}

impl Walker {
    fn hold_until_moved(&self, path: &[u8]) {
        if path.iter().filter(|&&b| b == b'/').count() <= self.root_depth + 1 {
            return;
        }
        // Bounded: if nothing ever moves, the test's assertion says so instead of hanging (the
        // flag is set on giving up so the other entries do not wait too).
        for _ in 0..30_000 {
            if self.moved.load(Ordering::SeqCst) {
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        self.moved.store(true, Ordering::SeqCst);
    }
}

impl Visitor for Walker {
    type State = Walked;
    type DirData = Seen;
    /// A file's name, reported to its directory by whoever runs the job.
    type Job = Vec<u8>;

    fn new_state(&self) -> Walked {
        Walked::default()
    }

    fn visit(&self, cx: &mut Cx<'_, Self>, state: &mut Walked, entry: &Entry<'_, Seen>) -> Action {
        // Slow enough that work queues up while the sides exchange it.
        if entry.dirent_kind() == canopy_engine::FileKind::Dir {
            std::thread::sleep(Duration::from_micros(100));
        }
        if self.holds_until_moved {
            self.hold_until_moved(&entry.path());
        } else {
            self.moved.store(true, Ordering::SeqCst);
        }
        state.visited.push(entry.path());
        let below = entry.relative_path();
        let rebuilt = if below.is_empty() {
            self.root.clone()
        } else {
            [self.root.as_slice(), b"/", below.as_slice()].concat()
        };
        if entry.start_point() != self.root || rebuilt != entry.path() {
            state
                .violations
                .push(format!("{} lost its starting point", String::from_utf8_lossy(&entry.path())));
        }
        if let Some(dir) = entry.dir() {
            dir.data.children.fetch_add(1, Ordering::SeqCst);
            if dir.data.context != dir.path() {
                state.violations.push(format!("{} saw no context", String::from_utf8_lossy(&entry.path())));
            }
            if entry.dirent_kind() != canopy_engine::FileKind::Dir {
                cx.spawn_in(dir, entry.name_cstr().to_bytes().to_vec());
            }
        }
        cx.set_dir_data(Seen { context: entry.path(), ..Seen::default() });
        Action::Continue
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, state: &mut Walked, dir: &Arc<DirNode<Seen>>) {
        let mut jobs = dir.data.jobs_done.lock().unwrap().clone();
        jobs.sort();
        state.left.push((dir.path().to_vec(), dir.data.children.load(Ordering::SeqCst), jobs));
    }

    fn run_job(&self, cx: &mut Cx<'_, Self>, _: &mut Walked, name: Vec<u8>) {
        let dir = cx.job_dir().expect("spawned in a directory");
        dir.data.jobs_done.lock().unwrap().push(name);
    }
}

impl DistributedVisitor for Walker {
    fn stand_in_data(&self, dir: &DirNode<Seen>) -> Seen {
        Seen { context: dir.data.context.clone(), ..Seen::default() }
    }

    fn leave_stand_in(&self, _: &mut Cx<'_, Self>, _: &mut Walked, dir: &Arc<DirNode<Seen>>) {
        dir.data.left_as_stand_in.store(true, Ordering::SeqCst);
    }

    fn absorb_completed(
        &self,
        _: &mut Cx<'_, Self>,
        state: &mut Walked,
        dir: &Arc<DirNode<Seen>>,
        from: Seen,
    ) {
        if !from.left_as_stand_in.into_inner() {
            state
                .violations
                .push(format!("{} came back without leave_stand_in", String::from_utf8_lossy(dir.path())));
        }
        dir.data.children.fetch_add(from.children.into_inner(), Ordering::SeqCst);
        dir.data.jobs_done.lock().unwrap().extend(from.jobs_done.into_inner().unwrap());
    }
}

enum Msg {
    Work(Vec<u8>),
    Done(Vec<u8>),
}

/// What both sides share: messages sent and not yet handled, sides idle, the stop flag.
#[derive(Default)]
struct Shared {
    in_flight: AtomicU64,
    idle_sides: AtomicU64,
    stop: AtomicBool,
}

/// Runs one side: exports whatever is queued (one side always, to stress the protocol), imports
/// what arrives, reports finished imports; the sides stop when both are idle and nothing is in
/// flight.
fn side(
    session: &Session<'_, Walker>,
    peer: u32,
    (tx, rx): (Sender<Msg>, Receiver<Msg>),
    shared: &Shared,
    export_aggressively: bool,
) -> canopy_engine::WalkOutcome<<Walker as Visitor>::State> {
    let Shared { in_flight, idle_sides, stop } = shared;
    session
        .run(|driver| {
            let mut rng = fastrand::Rng::with_seed(u64::from(peer));
            let mut was_idle = false;
            while !stop.load(Ordering::SeqCst) {
                while let Ok(msg) = rx.try_recv() {
                    match msg {
                        Msg::Work(bytes) => {
                            let tasks: Vec<RemoteTask<Vec<u8>, Seen>> = postcard::from_bytes(&bytes).unwrap();
                            driver.import(peer, tasks);
                        }
                        Msg::Done(bytes) => {
                            let done: Completion<Seen> = postcard::from_bytes(&bytes).unwrap();
                            driver.complete(done);
                        }
                    }
                    in_flight.fetch_sub(1, Ordering::SeqCst);
                }
                if export_aggressively || rng.u8(..) < 64 {
                    let tasks = driver.export(&mut rng);
                    if !tasks.is_empty() {
                        in_flight.fetch_add(1, Ordering::SeqCst);
                        tx.send(Msg::Work(postcard::to_allocvec(&tasks).unwrap())).unwrap();
                    }
                }
                for finished in driver.take_finished_imports() {
                    // Through the wire format, as the transport does.
                    let data: Seen =
                        postcard::from_bytes(&postcard::to_allocvec(&finished.node.data).unwrap()).unwrap();
                    let done = Completion { id: finished.id, data };
                    in_flight.fetch_add(1, Ordering::SeqCst);
                    tx.send(Msg::Done(postcard::to_allocvec(&done).unwrap())).unwrap();
                }
                let idle = driver.is_idle() && driver.outstanding_exports() == 0;
                if idle != was_idle {
                    if idle {
                        idle_sides.fetch_add(1, Ordering::SeqCst)
                    } else {
                        idle_sides.fetch_sub(1, Ordering::SeqCst)
                    };
                    was_idle = idle;
                }
                if idle_sides.load(Ordering::SeqCst) == 2
                    && in_flight.load(Ordering::SeqCst) == 0
                    && driver.is_idle()
                {
                    stop.store(true, Ordering::SeqCst);
                }
                driver.wait(Duration::from_micros(200));
            }
        })
        .0
}

/// The names of the non-directories directly in `dir`, sorted.
fn file_names(dir: &[u8]) -> Vec<Vec<u8>> {
    let mut names: Vec<Vec<u8>> = std::fs::read_dir(std::ffi::OsStr::from_bytes(dir))
        .unwrap()
        .map(Result::unwrap)
        .filter(|e| !e.file_type().unwrap().is_dir())
        .map(|e| e.file_name().as_bytes().to_vec())
        .collect();
    names.sort();
    names
}

#[test]
fn work_moves_between_sessions_and_post_order_holds() {
    for seed in 0..3u64 {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("t");
        std::fs::create_dir(&root).unwrap();
        // Breadth guaranteed, shape random: eight random subtrees.
        for i in 0..8 {
            let sub = root.join(format!("s{i}"));
            std::fs::create_dir(&sub).unwrap();
            random_tree(&sub, seed * 100 + i, 3);
        }
        let expected = reference_paths(&root);
        let children = children_per_dir(&root);
        for threads in [1, 3] {
            let options = WalkOptions {
                threads: ThreadPolicy::Fixed(threads),
                split: SplitMode::Random,
                chunk_size: 16,
                ..WalkOptions::default()
            };
            let roots = vec![root.as_os_str().as_bytes().to_vec()];
            let moved = Arc::new(AtomicBool::new(false));
            let root_depth = root.as_os_str().as_bytes().iter().filter(|&&b| b == b'/').count();
            let start = roots[0].clone();
            let walker_a =
                Walker { holds_until_moved: true, moved: moved.clone(), root: start.clone(), root_depth };
            let walker_b = Walker { holds_until_moved: false, moved, root: start, root_depth };
            let a = Session::distributed(&roots, &options, &walker_a);
            let b = Session::distributed(&[], &options, &walker_b);
            let (to_b, from_a) = unbounded();
            let (to_a, from_b) = unbounded();
            let shared = Shared::default();
            let (out_a, out_b) = std::thread::scope(|s| {
                let ha = s.spawn(|| side(&a, 1, (to_b, from_b), &shared, true));
                let hb = s.spawn(|| side(&b, 0, (to_a, from_a), &shared, false));
                (ha.join().unwrap(), hb.join().unwrap())
            });
            let b_visited: usize = out_b.states.iter().map(|s| s.visited.len()).sum();
            assert!(b_visited > 0, "some work moved to the second session");
            let states = || out_a.states.iter().chain(&out_b.states);
            let mut paths: Vec<_> = states().flat_map(|s| s.visited.clone()).collect();
            paths.sort();
            assert_eq!(paths, expected, "seed {seed} threads {threads}");
            let violations: Vec<_> = states().flat_map(|s| s.violations.clone()).collect();
            assert!(violations.is_empty(), "{violations:#?}");
            let mut left: Vec<_> = states().flat_map(|s| s.left.clone()).collect();
            left.sort();
            let want: Vec<_> =
                children.iter().map(|(dir, count)| (dir.clone(), *count, file_names(dir))).collect();
            assert_eq!(
                left, want,
                "each directory left once, after all its entries and jobs, seed {seed} threads {threads}"
            );
        }
    }
}

//! Work crossing between two sessions in one process, over channels standing in for MPI: every
//! entry is visited exactly once, and every directory is left once, after all its entries were
//! visited — on whichever side its parent lives — even when its work was split between the sides.

mod common;

use canopy_engine::remote::{Completion, RemoteTask};
use canopy_engine::{Action, Cx, DirNode, Entry, Session, SplitMode, ThreadPolicy, Visitor, WalkOptions};
use common::*;
use crossbeam_channel::{Receiver, Sender, unbounded};
use serde::{Deserialize, Serialize};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

/// Counts children visited, transferable between sides.
#[derive(Default, Serialize, Deserialize)]
struct Seen(AtomicU64);

struct Walker;

impl Visitor for Walker {
    type State = (Vec<Vec<u8>>, Vec<(Vec<u8>, u64)>);
    type DirData = Seen;
    type Job = ();

    fn new_state(&self) -> Self::State {
        Default::default()
    }

    fn visit(&self, _: &mut Cx<'_, Self>, state: &mut Self::State, entry: &Entry<'_, Seen>) -> Action {
        // Slow enough that work queues up while the sides exchange it.
        if entry.dirent_kind() == canopy_engine::FileKind::Dir {
            std::thread::sleep(Duration::from_micros(100));
        }
        state.0.push(entry.path());
        if let Some(dir) = entry.dir() {
            dir.data.0.fetch_add(1, Ordering::SeqCst);
        }
        Action::Continue
    }

    fn leave_dir(&self, _: &mut Cx<'_, Self>, state: &mut Self::State, dir: &Arc<DirNode<Seen>>) {
        state.1.push((dir.path().to_vec(), dir.data.0.load(Ordering::SeqCst)));
    }

    fn absorb(&self, into: &Seen, from: Seen) {
        into.0.fetch_add(from.0.into_inner(), Ordering::SeqCst);
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
                            let tasks: Vec<RemoteTask<()>> = postcard::from_bytes(&bytes).unwrap();
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
                    let tasks = driver.export(&mut rng, false);
                    if !tasks.is_empty() {
                        in_flight.fetch_add(1, Ordering::SeqCst);
                        tx.send(Msg::Work(postcard::to_allocvec(&tasks).unwrap())).unwrap();
                    }
                }
                for finished in driver.take_finished_imports() {
                    let done = Completion {
                        id: finished.id,
                        data: Seen(AtomicU64::new(finished.node.data.0.load(Ordering::SeqCst))),
                    };
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
            let a = Session::distributed(&roots, &options, &Walker);
            let b = Session::distributed(&[], &options, &Walker);
            let (to_b, from_a) = unbounded();
            let (to_a, from_b) = unbounded();
            let shared = Shared::default();
            let (out_a, out_b) = std::thread::scope(|s| {
                let ha = s.spawn(|| side(&a, 1, (to_b, from_b), &shared, true));
                let hb = s.spawn(|| side(&b, 0, (to_a, from_a), &shared, false));
                (ha.join().unwrap(), hb.join().unwrap())
            });
            let b_visited: usize = out_b.states.iter().map(|s| s.0.len()).sum();
            assert!(b_visited > 0, "some work moved to the second session");
            let mut paths: Vec<_> =
                out_a.states.iter().chain(&out_b.states).flat_map(|s| s.0.clone()).collect();
            paths.sort();
            assert_eq!(paths, expected, "seed {seed} threads {threads}");
            let mut left: Vec<_> =
                out_a.states.iter().chain(&out_b.states).flat_map(|s| s.1.clone()).collect();
            left.sort();
            let want: Vec<_> = children.clone().into_iter().collect();
            assert_eq!(
                left, want,
                "each directory left once, after all its entries, seed {seed} threads {threads}"
            );
        }
    }
}

//! CP, the centralised baseline the seed compares against (Algorithm 1): rank 0 is a master that
//! holds the queue and does no walking; a worker asks it for one task at a time, runs it, and sends
//! every task it created (the directories it discovered) back to it before asking again — each
//! directory passes the master. Termination is detected with the same token ring as the other
//! schedulers.

use super::comm::{Comm, WorkBatch, WorkRequest};
use super::forward::{self, Forwarder};
use super::protocol::{RESULTS, WORK, WORK_REQUEST, decode, encode};
use crate::stats::RankStats;
use canopy_engine::remote::{RemoteTask, RemoteWork};
use canopy_engine::sched::SAMPLE_INTERVAL;
use canopy_engine::{DistributedVisitor, Driver, Session, Visitor, WalkOptions, WalkOutcome};
use mpi::topology::SimpleCommunicator;
use std::collections::VecDeque;
use std::time::{Duration, Instant};

pub fn walk<V>(
    world: &SimpleCommunicator,
    roots: &[Vec<u8>],
    options: &WalkOptions,
    visitor: &V,
    forwarder: &Forwarder,
) -> (WalkOutcome<V::State>, RankStats)
where
    V: DistributedVisitor,
{
    let comm = Comm::new(world);
    if comm.rank == 0 && comm.size > 1 {
        return master::<V>(comm, roots, options, forwarder);
    }
    // A single rank has no master to talk to: it simply walks.
    let session = Session::distributed(roots, options, visitor);
    forwarder.set_draining(true);
    let (outcome, stats) = session.run(|driver| worker(comm, driver, forwarder));
    forwarder.set_draining(false);
    (outcome, stats)
}

/// A task held by the master, with the rank its directory belongs to.
type Queued<V> = (u32, RemoteTask<<V as Visitor>::Job, <V as Visitor>::DirData>);

/// The master: a FIFO of tasks (each with the rank its directory belongs to), handed out one at a
/// time to whichever worker asks.
fn master<V>(
    mut comm: Comm<'_>,
    roots: &[Vec<u8>],
    options: &WalkOptions,
    forwarder: &Forwarder,
) -> (WalkOutcome<V::State>, RankStats)
where
    V: DistributedVisitor,
{
    let started = Instant::now();
    let mut queue: VecDeque<Queued<V>> = roots
        .iter()
        .map(|r| (0, RemoteTask { origin: None, work: RemoteWork::Root { path: r.clone() } }))
        .collect();
    let mut waiting: VecDeque<u32> = VecDeque::new();
    while !comm.stopping {
        let mut active = false;
        while let Some(message) = comm.transport.poll() {
            active = true;
            match message.tag {
                WORK_REQUEST => waiting.push_back(message.from),
                RESULTS => {
                    comm.safra.received_basic();
                    let batch: WorkBatch<V::Job, V::DirData> = decode(&message.bytes);
                    queue.extend(batch.tasks.into_iter().map(|t| (batch.origin, t)));
                }
                super::protocol::TOKEN => comm.safra.receive_token(decode(&message.bytes)),
                super::protocol::STOP => comm.stopping = true,
                super::protocol::OUTPUT => forwarder.print(&message.bytes),
                super::protocol::OUTPUT_END => forwarder.note_end(),
                _ => {}
            }
        }
        while !queue.is_empty()
            && let Some(worker) = waiting.pop_front()
        {
            let (origin, task) = queue.pop_front().expect("checked non-empty");
            // The master runs no pool of its own.
            comm.give(worker, &WorkBatch { origin, sender_threads: 0, tasks: vec![task], budget: None });
        }
        comm.note_idle(queue.is_empty());
        if queue.is_empty() {
            comm.on_passive();
        }
        comm.transport.progress();
        if !active {
            std::thread::sleep(Duration::from_micros(50));
        }
    }
    for worker in waiting {
        comm.transport.send(worker, super::protocol::NO_WORK, Vec::new());
    }
    comm.quiesce(forwarder);
    // The master makes no file-system call: its share of the politeness budget goes unused.
    let mut stats = comm.finish_stats(&canopy_engine::WalkStats::default(), &options.politeness);
    stats.elapsed_secs = started.elapsed().as_secs_f64();
    let outcome = WalkOutcome {
        states: Vec::new(),
        errors: 0,
        quit: false,
        stats: canopy_engine::WalkStats::default(),
    };
    (outcome, stats)
}

/// A worker: asks the master for a task when idle, and sends every task its pool creates back
/// (its workers run none of them).
fn worker<V>(mut comm: Comm<'_>, driver: &Driver<'_, '_, '_, V>, forwarder: &Forwarder) -> RankStats
where
    V: DistributedVisitor,
{
    let alone = comm.size == 1;
    driver.set_forward_created(!alone);
    let mut last_tick = Instant::now();
    while !comm.stopping {
        if driver.failed() {
            // The walk failed here: the job is about to be aborted, not ended together.
            return comm.finish_stats(&driver.stats(), &driver.politeness());
        }
        let mut active = false;
        while let Some(message) = comm.transport.poll() {
            active = true;
            let Some(message) = comm.handle_common(driver, forwarder, message) else { continue };
            if message.tag == WORK {
                comm.take_work(driver, &message.bytes);
                comm.asked = None;
                comm.stats.work_requests_fruitful += 1;
            }
        }
        if !alone && driver.queued() > 0 {
            let tasks = driver.export_created();
            if !tasks.is_empty() {
                comm.stats.tasks_exported += tasks.len() as u64;
                let batch = WorkBatch::new(comm.rank, tasks, driver);
                comm.send_basic(0, RESULTS, encode(&batch));
                active = true;
            }
        }
        let idle = driver.is_idle();
        active |= comm.report_completions(driver);
        if comm.rank != 0 {
            forward::ship(&mut comm.transport, forwarder);
        }
        if driver.quit_requested() {
            comm.broadcast_stop();
        }
        comm.note_idle(idle);
        if idle && !comm.stopping {
            if comm.asked.is_none() && !alone {
                comm.ask(0, &WorkRequest::default());
            }
            comm.on_passive();
        }
        comm.transport.progress();
        if last_tick.elapsed() >= SAMPLE_INTERVAL {
            driver.tick();
            last_tick = Instant::now();
        }
        if !active {
            driver.wait(if idle { Duration::from_micros(50) } else { Duration::from_millis(1) });
        }
    }
    comm.quiesce(forwarder);
    comm.finish_stats(&driver.stats(), &driver.politeness())
}

//! DRQS, DEQS, PA-DRQS and H-DRQS: no master. Each rank runs its engine pool; when the whole rank
//! is idle its communication thread asks one rank for work (at random, or in proximity order), and
//! a rank with queued work answers with a share of it (random or half, the `--split` mode).

use super::comm::{Comm, WorkBatch};
use super::forward::{self, Forwarder};
use super::protocol::{WORK, WORK_REQUEST};
use crate::sched_kind::SchedKind;
use crate::stats::RankStats;
use crate::victims::{Topology, Victims};
use canopy_engine::sched::SAMPLE_INTERVAL;
use canopy_engine::{DistributedVisitor, Driver, Session, WalkOptions, WalkOutcome};
use mpi::topology::SimpleCommunicator;
use std::time::{Duration, Instant};

pub fn walk<V>(
    world: &SimpleCommunicator,
    topology: &Topology,
    kind: SchedKind,
    roots: &[Vec<u8>],
    options: &WalkOptions,
    visitor: &V,
    forwarder: &Forwarder,
) -> (WalkOutcome<V::State>, RankStats)
where
    V: DistributedVisitor,
{
    let mut options = options.clone();
    if kind == SchedKind::Deqs {
        options.split = canopy_engine::SplitMode::Equal;
    }
    let session = Session::distributed(roots, &options, visitor);
    let victims = if kind.proximity_aware() {
        Victims::proximity(topology)
    } else {
        Victims::random(topology.rank, topology.size())
    };
    forwarder.set_draining(true);
    let (outcome, stats) = session.run(|driver| {
        StealLoop { comm: Comm::new(world), victims, failures: 0, retry_at: Instant::now() }
            .run(driver, forwarder)
    });
    forwarder.set_draining(false);
    (outcome, stats)
}

struct StealLoop<'w> {
    comm: Comm<'w>,
    victims: Victims,
    /// Fruitless requests in a row: each doubles the pause before the next (up to 1 ms), so idle
    /// ranks at the end of a walk do not flood each other.
    failures: u32,
    retry_at: Instant,
}

impl StealLoop<'_> {
    fn run<V>(mut self, driver: &Driver<'_, '_, '_, V>, forwarder: &Forwarder) -> RankStats
    where
        V: DistributedVisitor,
    {
        let mut last_tick = Instant::now();
        while !self.comm.stopping {
            if driver.failed() {
                // The walk failed here: the job is about to be aborted, not ended together.
                return self.comm.finish_stats(&driver.stats());
            }
            let mut active = false;
            while let Some(message) = self.comm.transport.poll() {
                active = true;
                let asked_before = self.comm.asked;
                let Some(message) = self.comm.handle_common(driver, forwarder, message) else {
                    if asked_before.is_some() && self.comm.asked.is_none() {
                        self.refused();
                    }
                    continue;
                };
                match message.tag {
                    WORK_REQUEST => {
                        let tasks = if driver.queued() > 0 {
                            driver.export(&mut self.comm.rng, false)
                        } else {
                            Vec::new()
                        };
                        let batch: WorkBatch<V::Job, V::DirData> = (self.comm.rank, tasks);
                        self.comm.give(message.from, &batch);
                    }
                    WORK => {
                        self.comm.take_work(driver, &message.bytes);
                        self.comm.asked = None;
                        self.comm.stats.work_requests_fruitful += 1;
                        self.failures = 0;
                        self.victims.succeeded();
                    }
                    _ => {}
                }
            }
            // Decide idleness before collecting completions: anything finished before this point is
            // reported below, so a passive rank never holds an unsent message.
            let idle = driver.is_idle();
            active |= self.comm.report_completions(driver);
            if self.comm.rank != 0 {
                forward::ship(&mut self.comm.transport, forwarder);
            }
            if driver.quit_requested() {
                self.comm.broadcast_stop();
            }
            self.comm.note_idle(idle);
            if idle && !self.comm.stopping {
                if self.comm.asked.is_none()
                    && Instant::now() >= self.retry_at
                    && let Some(victim) = self.victims.pick()
                {
                    self.comm.ask(victim);
                }
                self.comm.on_passive();
            }
            self.comm.transport.progress();
            if last_tick.elapsed() >= SAMPLE_INTERVAL {
                driver.tick();
                last_tick = Instant::now();
            }
            if !active {
                // Idle ranks poll the network often; busy ones sleep until the pool needs attention.
                driver.wait(if idle { Duration::from_micros(50) } else { Duration::from_millis(1) });
            }
        }
        self.comm.quiesce(forwarder);
        self.comm.finish_stats(&driver.stats())
    }

    fn refused(&mut self) {
        self.failures = (self.failures + 1).min(10);
        self.retry_at = Instant::now() + Duration::from_micros(1 << self.failures);
    }
}

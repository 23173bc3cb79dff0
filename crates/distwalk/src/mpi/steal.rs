//! DRQS, DEQS, PA-DRQS and H-DRQS: no master. Each rank runs its engine pool; its communication
//! thread asks one rank for work (at random, or in proximity order) when the rank wants work, and a
//! rank with queued work answers with a share of it. How requests are paced and shares sized is
//! [`Rules`]: the paper's for DRQS/DEQS/PA-DRQS, the balancing policies for H-DRQS.

use super::MpiCluster;
use super::balance::Rules;
use super::comm::{Comm, Imported, WorkBatch, WorkRequest};
use super::forward::{self, Forwarder};
use super::protocol::{OFFER, WORK, WORK_REQUEST};
use crate::budget::{Budget, BudgetShare};
use crate::sched_kind::SchedKind;
use crate::stats::RankStats;
use crate::victims::Victims;
use canopy_engine::sched::SAMPLE_INTERVAL;
use canopy_engine::{DistributedVisitor, Driver, Session, WalkOptions, WalkOutcome};
use mpi::topology::SimpleCommunicator;
use std::time::{Duration, Instant};

pub fn walk<V>(
    world: &SimpleCommunicator,
    cluster: &MpiCluster,
    kind: SchedKind,
    roots: &[Vec<u8>],
    options: &WalkOptions,
    visitor: &V,
    budget: Option<Budget>,
) -> (WalkOutcome<V::State>, RankStats)
where
    V: DistributedVisitor,
{
    let (topology, forwarder) = (&cluster.topology, &*cluster.forwarder);
    let mut options = options.clone();
    if kind == SchedKind::Deqs {
        options.split = canopy_engine::SplitMode::Equal;
    }
    let session = Session::distributed(roots, &options, visitor);
    let (victims, rules) = match kind {
        SchedKind::HDrqs => (Victims::hierarchical(topology), Rules::balanced(topology.size())),
        SchedKind::PaDrqs => (Victims::proximity(topology), Rules::seed()),
        _ => (Victims::random(topology.rank, topology.size()), Rules::seed()),
    };
    forwarder.set_draining(true);
    let (outcome, stats) = session.run(|driver| {
        StealLoop { comm: Comm::new(world), victims, rules, retry_at: Instant::now(), budget }
            .run(driver, forwarder)
    });
    forwarder.set_draining(false);
    (outcome, stats)
}

struct StealLoop<'w> {
    comm: Comm<'w>,
    victims: Victims,
    rules: Rules,
    /// No request before this (the pause after fruitless ones).
    retry_at: Instant,
    /// This rank's part of the politeness budget, if the walk has one: it follows the work.
    budget: Option<Budget>,
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
                return self.comm.finish_stats(&driver.stats(), &driver.politeness());
            }
            let mut active = false;
            while let Some(message) = self.comm.transport.poll() {
                active = true;
                let asked_before = self.comm.asked;
                let Some(message) = self.comm.handle_common(driver, forwarder, message) else {
                    if asked_before.is_some() && self.comm.asked.is_none() {
                        self.retry_at = Instant::now() + self.rules.refused(&mut self.comm.rng);
                    }
                    continue;
                };
                match message.tag {
                    WORK_REQUEST => {
                        let request = WorkRequest::from_bytes(&message.bytes);
                        self.receive_budget(driver, request.budget);
                        let peer_pending = request.pending.unwrap_or(0) as usize;
                        let tasks = if self.comm.stopping {
                            Vec::new()
                        } else {
                            self.rules.answer(driver, message.from, peer_pending, &mut self.comm.rng)
                        };
                        let batch = self.batch(driver, tasks);
                        self.comm.give(message.from, &batch);
                    }
                    WORK => {
                        let imported = self.comm.take_work(driver, &message.bytes);
                        self.imported(driver, imported);
                        self.comm.asked = None;
                        self.comm.stats.work_requests_fruitful += 1;
                        self.victims.succeeded();
                    }
                    OFFER => {
                        let imported = self.comm.take_work(driver, &message.bytes);
                        self.imported(driver, imported);
                    }
                    _ => {}
                }
            }
            for (peer, tasks) in self.rules.offers(driver) {
                let batch = self.batch(driver, tasks);
                self.comm.offer(peer, &batch);
                active = true;
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
            let wants_work = !self.comm.stopping && (idle || self.rules.wants_work(driver));
            if wants_work
                && self.comm.asked.is_none()
                && Instant::now() >= self.retry_at
                && let Some(victim) = self.victims.pick()
            {
                let pending = self
                    .rules
                    .requests_carry_load()
                    .then(|| u32::try_from(driver.queued() + driver.running()).unwrap_or(u32::MAX));
                // Out of work, the rank gives its budget away to where work still is.
                let budget = if idle { self.give_budget(driver, Budget::spare) } else { None };
                self.comm.ask(victim, &WorkRequest { pending, budget });
            }
            if idle && !self.comm.stopping {
                self.comm.on_passive();
            }
            self.comm.transport.progress();
            if last_tick.elapsed() >= SAMPLE_INTERVAL {
                self.rules.tick(driver);
                last_tick = Instant::now();
            }
            if !active {
                // Ranks that want work poll the network often; busy ones sleep until the pool needs
                // attention (runs empty, or a worker leaves reserved work for a peer).
                driver.wait(if wants_work { Duration::from_micros(50) } else { Duration::from_millis(1) });
            }
        }
        self.comm.quiesce(forwarder);
        self.comm.finish_stats(&driver.stats(), &driver.politeness())
    }

    /// Work for another rank, with half of this rank's budget when there is work to send.
    fn batch<V: DistributedVisitor>(
        &mut self,
        driver: &Driver<'_, '_, '_, V>,
        tasks: Vec<canopy_engine::remote::RemoteTask<V::Job, V::DirData>>,
    ) -> WorkBatch<V::Job, V::DirData> {
        let mut batch = WorkBatch::new(self.comm.rank, tasks, driver);
        if !batch.tasks.is_empty() {
            batch.budget = self.give_budget(driver, Budget::half);
        }
        batch
    }

    fn imported<V: DistributedVisitor>(&mut self, driver: &Driver<'_, '_, '_, V>, imported: Imported) {
        self.receive_budget(driver, imported.budget);
        self.rules.imported(driver, imported.sender_threads);
    }

    /// Takes `amount` of this rank's budget out to send; the workers' limits shrink at once.
    fn give_budget<V: DistributedVisitor>(
        &mut self,
        driver: &Driver<'_, '_, '_, V>,
        amount: fn(&mut Budget) -> Option<BudgetShare>,
    ) -> Option<BudgetShare> {
        let budget = self.budget.as_mut()?;
        let share = amount(budget)?;
        driver.set_politeness(&budget.limits());
        Some(share)
    }

    /// Adds budget another rank gave to what this rank's workers may use.
    fn receive_budget<V: DistributedVisitor>(
        &mut self,
        driver: &Driver<'_, '_, '_, V>,
        share: Option<BudgetShare>,
    ) {
        if let (Some(budget), Some(share)) = (self.budget.as_mut(), share) {
            budget.receive(share);
            driver.set_politeness(&budget.limits());
        }
    }
}

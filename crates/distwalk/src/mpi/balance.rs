//! How a stealing rank paces its requests, sizes its answers and sizes its pool.
//!
//! * [`Rules::Seed`] — DRQS, DEQS and PA-DRQS as the paper defines them: an idle rank asks, the
//!   victim answers with a split of its queue (random or half, `--split`), and after the f-th
//!   refusal in a row the rank pauses 2^f µs (f ≤ 10) before asking again.
//! * [`Rules::Balanced`] — H-DRQS: the [`crate::export`] policy (requests carry the asker's load,
//!   answers halve the difference, refused peers are owed work and offered it unasked, idle workers
//!   leave the next offer's tasks queued), a capped exponential back-off of fruitless requests
//!   ([`crate::backoff`]), and a pool that grows only while its queue can feed the new workers and
//!   no further than the node's mount serves ([`crate::governor`]).

use crate::backoff::{Backoff, cap_for};
use crate::export::{ExportConfig, ExportPolicy, Load};
use crate::governor::PoolGovernor;
use canopy_engine::remote::RemoteTask;
use canopy_engine::{DistributedVisitor, Driver, Visitor};
use std::time::{Duration, Instant};

/// The first pause after a refusal under [`Rules::Balanced`]; it doubles up to [`cap_for`].
const BACKOFF_BASE: Duration = Duration::from_micros(100);

/// Tasks leaving for another rank.
type Tasks<V> = Vec<RemoteTask<<V as Visitor>::Job, <V as Visitor>::DirData>>;

pub enum Rules {
    Seed { failures: u32 },
    Balanced { policy: ExportPolicy, backoff: Backoff, governor: PoolGovernor, since: Instant },
}

impl Rules {
    pub fn seed() -> Self {
        Rules::Seed { failures: 0 }
    }

    pub fn balanced(ranks: u32) -> Self {
        Rules::Balanced {
            policy: ExportPolicy::new(ExportConfig::for_ranks(ranks)),
            backoff: Backoff::new(BACKOFF_BASE, cap_for(ranks)),
            governor: PoolGovernor::default(),
            since: Instant::now(),
        }
    }

    /// Whether work requests carry the asker's load.
    pub fn requests_carry_load(&self) -> bool {
        matches!(self, Rules::Balanced { .. })
    }

    /// Whether the rank asks for work: once idle (seed), or as soon as workers are idle with
    /// nothing queued for them (balanced).
    pub fn wants_work<V: DistributedVisitor>(&self, driver: &Driver<'_, '_, '_, V>) -> bool {
        match self {
            Rules::Seed { .. } => driver.is_idle(),
            Rules::Balanced { .. } => load(driver).wants_work(),
        }
    }

    /// The tasks to answer `peer`'s request with (`peer_pending`: its load, when requests carry it).
    pub fn answer<V: DistributedVisitor>(
        &mut self,
        driver: &Driver<'_, '_, '_, V>,
        peer: u32,
        peer_pending: usize,
        rng: &mut fastrand::Rng,
    ) -> Tasks<V> {
        match self {
            Rules::Seed { .. } if driver.queued() > 0 => driver.export(rng),
            Rules::Seed { .. } => Vec::new(),
            Rules::Balanced { policy, since, .. } => {
                let share = policy.on_request(peer, peer_pending, load(driver), since.elapsed());
                if share == 0 { Vec::new() } else { driver.export_oldest(share) }
            }
        }
    }

    /// Work to send unasked to peers owed it (balanced): `(peer, tasks)` each. Then keeps the next
    /// offer's tasks queued for the peers still owed.
    pub fn offers<V: DistributedVisitor>(&mut self, driver: &Driver<'_, '_, '_, V>) -> Vec<(u32, Tasks<V>)> {
        let Rules::Balanced { policy, since, .. } = self else { return Vec::new() };
        let mut offers = Vec::new();
        while let Some((peer, share)) = policy.offer(load(driver), since.elapsed()) {
            let tasks = driver.export_oldest(share);
            if tasks.is_empty() {
                break;
            }
            offers.push((peer, tasks));
        }
        driver.set_reserve(policy.reserve(load(driver), since.elapsed()));
        offers
    }

    /// A request was refused: the pause before the next one.
    pub fn refused(&mut self, rng: &mut fastrand::Rng) -> Duration {
        match self {
            Rules::Seed { failures } => {
                *failures = (*failures + 1).min(10);
                Duration::from_micros(1 << *failures)
            }
            Rules::Balanced { backoff, .. } => backoff.refused(rng),
        }
    }

    /// Work arrived from a peer whose pool has `sender_threads` workers: the next refusal starts
    /// the pauses over, and (balanced) the pool grows to the sender's, within the mount's need.
    pub fn imported<V: DistributedVisitor>(&mut self, driver: &Driver<'_, '_, '_, V>, sender_threads: usize) {
        match self {
            Rules::Seed { failures } => *failures = 0,
            Rules::Balanced { policy, backoff, governor, .. } => {
                backoff.succeeded();
                driver.grow_to(governor.target(policy.pool_for_import(load(driver), sender_threads)));
            }
        }
    }

    /// The pool's periodic sample: the engine's thread policy (seed), or (balanced) growth only
    /// while the queue can feed the new workers and within what the mount serves, with the workers
    /// above that parked.
    pub fn tick<V: DistributedVisitor>(&mut self, driver: &Driver<'_, '_, '_, V>) {
        let Rules::Balanced { policy, governor, .. } = self else {
            driver.tick();
            return;
        };
        let load = load(driver);
        driver.tick_with(|sample| {
            governor.sample(load.threads, load.running, sample.latency);
            governor.target(policy.thread_target(load, sample.wanted))
        });
        // Workers above the mount's need stay parked, their directories queued for export.
        driver.set_active(governor.cap().unwrap_or(usize::MAX));
    }
}

/// The rank's load as the export policy counts it: the workers that may take tasks.
fn load<V: DistributedVisitor>(driver: &Driver<'_, '_, '_, V>) -> Load {
    Load { queued: driver.queued(), running: driver.running(), threads: driver.active_workers() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seed_pauses_double_up_to_a_millisecond() {
        let mut rules = Rules::seed();
        let mut rng = fastrand::Rng::with_seed(1);
        let pauses: Vec<u128> = (0..12).map(|_| rules.refused(&mut rng).as_micros()).collect();
        assert_eq!(pauses, [2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 1024, 1024]);
    }

    #[test]
    fn balanced_pauses_grow_from_the_base_to_the_job_cap() {
        let mut rules = Rules::balanced(8);
        let mut rng = fastrand::Rng::with_seed(1);
        let pauses: Vec<Duration> = (0..12).map(|_| rules.refused(&mut rng)).collect();
        assert!(pauses[0] <= BACKOFF_BASE, "{pauses:?}");
        assert!(pauses.iter().all(|&p| p <= cap_for(8)), "{pauses:?}");
        assert!(pauses[11] >= cap_for(8) / 2, "after 11 refusals the pause is at the cap: {pauses:?}");
        assert!(rules.requests_carry_load() && !Rules::seed().requests_carry_load());
    }
}

//! The politeness budget of a distributed walk (`--max-rate`, `--max-in-flight`) as it moves
//! between ranks. Each rank holds a part of the slots and of the rate in whole units; the parts
//! always add up to at most the walk's limits, so the ranks together never exceed them. A rank
//! that runs out of work gives all but one of each away with its request for more, and a rank
//! that hands out work sends half of its part along with it: the budget follows the work, and
//! ranks left without any do not keep a share they cannot use.

use canopy_engine::Politeness;
use serde::{Deserialize, Serialize};

/// Units of rate each rank starts with: fine enough that a part halved ten times is still a
/// tenth of a percent of a rank's equal share.
const RATE_UNITS_PER_RANK: u64 = 1 << 10;

/// Budget given by one rank to another, in a work request or beside work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct BudgetShare {
    pub slots: u64,
    pub rate_units: u64,
}

impl BudgetShare {
    fn is_empty(&self) -> bool {
        self.slots == 0 && self.rate_units == 0
    }
}

/// One rank's part of the walk's budget.
#[derive(Clone, Debug, PartialEq)]
pub struct Budget {
    total: Politeness,
    total_rate_units: u64,
    held: BudgetShare,
}

impl Budget {
    /// The part rank `rank` of `size` starts with: an equal share ([`Politeness::share`]). `None`
    /// when the walk has no limits; refused when there are fewer slots than ranks.
    pub fn new(total: &Politeness, rank: usize, size: usize) -> Result<Option<Budget>, String> {
        let start = total.share(rank, size)?;
        Ok(total.is_limited().then(|| Budget {
            total: *total,
            total_rate_units: RATE_UNITS_PER_RANK * size as u64,
            held: BudgetShare {
                slots: start.max_in_flight.unwrap_or(0) as u64,
                rate_units: RATE_UNITS_PER_RANK,
            },
        }))
    }

    /// The limits this rank's part allows now.
    pub fn limits(&self) -> Politeness {
        Politeness {
            max_rate: self
                .total
                .max_rate
                .map(|rate| rate * self.held.rate_units as f64 / self.total_rate_units as f64),
            max_in_flight: self.total.max_in_flight.map(|_| self.held.slots as usize),
        }
    }

    /// What a rank out of work gives away with its request: all but one slot and one unit of
    /// rate, which it keeps to start on whatever work comes back.
    pub fn spare(&mut self) -> Option<BudgetShare> {
        self.give(|held| held.saturating_sub(1))
    }

    /// What goes with work handed to another rank: half of this rank's part (rounded down, so at
    /// least one of each stays).
    pub fn half(&mut self) -> Option<BudgetShare> {
        self.give(|held| held / 2)
    }

    /// Adds budget another rank gave.
    pub fn receive(&mut self, share: BudgetShare) {
        self.held.slots += share.slots;
        self.held.rate_units += share.rate_units;
    }

    fn give(&mut self, amount: impl Fn(u64) -> u64) -> Option<BudgetShare> {
        let share = BudgetShare { slots: amount(self.held.slots), rate_units: amount(self.held.rate_units) };
        self.held.slots -= share.slots;
        self.held.rate_units -= share.rate_units;
        (!share.is_empty()).then_some(share)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(rate: f64, slots: usize) -> Politeness {
        Politeness { max_rate: Some(rate), max_in_flight: Some(slots) }
    }

    fn sum(budgets: &[Budget]) -> (f64, usize) {
        budgets
            .iter()
            .map(Budget::limits)
            .fold((0.0, 0), |(rate, slots), l| (rate + l.max_rate.unwrap(), slots + l.max_in_flight.unwrap()))
    }

    #[test]
    fn ranks_start_with_equal_shares() {
        let budgets: Vec<Budget> =
            (0..4).map(|r| Budget::new(&limits(1000.0, 10), r, 4).unwrap().unwrap()).collect();
        let slots: Vec<usize> = budgets.iter().map(|b| b.limits().max_in_flight.unwrap()).collect();
        assert_eq!(slots, [3, 3, 2, 2]);
        assert!(budgets.iter().all(|b| b.limits().max_rate == Some(250.0)));
        assert_eq!(Budget::new(&Politeness::default(), 0, 4), Ok(None));
        assert!(Budget::new(&limits(1000.0, 3), 0, 4).is_err());
    }

    #[test]
    fn an_idle_rank_keeps_one_of_each_and_the_busy_one_gets_the_rest() {
        let mut idle = Budget::new(&limits(1000.0, 8), 1, 2).unwrap().unwrap();
        let mut busy = Budget::new(&limits(1000.0, 8), 0, 2).unwrap().unwrap();
        busy.receive(idle.spare().unwrap());
        assert_eq!(idle.limits().max_in_flight, Some(1));
        assert_eq!(busy.limits().max_in_flight, Some(7));
        let rate = busy.limits().max_rate.unwrap();
        assert!((rate - 1000.0 * 2047.0 / 2048.0).abs() < 1e-9, "{rate}");
        assert_eq!(idle.spare(), None, "nothing more to give");
        // Work goes back with half of the busy rank's part.
        idle.receive(busy.half().unwrap());
        assert_eq!((idle.limits().max_in_flight, busy.limits().max_in_flight), (Some(4), Some(4)));
    }

    #[test]
    fn a_rate_only_budget_moves_rate_and_no_slots() {
        let total = Politeness { max_rate: Some(600.0), max_in_flight: None };
        let mut a = Budget::new(&total, 0, 3).unwrap().unwrap();
        let mut b = Budget::new(&total, 1, 3).unwrap().unwrap();
        let share = b.spare().unwrap();
        assert_eq!(share.slots, 0);
        a.receive(share);
        assert_eq!(a.limits().max_in_flight, None);
        assert!(a.limits().max_rate.unwrap() > 399.0);
    }

    /// Any sequence of requests, refusals and work moving between ranks: the parts never add up
    /// to more than the limits (budget in a message is held by nobody), every rank keeps at least
    /// one slot and some rate, and once every message arrived the parts add up to the limits.
    #[test]
    fn the_parts_never_exceed_the_limits_and_nothing_is_lost() {
        let total = limits(5000.0, 13);
        let ranks = 5;
        let mut budgets: Vec<Budget> =
            (0..ranks).map(|r| Budget::new(&total, r, ranks).unwrap().unwrap()).collect();
        let mut in_transit: Vec<(usize, BudgetShare)> = Vec::new();
        let mut rng = fastrand::Rng::with_seed(7);
        for _ in 0..10_000 {
            let from = rng.usize(..ranks);
            let to = (from + 1 + rng.usize(..ranks - 1)) % ranks;
            match rng.u8(..3) {
                0 => in_transit.extend(budgets[from].spare().map(|s| (to, s))),
                1 => in_transit.extend(budgets[from].half().map(|s| (to, s))),
                _ if !in_transit.is_empty() => {
                    let (to, share) = in_transit.swap_remove(rng.usize(..in_transit.len()));
                    budgets[to].receive(share);
                }
                _ => {}
            }
            let (rate, slots) = sum(&budgets);
            assert!(rate <= 5000.0 + 1e-6 && slots <= 13, "{rate} {slots}");
            for b in &budgets {
                assert!(b.limits().max_in_flight.unwrap() >= 1 && b.limits().max_rate.unwrap() > 0.0);
            }
        }
        for (to, share) in in_transit.drain(..) {
            budgets[to].receive(share);
        }
        let (rate, slots) = sum(&budgets);
        assert!((rate - 5000.0).abs() < 1e-6 && slots == 13, "{rate} {slots}");
    }
}

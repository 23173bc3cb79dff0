//! The politeness budget (`--max-rate`, `--max-in-flight`): a cap on the file-system calls a walk
//! makes per second and has in progress at once, shared by all its workers, so that a scan of a
//! production file system leaves room for its users. The engine's own calls (open, getdents64,
//! statx) pass through it; a tool puts the calls it makes per entry (unlink, open a file to read or
//! copy) through [`polite`]. A call waits for its turn before it starts, and the wait is not counted
//! as I/O time, so the adaptive thread count does not grow to fill it.

mod rate;
mod slots;

use rate::RateLimit;
use slots::Slots;
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

/// The limits a walk is given; none by default.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Politeness {
    /// File-system calls started per second, at most.
    pub max_rate: Option<f64>,
    /// File-system calls in progress at once, at most.
    pub max_in_flight: Option<usize>,
}

impl Politeness {
    pub fn is_limited(&self) -> bool {
        self.max_rate.is_some() || self.max_in_flight.is_some()
    }

    /// The most workers the limits can keep busy, beside `cores` for the work between calls: a
    /// call in flight each under `--max-in-flight`; under `--max-rate`, twice the calls that
    /// overlap at that rate when a call takes `latency` (Little's law, with room for its
    /// variation). `None` when nothing caps the pool.
    pub fn useful_workers(&self, latency: Option<Duration>, cores: usize) -> Option<usize> {
        let by_slots = self.max_in_flight;
        let by_rate = self
            .max_rate
            .zip(latency)
            .map(|(rate, latency)| (2.0 * rate * latency.as_secs_f64()).ceil() as usize);
        let calls = match (by_slots, by_rate) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        calls.map(|calls| calls + cores)
    }

    /// The part of the limits that process `index` of `count` walking together gets: an equal
    /// share of the rate, and of the calls in flight with the remainder going to the first ones.
    /// Refused when there are fewer calls in flight than processes, each needing one.
    pub fn share(&self, index: usize, count: usize) -> Result<Politeness, String> {
        let max_in_flight = match self.max_in_flight {
            Some(total) if total < count => {
                return Err(format!(
                    "--max-in-flight {total} is fewer than the {count} processes of the walk, which need one each"
                ));
            }
            Some(total) => Some(total / count + usize::from(index < total % count)),
            None => None,
        };
        Ok(Politeness { max_rate: self.max_rate.map(|rate| rate / count as f64), max_in_flight })
    }
}

/// The limits of one walk at run time.
pub(crate) struct CallLimiter {
    rate: Option<RateLimit>,
    slots: Option<Slots>,
    started: Instant,
    /// The limits in force (they change when a rank's share moves with its work).
    current: Mutex<Politeness>,
    /// Counts the times the rate rose: read without a lock by every call, so that a call waiting
    /// for a slot booked at the old rate is woken (through `rose`, under `waiting`) to take a new one.
    rate_rises: AtomicU64,
    waiting: Mutex<()>,
    rose: Condvar,
}

impl CallLimiter {
    /// `None` when nothing is limited: the calls then pay nothing.
    pub(crate) fn new(limits: &Politeness) -> Option<Arc<CallLimiter>> {
        limits.is_limited().then(|| {
            Arc::new(CallLimiter {
                rate: limits.max_rate.map(RateLimit::new),
                slots: limits.max_in_flight.map(Slots::new),
                started: Instant::now(),
                current: Mutex::new(*limits),
                rate_rises: AtomicU64::new(0),
                waiting: Mutex::new(()),
                rose: Condvar::new(),
            })
        })
    }

    /// The limits in force.
    pub(crate) fn limits(&self) -> Politeness {
        *lock(&self.current)
    }

    /// Changes the limits in force. Only their values: a limit the walk started without stays absent.
    pub(crate) fn set(&self, limits: &Politeness) {
        if let (Some(rate), Some(per_second)) = (&self.rate, limits.max_rate)
            && rate.set(per_second, self.now_ns())
        {
            self.rate_rises.fetch_add(1, Ordering::AcqRel);
            // Taking the lock orders the wake-up after any waiter's check of the count.
            drop(lock(&self.waiting));
            self.rose.notify_all();
        }
        if let (Some(slots), Some(capacity)) = (&self.slots, limits.max_in_flight) {
            slots.set_capacity(capacity);
        }
        let mut current = lock(&self.current);
        current.max_rate = current.max_rate.and(limits.max_rate);
        current.max_in_flight = current.max_in_flight.and(limits.max_in_flight);
    }

    fn admit<T>(&self, call: impl FnOnce() -> T) -> T {
        if let Some(rate) = &self.rate {
            self.wait_for_turn(rate);
        }
        let _slot = self.slots.as_ref().map(Slots::take);
        call()
    }

    /// Takes a slot of the rate and sleeps until it, or until the rate rises and forgets it: then
    /// takes a new, earlier one.
    fn wait_for_turn(&self, rate: &RateLimit) {
        loop {
            let rises = self.rate_rises.load(Ordering::Acquire);
            let wait = rate.reserve(self.now_ns());
            if wait == 0 {
                return;
            }
            let (_waiting, sleep) = self
                .rose
                .wait_timeout_while(lock(&self.waiting), Duration::from_nanos(wait), |_| {
                    self.rate_rises.load(Ordering::Acquire) == rises
                })
                .unwrap_or_else(|e| e.into_inner());
            if sleep.timed_out() {
                return;
            }
        }
    }

    fn now_ns(&self) -> u64 {
        self.started.elapsed().as_nanos() as u64
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
}

thread_local! {
    /// The limiter of the walk this thread works for, if it has one.
    static CURRENT: RefCell<Option<Arc<CallLimiter>>> = const { RefCell::new(None) };
    /// Inside an admitted call: calls it makes itself are part of it (and must not wait for a
    /// slot the caller holds).
    static ADMITTED: Cell<bool> = const { Cell::new(false) };
}

/// Makes `limiter` the calling thread's until the guard is dropped.
pub(crate) fn install(limiter: Option<Arc<CallLimiter>>) -> Installed {
    CURRENT.with(|current| *current.borrow_mut() = limiter);
    Installed
}

pub(crate) struct Installed;

impl Drop for Installed {
    fn drop(&mut self) {
        CURRENT.with(|current| current.borrow_mut().take());
    }
}

/// Runs one file-system call within the politeness budget of the walk the calling thread works for: waits
/// for its turn under `--max-rate` and for a free slot under `--max-in-flight`. Off a walk's
/// threads, or without limits, it just runs the call.
pub fn polite<T>(call: impl FnOnce() -> T) -> T {
    if ADMITTED.get() {
        return call();
    }
    CURRENT.with(|current| match &*current.borrow() {
        None => call(),
        Some(limiter) => limiter.admit(|| {
            let _inside = Inside::enter();
            call()
        }),
    })
}

/// Marks the thread as inside an admitted call until dropped (a panicking call included).
struct Inside;

impl Inside {
    fn enter() -> Inside {
        ADMITTED.set(true);
        Inside
    }
}

impl Drop for Inside {
    fn drop(&mut self) {
        ADMITTED.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_limits() {
        let limits = Politeness { max_rate: Some(1000.0), max_in_flight: Some(10) };
        let shares: Vec<Politeness> = (0..4).map(|i| limits.share(i, 4).unwrap()).collect();
        assert_eq!(shares.iter().map(|s| s.max_in_flight.unwrap()).collect::<Vec<_>>(), [3, 3, 2, 2]);
        assert!(shares.iter().all(|s| s.max_rate == Some(250.0)));
        assert_eq!(Politeness::default().share(3, 4).unwrap(), Politeness::default());
    }

    #[test]
    fn workers_past_what_the_limits_keep_busy_are_not_wanted() {
        let ms = Some(Duration::from_millis(1));
        assert_eq!(Politeness::default().useful_workers(ms, 2), None);
        let slots = Politeness { max_rate: None, max_in_flight: Some(4) };
        assert_eq!(slots.useful_workers(None, 2), Some(6));
        let rate = Politeness { max_rate: Some(4000.0), max_in_flight: None };
        assert_eq!(rate.useful_workers(None, 2), None, "no latency measured yet");
        assert_eq!(rate.useful_workers(ms, 2), Some(8 + 2), "4 calls overlap at 4,000/s of 1 ms, twice that");
        let both = Politeness { max_rate: Some(4000.0), max_in_flight: Some(3) };
        assert_eq!(both.useful_workers(ms, 2), Some(5));
    }

    #[test]
    fn fewer_calls_in_flight_than_processes_is_refused() {
        let limits = Politeness { max_rate: None, max_in_flight: Some(3) };
        let refusal = limits.share(0, 4).unwrap_err();
        assert!(refusal.contains("--max-in-flight 3") && refusal.contains("4 processes"), "{refusal}");
    }

    #[test]
    fn a_call_made_inside_an_admitted_call_does_not_wait_for_the_slot_its_caller_holds() {
        let limiter = CallLimiter::new(&Politeness { max_rate: None, max_in_flight: Some(1) });
        let _installed = install(limiter);
        assert_eq!(polite(|| polite(|| 7)), 7);
        assert_eq!(polite(|| 8), 8, "the slot was given back");
    }

    /// A call waiting for a slot booked while the rank's share was small starts as soon as the
    /// share grows, not an hour later.
    #[test]
    fn a_call_waiting_at_a_low_rate_starts_when_the_rate_rises() {
        let limiter =
            CallLimiter::new(&Politeness { max_rate: Some(1.0 / 3600.0), max_in_flight: None }).unwrap();
        let rate = limiter.rate.as_ref().unwrap();
        let (done, finished) = std::sync::mpsc::channel();
        let worker = limiter.clone();
        // Not scoped: if the call is not woken, the test fails without waiting the hour.
        std::thread::spawn(move || {
            let _installed = install(Some(worker));
            polite(|| ()); // the first call goes at once
            polite(|| ()); // the second has a slot an hour later
            let _ = done.send(());
        });
        // Once the second slot is booked the rate rises.
        while rate.next_free_ns.load(std::sync::atomic::Ordering::Acquire) < 2 * 3_600_000_000_000 {
            std::thread::yield_now();
        }
        limiter.set(&Politeness { max_rate: Some(1000.0), max_in_flight: None });
        let started = finished.recv_timeout(Duration::from_secs(60));
        assert!(started.is_ok(), "the waiting call did not start after the rate rose");
    }

    #[test]
    fn off_a_walk_calls_run_unlimited() {
        assert_eq!(polite(|| 5), 5);
        assert!(CallLimiter::new(&Politeness::default()).is_none());
    }
}

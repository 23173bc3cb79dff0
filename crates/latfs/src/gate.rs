//! The way every request into a latfs mount goes, whatever answers it (the passthrough or a
//! synthetic tree): counted in flight, then delayed on the worker thread that serves it.

use std::sync::Arc;

use crate::latency::Latency;
use crate::options::Options;
use crate::stats::{Op, Stats};
use crate::worker::prepare_thread;

pub(crate) struct Gate {
    stats: Arc<Stats>,
    latency: Latency,
}

impl Gate {
    pub(crate) fn new(options: &Options, stats: Arc<Stats>) -> Gate {
        Gate { stats, latency: Latency { metadata: options.delay, data: options.data_delay } }
    }

    /// Serves one request: counts it as in flight, waits out its delay, does `work`. The request is out
    /// of flight before the caller replies, so a client's next request never overlaps it in the counts.
    pub(crate) fn serve<T>(&self, op: Op, work: impl FnOnce() -> T) -> T {
        prepare_thread();
        let _in_flight = self.stats.start(op);
        self.latency.pay(op);
        work()
    }
}

//! The injected latency: each request sleeps on its own worker thread, so concurrent requests overlap
//! their delays exactly as far as the kernel sends them concurrently and workers are free.

use std::time::Duration;

use crate::stats::Op;

#[derive(Clone, Copy, Debug)]
pub(crate) struct Latency {
    pub(crate) metadata: Duration,
    pub(crate) data: Duration,
}

impl Latency {
    pub(crate) fn of(&self, op: Op) -> Duration {
        if op.is_data() { self.data } else { self.metadata }
    }

    /// Waits out one request's delay on the calling worker thread.
    pub(crate) fn pay(&self, op: Op) {
        let delay = self.of(op);
        if !delay.is_zero() {
            std::thread::sleep(delay);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_requests_pay_the_data_delay() {
        let latency = Latency { metadata: Duration::from_micros(500), data: Duration::from_millis(3) };
        assert_eq!(latency.of(Op::Lookup), Duration::from_micros(500));
        assert_eq!(latency.of(Op::Readdir), Duration::from_micros(500));
        assert_eq!(latency.of(Op::Read), Duration::from_millis(3));
        assert_eq!(latency.of(Op::Write), Duration::from_millis(3));
    }
}

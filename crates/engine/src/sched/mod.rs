//! Work scheduling: per-worker LIFO queues, random-victim stealing with equal or random splits (the
//! seed's DEQS/DRQS choice), parking of idle workers, exact termination, and thread-count adaptation.
//! The scheduler is generic over the task type so the distributed transport can reuse it per rank.

mod adapt;
mod limit;
mod queue;
mod scheduler;

pub use adapt::{ADAPTIVE_MAX_THREADS, IoSampler, SAMPLE_INTERVAL, SLOW_CALL, ThreadPolicy, cores};
pub use limit::{MAX_THREADS, ThreadLimit, thread_limit};
pub use queue::{SplitMode, WorkQueue};
pub use scheduler::{Scheduler, StealStats};

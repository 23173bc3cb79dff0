use std::collections::VecDeque;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// How a victim's queue is divided when a thief asks for work.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum SplitMode {
    /// DEQS: the thief takes half (rounded up) of the victim's queued items.
    Equal,
    /// DRQS: the thief takes a uniformly random share, at least one item; the seed found random
    /// splitting balances unknown subtree sizes better on average.
    #[default]
    Random,
}

impl SplitMode {
    /// How many of `queued` items a thief takes.
    pub fn portion(self, queued: usize, rng: &mut fastrand::Rng) -> usize {
        match (self, queued) {
            (_, 0) => 0,
            (SplitMode::Equal, n) => n.div_ceil(2),
            (SplitMode::Random, n) => rng.usize(1..=n),
        }
    }
}

impl std::str::FromStr for SplitMode {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "equal" | "deqs" => Ok(SplitMode::Equal),
            "random" | "drqs" => Ok(SplitMode::Random),
            _ => Err(format!("unknown split mode '{s}' (expected equal or random)")),
        }
    }
}

/// One worker's queue: the owner pushes and pops at the back (LIFO, depth-first, which keeps the open
/// directory fds few); thieves take from the front, where the oldest — shallowest, usually largest —
/// subtrees wait. A mutex per queue is uncontended in the common case and makes splits exact.
pub struct WorkQueue<T> {
    items: Mutex<VecDeque<T>>,
    len: AtomicUsize,
}

impl<T> Default for WorkQueue<T> {
    fn default() -> Self {
        WorkQueue { items: Mutex::new(VecDeque::new()), len: AtomicUsize::new(0) }
    }
}

impl<T> WorkQueue<T> {
    pub fn push(&self, item: T) {
        let mut q = self.lock();
        q.push_back(item);
        self.len.store(q.len(), Ordering::SeqCst);
    }

    pub fn push_all(&self, items: impl IntoIterator<Item = T>) {
        let mut q = self.lock();
        q.extend(items);
        self.len.store(q.len(), Ordering::SeqCst);
    }

    pub fn pop(&self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        let mut q = self.lock();
        let item = q.pop_back();
        self.len.store(q.len(), Ordering::SeqCst);
        item
    }

    /// Removes a portion of the queue from the front, sized by `split`.
    pub fn steal(&self, split: SplitMode, rng: &mut fastrand::Rng) -> Vec<T> {
        if self.is_empty() {
            return Vec::new();
        }
        let mut q = self.lock();
        let take = split.portion(q.len(), rng);
        let stolen: Vec<T> = q.drain(..take).collect();
        self.len.store(q.len(), Ordering::SeqCst);
        stolen
    }

    /// Removes up to `count` items from the front.
    pub fn take_front(&self, count: usize) -> Vec<T> {
        if self.is_empty() || count == 0 {
            return Vec::new();
        }
        let mut q = self.lock();
        let take = count.min(q.len());
        let taken: Vec<T> = q.drain(..take).collect();
        self.len.store(q.len(), Ordering::SeqCst);
        taken
    }

    /// Removes everything queued.
    pub fn drain(&self) -> Vec<T> {
        let mut q = self.lock();
        let all: Vec<T> = q.drain(..).collect();
        self.len.store(0, Ordering::SeqCst);
        all
    }

    pub fn len(&self) -> usize {
        self.len.load(Ordering::SeqCst)
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<T>> {
        // A panicking visitor must not wedge the whole walk behind a poisoned lock.
        self.items.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_split_takes_half_from_the_front() {
        let q = WorkQueue::default();
        q.push_all(0..7);
        let mut rng = fastrand::Rng::with_seed(1);
        assert_eq!(q.steal(SplitMode::Equal, &mut rng), vec![0, 1, 2, 3]);
        assert_eq!(q.len(), 3);
        assert_eq!(q.pop(), Some(6));
    }

    #[test]
    fn random_split_takes_between_one_and_all() {
        let mut rng = fastrand::Rng::with_seed(7);
        let mut seen = std::collections::BTreeSet::new();
        for _ in 0..500 {
            let n = SplitMode::Random.portion(10, &mut rng);
            assert!((1..=10).contains(&n));
            seen.insert(n);
        }
        assert!(seen.len() > 5, "random split should vary: {seen:?}");
        assert_eq!(SplitMode::Random.portion(0, &mut rng), 0);
    }
}

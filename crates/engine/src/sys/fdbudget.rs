//! The fd budget: how many directory fds the engine's cache ([`super::fdcache`]) may keep open. It
//! is half of `RLIMIT_NOFILE` after raising the soft limit to the hard one, which leaves room for
//! the tools' own files (copies, outputs, `-exec`); under a small limit (`ulimit -n 20`), half of
//! it less the standard streams, and never under two, so a walk still has fds to reopen through.

use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
use std::sync::OnceLock;

static ORIGINAL_LIMIT: OnceLock<Rlimit> = OnceLock::new();

/// `RLIMIT_NOFILE` as the process found it, before the budget raised it: what child processes
/// (`find -exec`) must get back.
pub fn original_nofile_limit() -> Rlimit {
    fd_limit();
    ORIGINAL_LIMIT.get().copied().unwrap_or_else(|| getrlimit(Resource::Nofile))
}

/// How many directory fds the engine may keep open at once.
pub fn fd_budget() -> usize {
    static BUDGET: OnceLock<usize> = OnceLock::new();
    *BUDGET.get_or_init(|| budget_for(fd_limit()))
}

/// The fds this process may have open: `RLIMIT_NOFILE`, its soft limit raised to the hard one.
pub fn fd_limit() -> usize {
    static LIMIT: OnceLock<usize> = OnceLock::new();
    *LIMIT.get_or_init(|| {
        let limit = getrlimit(Resource::Nofile);
        let _ = ORIGINAL_LIMIT.set(limit);
        let mut soft = limit.current.unwrap_or(1 << 20);
        if let Some(hard) = limit.maximum.or(Some(1 << 20)) {
            let raised = Rlimit { current: Some(hard), maximum: limit.maximum };
            if hard > soft && setrlimit(Resource::Nofile, raised).is_ok() {
                soft = hard;
            }
        }
        usize::try_from(soft).unwrap_or(usize::MAX).min(1 << 20)
    })
}

fn budget_for(limit: usize) -> usize {
    if limit >= 256 { (limit - 64) / 2 } else { (limit / 2).saturating_sub(3).max(2) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_leaves_room_under_any_limit() {
        assert_eq!(budget_for(1 << 20), ((1 << 20) - 64) / 2);
        assert_eq!(budget_for(1024), 480);
        assert_eq!(budget_for(20), 7);
        assert_eq!(budget_for(10), 2);
        assert_eq!(budget_for(3), 2);
    }
}

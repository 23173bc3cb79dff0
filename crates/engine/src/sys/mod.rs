//! Thin, safe wrappers over the system calls the engine is built on: directories are opened relative to
//! their parent's fd (`openat`), read with `getdents64`, and entries are stat'ed with `statx` relative to
//! the directory fd — so depth is unlimited and no call ever needs a full path.

mod fdbudget;
mod fdcache;
mod fstype;
mod open;
mod stat;
mod timing;

pub use fdbudget::{fd_budget, fd_limit, original_nofile_limit};
pub use fdcache::{CachedFd, PinnedFd, evict_one, open_cached_fds};
pub use fstype::{FsClass, classify_fs};
pub use open::{PATH_MAX, open_beneath, open_dir_at, open_path};
pub use stat::{stat_at, stat_path};
pub use timing::{IoTime, thread_io};
pub(crate) use timing::{timed_open, timed_readdir, timed_stat};

//! GNU find as the oracle of `canopy find`: the same argv run by both in the same directory, the
//! results compared as records (sorted: parallel order is not promised), exit status and messages.

use super::{assert_same_records, canopy, gnu, messages, records, run};
use std::ffi::OsStr;
use std::path::Path;
use std::process::Output;

/// How one comparison is run.
pub struct FindRun<'a> {
    /// Canopy's own options before the find arguments (`-j N`).
    pub canopy_options: &'a [&'a str],
    /// Records end with this byte (`\n`, or NUL for `-print0`).
    pub separator: u8,
    pub stdin: Option<&'a [u8]>,
    /// Extra environment for both (`PATH`, `LC_ALL`, `TZ`).
    pub env: &'a [(&'a str, &'a str)],
}

impl Default for FindRun<'_> {
    fn default() -> Self {
        FindRun { canopy_options: &[], separator: b'\n', stdin: None, env: &[] }
    }
}

impl FindRun<'_> {
    /// Runs GNU find and canopy find with `args` in `cwd`, returns both outputs (GNU first).
    pub fn both<S: AsRef<OsStr>>(&self, cwd: &Path, args: &[S]) -> (Output, Output) {
        let mut find = gnu("find");
        find.current_dir(cwd).args(args).envs(self.env.iter().copied());
        let want = run(find, self.stdin);
        let mut ours = canopy();
        ours.current_dir(cwd).arg("find").args(self.canopy_options).args(args).envs(self.env.iter().copied());
        (want, run(ours, self.stdin))
    }

    /// Asserts canopy find gives GNU find's records, exit status and messages for `args`.
    #[track_caller]
    pub fn same<S: AsRef<OsStr> + std::fmt::Debug>(&self, cwd: &Path, args: &[S]) -> Output {
        let (want, got) = self.both(cwd, args);
        let context = format!("find {args:?} (canopy options {:?}, env {:?})", self.canopy_options, self.env);
        assert_same_records(
            &records(&got.stdout, self.separator),
            &records(&want.stdout, self.separator),
            &format!("stdout differs: {context}"),
        );
        assert_eq!(
            got.status.code(),
            want.status.code(),
            "exit status differs: {context}\ncanopy: {}\nGNU: {}",
            String::from_utf8_lossy(&got.stderr),
            String::from_utf8_lossy(&want.stderr)
        );
        assert_eq!(
            messages(&got.stderr, "canopy find: "),
            messages(&want.stderr, "find: "),
            "stderr differs: {context}"
        );
        got
    }
}

//! User and group names from ids and ids from names, through the C library (so NSS sources such as
//! LDAP count too). Names are bytes, as the system stores them.
//!
//! Names from ids are cached per thread: on a tree of millions of files owned by a handful of users
//! each worker asks NSS once per owner, and workers never wait on each other for a lock.

use std::cell::RefCell;
use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::mem::MaybeUninit;
use std::ptr;
use std::thread::LocalKey;

/// Largest scratch buffer tried for one passwd/group entry (huge groups list many members).
const MAX_BUFFER: usize = 1 << 20;

type Names = RefCell<HashMap<u32, Option<Vec<u8>>>>;

thread_local! {
    static USER_NAMES: Names = RefCell::default();
    static GROUP_NAMES: Names = RefCell::default();
}

/// The login name of `uid`, or `None` when the system has no such user.
pub fn user_name(uid: u32) -> Option<Vec<u8>> {
    cached(&USER_NAMES, uid, || {
        entry(
            // SAFETY: every pointer is valid for the call, and `buf` is as long as said.
            |pw, buf, found| unsafe { libc::getpwuid_r(uid, pw, buf.as_mut_ptr().cast(), buf.len(), found) },
            // SAFETY: a found entry's `pw_name` is a NUL-terminated string in the live buffer.
            |pw: &libc::passwd| unsafe { CStr::from_ptr(pw.pw_name) }.to_bytes().to_vec(),
        )
    })
}

/// The name of group `gid`, or `None` when the system has no such group.
pub fn group_name(gid: u32) -> Option<Vec<u8>> {
    cached(&GROUP_NAMES, gid, || {
        entry(
            // SAFETY: as in `user_name`.
            |gr, buf, found| unsafe { libc::getgrgid_r(gid, gr, buf.as_mut_ptr().cast(), buf.len(), found) },
            // SAFETY: a found entry's `gr_name` is a NUL-terminated string in the live buffer.
            |gr: &libc::group| unsafe { CStr::from_ptr(gr.gr_name) }.to_bytes().to_vec(),
        )
    })
}

/// The uid of user `name`.
pub fn uid_of(name: &str) -> Option<u32> {
    let name = CString::new(name).ok()?;
    entry(
        // SAFETY: as in `user_name`; `name` is NUL-terminated.
        |pw, buf, found| unsafe {
            libc::getpwnam_r(name.as_ptr(), pw, buf.as_mut_ptr().cast(), buf.len(), found)
        },
        |pw: &libc::passwd| pw.pw_uid,
    )
}

/// The gid of group `name`.
pub fn gid_of(name: &str) -> Option<u32> {
    let name = CString::new(name).ok()?;
    entry(
        // SAFETY: as in `user_name`; `name` is NUL-terminated.
        |gr, buf, found| unsafe {
            libc::getgrnam_r(name.as_ptr(), gr, buf.as_mut_ptr().cast(), buf.len(), found)
        },
        |gr: &libc::group| gr.gr_gid,
    )
}

/// This thread's answer for `id`, asking `lookup` the first time.
fn cached(
    names: &'static LocalKey<Names>,
    id: u32,
    lookup: impl FnOnce() -> Option<Vec<u8>>,
) -> Option<Vec<u8>> {
    if let Some(name) = names.with_borrow(|names| names.get(&id).cloned()) {
        return name;
    }
    let name = lookup();
    names.with_borrow_mut(|names| names.insert(id, name.clone()));
    name
}

/// Runs a `get*_r` call with a growing scratch buffer until the entry fits, and reads what is wanted
/// from the entry while the buffer that holds its strings is alive.
fn entry<E, T>(
    mut call: impl FnMut(*mut E, &mut [u8], *mut *mut E) -> libc::c_int,
    read: impl FnOnce(&E) -> T,
) -> Option<T> {
    let mut buf = vec![0u8; 1024];
    loop {
        let mut entry = MaybeUninit::<E>::uninit();
        let mut found = ptr::null_mut();
        match call(entry.as_mut_ptr(), &mut buf, &mut found) {
            libc::ERANGE if buf.len() < MAX_BUFFER => buf.resize(buf.len() * 2, 0),
            // SAFETY: on success a non-null `found` points to `entry`, which the call filled.
            0 if !found.is_null() => return Some(read(unsafe { &*found })),
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_resolves_both_ways_and_unknown_ids_and_names_do_not() {
        assert_eq!(user_name(0).as_deref(), Some(&b"root"[..]));
        assert_eq!(group_name(0).as_deref(), Some(&b"root"[..]));
        assert_eq!(uid_of("root"), Some(0));
        assert_eq!(gid_of("root"), Some(0));
        assert_eq!(user_name(3_999_999_999), None);
        assert_eq!(group_name(3_999_999_999), None);
        assert_eq!(uid_of("no-such-user-here"), None);
        assert_eq!(gid_of("no-such-group-here"), None);
        assert_eq!(uid_of("nul\0inside"), None);
    }

    #[test]
    fn answers_are_kept_per_thread() {
        let cached = |names: &'static LocalKey<Names>, id| names.with_borrow(|names| names.get(&id).cloned());
        assert_eq!(user_name(0).as_deref(), Some(&b"root"[..]));
        assert_eq!(group_name(3_999_999_999), None);
        assert_eq!(cached(&USER_NAMES, 0), Some(Some(b"root".to_vec())));
        assert_eq!(cached(&GROUP_NAMES, 3_999_999_999), Some(None), "a missing name is remembered too");
        std::thread::spawn(move || {
            assert_eq!(cached(&USER_NAMES, 0), None, "another thread has its own cache");
            assert_eq!(user_name(0).as_deref(), Some(&b"root"[..]));
        })
        .join()
        .unwrap();
    }
}

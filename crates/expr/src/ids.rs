//! User and group names, looked up through NSS (`getpwuid_r` & co.) and cached: on a tree of
//! millions of files owned by a handful of users, each lookup happens once.

use std::collections::HashMap;
use std::ffi::{CStr, CString};
use std::sync::{LazyLock, RwLock};

type Cache<K, V> = LazyLock<RwLock<HashMap<K, V>>>;

static USER_NAMES: Cache<u32, Option<Vec<u8>>> = LazyLock::new(Default::default);
static GROUP_NAMES: Cache<u32, Option<Vec<u8>>> = LazyLock::new(Default::default);

fn cached<K: std::hash::Hash + Eq + Copy, V: Clone>(
    cache: &Cache<K, V>,
    key: K,
    lookup: impl FnOnce(K) -> V,
) -> V {
    if let Some(v) = cache.read().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return v.clone();
    }
    let value = lookup(key);
    cache.write().unwrap_or_else(|e| e.into_inner()).insert(key, value.clone());
    value
}

/// The user name for a uid, if the system knows one.
pub fn user_name(uid: u32) -> Option<Vec<u8>> {
    cached(&USER_NAMES, uid, |uid| {
        lookup_passwd(|pw, buf, res| unsafe { libc::getpwuid_r(uid, pw, buf.as_mut_ptr(), buf.len(), res) })
            .map(|(name, _)| name)
    })
}

/// The group name for a gid, if the system knows one.
pub fn group_name(gid: u32) -> Option<Vec<u8>> {
    cached(&GROUP_NAMES, gid, |gid| {
        lookup_group(|gr, buf, res| unsafe { libc::getgrgid_r(gid, gr, buf.as_mut_ptr(), buf.len(), res) })
            .map(|(name, _)| name)
    })
}

/// The uid of a user name.
pub fn uid_of(name: &str) -> Option<u32> {
    let cname = CString::new(name).ok()?;
    lookup_passwd(|pw, buf, res| unsafe {
        libc::getpwnam_r(cname.as_ptr(), pw, buf.as_mut_ptr(), buf.len(), res)
    })
    .map(|(_, id)| id)
}

/// The gid of a group name.
pub fn gid_of(name: &str) -> Option<u32> {
    let cname = CString::new(name).ok()?;
    lookup_group(|gr, buf, res| unsafe {
        libc::getgrnam_r(cname.as_ptr(), gr, buf.as_mut_ptr(), buf.len(), res)
    })
    .map(|(_, id)| id)
}

fn lookup_passwd(
    call: impl Fn(*mut libc::passwd, &mut Vec<libc::c_char>, *mut *mut libc::passwd) -> libc::c_int,
) -> Option<(Vec<u8>, u32)> {
    let mut buf = vec![0 as libc::c_char; 1024];
    loop {
        // SAFETY: the struct is plain data filled by the call; `result` tells whether it was.
        let mut pw: libc::passwd = unsafe { std::mem::zeroed() };
        let mut result = std::ptr::null_mut();
        match call(&mut pw, &mut buf, &mut result) {
            libc::ERANGE if buf.len() < 1 << 20 => buf.resize(buf.len() * 4, 0),
            0 if !result.is_null() => {
                // SAFETY: on success pw_name points into buf, NUL-terminated.
                let name = unsafe { CStr::from_ptr(pw.pw_name) }.to_bytes().to_vec();
                return Some((name, pw.pw_uid));
            }
            _ => return None,
        }
    }
}

fn lookup_group(
    call: impl Fn(*mut libc::group, &mut Vec<libc::c_char>, *mut *mut libc::group) -> libc::c_int,
) -> Option<(Vec<u8>, u32)> {
    let mut buf = vec![0 as libc::c_char; 1024];
    loop {
        // SAFETY: as in lookup_passwd.
        let mut gr: libc::group = unsafe { std::mem::zeroed() };
        let mut result = std::ptr::null_mut();
        match call(&mut gr, &mut buf, &mut result) {
            libc::ERANGE if buf.len() < 1 << 20 => buf.resize(buf.len() * 4, 0),
            0 if !result.is_null() => {
                // SAFETY: on success gr_name points into buf, NUL-terminated.
                let name = unsafe { CStr::from_ptr(gr.gr_name) }.to_bytes().to_vec();
                return Some((name, gr.gr_gid));
            }
            _ => return None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_known() {
        assert_eq!(user_name(0).as_deref(), Some(&b"root"[..]));
        assert_eq!(group_name(0).as_deref(), Some(&b"root"[..]));
        assert_eq!(uid_of("root"), Some(0));
        assert_eq!(gid_of("root"), Some(0));
        assert_eq!(user_name(4_000_000_000), None);
        assert_eq!(uid_of("no-such-user-here"), None);
    }
}

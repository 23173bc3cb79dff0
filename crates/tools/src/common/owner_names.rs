//! User and group names from ids, through the C library (so NSS sources such as LDAP count too).

use std::ffi::CStr;
use std::mem::MaybeUninit;
use std::ptr;

/// Largest scratch buffer tried for one passwd/group entry (huge groups list many members).
const MAX_BUFFER: usize = 1 << 20;

/// The login name of `uid`, or `None` when the system has no such user.
pub fn user_name(uid: u32) -> Option<String> {
    lookup(|buf| {
        let mut entry = MaybeUninit::<libc::passwd>::uninit();
        let mut found = ptr::null_mut();
        // SAFETY: every pointer is valid for the call; `buf` outlives the returned name's use below.
        let rc = unsafe {
            libc::getpwuid_r(uid, entry.as_mut_ptr(), buf.as_mut_ptr().cast(), buf.len(), &mut found)
        };
        // SAFETY: on success `found` points to `entry`, whose `pw_name` points into `buf`.
        (rc, (!found.is_null()).then(|| unsafe { name((*found).pw_name) }))
    })
}

/// The name of group `gid`, or `None` when the system has no such group.
pub fn group_name(gid: u32) -> Option<String> {
    lookup(|buf| {
        let mut entry = MaybeUninit::<libc::group>::uninit();
        let mut found = ptr::null_mut();
        // SAFETY: as in `user_name`.
        let rc = unsafe {
            libc::getgrgid_r(gid, entry.as_mut_ptr(), buf.as_mut_ptr().cast(), buf.len(), &mut found)
        };
        // SAFETY: on success `found` points to `entry`, whose `gr_name` points into `buf`.
        (rc, (!found.is_null()).then(|| unsafe { name((*found).gr_name) }))
    })
}

/// Runs a `get*_r` call with a growing buffer until it fits.
fn lookup(mut call: impl FnMut(&mut [u8]) -> (libc::c_int, Option<String>)) -> Option<String> {
    let mut buf = vec![0u8; 1024];
    loop {
        match call(&mut buf) {
            (libc::ERANGE, _) if buf.len() < MAX_BUFFER => buf.resize(buf.len() * 2, 0),
            (0, found) => return found,
            _ => return None,
        }
    }
}

/// # Safety
/// `p` must point to a NUL-terminated string.
unsafe fn name(p: *const libc::c_char) -> String {
    // SAFETY: guaranteed by the caller.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_resolves_and_unknown_ids_do_not() {
        assert_eq!(user_name(0).as_deref(), Some("root"));
        assert_eq!(group_name(0).as_deref(), Some("root"));
        assert_eq!(user_name(3_999_999_999), None);
        assert_eq!(group_name(3_999_999_999), None);
    }
}

//! Local-time conversions through the C library (find's formats and `-daystart` follow `TZ`).

use std::ffi::CString;

/// `localtime_r`.
pub fn local_tm(t: i64) -> Option<libc::tm> {
    let time: libc::time_t = t;
    // SAFETY: an all-zero tm is a valid value to be overwritten; both pointers are valid.
    let mut tm: libc::tm = unsafe { std::mem::zeroed() };
    let ok = unsafe { !libc::localtime_r(&time, &mut tm).is_null() };
    ok.then_some(tm)
}

/// `strftime` with one conversion letter, e.g. `strftime_letter(t, b'Y')`.
pub fn strftime(tm: &libc::tm, format: &str) -> Vec<u8> {
    let Ok(fmt) = CString::new(format) else { return Vec::new() };
    let mut buf = vec![0u8; 256];
    // SAFETY: buf is writable for its length; fmt is NUL-terminated; tm is a valid struct.
    let n = unsafe { libc::strftime(buf.as_mut_ptr().cast(), buf.len(), fmt.as_ptr(), tm) };
    buf.truncate(n);
    buf
}

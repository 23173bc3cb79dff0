//! The character set names and patterns are read in: GNU find follows the C library's `LC_CTYPE`
//! (from `LC_ALL`, `LC_CTYPE` or `LANG`). In a UTF-8 locale `?` and `.` match one character and
//! case folds across Unicode; in the C locale (or one that is not installed) every byte is a
//! character and only ASCII letters fold.

use std::ffi::CStr;
use std::sync::OnceLock;

/// Whether the environment's `LC_CTYPE` locale is UTF-8 (looked up once, without changing the
/// process's locale).
pub fn utf8_ctype() -> bool {
    static UTF8: OnceLock<bool> = OnceLock::new();
    *UTF8.get_or_init(|| {
        // SAFETY: newlocale reads the environment and returns a new handle (or null if the named
        // locale is not installed); nl_langinfo_l's string lives until freelocale.
        unsafe {
            let locale = libc::newlocale(libc::LC_CTYPE_MASK, c"".as_ptr(), std::ptr::null_mut());
            if locale.is_null() {
                return false;
            }
            let codeset = CStr::from_ptr(libc::nl_langinfo_l(libc::CODESET, locale));
            let utf8 = codeset.to_bytes().eq_ignore_ascii_case(b"UTF-8");
            libc::freelocale(locale);
            utf8
        }
    })
}

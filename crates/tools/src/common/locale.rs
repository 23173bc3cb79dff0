//! The character set of the user's locale (LC_ALL, LC_CTYPE, LANG), as the C library resolves it:
//! GNU tools quote names, fold case and match `.` by characters in a UTF-8 locale and by bytes in
//! the C locale, and so do ours.

use std::sync::OnceLock;

/// Whether the locale's character set is UTF-8 (a locale that is named but not installed counts
/// as C, as it does for the C library).
pub fn utf8_locale() -> bool {
    static UTF8: OnceLock<bool> = OnceLock::new();
    *UTF8.get_or_init(|| {
        // SAFETY: newlocale with an empty name reads the environment and returns a new locale
        // object or null; nl_langinfo_l reads from that object, which is freed after the copy.
        unsafe {
            let locale = libc::newlocale(libc::LC_CTYPE_MASK, c"".as_ptr(), std::ptr::null_mut());
            if locale.is_null() {
                return false;
            }
            let codeset = std::ffi::CStr::from_ptr(libc::nl_langinfo_l(libc::CODESET, locale));
            let utf8 = codeset.to_bytes().eq_ignore_ascii_case(b"UTF-8");
            libc::freelocale(locale);
            utf8
        }
    })
}

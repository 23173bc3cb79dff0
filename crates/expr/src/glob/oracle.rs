//! Differential test: [`Glob`] against the C library's own fnmatch(3), GNU find's engine, on
//! seeded random patterns and names (flags 0 or `FNM_CASEFOLD`, never `FNM_PERIOD`).

use super::Glob;
use std::ffi::CString;

/// Cases per run: a million in an optimised build, a tenth of that in a debug one.
const CASES: usize = if cfg!(debug_assertions) { 100_000 } else { 1_000_000 };

/// Pattern pieces: wildcards, bracket syntax (classes, collating symbols, equivalence classes,
/// valid and not), escapes, letters in both cases, `/`, `.` and bytes above ASCII.
const PATTERN_PIECES: &[&[u8]] = &[
    b"*",
    b"*",
    b"?",
    b"[",
    b"]",
    b"!",
    b"^",
    b"-",
    b"\\",
    b"a",
    b"A",
    b"b",
    b"B",
    b"c",
    b"z",
    b"Z",
    b".",
    b"/",
    b":",
    b"=",
    b"0",
    b"9",
    b" ",
    b"[:alpha:]",
    b"[:upper:]",
    b"[:lower:]",
    b"[:digit:]",
    b"[:space:]",
    b"[:punct:]",
    b"[:xdigit:]",
    b"[:nope:]",
    b"[:a",
    b"[=a=]",
    b"[.a.]",
    b"[.-.]",
    b"[.ab.]",
    b"a-c",
    b"A-Z",
    b"\xe9",
    b"\xc9",
    b"\x7f",
    b"\x0b",
];

/// Name bytes: the literal ones the patterns use, plus the pattern syntax itself.
const NAME_BYTES: &[u8] = b"aAbBcCzZ.-/[]!^\\*?:=09 _\xe9\xc9\x7f\x0b";

/// Runs `f` with the calling thread in `locale` (the process's locale is left alone).
fn in_locale<T>(locale: &std::ffi::CStr, f: impl FnOnce() -> T) -> T {
    // SAFETY: newlocale copies the name; uselocale changes only this thread's locale and returns
    // the previous one, which is put back before the new one is freed.
    unsafe {
        let new = libc::newlocale(libc::LC_ALL_MASK, locale.as_ptr(), std::ptr::null_mut());
        assert!(!new.is_null(), "locale {locale:?} is not installed");
        let previous = libc::uselocale(new);
        let result = f();
        libc::uselocale(previous);
        libc::freelocale(new);
        result
    }
}

fn libc_fnmatch(pattern: &[u8], name: &[u8], fold: bool) -> bool {
    let pattern = CString::new(pattern).expect("generated patterns have no NUL");
    let name = CString::new(name).expect("generated names have no NUL");
    let flags = if fold { libc::FNM_CASEFOLD } else { 0 };
    // SAFETY: both arguments are NUL-terminated strings that outlive the call.
    let result = unsafe { libc::fnmatch(pattern.as_ptr(), name.as_ptr(), flags) };
    assert!(result == 0 || result == libc::FNM_NOMATCH, "fnmatch failed: {result}");
    result == 0
}

fn random_pattern(rng: &mut fastrand::Rng, ascii_only: bool) -> Vec<u8> {
    let mut pattern = Vec::new();
    // One pattern in three is a fast-path shape: a literal with stars at either end.
    if rng.u8(..3) == 0 {
        let literal = random_name(rng, ascii_only);
        let literal = literal.iter().copied().filter(|b| !b"*?[\\".contains(b));
        if rng.bool() {
            pattern.push(b'*');
        }
        pattern.extend(literal);
        if rng.bool() {
            pattern.push(b'*');
        }
        return pattern;
    }
    for _ in 0..rng.usize(0..8) {
        let piece = PATTERN_PIECES[rng.usize(..PATTERN_PIECES.len())];
        if !ascii_only || piece.is_ascii() {
            pattern.extend_from_slice(piece);
        }
    }
    pattern
}

fn random_name(rng: &mut fastrand::Rng, ascii_only: bool) -> Vec<u8> {
    (0..rng.usize(0..7))
        .map(|_| NAME_BYTES[rng.usize(..NAME_BYTES.len())])
        .filter(|b| !ascii_only || b.is_ascii())
        .collect()
}

/// A name that often matches: the pattern with its syntax dropped (or, half the time, kept: a
/// bracket may be a literal `[`) and one byte sometimes changed.
fn name_like(rng: &mut fastrand::Rng, pattern: &[u8], ascii_only: bool) -> Vec<u8> {
    let keep_syntax = rng.bool();
    let mut name: Vec<u8> =
        pattern.iter().copied().filter(|b| keep_syntax || !b"*?[]\\".contains(b)).collect();
    if !name.is_empty() && rng.bool() {
        let i = rng.usize(..name.len());
        name[i] = NAME_BYTES[rng.usize(..NAME_BYTES.len())];
    }
    if rng.bool() {
        name.insert(0, NAME_BYTES[rng.usize(..NAME_BYTES.len())]);
    }
    name.retain(|b| !ascii_only || b.is_ascii());
    name
}

/// Compares `cases` random patterns and names under `locale`; returns how many matched.
fn differ(seed: u64, locale: &std::ffi::CStr, utf8: bool, ascii_only: bool) -> usize {
    let mut rng = fastrand::Rng::with_seed(seed);
    in_locale(locale, || {
        let mut matched = 0;
        for case in 0..CASES {
            let pattern = random_pattern(&mut rng, ascii_only);
            let name = if rng.bool() {
                random_name(&mut rng, ascii_only)
            } else {
                name_like(&mut rng, &pattern, ascii_only)
            };
            let fold = rng.bool();
            let ours = Glob::with_charset(&pattern, fold, utf8).matches(&name);
            let theirs = libc_fnmatch(&pattern, &name, fold);
            assert_eq!(
                ours,
                theirs,
                "case {case}: pattern {:?} name {:?} fold {fold}: ours {ours}, fnmatch {theirs}",
                pattern.escape_ascii().to_string(),
                name.escape_ascii().to_string(),
            );
            matched += usize::from(ours);
        }
        matched
    })
}

/// The generator must exercise both outcomes, or the comparison proves little.
fn assert_both_outcomes(matched: usize) {
    assert!(matched > CASES / 20 && matched < CASES * 19 / 20, "{matched} of {CASES} matched");
}

#[test]
fn bytes_agree_with_libc_in_the_c_locale() {
    assert_both_outcomes(differ(0x5eed_0001, c"C", false, false));
}

#[test]
fn ascii_agrees_with_libc_in_a_utf8_locale() {
    assert_both_outcomes(differ(0x5eed_0002, c"C.UTF-8", true, true));
}

/// Malformed brackets whose reading changed across glibc versions, always compared.
#[test]
fn malformed_brackets_agree_with_libc() {
    let cases: &[(&[u8], &[u8])] = &[
        (b"[[", b"[["),
        (b"[![", b"[!["),
        (b"[ab", b"a"),
        (b"[ab", b"[ab"),
        (b"[a-", b"["),
        (b"[a-", b"[a-"),
        (b"[a\\", b"a"),
        (b"[a[:alpha", b"[a[:alpha"),
        (b"[a[=b", b"[a[=b"),
        (b"[a[.b", b"[a[.b"),
        (b"[a[.bc.]]", b"a"),
        (b"[a[=bc=]]", b"a"),
        (b"[[:alpha:]", b"[[:alpha:]"),
        (b"[[:nope:]]", b"a"),
        (b"[![:nope:]]", b"a"),
    ];
    in_locale(c"C", || {
        for &(pattern, name) in cases {
            for fold in [false, true] {
                let theirs = libc_fnmatch(pattern, name, fold);
                assert_eq!(
                    Glob::with_charset(pattern, fold, false).matches(name),
                    theirs,
                    "pattern {:?} name {:?} fold {fold}",
                    pattern.escape_ascii().to_string(),
                    name.escape_ascii().to_string(),
                );
            }
        }
    });
}

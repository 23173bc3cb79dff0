//! glibc's regex syntax bits (regex.h's `RE_*`) and the syntax of each `-regextype`.

/// glibc's syntax bits (`RE_BACKSLASH_ESCAPE_IN_LISTS` …), the same values as regex.h.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Syntax(pub(super) u32);

pub(super) const BACKSLASH_ESCAPE_IN_LISTS: u32 = 1;
pub(super) const BK_PLUS_QM: u32 = 1 << 1;
pub(super) const CHAR_CLASSES: u32 = 1 << 2;
pub(super) const CONTEXT_INDEP_ANCHORS: u32 = 1 << 3;
pub(super) const CONTEXT_INDEP_OPS: u32 = 1 << 4;
pub(super) const CONTEXT_INVALID_OPS: u32 = 1 << 5;
pub(super) const DOT_NEWLINE: u32 = 1 << 6;
pub(super) const DOT_NOT_NULL: u32 = 1 << 7;
pub(super) const HAT_LISTS_NOT_NEWLINE: u32 = 1 << 8;
pub(super) const INTERVALS: u32 = 1 << 9;
pub(super) const LIMITED_OPS: u32 = 1 << 10;
pub(super) const NEWLINE_ALT: u32 = 1 << 11;
pub(super) const NO_BK_BRACES: u32 = 1 << 12;
pub(super) const NO_BK_PARENS: u32 = 1 << 13;
pub(super) const NO_BK_REFS: u32 = 1 << 14;
pub(super) const NO_BK_VBAR: u32 = 1 << 15;
pub(super) const NO_EMPTY_RANGES: u32 = 1 << 16;
pub(super) const UNMATCHED_RIGHT_PAREN_ORD: u32 = 1 << 17;
pub(super) const NO_GNU_OPS: u32 = 1 << 19;
pub(super) const INVALID_INTERVAL_ORD: u32 = 1 << 21;
/// Set by the parser itself where a `^` is an anchor in any syntax: at the start, after `(`, `|`.
pub(super) const CARET_ANCHORS_HERE: u32 = 1 << 23;
pub(super) const CONTEXT_INVALID_DUP: u32 = 1 << 24;

const POSIX_COMMON: u32 = CHAR_CLASSES | DOT_NEWLINE | DOT_NOT_NULL | INTERVALS | NO_EMPTY_RANGES;
const POSIX_BASIC: u32 = POSIX_COMMON | BK_PLUS_QM | CONTEXT_INVALID_DUP;
const POSIX_EXTENDED: u32 = POSIX_COMMON
    | CONTEXT_INDEP_ANCHORS
    | CONTEXT_INDEP_OPS
    | NO_BK_BRACES
    | NO_BK_PARENS
    | NO_BK_VBAR
    | CONTEXT_INVALID_OPS
    | UNMATCHED_RIGHT_PAREN_ORD;

/// glibc's `RE_DUP_MAX`: the largest count an interval may give.
pub(super) const DUP_MAX: i32 = 0x7fff;

impl Syntax {
    /// find's default, `findutils-default`: Emacs syntax where `.` also matches a newline.
    pub const FINDUTILS_DEFAULT: Syntax = Syntax(DOT_NEWLINE);

    /// The syntax for a `-regextype` name, as findutils' `regextype.c` maps them.
    pub fn from_name(name: &str) -> Option<Self> {
        let awk = BACKSLASH_ESCAPE_IN_LISTS
            | DOT_NOT_NULL
            | NO_BK_PARENS
            | NO_BK_REFS
            | NO_BK_VBAR
            | NO_EMPTY_RANGES
            | DOT_NEWLINE
            | CONTEXT_INDEP_ANCHORS
            | CHAR_CLASSES
            | UNMATCHED_RIGHT_PAREN_ORD
            | NO_GNU_OPS;
        let egrep =
            (POSIX_EXTENDED | INVALID_INTERVAL_ORD | NEWLINE_ALT) & !(CONTEXT_INVALID_OPS | DOT_NOT_NULL);
        Some(Syntax(match name {
            "findutils-default" => Self::FINDUTILS_DEFAULT.0,
            "emacs" => 0,
            "awk" => awk,
            "gnu-awk" => {
                (POSIX_EXTENDED | BACKSLASH_ESCAPE_IN_LISTS | INVALID_INTERVAL_ORD)
                    & !(DOT_NOT_NULL | CONTEXT_INDEP_OPS | CONTEXT_INVALID_OPS)
            }
            "posix-awk" => {
                POSIX_EXTENDED | BACKSLASH_ESCAPE_IN_LISTS | INTERVALS | NO_GNU_OPS | INVALID_INTERVAL_ORD
            }
            "grep" => (POSIX_BASIC | NEWLINE_ALT) & !(CONTEXT_INVALID_DUP | DOT_NOT_NULL),
            "egrep" | "posix-egrep" => egrep,
            "ed" | "sed" | "posix-basic" => POSIX_BASIC,
            "posix-minimal-basic" => POSIX_COMMON | LIMITED_OPS,
            "posix-extended" => POSIX_EXTENDED,
            _ => return None,
        }))
    }

    /// GNU find's list, for its error message.
    pub const NAMES: &'static str = "'findutils-default', 'ed', 'emacs', 'gnu-awk', 'grep', 'posix-awk', 'awk', \
                                     'posix-basic', 'posix-egrep', 'egrep', 'posix-extended', 'posix-minimal-basic', 'sed'";

    pub(super) fn has(self, bits: u32) -> bool {
        self.0 & bits != 0
    }
}

//! cp's `--preserve=LIST` and `--no-preserve=LIST`: which attributes copies keep.

use crate::transfer::Keep;

/// A set of cp's attribute names.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Attrs(u8);

const MODE: u8 = 1;
const OWNERSHIP: u8 = 2;
const TIMESTAMPS: u8 = 4;
const LINKS: u8 = 8;
const XATTR: u8 = 16;
/// SELinux contexts: accepted, not copied (see the README).
const CONTEXT: u8 = 32;

impl Attrs {
    pub const ALL: Attrs = Attrs(MODE | OWNERSHIP | TIMESTAMPS | LINKS | XATTR | CONTEXT);
    /// `-p`.
    pub const BASIC: Attrs = Attrs(MODE | OWNERSHIP | TIMESTAMPS);
    pub const LINKS: Attrs = Attrs(LINKS);

    pub fn union(self, other: Attrs) -> Attrs {
        Attrs(self.0 | other.0)
    }

    pub fn without(self, other: Attrs) -> Attrs {
        Attrs(self.0 & !other.0)
    }

    /// What the copy keeps: ACLs go with the mode, as in cp.
    pub fn keep(self) -> Keep {
        let has = |bit: u8| self.0 & bit != 0;
        Keep {
            perms: has(MODE),
            acls: has(MODE),
            owner: has(OWNERSHIP),
            group: has(OWNERSHIP),
            times: has(TIMESTAMPS),
            hard_links: has(LINKS),
            xattrs: has(XATTR),
        }
    }
}

/// `mode,ownership,timestamps,links,context,xattr,all` (cp's names; unique prefixes accepted).
pub fn parse(text: &str) -> Result<Attrs, String> {
    const NAMES: [(&str, u8); 7] = [
        ("mode", MODE),
        ("ownership", OWNERSHIP),
        ("timestamps", TIMESTAMPS),
        ("links", LINKS),
        ("context", CONTEXT),
        ("xattr", XATTR),
        ("all", MODE | OWNERSHIP | TIMESTAMPS | LINKS | XATTR | CONTEXT),
    ];
    let mut attrs = Attrs::default();
    for word in text.split(',') {
        let matching: Vec<u8> = NAMES
            .iter()
            .filter(|(name, _)| !word.is_empty() && name.starts_with(word))
            .map(|(_, bit)| *bit)
            .collect();
        match matching.as_slice() {
            [bit] => attrs.0 |= bit,
            [] => {
                return Err(format!(
                    "invalid argument '{word}' (valid: mode, ownership, timestamps, links, context, xattr, all)"
                ));
            }
            _ => return Err(format!("ambiguous argument '{word}'")),
        }
    }
    Ok(attrs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_prefixes() {
        assert_eq!(parse("mode,ownership,timestamps"), Ok(Attrs::BASIC));
        assert_eq!(parse("all"), Ok(Attrs::ALL));
        assert_eq!(parse("time,own,mode"), Ok(Attrs::BASIC));
        assert!(parse("bogus").is_err());
        let keep = Attrs::ALL.without(parse("ownership").unwrap()).keep();
        assert!(
            keep.perms
                && keep.acls
                && keep.times
                && keep.hard_links
                && keep.xattrs
                && !keep.owner
                && !keep.group
        );
        assert_eq!(Attrs::default().keep(), Keep::default());
    }
}

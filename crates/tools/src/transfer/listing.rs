//! What a transfer prints on stdout about each entry, in the words of the tool the user knows:
//! rsync's `--itemize-changes` lines and `-v` names (paths relative to the transfer's root, a
//! trailing `/` on directories, `-> target` on symlinks, `=> first` on hard links), its notes on
//! what it skips, and `cp -v`'s `'SRC' -> 'DST'`. Each worker fills its own buffer; lines are
//! whole records, in no particular order across workers.

use super::itemize::{DELETING, Item, push_name};
use super::quote::push_quoted;
use canopy_engine::output::{OutBuf, Sink};
use std::sync::Arc;

/// Which lines are printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// rsync: `%i %n%L` lines with `itemize`, `%n%L` with `names` (`-v`); notes always.
    Rsync { itemize: bool, names: bool },
    /// `cp -v`.
    Cp,
}

/// Where and how lines go.
pub struct Listing {
    sink: Arc<Sink>,
    style: Style,
    /// Names are printed for a UTF-8 locale (else bytes above 0x7f are escaped).
    utf8: bool,
}

/// An entry as rsync names it in a listing.
pub struct Named<'a> {
    /// The path relative to the transfer's root (`.` for the root of `SRC/`).
    pub name: &'a [u8],
    pub is_dir: bool,
    /// `-> target` of a symlink.
    pub target: Option<&'a [u8]>,
    /// `=> first` of a hard link.
    pub first: Option<&'a [u8]>,
}

impl std::fmt::Debug for Listing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Listing").field("style", &self.style).finish_non_exhaustive()
    }
}

impl Listing {
    pub fn new(sink: Arc<Sink>, style: Style) -> Self {
        Listing { sink, style, utf8: super::quote::locale_is_utf8() }
    }

    pub fn buffer(&self) -> OutBuf {
        OutBuf::new(Arc::clone(&self.sink))
    }

    pub fn sink(&self) -> &Arc<Sink> {
        &self.sink
    }

    pub fn style(&self) -> Style {
        self.style
    }

    /// rsync's line for an entry the run changed (or would, in a dry run), if the style shows it.
    pub fn item(&self, out: &mut OutBuf, item: &Item, named: &Named<'_>) {
        let Style::Rsync { itemize, names } = self.style else { return };
        let code = if itemize && item.itemized() {
            Some(&item.code()[..])
        } else if names && item.named() {
            None
        } else {
            return;
        };
        self.rsync_line(out, code, named);
    }

    /// rsync's line for a deleted entry (`-v`: `deleting NAME`, `-i`: `*deleting   NAME`).
    pub fn deleted(&self, out: &mut OutBuf, name: &[u8], is_dir: bool) {
        let named = Named { name, is_dir, target: None, first: None };
        match self.style {
            Style::Rsync { itemize: true, .. } => self.rsync_line(out, Some(DELETING), &named),
            Style::Rsync { names: true, .. } => {
                out.buf().extend_from_slice(b"deleting ");
                self.rsync_line(out, None, &named);
            }
            _ => {}
        }
    }

    /// One of rsync's notes on stdout (`skipping non-regular file "NAME"`), whatever the style.
    pub fn note(&self, out: &mut OutBuf, before: &str, name: &[u8], after: &str) {
        let buf = out.buf();
        buf.extend_from_slice(before.as_bytes());
        push_name(buf, name, self.utf8);
        buf.extend_from_slice(after.as_bytes());
        buf.push(b'\n');
        out.end_record();
    }

    /// `cp -v`'s line for an entry copied from `source` to `dest`.
    pub fn copied(&self, out: &mut OutBuf, source: &[u8], dest: &[u8]) {
        if self.style != Style::Cp {
            return;
        }
        let buf = out.buf();
        push_quoted(buf, source, self.utf8);
        buf.extend_from_slice(b" -> ");
        push_quoted(buf, dest, self.utf8);
        buf.push(b'\n');
        out.end_record();
    }

    fn rsync_line(&self, out: &mut OutBuf, code: Option<&[u8]>, named: &Named<'_>) {
        let buf = out.buf();
        if let Some(code) = code {
            buf.extend_from_slice(code);
            buf.push(b' ');
        }
        push_name(buf, named.name, self.utf8);
        if named.is_dir && !named.name.ends_with(b"/") {
            buf.push(b'/');
        }
        if let Some(target) = named.target {
            buf.extend_from_slice(b" -> ");
            push_name(buf, target, self.utf8);
        }
        if let Some(first) = named.first {
            buf.extend_from_slice(b" => ");
            push_name(buf, first, self.utf8);
        }
        buf.push(b'\n');
        out.end_record();
    }
}

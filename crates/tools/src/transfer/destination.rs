//! The directory an entry's copy goes in, as one visit sees it: the real one, looked at and
//! changed, or a dry run's (`-n`), looked at where it exists and never changed. The copy code in
//! [`super::entries`] and [`super::visitor`] is written once against it, so what a dry run does
//! differently is decided here.

use super::dest::Place;
use crate::common::lookup;
use canopy_engine::{DirFd, Errno, Metadata};
use rustix::fs::{AtFlags, Mode, mkdirat, unlinkat};
use std::ffi::CStr;

pub(super) enum Destination {
    /// The directory holding the entry's copy.
    Real(DirFd),
    /// A dry run's: the directory if it exists, `None` if this run would make it.
    DryRun(Option<DirFd>),
}

impl Destination {
    /// Opens the directory that holds `place`. A dry run does not look inside a directory it would
    /// make (one made in this run, or a sync's DEST that is not there yet).
    pub fn open(place: &Place, dry_run: bool) -> Result<Destination, Errno> {
        if !dry_run {
            return place.open_dir().map(Destination::Real);
        }
        if place.fresh() {
            return Ok(Destination::DryRun(None));
        }
        match place.open_dir() {
            Ok(dir) => Ok(Destination::DryRun(Some(dir))),
            Err(Errno::NOENT) => Ok(Destination::DryRun(None)),
            Err(errno) => Err(errno),
        }
    }

    /// The directory to look at (to compare with the source), if there is one.
    pub fn to_look_at(&self) -> Option<&DirFd> {
        match self {
            Destination::Real(dir) => Some(dir),
            Destination::DryRun(dir) => dir.as_ref(),
        }
    }

    /// The directory to change: none in a dry run.
    pub fn to_change(&self) -> Option<&DirFd> {
        match self {
            Destination::Real(dir) => Some(dir),
            Destination::DryRun(_) => None,
        }
    }

    /// What the destination has at `place` (a symlink's own metadata): nothing in a directory made
    /// in this run.
    pub fn existing(&self, place: &Place) -> Result<Option<Metadata>, Errno> {
        match self.to_look_at() {
            Some(dir) if !place.fresh() => lookup(dir, place.name()),
            _ => Ok(None),
        }
    }

    /// Makes the directory `name`, for its owner only until it is finished. Returns what is in the
    /// way instead (a symlink followed if `follow`), or `None` once it is made — in a dry run, when
    /// it would be.
    pub fn make_dir(&self, name: &CStr, follow: bool) -> Result<Option<Metadata>, Errno> {
        let Some(dir) = self.to_look_at() else { return Ok(None) };
        let created = match self.to_change() {
            Some(dir) => mkdirat(dir, name, Mode::from_raw_mode(0o700)),
            None => Err(Errno::EXIST),
        };
        match created {
            Ok(()) => Ok(None),
            Err(Errno::EXIST) => match canopy_engine::sys::stat_at(dir, name, follow) {
                Err(Errno::NOENT) if self.to_change().is_none() => Ok(None),
                found => found.map(Some),
            },
            Err(errno) => Err(errno),
        }
    }

    /// Replaces the non-directory `name` by a directory made as [`Destination::make_dir`] makes
    /// one (in a dry run: would).
    pub fn replace_by_dir(&self, name: &CStr) -> Result<(), Errno> {
        let Some(dir) = self.to_change() else { return Ok(()) };
        unlinkat(dir, name, AtFlags::empty()).and_then(|()| mkdirat(dir, name, Mode::from_raw_mode(0o700)))
    }
}

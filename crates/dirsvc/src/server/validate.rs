//! Request decoding: turns what arrived on the wire into checked values, or refuses it with
//! INVALID_ARGUMENT before anything is touched. Everything here is pure, so fuzzing it is cheap.

use tonic::Status;

use super::mutation::PartKey;
use crate::ids::{ROOT_ID, home_server};
use crate::mapping::{Bitmap, name_hash, owns};
use crate::names::validate_name;
use crate::proto::{AttrChange, Attrs, CreateRequest, DirMeta, Effect, Entry, Kind, PartitionRef, effect};

/// Entries in one split chunk: bounded so a hostile request cannot make the writer stall.
pub const MAX_CHUNK: usize = 16_384;
/// The largest readdir page a server returns.
pub const MAX_PAGE: u32 = 4096;
pub const DEFAULT_PAGE: u32 = 1024;
/// The most objects one request names.
pub const MAX_IDS: usize = 4096;
/// The most effects one delivery carries.
pub const MAX_EFFECTS: usize = 4096;
/// The most bytes one data request reads or writes.
pub const MAX_DATA_REQUEST: u64 = 4 << 20;
/// The largest file: offsets and sizes stay far below what chunk indexes could address.
pub const MAX_FILE_SIZE: u64 = 1 << 44;
/// The longest symlink target (PATH_MAX).
pub const MAX_TARGET: usize = 4096;

pub fn invalid(message: impl Into<String>) -> Status {
    Status::invalid_argument(message.into())
}

pub fn partition(at: Option<&PartitionRef>, partitions: u32) -> Result<PartKey, Status> {
    let at = at.ok_or_else(|| invalid("missing partition reference `at`"))?;
    if at.dir == 0 {
        return Err(invalid("directory id 0 does not exist"));
    }
    if at.partition >= partitions {
        return Err(invalid(format!(
            "partition {} out of range: directories here have {partitions} partitions",
            at.partition
        )));
    }
    Ok((at.dir, at.partition))
}

/// An object id: never 0.
pub fn id(id: u64) -> Result<u64, Status> {
    if id == 0 {
        return Err(invalid("object id 0 does not exist"));
    }
    Ok(id)
}

pub fn ids(ids: &[u64]) -> Result<Vec<u64>, Status> {
    if ids.len() > MAX_IDS {
        return Err(invalid(format!("{} objects in one request (at most {MAX_IDS})", ids.len())));
    }
    ids.iter().map(|&i| id(i)).collect()
}

/// A directory that may be sealed, dropped or removed: any but the root.
pub fn removable_dir(dir: u64) -> Result<u64, Status> {
    if dir == ROOT_ID {
        return Err(invalid("the root directory cannot be removed"));
    }
    id(dir)
}

/// A create makes a new non-directory (id 0), or links an existing object: a directory (mkdir,
/// rename), or a file through the intent AddLink returned.
pub fn new_entry(request: &CreateRequest, kind: Kind) -> Result<(), Status> {
    match (request.id, kind) {
        (0, Kind::Directory) => Err(invalid("directories are made with CreateDir and linked with their id")),
        (0, _) => {
            if request.link_intent != 0 {
                return Err(invalid("a new object has no link intent"));
            }
            if request.open_session != 0 && kind != Kind::File {
                return Err(invalid("only a regular file is opened as it is made"));
            }
            target(kind, &request.target)
        }
        (_, Kind::Directory) if request.link_intent != 0 => Err(invalid("directories have no link intents")),
        (_, Kind::Directory) => Ok(()),
        (_, _) if request.link_intent == 0 => Err(invalid("a hard link needs the intent AddLink returned")),
        (_, _) if request.open_session != 0 || !request.target.is_empty() => {
            Err(invalid("a hard link names an existing object: no session, no target"))
        }
        _ => Ok(()),
    }
}

/// Effects delivered to server `here`: each about an object here, and numbered.
pub fn effects(effects: &[Effect], here: u32) -> Result<(), Status> {
    if effects.len() > MAX_EFFECTS {
        return Err(invalid(format!("{} effects in one delivery (at most {MAX_EFFECTS})", effects.len())));
    }
    for e in effects {
        let owner = match &e.change {
            Some(effect::Change::Unlinked(u)) => u.id,
            Some(effect::Change::LinkDone(d)) => d.id,
            Some(effect::Change::Subdirs(s)) => s.dir,
            Some(effect::Change::Parent(p)) => {
                id(p.parent)?;
                p.dir
            }
            None => return Err(invalid("an effect without a change")),
        };
        if e.seq == 0 || home_server(id(owner)?) != here {
            return Err(invalid(format!("effect {} is not for this server", e.seq)));
        }
    }
    Ok(())
}

/// A valid entry name and its placement hash.
pub fn name(name: &[u8]) -> Result<u64, Status> {
    validate_name(name).map_err(|e| invalid(e.message))?;
    Ok(name_hash(name))
}

pub fn attrs(attrs: Option<&Attrs>) -> Result<Attrs, Status> {
    let attrs = attrs.ok_or_else(|| invalid("missing attributes"))?;
    match Kind::try_from(attrs.kind) {
        Ok(
            Kind::File
            | Kind::Directory
            | Kind::Symlink
            | Kind::Fifo
            | Kind::Socket
            | Kind::CharDevice
            | Kind::BlockDevice,
        ) => {}
        _ => return Err(invalid(format!("unknown entry kind {}", attrs.kind))),
    }
    if attrs.mode > 0o7777 {
        return Err(invalid(format!("mode {:o} has bits beyond 7777", attrs.mode)));
    }
    Ok(*attrs)
}

/// A symlink carries its target (1 to PATH_MAX bytes, no NUL); nothing else carries one.
pub fn target(kind: Kind, target: &[u8]) -> Result<(), Status> {
    match kind {
        Kind::Symlink if target.is_empty() => Err(invalid("a symlink needs a target")),
        Kind::Symlink if target.len() > MAX_TARGET => {
            Err(invalid(format!("symlink target of {} bytes (at most {MAX_TARGET})", target.len())))
        }
        Kind::Symlink if target.contains(&0) => Err(invalid("symlink target contains NUL")),
        Kind::Symlink => Ok(()),
        _ if target.is_empty() => Ok(()),
        _ => Err(invalid("only symlinks have a target")),
    }
}

pub fn change(change: Option<&AttrChange>) -> Result<AttrChange, Status> {
    let change = change.ok_or_else(|| invalid("missing attribute change"))?;
    if let Some(mode) = change.mode
        && mode > 0o7777
    {
        return Err(invalid(format!("mode {mode:o} has bits beyond 7777")));
    }
    if let Some(size) = change.size
        && size > MAX_FILE_SIZE
    {
        return Err(invalid(format!("size {size} above the largest file ({MAX_FILE_SIZE} bytes)")));
    }
    Ok(*change)
}

/// A data request's file and byte range.
pub fn data_range(file: u64, offset: u64, length: u64) -> Result<(), Status> {
    if file == 0 {
        return Err(invalid("file id 0 does not exist"));
    }
    if length > MAX_DATA_REQUEST {
        return Err(invalid(format!("{length} bytes in one data request (at most {MAX_DATA_REQUEST})")));
    }
    if offset.saturating_add(length) > MAX_FILE_SIZE {
        return Err(invalid(format!("byte range beyond the largest file ({MAX_FILE_SIZE} bytes)")));
    }
    Ok(())
}

pub fn bitmap(bytes: &[u8], partitions: u32) -> Result<Bitmap, Status> {
    Bitmap::from_bytes(partitions, bytes).map_err(invalid)
}

pub fn dir_meta(meta: Option<&DirMeta>, servers: u32) -> Result<DirMeta, Status> {
    let meta = meta.ok_or_else(|| invalid("missing directory metadata"))?;
    if meta.id == 0 {
        return Err(invalid("directory id 0 does not exist"));
    }
    if meta.servers.len() != servers as usize {
        return Err(invalid(format!(
            "partition table of {} servers in a {servers}-server cluster",
            meta.servers.len()
        )));
    }
    if let Some(bad) = meta.servers.iter().find(|&&s| s >= servers) {
        return Err(invalid(format!("partition table names server {bad} of {servers}")));
    }
    bitmap(&meta.bitmap, servers)?;
    let attrs = attrs(meta.attrs.as_ref())?;
    if attrs.kind() != Kind::Directory {
        return Err(invalid("directory metadata with a non-directory kind"));
    }
    Ok(meta.clone())
}

/// Entries a split moves into child partition `child` of `after`: each must be valid and belong
/// to the child's hash space in the bitmap after the split.
pub fn split_entries(entries: &[Entry], child: u32, after: &Bitmap) -> Result<(), Status> {
    if entries.len() > MAX_CHUNK {
        return Err(invalid(format!("split chunk of {} entries (at most {MAX_CHUNK})", entries.len())));
    }
    if !after.get(u64::from(child)) {
        return Err(invalid(format!("split bitmap does not activate partition {child}")));
    }
    let level = after.level(child);
    for entry in entries {
        let hash = name(&entry.name)?;
        if matches!(entry.kind(), Kind::Unspecified) {
            return Err(invalid(format!("split entry of unknown kind {}", entry.kind)));
        }
        if entry.id == 0 {
            return Err(invalid("split entry with id 0"));
        }
        if !owns(child, level, hash) {
            return Err(invalid(format!(
                "split entry {:?} does not belong to partition {child}",
                String::from_utf8_lossy(&entry.name)
            )));
        }
    }
    Ok(())
}

pub fn page_limit(limit: u32) -> Result<usize, Status> {
    match limit {
        0 => Ok(DEFAULT_PAGE as usize),
        1..=MAX_PAGE => Ok(limit as usize),
        _ => Err(invalid(format!("page limit {limit} above {MAX_PAGE}"))),
    }
}

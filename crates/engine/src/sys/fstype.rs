//! File-system classification: on network and parallel file systems every metadata call waits on a
//! server, so the engine starts with many threads there instead of ramping up from the core count.

use rustix::fd::AsFd;

/// Whether metadata calls on a file system are local (CPU-bound when cached) or remote (latency-bound).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FsClass {
    Local,
    Remote(&'static str),
}

/// Classifies the file system holding `dir` by its `statfs` magic number.
pub fn classify_fs<Fd: AsFd>(dir: Fd) -> FsClass {
    let Ok(fs) = rustix::fs::fstatfs(dir) else {
        return FsClass::Local;
    };
    match remote_name(fs.f_type as u64) {
        Some(name) => FsClass::Remote(name),
        None => FsClass::Local,
    }
}

fn remote_name(magic: u64) -> Option<&'static str> {
    Some(match magic {
        0x6969 => "nfs",
        0x6573_5546 => "fuse",
        0x0bd0_0bd0 => "lustre",
        0x4750_4653 => "gpfs",
        0xff53_4d42 => "cifs",
        0xfe53_4d42 => "smb2",
        0x00c3_6400 => "ceph",
        0x0102_1997 => "9p",
        0x5346_414f | 0x6b41_4653 => "afs",
        0x1983_0326 => "beegfs",
        0xaad7_aaea => "panfs",
        0x2003_0528 => "orangefs",
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_magics() {
        assert_eq!(remote_name(0x6969), Some("nfs"));
        assert_eq!(remote_name(0x0bd0_0bd0), Some("lustre"));
        assert_eq!(remote_name(0xef53), None); // ext4
    }
}

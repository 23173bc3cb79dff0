//! File-system type names by device number, from `/proc/self/mountinfo` (read once).

use std::collections::HashMap;
use std::sync::LazyLock;

static TYPES: LazyLock<HashMap<u64, Vec<u8>>> = LazyLock::new(|| {
    std::fs::read("/proc/self/mountinfo").map(|text| parse_mountinfo(&text)).unwrap_or_default()
});

/// The type of the file system on device `dev` (`ext4`, `tmpfs`…), or `unknown`.
pub fn fs_type_name(dev: u64) -> Vec<u8> {
    TYPES.get(&dev).cloned().unwrap_or_else(|| b"unknown".to_vec())
}

fn parse_mountinfo(text: &[u8]) -> HashMap<u64, Vec<u8>> {
    let mut map = HashMap::new();
    for line in text.split(|&b| b == b'\n') {
        let fields: Vec<&[u8]> = line.split(|&b| b == b' ').collect();
        let Some(dash) = fields.iter().position(|f| *f == b"-") else { continue };
        let (Some(devno), Some(fstype)) = (fields.get(2), fields.get(dash + 1)) else { continue };
        let Some((major, minor)) = std::str::from_utf8(devno).ok().and_then(|s| s.split_once(':')) else {
            continue;
        };
        if let (Ok(major), Ok(minor)) = (major.parse(), minor.parse()) {
            // The first mount of a device wins, as with GNU find's mount-table scan.
            map.entry(rustix::fs::makedev(major, minor)).or_insert_with(|| fstype.to_vec());
        }
    }
    map
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_mountinfo_lines() {
        let text = b"22 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw\n30 22 0:26 / /tmp rw - tmpfs tmpfs rw\n";
        let map = parse_mountinfo(text);
        assert_eq!(map[&rustix::fs::makedev(254, 0)], b"ext4");
        assert_eq!(map[&rustix::fs::makedev(0, 26)], b"tmpfs");
    }
}

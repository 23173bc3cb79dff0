//! Name → partition placement, exactly as OrangeFS's distributed directories compute it, and the
//! GIGA+ split geometry derived from the same bitmap.
//!
//! hash = little-endian u64 of bytes 8..16 of MD5(name); take the low R bits (R = ceil(log2 N));
//! while that partition is inactive, drop the highest set bit. Partition 0 is always active.

use md5::{Digest, Md5};

/// The placement hash of a directory entry name.
pub fn name_hash(name: &[u8]) -> u64 {
    let digest = Md5::digest(name);
    let mut tail = [0u8; 8];
    tail.copy_from_slice(&digest[8..16]);
    u64::from_le_bytes(tail)
}

/// R = ceil(log2 N): how many low hash bits can select a partition among N.
pub fn tree_height(partitions: u32) -> u32 {
    if partitions <= 1 { 0 } else { 32 - (partitions - 1).leading_zeros() }
}

/// `hash mod 2^level`.
pub fn low_bits(hash: u64, level: u32) -> u64 {
    if level >= 64 { hash } else { hash & ((1u64 << level) - 1) }
}

/// Which partitions of a directory are active: bit i of byte i/8 (least significant bit first).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bitmap {
    partitions: u32,
    bytes: Vec<u8>,
}

impl Bitmap {
    /// The bitmap of a new directory: the first `initial` of `partitions` active (at least one).
    pub fn initial(partitions: u32, initial: u32) -> Self {
        let mut bitmap = Self { partitions, bytes: vec![0; partitions.div_ceil(8) as usize] };
        for index in 0..initial.clamp(1, partitions) {
            bitmap.set(index);
        }
        bitmap
    }

    /// Decodes and checks a bitmap received from the network or read from the store: the right
    /// length, partition 0 active, no bits beyond N, and every active partition's parent active.
    pub fn from_bytes(partitions: u32, bytes: &[u8]) -> Result<Self, String> {
        if partitions == 0 {
            return Err("a directory has at least one partition".into());
        }
        let expected = partitions.div_ceil(8) as usize;
        if bytes.len() != expected {
            return Err(format!(
                "bitmap of {} bytes for {partitions} partitions (expected {expected})",
                bytes.len()
            ));
        }
        let bitmap = Self { partitions, bytes: bytes.to_vec() };
        let spare_bits = expected as u32 * 8 - partitions;
        if spare_bits > 0 && bytes[expected - 1] >> (8 - spare_bits) != 0 {
            return Err(format!("bitmap has bits set beyond partition {}", partitions - 1));
        }
        if !bitmap.get(0) {
            return Err("bitmap has partition 0 inactive".into());
        }
        for index in bitmap.active() {
            if !bitmap.get(u64::from(parent(index))) {
                return Err(format!(
                    "bitmap has partition {index} active but its parent {} inactive",
                    parent(index)
                ));
            }
        }
        Ok(bitmap)
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.bytes
    }

    pub fn partitions(&self) -> u32 {
        self.partitions
    }

    /// Whether partition `index` is active; indexes beyond N are inactive.
    pub fn get(&self, index: u64) -> bool {
        index < u64::from(self.partitions) && self.bytes[(index / 8) as usize] & (1 << (index % 8)) != 0
    }

    pub fn set(&mut self, index: u32) {
        assert!(index < self.partitions, "partition {index} out of {}", self.partitions);
        self.bytes[(index / 8) as usize] |= 1 << (index % 8);
    }

    pub fn clear(&mut self, index: u32) {
        assert!(index < self.partitions, "partition {index} out of {}", self.partitions);
        self.bytes[(index / 8) as usize] &= !(1 << (index % 8));
    }

    /// Adds the active partitions of `other` (bitmaps only grow while a directory lives).
    pub fn merge(&mut self, other: &Bitmap) {
        if other.partitions == self.partitions {
            for (mine, theirs) in self.bytes.iter_mut().zip(&other.bytes) {
                *mine |= theirs;
            }
        }
    }

    pub fn active(&self) -> impl Iterator<Item = u32> + '_ {
        (0..self.partitions).filter(|&index| self.get(u64::from(index)))
    }

    pub fn count_active(&self) -> u32 {
        self.bytes.iter().map(|byte| byte.count_ones()).sum()
    }

    /// The partition holding `hash` (OrangeFS `PINT_find_dist_dir_bucket`).
    pub fn partition_for(&self, hash: u64) -> u32 {
        let mut node = low_bits(hash, tree_height(self.partitions));
        while node != 0 && !self.get(node) {
            node &= !(1u64 << (63 - node.leading_zeros()));
        }
        node as u32
    }

    /// The depth of active partition `index`: it holds exactly the hashes with
    /// `hash mod 2^level == index` (OrangeFS `dist_dir_calc_branch_level`).
    pub fn level(&self, index: u32) -> u32 {
        let mut level = 32 - index.leading_zeros();
        while self.get(u64::from(index) + (1u64 << level)) {
            level += 1;
        }
        level
    }

    /// The child an overflowing partition would split into: `index + 2^level`, if it is below N.
    pub fn split_child(&self, index: u32) -> Option<u32> {
        let child = u64::from(index) + (1u64 << self.level(index));
        (child < u64::from(self.partitions)).then_some(child as u32)
    }

    /// Renders the bitmap as '1'/'0' per partition, partition 0 first.
    pub fn render(&self) -> String {
        (0..self.partitions).map(|index| if self.get(u64::from(index)) { '1' } else { '0' }).collect()
    }
}

/// The partition a non-zero partition was split from: its index without the highest set bit.
pub fn parent(index: u32) -> u32 {
    if index == 0 { 0 } else { index & !(1 << (31 - index.leading_zeros())) }
}

/// Whether `hash` belongs to active partition `index` of a partition at `level`.
pub fn owns(index: u32, level: u32, hash: u64) -> bool {
    low_bits(hash, level) == u64::from(index)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn md5_tail_is_little_endian() {
        // MD5("") = d41d8cd98f00b204 e9800998ecf8427e: bytes 8..16 read little-endian.
        assert_eq!(name_hash(b""), 0x7e42_f8ec_9809_80e9);
    }

    #[test]
    fn tree_height_is_ceil_log2() {
        let heights: Vec<u32> = (1..=9).map(tree_height).collect();
        assert_eq!(heights, [0, 1, 2, 2, 3, 3, 3, 3, 4]);
    }

    #[test]
    fn inactive_partitions_fall_back_to_their_ancestors() {
        // N = 8, partitions 0, 1, 2, 3 active: 7 -> 3, 6 -> 2, 5 -> 1, 4 -> 0.
        let bitmap = Bitmap::initial(8, 4);
        for (hash, partition) in [(7, 3), (6, 2), (5, 1), (4, 0), (3, 3), (0xf1, 1)] {
            assert_eq!(bitmap.partition_for(hash), partition, "hash {hash:#x}");
        }
    }

    #[test]
    fn levels_and_children_follow_giga_plus() {
        let mut bitmap = Bitmap::initial(8, 1);
        assert_eq!((bitmap.level(0), bitmap.split_child(0)), (0, Some(1)));
        bitmap.set(1);
        assert_eq!((bitmap.level(0), bitmap.split_child(0)), (1, Some(2)));
        assert_eq!((bitmap.level(1), bitmap.split_child(1)), (1, Some(3)));
        bitmap.set(3);
        assert_eq!((bitmap.level(3), bitmap.split_child(3)), (2, Some(7)));
        bitmap.set(7);
        assert_eq!(bitmap.split_child(7), None);
        // Partition 3 at level 2 owns hashes ≡ 3 (mod 4) that are not ≡ 7 (mod 8).
        assert!(owns(3, bitmap.level(3), 3) && !owns(3, bitmap.level(3), 7));
    }

    #[test]
    fn bitmap_validation_rejects_holes_and_overflow() {
        assert!(Bitmap::from_bytes(4, &[0b0011]).is_ok());
        assert!(Bitmap::from_bytes(4, &[0b0010]).is_err(), "partition 0 inactive");
        assert!(Bitmap::from_bytes(4, &[0b1001]).is_err(), "3 active without parent 1");
        assert!(Bitmap::from_bytes(4, &[0b1_0001]).is_err(), "bit beyond N");
        assert!(Bitmap::from_bytes(4, &[1, 0]).is_err(), "wrong length");
        assert!(Bitmap::from_bytes(0, &[]).is_err());
    }
}

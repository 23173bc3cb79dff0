//! rsync's block signatures (Tridgell and Mackerras): per block of a file, a weak rolling checksum that can
//! slide one byte at a time and a strong hash that confirms a match. The signature aggregation computes them
//! on each host from the bytes it read, and groups hosts whose signatures are identical: the sub-groups of
//! identical copies.

use canopy_group::Value;
use canopy_group::aggr::Classes;
use canopy_group::{Aggregation, Registry};
use serde::{Deserialize, Serialize};

/// Registry name of [`Signatures`]; its parameter is the block size.
pub const AGGREGATION: &str = "psync-signatures";

/// One block's signature.
#[derive(Copy, Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct BlockSig {
    /// rsync's rolling checksum of the block.
    pub weak: u32,
    /// XXH3-128 of the block.
    pub strong: u128,
    /// The block's length (the block size, less for the last block).
    pub len: u32,
}

/// rsync's weak checksum: `a` is the sum of the bytes, `b` the sum of the running sums, both mod 2^16; it
/// rolls forward by one byte in constant time.
#[derive(Copy, Clone, Debug, Default)]
pub struct Rolling {
    a: u32,
    b: u32,
    len: u32,
}

impl Rolling {
    /// The checksum of `block`.
    pub fn new(block: &[u8]) -> Rolling {
        let (mut a, mut b) = (0u32, 0u32);
        for &byte in block {
            a = a.wrapping_add(u32::from(byte));
            b = b.wrapping_add(a);
        }
        Rolling { a, b, len: block.len() as u32 }
    }

    /// The checksum value.
    pub fn value(&self) -> u32 {
        (self.a & 0xffff) | (self.b << 16)
    }

    /// Slides the window one byte: `out` leaves at the front, `inn` enters at the back.
    pub fn roll(&mut self, out: u8, inn: u8) {
        self.a = self.a.wrapping_sub(u32::from(out)).wrapping_add(u32::from(inn));
        self.b = self.b.wrapping_sub(self.len.wrapping_mul(u32::from(out))).wrapping_add(self.a);
    }
}

/// The strong hash of a block.
pub fn strong(block: &[u8]) -> u128 {
    xxhash_rust::xxh3::xxh3_128(block)
}

/// The signatures of `data`, block by block.
pub fn signatures(data: &[u8], block: usize) -> Vec<BlockSig> {
    data.chunks(block)
        .map(|chunk| BlockSig {
            weak: Rolling::new(chunk).value(),
            strong: strong(chunk),
            len: chunk.len() as u32,
        })
        .collect()
}

/// rsync's block size for a file of `size` bytes: 700 for small files, about the square root above
/// 490,000 bytes (a multiple of 8), at most 128 KiB.
pub fn block_size(size: u64) -> usize {
    const MIN: u64 = 700;
    const MAX: u64 = 128 << 10;
    if size <= MIN * MIN {
        return MIN as usize;
    }
    let root = (size as f64).sqrt() as u64 & !7;
    root.clamp(MIN, MAX) as usize
}

/// The group aggregation: each member's bytes become their block signatures on the host, and members with
/// identical signature lists form one class. Only one signature list per distinct copy goes up the tree.
pub struct Signatures {
    block: usize,
}

impl Aggregation for Signatures {
    type Partial = Classes<Vec<BlockSig>>;

    fn leaf(&self, member: u64, value: &Value) -> Self::Partial {
        let sigs = match value {
            Value::Bytes(data) => signatures(data, self.block),
            _ => Vec::new(),
        };
        Classes(vec![(sigs, canopy_nodeset::RangeSet::from_values([member]))])
    }

    fn merge(&self, left: Self::Partial, right: Self::Partial) -> Self::Partial {
        let mut classes = left.0;
        for (key, members) in right.0 {
            match classes.binary_search_by(|(k, _)| k.cmp(&key)) {
                Ok(i) => classes[i].1 = classes[i].1.union(&members),
                Err(i) => classes.insert(i, (key, members)),
            }
        }
        Classes(classes)
    }
}

/// Registers [`Signatures`] (every host must).
pub fn register(registry: &mut Registry) {
    registry.register(AGGREGATION, |params: &str| {
        let block: usize = params.parse().map_err(|_| format!("bad block size {params:?}"))?;
        if block == 0 {
            return Err("the block size is 0".into());
        }
        Ok(Signatures { block })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rolling_checksum_equals_a_fresh_one_at_every_offset() {
        let mut rng = fastrand::Rng::with_seed(7);
        let data: Vec<u8> = (0..5000).map(|_| rng.u8(..)).collect();
        let block = 700;
        let mut rolling = Rolling::new(&data[..block]);
        for start in 1..data.len() - block {
            rolling.roll(data[start - 1], data[start + block - 1]);
            assert_eq!(rolling.value(), Rolling::new(&data[start..start + block]).value(), "offset {start}");
        }
    }

    #[test]
    fn block_sizes_follow_rsync() {
        assert_eq!(block_size(0), 700);
        assert_eq!(block_size(490_000), 700);
        assert_eq!(block_size(1 << 20), 1024);
        assert_eq!(block_size(100 << 20), 10240);
        assert_eq!(block_size(1 << 40), 128 << 10);
        let sigs = signatures(&[1u8; 1500], 700);
        assert_eq!(sigs.iter().map(|s| s.len).collect::<Vec<_>>(), [700, 700, 100]);
        assert_eq!(sigs[0], sigs[1]);
    }
}

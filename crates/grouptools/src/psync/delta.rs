//! rsync's delta: slide over the source one byte at a time, and wherever the rolling checksum and then the
//! strong hash match a block of the old copy, refer to that block instead of sending its bytes.

use super::signature::{BlockSig, Rolling, strong};
use canopy_group::Piece;
use std::collections::HashMap;

/// The pieces that rebuild `source` from an old copy whose block signatures (block size `block`) are
/// `old`: byte ranges of the old copy, and the source's bytes that no block matched. Adjacent ranges are
/// merged.
pub fn delta(source: &[u8], old: &[BlockSig], block: usize) -> Vec<Piece> {
    let mut out = Pieces::default();
    let by_weak = WeakIndex::new(old, block);
    let mut literal_from = 0;
    let mut pos = 0;
    let mut rolling = (source.len() >= block).then(|| Rolling::new(&source[..block]));
    while let Some(weak) = rolling.as_ref().map(Rolling::value)
        && pos + block <= source.len()
    {
        let matched = by_weak.get(weak).and_then(|candidates| {
            let hash = strong(&source[pos..pos + block]);
            // The block after the last one copied first: long runs become one range.
            let next = out.next_block(block);
            candidates.iter().copied().filter(|&i| old[i].strong == hash).min_by_key(|&i| Some(i) != next)
        });
        if let Some(index) = matched {
            out.literal(&source[literal_from..pos]);
            out.copy((index * block) as u64, block as u64);
            pos += block;
            literal_from = pos;
            rolling = (pos + block <= source.len()).then(|| Rolling::new(&source[pos..pos + block]));
            continue;
        }
        if pos + block < source.len() {
            rolling.as_mut().expect("checked above").roll(source[pos], source[pos + block]);
        }
        pos += 1;
    }
    // The old copy's short last block can only match the source's very end.
    if let Some(last) = old.last()
        && (1..block).contains(&(last.len as usize))
        && let Some(start) = source.len().checked_sub(last.len as usize)
        && start >= literal_from
        && last.strong == strong(&source[start..])
    {
        out.literal(&source[literal_from..start]);
        out.copy(((old.len() - 1) * block) as u64, u64::from(last.len));
    } else {
        out.literal(&source[literal_from..]);
    }
    out.pieces
}

/// The old copy's whole blocks by weak checksum, behind rsync's 16-bit tag table: at most positions of
/// new data the tag's bit is clear, and one bit test replaces the map lookup (17 times the cost of
/// rolling the checksum, before the table).
struct WeakIndex {
    tags: Vec<u64>,
    by_weak: HashMap<u32, Vec<usize>>,
}

impl WeakIndex {
    fn new(old: &[BlockSig], block: usize) -> WeakIndex {
        let mut index = WeakIndex { tags: vec![0; (1 << 16) / 64], by_weak: HashMap::new() };
        for (at, sig) in old.iter().enumerate().filter(|(_, sig)| sig.len as usize == block) {
            let tag = tag(sig.weak);
            index.tags[tag / 64] |= 1 << (tag % 64);
            index.by_weak.entry(sig.weak).or_default().push(at);
        }
        index
    }

    fn get(&self, weak: u32) -> Option<&Vec<usize>> {
        let tag = tag(weak);
        if self.tags[tag / 64] & (1 << (tag % 64)) == 0 {
            return None;
        }
        self.by_weak.get(&weak)
    }
}

/// The 16 bits of a weak checksum the tag table is indexed by: both halves folded.
fn tag(weak: u32) -> usize {
    ((weak ^ (weak >> 16)) & 0xffff) as usize
}

#[derive(Default)]
struct Pieces {
    pieces: Vec<Piece>,
}

impl Pieces {
    fn literal(&mut self, data: &[u8]) {
        if data.is_empty() {
            return;
        }
        match self.pieces.last_mut() {
            Some(Piece::Data(bytes)) => bytes.extend_from_slice(data),
            _ => self.pieces.push(Piece::Data(data.to_vec())),
        }
    }

    fn copy(&mut self, offset: u64, len: u64) {
        match self.pieces.last_mut() {
            Some(Piece::Copy { offset: o, len: l }) if *o + *l == offset => *l += len,
            _ => self.pieces.push(Piece::Copy { offset, len }),
        }
    }

    /// The old block that would extend the last copied range.
    fn next_block(&self, block: usize) -> Option<usize> {
        match self.pieces.last() {
            Some(Piece::Copy { offset, len }) => Some(((offset + len) / block as u64) as usize),
            _ => None,
        }
    }
}

/// Splits `pieces` into batches of at most `max_literal` new bytes each (one group operation per batch).
pub fn batches(pieces: Vec<Piece>, max_literal: usize) -> Vec<Vec<Piece>> {
    let mut out = vec![Vec::new()];
    let mut literal = 0;
    for piece in pieces {
        match piece {
            Piece::Data(data) => {
                for part in data.chunks(max_literal) {
                    if literal + part.len() > max_literal {
                        out.push(Vec::new());
                        literal = 0;
                    }
                    literal += part.len();
                    out.last_mut().expect("never empty").push(Piece::Data(part.to_vec()));
                }
            }
            copy => out.last_mut().expect("never empty").push(copy),
        }
    }
    out.retain(|batch| !batch.is_empty());
    out
}

/// Bytes of new data in `pieces`.
pub fn literal_bytes(pieces: &[Piece]) -> u64 {
    pieces.iter().map(|p| if let Piece::Data(d) = p { d.len() as u64 } else { 0 }).sum()
}

#[cfg(test)]
mod tests {
    use super::super::signature::signatures;
    use super::*;

    /// What a host does with the pieces.
    fn apply(old: &[u8], pieces: &[Piece]) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in pieces {
            match piece {
                Piece::Data(d) => out.extend_from_slice(d),
                Piece::Copy { offset, len } => {
                    out.extend_from_slice(&old[*offset as usize..(*offset + *len) as usize])
                }
            }
        }
        out
    }

    fn random(seed: u64, len: usize) -> Vec<u8> {
        let mut rng = fastrand::Rng::with_seed(seed);
        (0..len).map(|_| rng.u8(..)).collect()
    }

    #[test]
    fn rebuilds_the_source_from_any_old_version() {
        let source = random(1, 100_000);
        let mut edited = source.clone();
        edited[500..520].fill(0); // changed bytes
        edited.drain(40_000..40_100); // a deletion: everything after shifts
        edited.splice(70_000..70_000, random(2, 333)); // an insertion
        let olds = [
            Vec::new(),
            source.clone(),
            edited,
            random(3, 10),
            source[..99_950].to_vec(),
            source[7..].to_vec(),
        ];
        for block in [700, 1024, 4096] {
            for (n, old) in olds.iter().enumerate() {
                let pieces = delta(&source, &signatures(old, block), block);
                assert_eq!(apply(old, &pieces), source, "old version {n}, block {block}");
            }
        }
    }

    #[test]
    fn an_identical_copy_is_one_range_and_a_small_change_sends_little() {
        let source = random(4, 1 << 20);
        let block = 1024;
        let same = delta(&source, &signatures(&source, block), block);
        assert_eq!(same, vec![Piece::Copy { offset: 0, len: 1 << 20 }]);
        let mut old = source.clone();
        for i in (0..old.len()).step_by(100_000) {
            old[i] ^= 0xff;
        }
        let pieces = delta(&source, &signatures(&old, block), block);
        assert_eq!(apply(&old, &pieces), source);
        assert_eq!(literal_bytes(&pieces), 11 * 1024, "one block per changed byte");
    }

    #[test]
    fn batches_bound_the_new_bytes_per_operation() {
        let pieces =
            vec![Piece::Data(vec![1; 2500]), Piece::Copy { offset: 0, len: 9 }, Piece::Data(vec![2; 10])];
        let split = batches(pieces, 1000);
        assert_eq!(split.iter().map(|b| literal_bytes(b)).collect::<Vec<_>>(), [1000, 1000, 510]);
        assert_eq!(split.concat().len(), 5);
    }
}

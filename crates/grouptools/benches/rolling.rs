//! psync's rsync-style rolling checksum: a fresh checksum of one block, sliding it over 1 MiB one
//! byte at a time, and the whole delta search of 1 MiB against an old copy's signatures (the same
//! data, and data in which no block matches). `cargo bench -p canopy-grouptools --bench rolling`.

use canopy_grouptools::psync::delta::delta;
use canopy_grouptools::psync::signature::{Rolling, block_size, signatures};
use divan::counter::BytesCount;
use divan::{Bencher, black_box};

fn main() {
    divan::main();
}

const MIB: usize = 1 << 20;

/// Block sizes: rsync's smallest (700 bytes), and its choice for a 1 GiB file.
const BLOCKS: [usize; 2] = [700, 32_768];

/// Reproducible bytes that do not repeat at any block size used here.
fn data(len: usize, seed: u64) -> Vec<u8> {
    let mut rng = fastrand::Rng::with_seed(seed);
    (0..len).map(|_| rng.u8(..)).collect()
}

#[divan::bench(args = BLOCKS)]
fn checksum_of_a_block(bencher: Bencher, block: usize) {
    let bytes = data(block, 1);
    bencher.counter(BytesCount::new(block)).bench(|| Rolling::new(black_box(&bytes)).value());
}

/// Slides the window over 1 MiB: one `roll` and one `value` per byte.
#[divan::bench(args = BLOCKS)]
fn roll_over_1_mib(bencher: Bencher, block: usize) {
    let bytes = data(MIB + block, 2);
    bencher.counter(BytesCount::new(MIB)).bench(|| {
        let mut rolling = Rolling::new(&bytes[..block]);
        let mut sum = 0u32;
        for pos in 0..MIB {
            rolling.roll(bytes[pos], bytes[pos + block]);
            sum = sum.wrapping_add(rolling.value());
        }
        sum
    });
}

/// The delta of 1 MiB against an identical old copy: every block matches on the first try.
#[divan::bench]
fn delta_unchanged(bencher: Bencher) {
    let source = data(MIB, 3);
    let block = block_size(MIB as u64);
    let old = signatures(&source, block);
    bencher.counter(BytesCount::new(MIB)).bench(|| delta(black_box(&source), &old, block).len());
}

/// The delta of 1 MiB against an old copy with nothing in common: the checksum rolls over every byte.
#[divan::bench]
fn delta_all_new(bencher: Bencher) {
    let source = data(MIB, 4);
    let block = block_size(MIB as u64);
    let old = signatures(&data(MIB, 5), block);
    bencher.counter(BytesCount::new(MIB)).bench(|| delta(black_box(&source), &old, block).len());
}

//! Placement vectors computed independently by Python (hashlib MD5 and a transcription of the
//! OrangeFS C loops, PINT_find_dist_dir_bucket and dist_dir_calc_branch_level), compared with the
//! Rust mapping for many directory sizes, GIGA+ growth histories and names.

use std::process::Command;

use canopy_dirsvc::mapping::{Bitmap, name_hash, tree_height};
use serde_json::Value;

const ORACLE: &str = r#"
import hashlib, json, math, random

def encrypt_dirdata(name):
    # PINT_encrypt_dirdata: the last 8 bytes of the MD5 digest as a little-endian uint64
    return int.from_bytes(hashlib.md5(name).digest()[8:16], "little")

def find_bucket(h, n, active):
    # PINT_find_dist_dir_bucket
    level = int(math.ceil(math.log(n) / math.log(2.0))) if n > 1 else 0
    node = h & ((1 << level) - 1)
    while level >= 0 and node not in active:
        level -= 1
        node &= (1 << level) - 1 if level >= 0 else 0
    return node

def branch_level(server, active):
    # dist_dir_calc_branch_level
    level = 0
    while server >> level:
        level += 1
    while server + (1 << level) in active:
        level += 1
    return level

names = [b"", b"a", b"file.mdtest.0.0", "naïve-\u00e9t\u00e9".encode(), bytes(range(1, 200, 3)), b"x" * 255]
names += [("file.mdtest.%d.%d" % (r, i)).encode() for r in range(4) for i in range(40)]
rng = random.Random(8)
names += [bytes(rng.randrange(1, 256) for _ in range(rng.randrange(1, 40))) for _ in range(60)]
names = [n for n in names if b"/" not in n]

cases = []
for n in [1, 2, 3, 4, 5, 7, 8, 13, 16, 31, 64, 100]:
    histories = [set(range(k)) for k in sorted({1, 2, n // 2 or 1, n}) if k <= n]
    for seed in range(3):
        # A random GIGA+ growth: an active partition splits into server + 2^level while in range.
        active = {0}
        grown = []
        g = random.Random(seed * 1000 + n)
        for _ in range(3 * n):
            k = g.choice(sorted(active))
            child = k + (1 << branch_level(k, active))
            if child < n:
                active.add(child)
                grown.append(set(active))
        histories += grown[:: max(1, len(grown) // 4)]
    for active in histories:
        cases.append({
            "n": n,
            "active": sorted(active),
            "levels": {str(k): branch_level(k, active) for k in sorted(active)},
            "placements": [[name.hex(), str(encrypt_dirdata(name)), find_bucket(encrypt_dirdata(name), n, active)] for name in names],
        })
print(json.dumps(cases))
"#;

fn python_vectors() -> Vec<Value> {
    let output = Command::new("python3")
        .arg("-c")
        .arg(ORACLE)
        .output()
        .expect("python3 runs (the placement oracle needs it)");
    assert!(output.status.success(), "oracle failed: {}", String::from_utf8_lossy(&output.stderr));
    serde_json::from_slice::<Value>(&output.stdout).unwrap().as_array().unwrap().clone()
}

fn unhex(hex: &str) -> Vec<u8> {
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect()
}

#[test]
fn placements_match_the_orangefs_algorithm_computed_in_python() {
    let cases = python_vectors();
    let mut checked = 0;
    let mut splits_seen = 0;
    for case in &cases {
        let n = case["n"].as_u64().unwrap() as u32;
        let mut bitmap = Bitmap::initial(n, 1);
        for index in case["active"].as_array().unwrap() {
            bitmap.set(index.as_u64().unwrap() as u32);
        }
        // Every bitmap a GIGA+ history produces is a valid one.
        let decoded = Bitmap::from_bytes(n, bitmap.as_bytes()).unwrap();
        assert_eq!(decoded, bitmap);
        for (index, level) in case["levels"].as_object().unwrap() {
            let index: u32 = index.parse().unwrap();
            assert_eq!(u64::from(bitmap.level(index)), level.as_u64().unwrap(), "n={n} {}", bitmap.render());
        }
        if bitmap.count_active() > 1 {
            splits_seen += 1;
        }
        for placement in case["placements"].as_array().unwrap() {
            let name = unhex(placement[0].as_str().unwrap());
            let hash: u64 = placement[1].as_str().unwrap().parse().unwrap();
            let partition = placement[2].as_u64().unwrap() as u32;
            assert_eq!(name_hash(&name), hash, "hash of {name:?}");
            assert_eq!(
                bitmap.partition_for(hash),
                partition,
                "n={n} bitmap={} name={name:?}",
                bitmap.render()
            );
            checked += 1;
        }
    }
    assert!(checked > 30_000, "only {checked} placements checked");
    assert!(splits_seen > 60, "histories with splits: {splits_seen}");
    assert_eq!(tree_height(100), 7);
}

//! What things cost in the simulated cluster. Times are nanoseconds of virtual time.
//!
//! The defaults describe the setting of issue 17's targets: every metadata request to the file
//! system takes 500 µs (`canopy latfs --delay 500us`), each node has its own mount of the tree with
//! latfs's default 64 request slots, one rank per node, and a cluster interconnect. The request counts
//! per directory and per entry are what `canopy walk` makes on latfs (bench/README's `requests`
//! column: 2 per entry — lookup and getattr — and 5 per directory of up to 128 entries — lookup,
//! opendir, two readdirs, releasedir).

pub type Time = u64;

pub const MICROSECOND: Time = 1_000;
pub const MILLISECOND: Time = 1_000_000;

#[derive(Clone, Debug)]
pub struct Model {
    /// Service time of one file-system request.
    pub fs_latency: Time,
    /// Each request's service time varies by up to ± this fraction (seeded).
    pub fs_jitter: f64,
    /// Requests one mount serves at once (latfs `--threads`); more wait in line.
    pub mount_slots: u32,
    /// Ranks per node: they share the node's mount, and talk to each other at `net_intra`.
    pub ranks_per_node: u32,
    /// One-way latency of a message between ranks on one node / on different nodes.
    pub net_intra: Time,
    pub net_inter: Time,
    /// Transfer time per byte (the inverse of the link bandwidth).
    pub net_ns_per_byte: f64,
    /// Time the communication thread spends on each message it sends or receives, and per byte
    /// (encoding, decoding, importing).
    pub msg_cpu: Time,
    pub msg_cpu_ns_per_byte: f64,
    /// Requests before a directory's listing (lookup, opendir).
    pub dir_open_requests: u32,
    /// Entries one readdir request returns; a listing ends with an empty one.
    pub readdir_entries: u32,
    /// Requests to stat one entry (lookup, getattr).
    pub stat_requests: u32,
    /// Entries per chunk of a big directory (the engine's `chunk_size`).
    pub chunk_size: u32,
    /// Cores per node, where the engine's adaptive thread policy starts.
    pub cores: usize,
    /// Ranks start within this long of each other.
    pub start_skew: Time,
    /// The communication loop's sleep when its rank is idle / busy (`mpi/steal.rs`).
    pub poll_idle: Time,
    pub poll_busy: Time,
}

impl Default for Model {
    fn default() -> Self {
        Model {
            fs_latency: 500 * MICROSECOND,
            fs_jitter: 0.1,
            mount_slots: 64,
            ranks_per_node: 1,
            net_intra: MICROSECOND / 2,
            net_inter: 2 * MICROSECOND,
            net_ns_per_byte: 0.1,
            msg_cpu: MICROSECOND,
            msg_cpu_ns_per_byte: 0.5,
            dir_open_requests: 2,
            readdir_entries: 128,
            stat_requests: 2,
            chunk_size: 256,
            cores: 16,
            start_skew: MILLISECOND,
            poll_idle: 50 * MICROSECOND,
            poll_busy: MILLISECOND,
        }
    }
}

impl Model {
    pub fn node_of(&self, rank: u32) -> u32 {
        rank / self.ranks_per_node.max(1)
    }

    /// One-way time of a message of `bytes` from `from` to `to`.
    pub fn transfer(&self, from: u32, to: u32, bytes: usize) -> Time {
        let latency = if self.node_of(from) == self.node_of(to) { self.net_intra } else { self.net_inter };
        latency + (bytes as f64 * self.net_ns_per_byte) as Time
    }

    /// Communication-thread time to send or receive a message of `bytes`.
    pub fn handling(&self, bytes: usize) -> Time {
        self.msg_cpu + (bytes as f64 * self.msg_cpu_ns_per_byte) as Time
    }

    /// Readdir requests for a directory of `entries` entries.
    pub fn readdir_requests(&self, entries: u32) -> u32 {
        entries.div_ceil(self.readdir_entries.max(1)) + 1
    }

    /// Requests a full walk makes on one mount: a lower bound on the work.
    pub fn requests(&self, tree: &crate::tree::Tree) -> u64 {
        let per_dir: u64 = (0..tree.dirs())
            .map(|d| u64::from(self.dir_open_requests + self.readdir_requests(tree.dir(d).entries()) + 1))
            .sum();
        per_dir + tree.entries() * u64::from(self.stat_requests)
    }
}

/// Parses `500us`, `2ms`, `1s`, `750ns` (a bare number is microseconds).
pub fn parse_time(text: &str) -> Result<Time, String> {
    let text = text.trim();
    let split = text.find(|c: char| c.is_ascii_alphabetic()).unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let value: f64 = number.parse().map_err(|_| format!("invalid duration {text:?}"))?;
    let scale = match unit {
        "ns" => 1.0,
        "" | "us" | "µs" => 1e3,
        "ms" => 1e6,
        "s" => 1e9,
        _ => return Err(format!("invalid duration {text:?}: unit ns, us, ms or s")),
    };
    Ok((value * scale).round() as Time)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_time("500us"), Ok(500 * MICROSECOND));
        assert_eq!(parse_time("2ms"), Ok(2 * MILLISECOND));
        assert_eq!(parse_time("1.5s"), Ok(1_500 * MILLISECOND));
        assert_eq!(parse_time("40"), Ok(40 * MICROSECOND));
        assert!(parse_time("fast").is_err());
        assert!(parse_time("3h").is_err());
    }

    /// bench/README's latency-mount table: `canopy walk` made 207,008 requests on wide-1000x100.
    #[test]
    fn request_counts_match_what_canopy_walk_makes_on_latfs() {
        let tree: crate::tree::Tree = "wide:1000x100".parse().unwrap();
        let model = Model::default();
        let requests = model.requests(&tree);
        assert!(requests.abs_diff(207_008) <= 10, "{requests}");
    }
}

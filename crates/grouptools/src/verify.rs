//! Checking copies on the hosts: each host hashes its copy span by span (SHA-256) and only the digests come
//! up the tree, as equivalence classes; members whose digests differ from the source's are dropped.

use crate::problems::Problems;
use canopy_group::aggr::{Classes, Digest};
use canopy_group::{AggrType, Builtin, FileOp, Group, OpKind, Transport};
use canopy_nodeset::RangeSet;
use sha2::{Digest as _, Sha256};

/// Bytes of the file covered by each digest (each host reads that much at a time).
pub const VERIFY_SPAN: u64 = 8 << 20;

/// The source's digest per [`VERIFY_SPAN`], fed as it is read.
#[derive(Default)]
pub struct SpanDigests {
    /// One digest per span (at least one: an empty file has the digest of nothing).
    pub spans: Vec<Digest>,
    /// Bytes fed.
    pub bytes: u64,
    hasher: Sha256,
    in_span: u64,
}

impl SpanDigests {
    /// The digests of `data`.
    pub fn of(data: &[u8]) -> SpanDigests {
        let mut digests = SpanDigests::default();
        digests.update(data);
        digests.finish();
        digests
    }

    /// Feeds the next bytes of the source.
    pub fn update(&mut self, mut data: &[u8]) {
        self.bytes += data.len() as u64;
        while !data.is_empty() {
            let take = data.len().min((VERIFY_SPAN - self.in_span) as usize);
            self.hasher.update(&data[..take]);
            self.in_span += take as u64;
            data = &data[take..];
            if self.in_span == VERIFY_SPAN {
                self.spans.push(Digest(self.hasher.finalize_reset().into()));
                self.in_span = 0;
            }
        }
    }

    /// Closes the last span.
    pub fn finish(&mut self) {
        if self.in_span > 0 || self.spans.is_empty() {
            self.spans.push(Digest(self.hasher.finalize_reset().into()));
            self.in_span = 0;
        }
    }
}

/// Each host hashes its copy span by span; only digests come up the tree, as equivalence classes. Members
/// whose digest differs from the source's are dropped with a "checksum mismatch".
pub fn verify<T: Transport>(
    temp: &mut Group<'_, T>,
    source: &SpanDigests,
    ok: &RangeSet,
    problems: &mut Problems,
) -> Result<RangeSet, String> {
    temp.gbindaggr(OpKind::Pread, AggrType::Data, Builtin::Checksum.into()).map_err(|e| e.to_string())?;
    let dest = problems.label().to_owned();
    let mut ok = ok.clone();
    for (index, expected) in source.spans.iter().enumerate() {
        if ok.is_empty() {
            break;
        }
        let offset = index as u64 * VERIFY_SPAN;
        let result = temp.run_on(FileOp::Pread { len: VERIFY_SPAN, offset }, &ok);
        let (outcome, failed) = problems.check(temp, result, "read back").map_err(|e| e.to_string())?;
        ok = ok.difference(&failed);
        let classes =
            outcome.data().map(|d| d.decode::<Classes<Digest>>()).transpose().map_err(|e| e.to_string())?;
        for (digest, members) in classes.flatten().map(|c| c.0).unwrap_or_default() {
            if digest != *expected {
                let hosts = temp.hosts_of(&members);
                problems.add(&hosts, format!("{dest}: checksum mismatch at byte {offset} after writing"));
                ok = ok.difference(&members);
            }
        }
    }
    Ok(ok)
}

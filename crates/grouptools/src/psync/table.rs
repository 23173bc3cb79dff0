//! psync's report: one row per sub-group with the columns of the TBON-FS paper's Table 3 — file size, new
//! bytes, block-match metadata bytes, and what was sent as a share of the file — plus the signature bytes
//! the sub-group sent up the tree.

use super::signature::BlockSig;
use crate::units;
use canopy_group::Piece;
use canopy_nodeset::NodeSet;
use serde::Serialize;
use std::io::Write;

/// One sub-group's transfer.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    /// The sub-group's hosts.
    pub hosts: String,
    /// How many.
    pub host_count: u64,
    /// Bytes of the new file.
    pub size: u64,
    /// New bytes sent (what no old block matched).
    pub new: u64,
    /// Bytes of block references and framing sent.
    pub matches: u64,
    /// Bytes of block signatures the sub-group sent up the tree (once for all its hosts).
    pub signatures: u64,
    /// True when the copies already equalled the source (nothing sent).
    pub up_to_date: bool,
}

impl Row {
    pub(crate) fn up_to_date(hosts: NodeSet, size: u64) -> Row {
        Row {
            host_count: hosts.len(),
            hosts: hosts.to_string(),
            size,
            new: 0,
            matches: 0,
            signatures: 0,
            up_to_date: true,
        }
    }

    pub(crate) fn updated(hosts: NodeSet, pieces: &[Piece], size: u64, old: &[BlockSig]) -> Row {
        let new = super::delta::literal_bytes(pieces);
        let encoded = postcard::to_stdvec(pieces).map_or(0, |v| v.len() as u64);
        let signatures = postcard::to_stdvec(old).map_or(0, |v| v.len() as u64);
        Row {
            host_count: hosts.len(),
            hosts: hosts.to_string(),
            size,
            new,
            matches: encoded.saturating_sub(new),
            signatures,
            up_to_date: false,
        }
    }

    /// New bytes and match metadata as a percentage of the file size.
    pub fn sent_percent(&self) -> f64 {
        if self.size == 0 { 0.0 } else { 100.0 * (self.new + self.matches) as f64 / self.size as f64 }
    }
}

/// The whole report.
#[derive(Debug, Clone, Serialize)]
pub struct Table {
    /// Size of the source.
    pub size: u64,
    /// Signature block size.
    pub block_size: usize,
    /// One row per sub-group.
    pub rows: Vec<Row>,
}

impl Table {
    pub(crate) fn new(size: u64, block_size: usize) -> Table {
        Table { size, block_size, rows: Vec::new() }
    }

    /// Prints the table.
    pub fn print(&self, out: &mut dyn Write) -> std::io::Result<()> {
        writeln!(
            out,
            "{:<24} {:>12} {:>12} {:>12} {:>7} {:>12}",
            "HOSTS", "SIZE(B)", "NEW(B)", "MATCHES(B)", "SENT", "SIGS(B)"
        )?;
        for row in &self.rows {
            let hosts = if row.host_count > 1 {
                format!("{} ({})", row.hosts, row.host_count)
            } else {
                row.hosts.clone()
            };
            if row.up_to_date {
                writeln!(out, "{hosts:<24} {:>12} {:>12} {:>12} {:>7} {:>12}", row.size, 0, 0, "same", "-")?;
            } else {
                writeln!(
                    out,
                    "{hosts:<24} {:>12} {:>12} {:>12} {:>6.1}% {:>12}",
                    row.size,
                    row.new,
                    row.matches,
                    row.sent_percent(),
                    row.signatures
                )?;
            }
        }
        Ok(())
    }

    /// One line for the whole sync: `psync: DEST on HOSTS (N hosts): ...`, with what was sent.
    pub fn summary(&self, dest: &str, hosts: &NodeSet, seconds: f64) -> String {
        let updated: Vec<&Row> = self.rows.iter().filter(|r| !r.up_to_date).collect();
        let same = self.rows.len() - updated.len();
        let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let new: u64 = updated.iter().map(|r| r.new).sum();
        let matches: u64 = updated.iter().map(|r| r.matches).sum();
        let size = self.size * updated.len() as u64;
        let share = if size == 0 { 0.0 } else { 100.0 * (new + matches) as f64 / size as f64 };
        format!(
            "psync: {dest} on {hosts} ({}): {} updated, {} up to date; sent {} new and {} of block references \
             for {} of files ({share:.1} %) in {}",
            plural(hosts.len() as usize, "host", "hosts"),
            plural(updated.len(), "sub-group", "sub-groups"),
            same,
            units::bytes(new as f64),
            units::bytes(matches as f64),
            units::bytes(size as f64),
            units::duration(seconds)
        )
    }

    /// The report as JSON.
    pub fn json(&self) -> serde_json::Value {
        let mut value = serde_json::to_value(self).expect("the table serialises");
        for (row, json) in self.rows.iter().zip(value["rows"].as_array_mut().expect("rows")) {
            json["sent_percent"] = serde_json::json!(row.sent_percent());
        }
        value
    }
}

//! `canopy dirsvc fsck`: checks (and with `--repair` fixes) link counts, names, orphan inodes and
//! data, and directories' names, parents and subdirectory counts over the whole cluster. Run it on
//! an idle cluster, as e2fsck on an unmounted file system: it first settles every link in progress
//! and waits for the servers' outboxes to drain, then reads every server and checks the whole.
//! Each repair applies only to an object still as the check saw it.

mod analyze;

use std::time::Duration;

use serde::Serialize;

pub use self::analyze::{Findings, Fix, Problem, Scanned, analyze};
use crate::client::Client;
use crate::error::{Error, ErrorKind, Result};
use crate::proto::{RepairRequest, ScanRequest, ScanTable, SettleRequest};

/// How long the check waits for the servers to deliver the effects they hold for each other.
const DRAIN: Duration = Duration::from_secs(30);
const PAGE: u32 = 4096;

#[derive(Clone, Debug, Default, Serialize)]
pub struct FsckReport {
    #[serde(flatten)]
    pub findings: Findings,
    pub repaired: usize,
    /// Repairs that were refused (the object changed meanwhile, or a server failed).
    pub not_repaired: Vec<String>,
}

impl FsckReport {
    /// e2fsck's exit status: 0 clean, 1 every problem repaired, 4 problems left.
    pub fn exit_code(&self) -> u8 {
        match (self.findings.problems.len(), self.not_repaired.len(), self.repaired) {
            (0, _, _) => 0,
            (found, 0, repaired) if repaired == found => 1,
            _ => 4,
        }
    }
}

pub async fn run(client: &Client, repair: bool) -> Result<FsckReport> {
    settle(client).await?;
    let scanned = scan(client).await?;
    let findings = analyze(&scanned);
    let mut report = FsckReport { findings, ..FsckReport::default() };
    if repair {
        for problem in &report.findings.problems {
            let outcome = match &problem.fix {
                Fix::Server(server, action) => {
                    let request = RepairRequest { action: Some(action.clone()) };
                    let ack = client
                        .rpc(*server)?
                        .repair(request)
                        .await
                        .map_err(|s| client.status_error(*server, &s));
                    ack.and_then(|ack| match ack.into_inner().failure {
                        Some(failure) => Err(Error::from_failure(&failure)),
                        None => Ok(true),
                    })
                }
                Fix::DestroyDir { dir, servers } => client.destroy(*dir, servers).await.map(|()| true),
                Fix::None => Ok(false),
            };
            match outcome {
                Ok(true) => report.repaired += 1,
                Ok(false) => report.not_repaired.push(problem.what.clone()),
                Err(e) => report.not_repaired.push(format!("{}: {e}", problem.what)),
            }
        }
    }
    Ok(report)
}

/// Settles every link intent, then waits until no server holds effects for another.
async fn settle(client: &Client) -> Result<()> {
    for server in 0..client.server_count() {
        client.rpc(server)?.settle(SettleRequest {}).await.map_err(|s| client.status_error(server, &s))?;
    }
    let deadline = tokio::time::Instant::now() + DRAIN;
    loop {
        let mut waiting = Vec::new();
        for server in 0..client.server_count() {
            let ping = client.ping(server).await?;
            if ping.outbox > 0 || ping.intents > 0 {
                waiting.push(format!(
                    "server {server}: {} effects to deliver, {} links in progress",
                    ping.outbox, ping.intents
                ));
            }
        }
        if waiting.is_empty() {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(Error::new(
                ErrorKind::Unavailable,
                format!("the cluster did not settle (is a server down?): {}", waiting.join("; ")),
            ));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Reads every table of every server (a consistent picture only of an idle cluster).
pub async fn scan(client: &Client) -> Result<Scanned> {
    let mut scanned = Scanned::default();
    for server in 0..client.server_count() {
        for table in [
            ScanTable::ScanInodes,
            ScanTable::ScanEntries,
            ScanTable::ScanDirs,
            ScanTable::ScanData,
            ScanTable::ScanIntents,
        ] {
            let mut after = Vec::new();
            loop {
                let request = ScanRequest { table: table as i32, after, limit: PAGE };
                let page = client
                    .rpc(server)?
                    .scan(request)
                    .await
                    .map_err(|s| client.status_error(server, &s))?
                    .into_inner();
                scanned.inodes.extend(page.inodes.into_iter().map(|i| (server, i)));
                scanned.entries.extend(page.entries.into_iter().map(|e| (server, e)));
                scanned.dirs.extend(page.dirs.into_iter().map(|d| (server, d)));
                scanned.data.extend(page.data.into_iter().map(|d| (server, d)));
                scanned.intents.extend(page.intents.into_iter().map(|i| (server, i)));
                if page.next.is_empty() {
                    break;
                }
                after = page.next;
            }
        }
    }
    Ok(scanned)
}

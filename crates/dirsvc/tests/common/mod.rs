//! An in-process cluster for tests: real servers (fjall stores in a temporary directory, gRPC on
//! loopback ports chosen by the kernel) in the test's tokio runtime.
#![allow(dead_code)]

use std::collections::BTreeSet;

use canopy_dirsvc::client::{Client, MkdirOptions, Owner};
use canopy_dirsvc::cluster::{ClusterConfig, ClusterDir};
use canopy_dirsvc::mapping::name_hash;
use canopy_dirsvc::server::{self, RunningServer, ServerOptions};
use tokio::net::TcpListener;

pub struct TestCluster {
    pub dir: tempfile::TempDir,
    pub cluster: ClusterDir,
    pub servers: Vec<RunningServer>,
}

impl TestCluster {
    pub async fn start(servers: u32, root_partitions: u32, split_threshold: u64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let mut listeners = Vec::new();
        for _ in 0..servers {
            listeners.push(TcpListener::bind("127.0.0.1:0").await.unwrap());
        }
        let config = ClusterConfig {
            servers: listeners.iter().map(|l| l.local_addr().unwrap()).collect(),
            root_partitions,
            split_threshold,
        };
        let cluster = ClusterDir::create(dir.path(), config).unwrap();
        let mut running = Vec::new();
        for (index, listener) in listeners.into_iter().enumerate() {
            let options = ServerOptions::new(cluster.clone(), index as u32);
            running.push(server::start(&options, Some(listener)).await.unwrap());
        }
        Self { dir, cluster, servers: running }
    }

    pub fn client(&self) -> Client {
        Client::connect(&self.cluster)
    }
}

pub fn owner() -> Owner {
    Owner { mode: 0o644, uid: 1000, gid: 1000 }
}

pub fn mkdir_options(initial_partitions: u32, split_threshold: u64) -> MkdirOptions {
    MkdirOptions {
        owner: Owner { mode: 0o755, uid: 1000, gid: 1000 },
        initial_partitions,
        split_threshold: Some(split_threshold),
    }
}

/// A name in `dir` whose partition is on `server` (`on`) or not on it.
pub async fn name_where(client: &Client, dir: u64, server: u32, on: bool, prefix: &str) -> Vec<u8> {
    for i in 0.. {
        let name = format!("{prefix}{i}");
        if (client.locate(dir, name.as_bytes()).await.unwrap().server == server) == on {
            return name.into_bytes();
        }
    }
    unreachable!()
}

/// Waits until no partition of `dir` has a split in progress.
pub async fn settle_splits(client: &Client, dir: u64) {
    for _ in 0..500 {
        let stats = client.partition_stats(dir).await.unwrap();
        if stats.iter().all(|p| !p.splitting) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    panic!("splits of {dir:#x} did not finish within 10 s");
}

/// Every entry of every active partition sits where the final bitmap maps it; returns all names.
pub async fn check_placement(client: &Client, dir: u64) -> Vec<String> {
    let info = client.fetch_dir(dir).await.unwrap();
    let stats = client.partition_stats(dir).await.unwrap();
    let mut all = Vec::new();
    for partition in info.bitmap.active() {
        let entries = client.partition_entries(dir, partition).await.unwrap();
        let counted = stats.iter().find(|p| p.partition == partition).unwrap().entries;
        assert_eq!(entries.len() as u64, counted, "partition {partition} count");
        for entry in entries {
            assert_eq!(
                info.bitmap.partition_for(name_hash(&entry.name)),
                partition,
                "{} is on the wrong partition",
                entry.name_lossy()
            );
            all.push(entry.name_lossy());
        }
    }
    for stat in stats.iter().filter(|p| !p.active) {
        assert_eq!(stat.entries, 0, "inactive partition {} holds entries", stat.partition);
    }
    all
}

pub fn sorted_unique(names: Vec<String>) -> Vec<String> {
    let total = names.len();
    let set: BTreeSet<String> = names.into_iter().collect();
    assert_eq!(set.len(), total, "duplicate names");
    set.into_iter().collect()
}

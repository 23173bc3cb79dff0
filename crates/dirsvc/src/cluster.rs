//! A cluster on disk: `DIR/cluster.json` (server addresses and defaults), `DIR/secret` (the shared
//! secret, mode 0600) and one `DIR/server-I/` per server (store, pid file, log).

use std::fs;
use std::io::Write;
use std::net::SocketAddr;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use rand::RngCore;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

pub const CLUSTER_FILE: &str = "cluster.json";
pub const SECRET_FILE: &str = "secret";
/// Entries a partition may hold before it splits, unless a directory says otherwise
/// (OrangeFS's PVFS_DIST_DIR_MAX_ENTRIES).
pub const DEFAULT_SPLIT_THRESHOLD: u64 = 16_000;
/// The most servers a cluster may have: ids keep the server index in their top 16 bits.
pub const MAX_SERVERS: usize = 1 << 12;

#[derive(Clone, Debug, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClusterConfig {
    /// Server i listens on `servers[i]`.
    pub servers: Vec<SocketAddr>,
    /// Active partitions of the root directory when the cluster is first formatted.
    pub root_partitions: u32,
    /// Default split threshold for directories created without one.
    pub split_threshold: u64,
}

impl ClusterConfig {
    pub fn check(&self) -> Result<()> {
        if self.servers.is_empty() || self.servers.len() > MAX_SERVERS {
            return Err(Error::invalid(format!(
                "a cluster has 1 to {MAX_SERVERS} servers, not {}",
                self.servers.len()
            )));
        }
        if self.root_partitions == 0 || self.root_partitions as usize > self.servers.len() {
            return Err(Error::invalid(format!(
                "root partitions must be 1..={}, not {}",
                self.servers.len(),
                self.root_partitions
            )));
        }
        Ok(())
    }

    pub fn server_count(&self) -> u32 {
        self.servers.len() as u32
    }
}

/// A cluster directory and what is in it.
#[derive(Clone, Debug)]
pub struct ClusterDir {
    pub dir: PathBuf,
    pub config: ClusterConfig,
    pub secret: String,
}

impl ClusterDir {
    /// Loads a cluster from its directory or from the path of its `cluster.json`.
    pub fn load(path: &Path) -> Result<Self> {
        let dir = if path.is_dir() {
            path.to_path_buf()
        } else {
            path.parent().map(Path::to_path_buf).unwrap_or_default()
        };
        let file = dir.join(CLUSTER_FILE);
        let text = fs::read_to_string(&file).map_err(|e| {
            Error::io(format!(
                "cannot read cluster file {}: {e} (start a cluster with `canopy dirsvc start`)",
                file.display()
            ))
        })?;
        let config: ClusterConfig = serde_json::from_str(&text)
            .map_err(|e| Error::io(format!("cluster file {} is malformed: {e}", file.display())))?;
        config.check()?;
        let secret = read_secret(&dir.join(SECRET_FILE))?;
        Ok(Self { dir, config, secret })
    }

    /// Creates a new cluster directory: the config and a fresh secret readable only by its owner.
    /// Refuses to overwrite an existing cluster.
    pub fn create(dir: &Path, config: ClusterConfig) -> Result<Self> {
        config.check()?;
        fs::create_dir_all(dir).map_err(|e| Error::io(format!("cannot create {}: {e}", dir.display())))?;
        let file = dir.join(CLUSTER_FILE);
        if file.exists() {
            return Err(Error::new(
                crate::error::ErrorKind::Exists,
                format!("{} already holds a cluster", dir.display()),
            ));
        }
        let mut bytes = [0u8; 32];
        rand::rng().fill_bytes(&mut bytes);
        let secret: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
        let secret_path = dir.join(SECRET_FILE);
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&secret_path)
            .map_err(|e| Error::io(format!("cannot create {}: {e}", secret_path.display())))?;
        writeln!(out, "{secret}")
            .and_then(|()| out.sync_all())
            .map_err(|e| Error::io(format!("cannot write {}: {e}", secret_path.display())))?;
        let json = serde_json::to_string_pretty(&config).expect("config serialises");
        let tmp = dir.join(".cluster.json.tmp");
        fs::write(&tmp, json + "\n")
            .and_then(|()| fs::rename(&tmp, &file))
            .map_err(|e| Error::io(format!("cannot write {}: {e}", file.display())))?;
        Ok(Self { dir: dir.to_path_buf(), config, secret })
    }

    pub fn server_dir(&self, index: u32) -> PathBuf {
        self.dir.join(format!("server-{index}"))
    }
}

fn read_secret(path: &Path) -> Result<String> {
    let meta = fs::metadata(path)
        .map_err(|e| Error::io(format!("cannot read cluster secret {}: {e}", path.display())))?;
    if meta.permissions().mode() & 0o077 != 0 {
        return Err(Error::io(format!(
            "cluster secret {} is readable by others (mode {:o}); chmod 600 it",
            path.display(),
            meta.permissions().mode() & 0o777
        )));
    }
    let text = fs::read_to_string(path)
        .map_err(|e| Error::io(format!("cannot read cluster secret {}: {e}", path.display())))?;
    let secret = text.trim().to_string();
    if secret.len() < 32 || !secret.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::io(format!(
            "cluster secret {} is not a hex secret of at least 32 digits",
            path.display()
        )));
    }
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config() -> ClusterConfig {
        ClusterConfig {
            servers: vec!["127.0.0.1:1".parse().unwrap(), "127.0.0.1:2".parse().unwrap()],
            root_partitions: 2,
            split_threshold: 100,
        }
    }

    #[test]
    fn create_writes_a_private_secret_and_load_reads_it_back() {
        let dir = tempfile::tempdir().unwrap();
        let created = ClusterDir::create(dir.path(), config()).unwrap();
        let mode = fs::metadata(dir.path().join(SECRET_FILE)).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        assert_eq!(created.secret.len(), 64);
        let loaded = ClusterDir::load(&dir.path().join(CLUSTER_FILE)).unwrap();
        assert_eq!((loaded.config, loaded.secret), (config(), created.secret));
        assert!(ClusterDir::create(dir.path(), config()).is_err(), "no overwrite");
    }

    #[test]
    fn load_refuses_a_secret_others_can_read() {
        let dir = tempfile::tempdir().unwrap();
        ClusterDir::create(dir.path(), config()).unwrap();
        let secret = dir.path().join(SECRET_FILE);
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o644)).unwrap();
        let err = ClusterDir::load(dir.path()).unwrap_err();
        assert!(err.message.contains("readable by others"), "{err}");
    }
}

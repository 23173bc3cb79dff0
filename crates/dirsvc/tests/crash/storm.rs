//! A storm of creates, hard links, renames and unlinks while each server in turn is killed with
//! SIGKILL and restarted (see the crash test's header).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use canopy_dirsvc::client::{Client, FileKind};
use canopy_dirsvc::error::ErrorKind;
use canopy_dirsvc::fsck;
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use super::common::{mkdir_options, owner};
use super::{SERVERS, Servers};

const CLIENTS: usize = 4;

/// A name in one of the two storm directories.
type Name = (usize, String);

/// What one client knows for certain about its own names.
#[derive(Default)]
struct Model {
    /// Names that exist, and the file (id) each leads to.
    names: HashMap<Name, u64>,
    /// Names that were removed (unlinked, or renamed away) and acknowledged.
    gone: HashSet<Name>,
    /// Names an unacknowledged operation touched: they may or may not exist.
    uncertain: HashSet<Name>,
    /// Each file's data, as written when it was created.
    data: HashMap<u64, Vec<u8>>,
    acked: usize,
    failed: usize,
}

impl Model {
    fn doubt(&mut self, names: &[&Name]) {
        for name in names {
            self.names.remove(*name);
            self.gone.remove(*name);
            self.uncertain.insert((*name).clone());
        }
    }

    fn remove(&mut self, name: &Name) {
        self.names.remove(name);
        self.gone.insert(name.clone());
    }
}

/// One client's storm: until `stop`, random operations on its own names.
async fn storm(
    client: Client,
    dirs: [u64; 2],
    me: usize,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
) -> Model {
    let mut rng = StdRng::seed_from_u64(me as u64);
    let mut model = Model::default();
    let mut fresh = 0;
    while !stop.load(Ordering::Relaxed) {
        let mut new_name = || {
            fresh += 1;
            (fresh % 2, format!("c{me}-{fresh}"))
        };
        let existing: Vec<Name> = model.names.keys().cloned().collect();
        let pick = |rng: &mut StdRng| existing[rng.random_range(0..existing.len())].clone();
        let ok = match rng.random_range(0..4) {
            _ if existing.len() < 3 => create(&client, dirs, &mut model, new_name()).await,
            0 => create(&client, dirs, &mut model, new_name()).await,
            1 => {
                let (from, to) = (pick(&mut rng), new_name());
                let id = model.names[&from];
                match client.link(id, dirs[to.0], to.1.as_bytes()).await {
                    Ok(_) => {
                        model.names.insert(to, id);
                        true
                    }
                    Err(_) => {
                        model.doubt(&[&to]);
                        false
                    }
                }
            }
            2 => {
                let from = pick(&mut rng);
                let to = if rng.random_bool(0.3) { pick(&mut rng) } else { new_name() };
                let moved = client.rename(dirs[from.0], from.1.as_bytes(), dirs[to.0], to.1.as_bytes()).await;
                match moved {
                    Ok(_) => {
                        let id = model.names[&from];
                        // Two names of one file: rename(2) does nothing.
                        if model.names.get(&to) != Some(&id) {
                            model.remove(&from);
                            model.names.insert(to.clone(), id);
                            model.gone.remove(&to);
                        }
                        true
                    }
                    Err(_) => {
                        model.doubt(&[&from, &to]);
                        false
                    }
                }
            }
            _ => {
                let name = pick(&mut rng);
                match client.unlink(dirs[name.0], name.1.as_bytes()).await {
                    Ok(_) => {
                        model.remove(&name);
                        true
                    }
                    Err(_) => {
                        model.doubt(&[&name]);
                        false
                    }
                }
            }
        };
        if ok {
            model.acked += 1;
            acked.fetch_add(1, Ordering::Relaxed);
        } else {
            model.failed += 1;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    model
}

/// Creates `name` and writes its name into it as its data.
async fn create(client: &Client, dirs: [u64; 2], model: &mut Model, name: Name) -> bool {
    let created = client.create(dirs[name.0], name.1.as_bytes(), FileKind::File, owner()).await;
    let Ok(entry) = created else {
        model.doubt(&[&name]);
        return false;
    };
    model.names.insert(name.clone(), entry.id);
    if client.write_data(entry.id, 0, name.1.clone().into_bytes()).await.is_ok() {
        model.data.insert(entry.id, name.1.into_bytes());
    }
    true
}

async fn wait_for(acked: &AtomicUsize, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(120);
    while acked.load(Ordering::Relaxed) < at_least {
        assert!(Instant::now() < deadline, "the storm made no progress");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

pub async fn kill_nine_during_a_storm_of_links() {
    let dir = tempfile::tempdir().unwrap();
    let (mut servers, client) = Servers::launch(dir.path(), 0).await;
    let cluster = servers.cluster.clone();
    // Two directories with every partition active: names, inodes and links land on every server.
    let a = client.mkdir(client.root(), b"a", mkdir_options(0, 0)).await.unwrap().id;
    let b = client.mkdir(client.root(), b"b", mkdir_options(0, 0)).await.unwrap().id;

    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..CLIENTS)
        .map(|me| {
            tokio::spawn(storm(Client::connect(&cluster), [a, b], me, Arc::clone(&stop), Arc::clone(&acked)))
        })
        .collect();
    for victim in 0..SERVERS as u32 {
        wait_for(&acked, acked.load(Ordering::Relaxed) + 300).await;
        servers.kill_nine(victim);
        tokio::time::sleep(Duration::from_millis(300)).await;
        servers.start(&client, victim).await;
    }
    wait_for(&acked, acked.load(Ordering::Relaxed) + 300).await;
    stop.store(true, Ordering::Relaxed);
    let mut models = Vec::new();
    for handle in clients {
        models.push(handle.await.unwrap());
    }

    let checker = Client::connect(&cluster);
    let (mut present, mut removed, mut failed) = (0, 0, 0);
    for model in &models {
        failed += model.failed;
        for (name, &id) in &model.names {
            let entry = checker.lookup([a, b][name.0], name.1.as_bytes()).await;
            let entry = entry.unwrap_or_else(|e| panic!("acknowledged name {name:?} lost: {e}"));
            assert_eq!(entry.id, id, "{name:?} leads to another file");
            if let Some(data) = model.data.get(&id) {
                assert_eq!(&checker.read_data(id, 0, 1 << 16).await.unwrap(), data, "data of {name:?}");
            }
            present += 1;
        }
        for name in &model.gone {
            let found = checker.lookup_name([a, b][name.0], name.1.as_bytes()).await;
            assert_eq!(
                found.map(|e| e.id).map_err(|e| e.kind),
                Err(ErrorKind::NotFound),
                "removed {name:?} is back"
            );
            removed += 1;
        }
    }
    assert!(failed > 0, "operations hit the killed servers (else the kills proved nothing)");

    // The servers settle by themselves: outboxes delivered, abandoned links settled.
    let deadline = Instant::now() + Duration::from_secs(120);
    let mut left = None;
    loop {
        let (mut intents, mut outbox) = (0, 0);
        for server in 0..SERVERS as u32 {
            let ping = checker.ping(server).await.unwrap();
            (intents, outbox) = (intents + ping.intents, outbox + ping.outbox);
        }
        left.get_or_insert((intents, outbox));
        if intents + outbox == 0 {
            break;
        }
        assert!(Instant::now() < deadline, "the servers did not settle their links and effects");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let findings = fsck::analyze(&fsck::scan(&checker).await.unwrap());
    assert!(findings.problems.is_empty(), "after the restarts: {:#?}", findings.problems);
    let (intents, outbox) = left.unwrap_or_default();
    println!(
        "  {} acknowledged operations, {failed} failed; {present} names checked present, {removed} checked \
         removed; {intents} abandoned links and {outbox} undelivered effects settled by the servers; {} files, \
         {} names, link counts exact",
        acked.load(Ordering::Relaxed),
        findings.inodes,
        findings.entries
    );
}

//! Durability under `kill -9`: real server processes (this test binary re-executed with
//! `--serve-child`), clients creating in one directory, servers killed and restarted mid-stream.
//! Every acknowledged create must be there afterwards, exactly once and on the right partition;
//! nothing may appear that no client tried to create.
//!
//! Round 1 kills the server of the directory's partition 1 before any split, so the first split
//! stalls with its moving half frozen until that server is back. Round 2 kills the server holding
//! partition 0 and the metadata object while creates (and possibly splits) are under way.
//!
//! The storm (`kill_nine_during_a_storm_of_links_loses_nothing_and_leaves_no_count_dangling`)
//! kills each of three servers in turn while clients create, hard-link, rename (over other
//! names, within and across servers) and unlink files in two directories spread over all of
//! them. Every acknowledged operation must hold afterwards (names that must exist lead to the
//! right file with the right data, names removed stay removed), and once the servers settled by
//! themselves (their outboxes delivered, abandoned links settled by the inode's server) every
//! link count equals the file's names: the fsck check finds nothing.
//!
//! The restart test stops (SIGTERM, then `kill -9`) the server of a directory's metadata object
//! between creates on another server's partition: the delivery stream from there is broken each
//! time, and the next create must still be answered only once the directory's new times arrived.

mod common;
#[path = "crash/storm.rs"]
mod storm;

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::{Child, ExitCode};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use canopy_dirsvc::client::{Client, DirEntry, FileKind};
use canopy_dirsvc::cluster::ClusterDir;
use canopy_dirsvc::ids::home_server;
use canopy_dirsvc::launcher::{ClusterPlan, ServerCommand, init_cluster, spawn_server, wait_ready};
use canopy_dirsvc::server::{ServerOptions, serve_blocking};
use common::{check_placement, mkdir_options, name_where, owner, settle_splits, sorted_unique};

const SERVERS: usize = 3;
const CREATORS: usize = 4;

type Test = (&'static str, fn() -> std::pin::Pin<Box<dyn std::future::Future<Output = ()>>>);

const TESTS: &[Test] = &[
    ("kill_nine_loses_no_acknowledged_create", || Box::pin(kill_nine_loses_no_acknowledged_create())),
    ("kill_nine_during_a_storm_of_links_loses_nothing_and_leaves_no_count_dangling", || {
        Box::pin(storm::kill_nine_during_a_storm_of_links())
    }),
    ("a_restarted_directory_server_gets_its_times_on_a_new_delivery_stream", || {
        Box::pin(a_restarted_directory_server_gets_its_times_on_a_new_delivery_stream())
    }),
];

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.iter().any(|a| a == "--serve-child") {
        return serve_child(&args);
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    let chosen: Vec<&Test> = TESTS
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    println!("running {} tests", chosen.len());
    for (name, test) in chosen {
        println!("test {name} ...");
        let started = Instant::now();
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap()
            .block_on(test());
        println!("test {name} ... ok ({:.1} s)", started.elapsed().as_secs_f64());
    }
    ExitCode::SUCCESS
}

fn serve_child(args: &[String]) -> ExitCode {
    let value = |flag: &str| {
        let at = args.iter().position(|a| a == flag).expect(flag);
        args[at + 1].clone()
    };
    let cluster = ClusterDir::load(&PathBuf::from(value("--cluster"))).unwrap();
    let index: u32 = value("--index").parse().unwrap();
    match serve_blocking(&ServerOptions::new(cluster, index)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("server {index}: {e}");
            ExitCode::FAILURE
        }
    }
}

struct Servers {
    cluster: ClusterDir,
    command: ServerCommand,
    children: Vec<Option<Child>>,
}

impl Servers {
    /// A new cluster of `SERVERS` server processes in `dir`, all started; and a client of it.
    async fn launch(dir: &std::path::Path, split_threshold: u64) -> (Servers, Client) {
        let plan = ClusterPlan {
            servers: SERVERS,
            base_port: None,
            root_partitions: SERVERS as u32,
            split_threshold,
        };
        let cluster = init_cluster(dir, &plan).unwrap();
        let mut servers = Servers {
            command: ServerCommand {
                program: std::env::current_exe().unwrap(),
                args: vec!["--serve-child".into()],
            },
            children: (0..SERVERS).map(|_| None).collect(),
            cluster: cluster.clone(),
        };
        let client = Client::connect(&cluster);
        for index in 0..SERVERS as u32 {
            servers.start(&client, index).await;
        }
        (servers, client)
    }

    async fn start(&mut self, client: &Client, index: u32) {
        let mut child = spawn_server(&self.cluster, index, &self.command).unwrap();
        wait_ready(client, index, Some(&mut child), Duration::from_secs(20)).await.unwrap();
        self.children[index as usize] = Some(child);
    }

    fn kill_nine(&mut self, index: u32) {
        let mut child = self.children[index as usize].take().expect("server running");
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
    }

    /// Stops a server as `canopy dirsvc stop` does (SIGTERM); it must exit within 10 s.
    async fn terminate(&mut self, index: u32) {
        let mut child = self.children[index as usize].take().expect("server running");
        let status = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        assert!(status.unwrap().success(), "kill -TERM server {index}");
        let deadline = Instant::now() + Duration::from_secs(10);
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "server {index} did not stop within 10 s of SIGTERM");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

impl Drop for Servers {
    fn drop(&mut self) {
        for child in self.children.iter_mut().flatten() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

#[derive(Default)]
struct Outcomes {
    acked: Vec<String>,
    attempted: Vec<String>,
}

async fn wait_for_acks(outcomes: &Mutex<Outcomes>, at_least: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while outcomes.lock().unwrap().acked.len() < at_least {
        assert!(Instant::now() < deadline, "creates made no progress");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn kill_nine_loses_no_acknowledged_create() {
    let dir = tempfile::tempdir().unwrap();
    let (mut servers, client) = Servers::launch(dir.path(), 50).await;
    let cluster = servers.cluster.clone();
    let shared = client.mkdir(client.root(), b"crash", mkdir_options(1, 50)).await.unwrap().id;
    let table = client.fetch_dir(shared).await.unwrap().servers.clone();
    let (first_server, child_server) = (table[0], table[1]);

    // Round 1: the server that partition 0 will split into is down from the start.
    servers.kill_nine(child_server);
    let outcomes = Arc::new(Mutex::new(Outcomes::default()));
    let stop = Arc::new(AtomicBool::new(false));
    let mut creators = Vec::new();
    for task in 0..CREATORS {
        let client = Client::connect(&cluster);
        let outcomes = Arc::clone(&outcomes);
        let stop = Arc::clone(&stop);
        creators.push(tokio::spawn(async move {
            let mut i = 0;
            while !stop.load(Ordering::Relaxed) {
                let name = format!("t{task}-{i}");
                i += 1;
                match client.create(shared, name.as_bytes(), FileKind::File, owner()).await {
                    Ok(_) => outcomes.lock().unwrap().acked.push(name),
                    Err(_) => {
                        outcomes.lock().unwrap().attempted.push(name);
                        tokio::time::sleep(Duration::from_millis(5)).await;
                    }
                }
            }
        }));
    }
    wait_for_acks(&outcomes, 40).await;
    tokio::time::sleep(Duration::from_millis(800)).await;
    // The split of partition 0 cannot install its moving half: creates of that half wait.
    let stalled_at = outcomes.lock().unwrap().acked.len();
    servers.start(&client, child_server).await;
    let acked = outcomes.lock().unwrap().acked.len();
    wait_for_acks(&outcomes, acked + 200).await;

    // Round 2: kill the server holding partition 0 and the metadata object mid-stream.
    servers.kill_nine(first_server);
    tokio::time::sleep(Duration::from_millis(300)).await;
    servers.start(&client, first_server).await;
    let acked = outcomes.lock().unwrap().acked.len();
    wait_for_acks(&outcomes, acked + 200).await;
    stop.store(true, Ordering::Relaxed);
    for creator in creators {
        creator.await.unwrap();
    }

    let outcomes = std::mem::take(&mut *outcomes.lock().unwrap());
    let checker = Client::connect(&cluster);
    settle_splits(&checker, shared).await;
    let listed =
        sorted_unique(checker.read_dir(shared).await.unwrap().iter().map(DirEntry::name_lossy).collect());
    let present: HashSet<&String> = listed.iter().collect();
    let tried: HashSet<&String> = outcomes.acked.iter().chain(&outcomes.attempted).collect();
    for name in &outcomes.acked {
        assert!(present.contains(name), "acknowledged create {name} was lost");
        checker.lookup(shared, name.as_bytes()).await.unwrap();
    }
    for name in &listed {
        assert!(tried.contains(name), "{name} appeared without being created");
    }
    assert_eq!(sorted_unique(check_placement(&checker, shared).await), listed);
    let active = checker.fetch_dir(shared).await.unwrap().bitmap.count_active();
    assert!(active >= 2, "the directory split while servers were killed");
    println!(
        "  {stalled_at} acknowledged while the split stalled; {} acknowledged, {} failed \
         attempts ({} of them present), {active} partitions",
        outcomes.acked.len(),
        outcomes.attempted.len(),
        listed.len() - outcomes.acked.len()
    );
}

async fn a_restarted_directory_server_gets_its_times_on_a_new_delivery_stream() {
    let dir = tempfile::tempdir().unwrap();
    let (mut servers, client) = Servers::launch(dir.path(), 1_000_000).await;
    let parent =
        client.mkdir(client.root(), b"times", mkdir_options(SERVERS as u32, 1_000_000)).await.unwrap();
    let home = home_server(parent.id);
    // Creates on a partition of another server: the directory's times travel on its stream.
    let sender = (home + 1) % SERVERS as u32;
    let mut step = 0;
    let mut create_elsewhere = async |what: &str| {
        let name = name_where(&client, parent.id, sender, true, &format!("s{step}-")).await;
        step += 1;
        let before = client.dir_attrs(parent.id).await.unwrap();
        client.create(parent.id, &name, FileKind::File, owner()).await.unwrap();
        let after = client.dir_attrs(parent.id).await.unwrap();
        assert!(
            after.mtime_ns > before.mtime_ns && after.ctime_ns > before.ctime_ns,
            "the directory's times moved by the create {what} are not there when it is answered: \
             {before:?} -> {after:?}"
        );
    };
    create_elsewhere("before any restart").await;
    create_elsewhere("on the open stream").await;
    servers.terminate(home).await;
    servers.start(&client, home).await;
    create_elsewhere("after SIGTERM and a restart").await;
    servers.kill_nine(home);
    servers.start(&client, home).await;
    create_elsewhere("after kill -9 and a restart").await;
}

//! GIGA+ splitting under load: concurrent creates from many clients lose and duplicate nothing,
//! listings stay complete while partitions split, and stale clients need at most two probes.

mod common;

use std::collections::{BTreeSet, HashMap};
use std::sync::Arc;

use canopy_dirsvc::client::{Client, DirEntry, FileKind, Listed};
use canopy_dirsvc::error::ErrorKind;
use common::{TestCluster, check_placement, mkdir_options, owner, settle_splits, sorted_unique};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_creates_during_splits_are_neither_lost_nor_duplicated() {
    const CLIENTS: usize = 8;
    const PER_CLIENT: usize = 150;
    // Five servers: partition 4 exists, so the tree is not a power of two.
    let cluster = TestCluster::start(5, 1, 0).await;
    let setup = cluster.client();
    let dir = setup.mkdir(setup.root(), b"shared", mkdir_options(1, 40)).await.unwrap().id;
    let mut tasks = Vec::new();
    for c in 0..CLIENTS {
        let client = cluster.client();
        tasks.push(tokio::spawn(async move {
            for i in 0..PER_CLIENT {
                let name = format!("c{c}-{i}");
                client.create(dir, name.as_bytes(), FileKind::File, owner()).await.unwrap();
            }
            client.probe_histogram()
        }));
    }
    let mut redirected = 0;
    for task in tasks {
        let probes = task.await.unwrap();
        redirected += probes.counts[1..].iter().sum::<u64>();
    }
    let expected: Vec<String> =
        sorted_unique((0..CLIENTS).flat_map(|c| (0..PER_CLIENT).map(move |i| format!("c{c}-{i}"))).collect());
    // Complete even if splits are still running...
    let listed = setup.read_dir(dir).await.unwrap();
    assert_eq!(sorted_unique(listed.iter().map(DirEntry::name_lossy).collect()), expected);
    // ...and once they are done every name is on the partition the mapping gives.
    settle_splits(&setup, dir).await;
    let info = setup.fetch_dir(dir).await.unwrap();
    assert_eq!(info.bitmap.render(), "11111", "all five partitions active after splitting");
    assert_eq!(sorted_unique(check_placement(&setup, dir).await), expected);
    assert!(redirected > 0, "creates from cached bitmaps were redirected after splits");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listing_is_complete_while_partitions_split() {
    let cluster = TestCluster::start(8, 1, 0).await;
    let client = cluster.client();
    let creator = cluster.client();
    let dir = client.mkdir(client.root(), b"d", mkdir_options(1, 20)).await.unwrap().id;
    let before: Vec<String> = (0..60).map(|i| format!("before-{i}")).collect();
    for name in &before {
        client.create(dir, name.as_bytes(), FileKind::File, owner()).await.unwrap();
    }
    settle_splits(&client, dir).await;
    let active_at_start = client.fetch_dir(dir).await.unwrap().bitmap.count_active();

    let mut lister = client.list(dir).with_page_size(4);
    let mut seen = Vec::new();
    let mut created = 0;
    while let Some(page) = lister.next_page(&client).await.unwrap() {
        seen.extend(page.iter().map(Listed::name_lossy));
        // Interleave creates (which trigger splits in the background) with the listing.
        for _ in 0..12 {
            let name = format!("during-{created}");
            creator.create(dir, name.as_bytes(), FileKind::File, owner()).await.unwrap();
            created += 1;
        }
    }
    let seen = sorted_unique(seen);
    let seen_set: BTreeSet<&String> = seen.iter().collect();
    for name in &before {
        assert!(seen_set.contains(name), "{name} missing from the listing");
    }
    for name in &seen {
        assert!(before.contains(name) || name.starts_with("during-"), "unexpected {name}");
    }
    settle_splits(&client, dir).await;
    let active_at_end = client.fetch_dir(dir).await.unwrap().bitmap.count_active();
    assert!(
        active_at_end > active_at_start,
        "partitions split during the listing ({active_at_start} -> {active_at_end})"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_clients_finish_every_operation_within_two_probes() {
    let cluster = TestCluster::start(8, 1, 0).await;
    let writer = cluster.client();
    let dir = writer.mkdir(writer.root(), b"d", mkdir_options(1, 25)).await.unwrap().id;
    // Stale clients cache the bitmap at several stages of the directory's growth.
    let mut stale: Vec<Arc<Client>> = Vec::new();
    let mut written = 0;
    for stage_end in [0, 40, 120, 400] {
        while written < stage_end {
            let name = format!("w{written}");
            writer.create(dir, name.as_bytes(), FileKind::File, owner()).await.unwrap();
            written += 1;
        }
        settle_splits(&writer, dir).await;
        for _ in 0..8 {
            let client = Arc::new(cluster.client());
            client.dir_info(dir).await.unwrap();
            stale.push(client);
        }
    }
    let final_bitmap = writer.fetch_dir(dir).await.unwrap().bitmap.clone();
    assert!(final_bitmap.count_active() >= 6, "{}", final_bitmap.render());

    let mut two_probe_ops = 0;
    for (k, client) in stale.iter().enumerate() {
        let cached = client.dir_info(dir).await.unwrap().bitmap.clone();
        let before = client.probe_histogram();
        let existing = format!("w{}", (k * 37) % written);
        let outcome = match k % 4 {
            0 => client.lookup(dir, existing.as_bytes()).await.map(|e| e.name_lossy()),
            1 => client
                .create(dir, format!("stale-{k}").as_bytes(), FileKind::File, owner())
                .await
                .map(|e| e.name_lossy()),
            2 => client.unlink(dir, existing.as_bytes()).await.map(|e| e.name_lossy()),
            _ => match client.lookup(dir, format!("absent-{k}").as_bytes()).await {
                Err(e) if e.kind == ErrorKind::NotFound => Ok("absent".into()),
                other => other.map(|e| e.name_lossy()),
            },
        };
        let outcome = outcome.unwrap_or_else(|e| panic!("op {k} failed: {e}"));
        assert!(!outcome.is_empty());
        let probes = client.probe_histogram().since(&before);
        assert_eq!(probes.total(), 1);
        assert!(probes.max_probes() <= 2, "op {k} took {} probes", probes.max_probes());
        if probes.max_probes() == 2 {
            two_probe_ops += 1;
            assert_ne!(cached, final_bitmap, "only a stale bitmap costs a second probe");
        }
    }
    assert!(two_probe_ops > 0, "some stale client was redirected");

    // The state after all those operations: unlinked names gone, created ones placed right.
    let mut expected: HashMap<String, bool> = (0..written).map(|i| (format!("w{i}"), true)).collect();
    for k in 0..stale.len() {
        match k % 4 {
            1 => {
                expected.insert(format!("stale-{k}"), true);
            }
            2 => {
                expected.insert(format!("w{}", (k * 37) % written), false);
            }
            _ => {}
        }
    }
    let mut want: Vec<String> =
        expected.into_iter().filter(|(_, present)| *present).map(|(n, _)| n).collect();
    want.sort();
    assert_eq!(sorted_unique(check_placement(&writer, dir).await), want);
    // A listing from the stalest client is complete too.
    let listed = stale[0].read_dir(dir).await.unwrap();
    assert_eq!(sorted_unique(listed.iter().map(DirEntry::name_lossy).collect()), want);
}

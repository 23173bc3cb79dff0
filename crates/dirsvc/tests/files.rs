//! What the FUSE mount needs from the service beyond the namespace: file data on the server that
//! allocated the file's id, attribute changes, symlink targets, special files, and usage.

mod common;

use canopy_dirsvc::client::{Client, FileKind, NewNode, SetAttrs};
use canopy_dirsvc::error::ErrorKind;
use canopy_dirsvc::ids::home_server;
use common::{TestCluster, mkdir_options, owner};

/// A pattern that differs at every byte position (so misplaced chunks show).
fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len).map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed).wrapping_add((i >> 8) as u8)).collect()
}

/// The first name `name-N` whose partition in `dir` is on a server other than `not_on` (or on
/// `not_on` when `same` is set).
async fn name_on(client: &Client, dir: u64, not_on: u32, same: bool) -> Vec<u8> {
    for i in 0.. {
        let name = format!("name-{i}");
        let placement = client.locate(dir, name.as_bytes()).await.unwrap();
        if (placement.server == not_on) == same {
            return name.into_bytes();
        }
    }
    unreachable!()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_is_written_read_truncated_and_dropped_with_the_last_name() {
    let cluster = TestCluster::start(3, 3, 0).await;
    let client = cluster.client();
    let dir = client.mkdir(client.root(), b"d", mkdir_options(3, 0)).await.unwrap().id;
    let file = client.create(dir, b"f", FileKind::File, owner()).await.unwrap();

    // 150 kB at offset 10 000: spans three 64 KiB chunks; the first 10 000 bytes are a hole. The
    // write sets the size and mtime with the data.
    let body = pattern(150_000, 7);
    let written = client.write_data(file.id, 10_000, body.clone()).await.unwrap();
    let size = 160_000;
    assert_eq!(written.size, size);
    assert!(written.mtime_ns >= file.attrs.mtime_ns && written.ctime_ns == written.mtime_ns);
    assert_eq!(
        client.lookup(dir, b"f").await.unwrap().attrs.size,
        size,
        "every client sees the size at once"
    );
    let mut expected = vec![0u8; 10_000];
    expected.extend_from_slice(&body);
    let whole = client.read_data(file.id, 0, 1 << 20).await.unwrap();
    assert_eq!(whole, expected, "a read returns the hole as zeros and stops at the size");
    let middle = client.read_data(file.id, 65_000, 2_000).await.unwrap();
    assert_eq!(middle, expected[65_000..67_000], "a read across a chunk boundary");
    assert!(client.read_data(file.id, size, 10).await.unwrap().is_empty(), "nothing past the end");

    // Overwrite in the middle, then shrink: bytes past the new size are gone for good, so growing
    // the file again shows zeros there, not the old bytes.
    client.write_data(file.id, 70_000, b"overwritten".to_vec()).await.unwrap();
    expected[70_000..70_011].copy_from_slice(b"overwritten");
    assert_eq!(client.read_data(file.id, 69_990, 30).await.unwrap(), expected[69_990..70_020]);
    let shrunk =
        client.set_attrs(file.id, SetAttrs { size: Some(70_005), ..SetAttrs::default() }).await.unwrap();
    assert_eq!(shrunk.size, 70_005);
    client.set_attrs(file.id, SetAttrs { size: Some(size), ..SetAttrs::default() }).await.unwrap();
    let regrown = client.read_data(file.id, 69_990, 30).await.unwrap();
    assert_eq!(regrown[..15], expected[69_990..70_005]);
    assert!(regrown[15..].iter().all(|&b| b == 0), "truncated bytes read as zeros");

    // Unlink drops the inode and the data (its partition's server allocated the id: same
    // transaction).
    let removed = client.unlink(dir, b"f").await.unwrap();
    assert_eq!(removed.id, file.id);
    let gone = client.read_data(file.id, 0, 1 << 20).await.unwrap_err();
    assert_eq!(gone.kind, ErrorKind::NotFound, "an unlinked file is gone with its data");
    assert_eq!(client.object(file.id).await.unwrap_err().kind, ErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn data_stays_on_its_server_across_renames_and_goes_with_the_last_name() {
    let cluster = TestCluster::start(3, 3, 0).await;
    let client = cluster.client();
    let dir = client.mkdir(client.root(), b"d", mkdir_options(3, 0)).await.unwrap().id;
    let first = name_on(&client, dir, u32::MAX, false).await;
    let file = client.create(dir, &first, FileKind::File, owner()).await.unwrap();
    let home = home_server(file.id);
    assert_eq!(
        client.locate(dir, &first).await.unwrap().server,
        home,
        "ids come from the partition's server"
    );
    client.write_data(file.id, 0, b"moved along".to_vec()).await.unwrap();

    // A rename to a name on another server is link + unlink: the data must survive the unlink.
    let elsewhere = name_on(&client, dir, home, false).await;
    let moved = client.rename(dir, &first, dir, &elsewhere).await.unwrap();
    assert_eq!(moved.id, file.id);
    let found = client.lookup(dir, &elsewhere).await.unwrap();
    assert_eq!((found.id, found.attrs.size, found.attrs.nlink), (file.id, 11, 1));
    assert_eq!(client.read_data(file.id, 0, 100).await.unwrap(), b"moved along");

    // Replacing a file drops the victim's data, wherever it lives.
    let victim_name = name_on(&client, dir, home, true).await;
    let victim = client.create(dir, &victim_name, FileKind::File, owner()).await.unwrap();
    client.write_data(victim.id, 0, b"victim".to_vec()).await.unwrap();
    client.rename(dir, &elsewhere, dir, &victim_name).await.unwrap();
    assert_eq!(client.read_data(victim.id, 0, 100).await.unwrap_err().kind, ErrorKind::NotFound);
    assert_eq!(client.read_data(file.id, 0, 100).await.unwrap(), b"moved along");

    // Removing the last name from a partition on another server drops the data there too.
    let last = name_on(&client, dir, home, false).await;
    client.rename(dir, &victim_name, dir, &last).await.unwrap();
    assert_ne!(client.locate(dir, &last).await.unwrap().server, home);
    client.unlink(dir, &last).await.unwrap();
    assert_eq!(client.read_data(file.id, 0, 100).await.unwrap_err().kind, ErrorKind::NotFound);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attributes_symlinks_special_files_and_usage() {
    let cluster = TestCluster::start(2, 2, 0).await;
    let client = cluster.client();
    let root = client.root();
    let dir = client.mkdir(root, b"d", mkdir_options(2, 0)).await.unwrap();

    let file = client.create(dir.id, b"f", FileKind::File, owner()).await.unwrap();
    let change = SetAttrs { mode: Some(0o4750), uid: Some(7), gid: Some(8), ..SetAttrs::default() };
    let changed = client.set_attrs(file.id, change).await.unwrap();
    assert_eq!((changed.mode, changed.uid, changed.gid), (0o4750, 7, 8));
    assert!(changed.ctime_ns >= file.attrs.ctime_ns);
    let times = SetAttrs { atime_ns: Some(1_000), mtime_ns: Some(2_000_000_007), ..SetAttrs::default() };
    let timed = client.set_attrs(file.id, times).await.unwrap();
    assert_eq!((timed.atime_ns, timed.mtime_ns), (1_000, 2_000_000_007));
    assert_eq!(client.lookup(dir.id, b"f").await.unwrap().attrs, timed, "changes are stored");
    let missing = client.set_attrs(file.id + 1, SetAttrs::default()).await.unwrap_err();
    assert_eq!(missing.kind, ErrorKind::NotFound);

    // A directory's attributes live in its metadata object, which every name of it shows.
    let mode =
        client.set_attrs(dir.id, SetAttrs { mode: Some(0o2770), ..SetAttrs::default() }).await.unwrap();
    assert_eq!(mode.mode, 0o2770);
    assert_eq!(client.fetch_dir(dir.id).await.unwrap().attrs.mode, 0o2770);
    assert_eq!(client.lookup(root, b"d").await.unwrap().attrs.mode, 0o2770);

    // Symlinks keep their target (bytes) through renames across servers and in listings.
    let target = b"../somewhere/\xff odd".to_vec();
    client.symlink(dir.id, b"link", &target, owner()).await.unwrap();
    for i in 0..8 {
        let name = format!("link-{i}");
        let previous = if i == 0 { "link".to_string() } else { format!("link-{}", i - 1) };
        client.rename(dir.id, previous.as_bytes(), dir.id, name.as_bytes()).await.unwrap();
    }
    let link = client.lookup(dir.id, b"link-7").await.unwrap();
    assert_eq!((link.attrs.kind, link.target.clone()), (FileKind::Symlink, target.clone()));
    let listed = client.read_dir(dir.id).await.unwrap();
    assert_eq!(listed.iter().find(|e| e.name == b"link-7").unwrap().target, target);
    let no_target = client.symlink(dir.id, b"empty", b"", owner()).await.unwrap_err();
    assert_eq!(no_target.kind, ErrorKind::Invalid);

    for (name, kind, rdev) in [
        (&b"fifo"[..], FileKind::Fifo, 0),
        (b"sock", FileKind::Socket, 0),
        (b"tty", FileKind::CharDevice, (4 << 8) | 1),
        (b"disk", FileKind::BlockDevice, (8 << 8) | 16),
    ] {
        let node = NewNode { kind, owner: owner(), rdev, target: &[] };
        client.create_node(dir.id, name, &node, 0).await.unwrap();
        let found = client.lookup(dir.id, name).await.unwrap();
        assert_eq!((found.attrs.kind, found.attrs.rdev), (kind, rdev));
    }

    let usage = client.usage().await.unwrap();
    // Root: "d"; d: f, link-7 and the four special files.
    assert_eq!(usage.entries, 7);
    assert!(usage.total_bytes > 0 && usage.free_bytes <= usage.total_bytes);
}

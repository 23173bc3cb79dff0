//! The namespace operations against a three-server cluster.

mod common;

use canopy_dirsvc::client::FileKind;
use canopy_dirsvc::error::ErrorKind;
use common::{TestCluster, mkdir_options, owner};

fn names(entries: &[canopy_dirsvc::client::DirEntry]) -> Vec<String> {
    let mut names: Vec<String> = entries.iter().map(|e| e.name_lossy()).collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_lookup_unlink_and_list() {
    let cluster = TestCluster::start(3, 3, 0).await;
    let client = cluster.client();
    let root = client.root();
    let dir = client.mkdir(root, b"d", mkdir_options(3, 0)).await.unwrap();
    assert_eq!(dir.attrs.kind, FileKind::Directory);
    for i in 0..50 {
        let name = format!("f{i:02}");
        let created = client.create(dir.id, name.as_bytes(), FileKind::File, owner()).await.unwrap();
        assert_eq!((created.attrs.mode, created.attrs.uid), (0o644, 1000));
        assert!(created.attrs.mtime_ns > 0);
    }
    let again = client.create(dir.id, b"f07", FileKind::File, owner()).await.unwrap_err();
    assert_eq!(again.kind, ErrorKind::Exists);
    let found = client.lookup(dir.id, b"f07").await.unwrap();
    assert_eq!(found.attrs.kind, FileKind::File);
    client.unlink(dir.id, b"f07").await.unwrap();
    assert_eq!(client.lookup(dir.id, b"f07").await.unwrap_err().kind, ErrorKind::NotFound);
    assert_eq!(client.unlink(dir.id, b"f07").await.unwrap_err().kind, ErrorKind::NotFound);

    let listed = client.read_dir(dir.id).await.unwrap();
    let expected: Vec<String> = (0..50).filter(|&i| i != 7).map(|i| format!("f{i:02}")).collect();
    assert_eq!(names(&listed), expected);
    // Entries are spread over the three initial partitions.
    let stats = client.partition_stats(dir.id).await.unwrap();
    assert_eq!(stats.iter().map(|p| p.entries).sum::<u64>(), 49);
    assert!(stats.iter().all(|p| p.active && p.entries > 0), "{stats:?}");

    // Small pages return the same set.
    let mut lister = client.list(dir.id).with_page_size(3);
    let mut paged = Vec::new();
    while let Some(page) = lister.next_page(&client).await.unwrap() {
        assert!(page.len() <= 3);
        paged.extend(page.iter().map(|e| e.name_lossy()));
    }
    paged.sort();
    assert_eq!(paged, expected);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mkdir_rmdir_and_errors() {
    let cluster = TestCluster::start(3, 1, 0).await;
    let client = cluster.client();
    let root = client.root();
    let a = client.mkdir(root, b"a", mkdir_options(1, 0)).await.unwrap();
    assert_eq!(client.mkdir(root, b"a", mkdir_options(1, 0)).await.unwrap_err().kind, ErrorKind::Exists);
    client.create(a.id, b"x", FileKind::File, owner()).await.unwrap();
    assert_eq!(client.rmdir(root, b"a").await.unwrap_err().kind, ErrorKind::NotEmpty);
    // A refused rmdir leaves the directory usable.
    client.create(a.id, b"y", FileKind::File, owner()).await.unwrap();
    assert_eq!(client.unlink(root, b"a").await.unwrap_err().kind, ErrorKind::IsDirectory);
    assert_eq!(client.rmdir(a.id, b"x").await.unwrap_err().kind, ErrorKind::NotDirectory);
    client.unlink(a.id, b"x").await.unwrap();
    client.unlink(a.id, b"y").await.unwrap();
    client.rmdir(root, b"a").await.unwrap();
    assert_eq!(client.lookup(root, b"a").await.unwrap_err().kind, ErrorKind::NotFound);
    // The directory's objects are gone from every server.
    assert!(client.partition_stats(a.id).await.unwrap().is_empty());
    assert_eq!(client.fetch_dir(a.id).await.unwrap_err().kind, ErrorKind::NotFound);
    assert_eq!(
        client.create(a.id, b"z", FileKind::File, owner()).await.unwrap_err().kind,
        ErrorKind::NotFound
    );
    let nested = client.resolve("/").await.unwrap();
    assert_eq!(nested.id, root);
    let b = client.mkdir(root, b"b", mkdir_options(0, 0)).await.unwrap();
    let c = client.mkdir(b.id, b"c", mkdir_options(2, 0)).await.unwrap();
    assert_eq!(client.resolve("/b/c").await.unwrap().id, c.id);
    assert_eq!(client.resolve("/b/nope").await.unwrap_err().kind, ErrorKind::NotFound);
    assert_eq!(client.fetch_dir(c.id).await.unwrap().bitmap.render(), "110");
    assert_eq!(client.fetch_dir(b.id).await.unwrap().bitmap.render(), "111");
    for bad in [&b""[..], b".", b"..", b"a/b"] {
        assert_eq!(
            client.create(root, bad, FileKind::File, owner()).await.unwrap_err().kind,
            ErrorKind::Invalid
        );
    }
    let long = vec![b'n'; 256];
    assert_eq!(
        client.create(root, &long, FileKind::File, owner()).await.unwrap_err().kind,
        ErrorKind::NameTooLong
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rename_within_and_across_servers() {
    let cluster = TestCluster::start(3, 3, 0).await;
    let client = cluster.client();
    let root = client.root();
    let src = client.mkdir(root, b"src", mkdir_options(3, 0)).await.unwrap();
    let dst = client.mkdir(root, b"dst", mkdir_options(3, 0)).await.unwrap();
    for i in 0..30 {
        client.create(src.id, format!("n{i}").as_bytes(), FileKind::File, owner()).await.unwrap();
    }
    // Thirty renames hit both the one-server (atomic) and the two-server path.
    for i in 0..30 {
        let from = format!("n{i}");
        let to = format!("m{i}");
        let before = client.lookup(src.id, from.as_bytes()).await.unwrap();
        let moved = client.rename(src.id, from.as_bytes(), dst.id, to.as_bytes()).await.unwrap();
        assert_eq!(moved.id, before.id);
        assert_eq!(client.lookup(src.id, from.as_bytes()).await.unwrap_err().kind, ErrorKind::NotFound);
        assert_eq!(client.lookup(dst.id, to.as_bytes()).await.unwrap().id, before.id);
    }
    assert!(client.read_dir(src.id).await.unwrap().is_empty());
    assert_eq!(client.read_dir(dst.id).await.unwrap().len(), 30);
    let counts: u64 = client.partition_stats(dst.id).await.unwrap().iter().map(|p| p.entries).sum();
    assert_eq!(counts, 30);

    // Replacing: a file over a file; a directory over an empty directory, not over a file.
    let m1 = client.lookup(dst.id, b"m1").await.unwrap();
    client.rename(dst.id, b"m1", dst.id, b"m2").await.unwrap();
    assert_eq!(client.lookup(dst.id, b"m2").await.unwrap().id, m1.id);
    let e = client.mkdir(dst.id, b"e", mkdir_options(1, 0)).await.unwrap();
    let f = client.mkdir(dst.id, b"f", mkdir_options(1, 0)).await.unwrap();
    assert_eq!(client.rename(dst.id, b"e", dst.id, b"m3").await.unwrap_err().kind, ErrorKind::NotDirectory);
    assert_eq!(client.rename(dst.id, b"m3", dst.id, b"e").await.unwrap_err().kind, ErrorKind::IsDirectory);
    client.create(f.id, b"inside", FileKind::File, owner()).await.unwrap();
    assert_eq!(client.rename(dst.id, b"e", dst.id, b"f").await.unwrap_err().kind, ErrorKind::NotEmpty);
    client.unlink(f.id, b"inside").await.unwrap();
    client.rename(dst.id, b"e", dst.id, b"f").await.unwrap();
    assert_eq!(client.lookup(dst.id, b"f").await.unwrap().id, e.id);
    assert_eq!(client.fetch_dir(f.id).await.unwrap_err().kind, ErrorKind::NotFound);

    // A directory cannot move into itself; it can move elsewhere and keeps its contents.
    let inner = client.mkdir(e.id, b"inner", mkdir_options(1, 0)).await.unwrap();
    assert_eq!(client.rename(dst.id, b"f", inner.id, b"loop").await.unwrap_err().kind, ErrorKind::Invalid);
    client.rename(dst.id, b"f", root, b"moved").await.unwrap();
    assert_eq!(client.resolve("/moved/inner").await.unwrap().id, inner.id);
    assert_eq!(client.fetch_dir(e.id).await.unwrap().parent, root);
}

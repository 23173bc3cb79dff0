//! Hard links, link counts and times through the client library against three servers: one
//! inode, several names on several servers; the count on every name; the data going with the
//! last name and the last open; a directory's link count and times; links abandoned mid-way
//! settled by the inode's server; and `fsck` finding and repairing what a crash leaves.

mod common;

use canopy_dirsvc::auth::PresentSecret;
use canopy_dirsvc::client::{Client, FileKind, SetAttrs};
use canopy_dirsvc::error::ErrorKind;
use canopy_dirsvc::fsck;
use canopy_dirsvc::ids::home_server;
use canopy_dirsvc::proto::metadata_client::MetadataClient;
use canopy_dirsvc::proto::repair_request::Action;
use canopy_dirsvc::proto::{
    AddLinkRequest, Attrs, CreateRequest, Kind, PartitionRef, RepairRequest, SetLinkCount, SettleRequest,
};
use common::{TestCluster, mkdir_options, name_where, owner};
use tonic::service::interceptor::InterceptedService;
use tonic::transport::Channel;

type Raw = MetadataClient<InterceptedService<Channel, PresentSecret>>;

async fn raw(cluster: &TestCluster, server: u32) -> Raw {
    let address = format!("http://{}", cluster.cluster.config.servers[server as usize]);
    let channel = tonic::transport::Endpoint::from_shared(address).unwrap().connect().await.unwrap();
    MetadataClient::new(InterceptedService::new(channel, PresentSecret::new(&cluster.cluster.secret)))
}

async fn nlink(client: &Client, dir: u64, name: &[u8]) -> u32 {
    client.lookup(dir, name).await.unwrap().attrs.nlink
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn links_across_servers_share_one_inode_and_count_every_name() {
    let cluster = TestCluster::start(3, 3, 0).await;
    let client = cluster.client();
    let a = client.mkdir(client.root(), b"a", mkdir_options(3, 0)).await.unwrap().id;
    let b = client.mkdir(client.root(), b"b", mkdir_options(3, 0)).await.unwrap().id;
    let file = client.create(a, b"f", FileKind::File, owner()).await.unwrap();
    let home = home_server(file.id);
    client.write_data(file.id, 0, b"shared".to_vec()).await.unwrap();

    // Names on the inode's server and on the two others, in two directories.
    let here = name_where(&client, b, home, true, "here-").await;
    let there = name_where(&client, b, home, false, "there-").await;
    let linked = client.link(file.id, b, &here).await.unwrap();
    assert_eq!((linked.id, linked.attrs.nlink), (file.id, 2));
    client.link(file.id, b, &there).await.unwrap();
    client.link(file.id, a, b"g").await.unwrap();
    for (dir, name) in [(a, &b"f"[..]), (b, &here), (b, &there), (a, b"g")] {
        let entry = client.lookup(dir, name).await.unwrap();
        assert_eq!((entry.id, entry.attrs.nlink, entry.attrs.size), (file.id, 4, 6), "{dir:#x}/{name:?}");
    }
    // A change through one name shows through every name.
    client.set_attrs(file.id, SetAttrs { mode: Some(0o600), ..SetAttrs::default() }).await.unwrap();
    assert_eq!(client.lookup(b, &there).await.unwrap().attrs.mode, 0o600);

    // Refusals: an existing name, a directory, a file that is gone.
    assert_eq!(client.link(file.id, a, b"g").await.unwrap_err().kind, ErrorKind::Exists);
    assert_eq!(nlink(&client, a, b"f").await, 4, "a refused link is not counted");
    assert_eq!(client.link(a, b, b"dir-link").await.unwrap_err().kind, ErrorKind::NotPermitted);

    // Unlinking names leaves the data with the last one; rename over a linked name drops one.
    client.unlink(a, b"f").await.unwrap();
    assert_eq!(nlink(&client, b, &there).await, 3);
    let other = client.create(a, b"other", FileKind::File, owner()).await.unwrap();
    client.rename(a, b"other", b, &here).await.unwrap();
    assert_eq!(nlink(&client, a, b"g").await, 2, "the replaced name no longer counts");
    assert_eq!(client.lookup(b, &here).await.unwrap().id, other.id);
    // Two names of one file: rename(2) does nothing.
    client.rename(a, b"g", b, &there).await.unwrap();
    assert_eq!((nlink(&client, a, b"g").await, nlink(&client, b, &there).await), (2, 2));
    client.unlink(a, b"g").await.unwrap();
    assert_eq!(client.read_data(file.id, 0, 100).await.unwrap(), b"shared");
    client.unlink(b, &there).await.unwrap();
    assert_eq!(client.read_data(file.id, 0, 100).await.unwrap_err().kind, ErrorKind::NotFound);
    assert_eq!(client.link(file.id, a, b"again").await.unwrap_err().kind, ErrorKind::NotFound);
    let report = fsck::run(&client, false).await.unwrap();
    assert!(report.findings.problems.is_empty(), "{:?}", report.findings.problems);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_open_file_outlives_its_names_until_the_last_close() {
    let cluster = TestCluster::start(3, 3, 0).await;
    let client = cluster.client();
    let dir = client.mkdir(client.root(), b"d", mkdir_options(3, 0)).await.unwrap().id;
    let (session, other_session) = (41, 42);
    let file = client.object_opened_by_create(dir, b"open", session).await;
    client.write_data(file, 0, b"data".to_vec()).await.unwrap();
    client.object_opened(file, other_session).await.unwrap();

    // Unlinked while open in two sessions: nlink 0, data kept.
    client.unlink(dir, b"open").await.unwrap();
    let orphan = client.object(file).await.unwrap();
    assert_eq!((orphan.attrs.nlink, orphan.attrs.size), (0, 4));
    client.write_data(file, 4, b"+more".to_vec()).await.unwrap();
    client.close(session, &[file]).await.unwrap();
    assert_eq!(client.read_data(file, 0, 100).await.unwrap(), b"data+more", "the other session still has it");
    let report = fsck::run(&client, false).await.unwrap();
    assert_eq!((report.findings.open_unlinked, report.findings.problems.len()), (1, 0));
    client.close(other_session, &[file]).await.unwrap();
    assert_eq!(client.object(file).await.unwrap_err().kind, ErrorKind::NotFound, "gone at the last close");

    // Replaced by a rename while open: the same.
    let victim = client.object_opened_by_create(dir, b"victim", session).await;
    client.write_data(victim, 0, b"old".to_vec()).await.unwrap();
    client.create(dir, b"new", FileKind::File, owner()).await.unwrap();
    client.rename(dir, b"new", dir, b"victim").await.unwrap();
    assert_eq!(client.read_data(victim, 0, 10).await.unwrap(), b"old");
    assert_eq!(client.object(victim).await.unwrap().attrs.nlink, 0);
    // A session that ends closes everything it had open.
    client.close_session(session).await.unwrap();
    assert_eq!(client.object(victim).await.unwrap_err().kind, ErrorKind::NotFound);

    // A mount that dies stops renewing its session: once its lease lapsed, its opens are closed.
    let dead_session = 43;
    let held = client.object_opened_by_create(dir, b"held", dead_session).await;
    client.unlink(dir, b"held").await.unwrap();
    let home = &cluster.servers[home_server(held) as usize].core;
    home.close_lapsed(std::time::Duration::from_secs(3600)).await;
    assert_eq!(client.object(held).await.unwrap().attrs.nlink, 0, "within its lease");
    client.keep_open(dead_session).await.unwrap();
    home.close_lapsed(std::time::Duration::ZERO).await;
    assert_eq!(client.object(held).await.unwrap_err().kind, ErrorKind::NotFound, "lapsed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn directories_count_their_subdirectories_and_change_times_with_their_entries() {
    let cluster = TestCluster::start(3, 3, 0).await;
    let client = cluster.client();
    let root = client.root();
    let top = client.mkdir(root, b"top", mkdir_options(0, 0)).await.unwrap();
    assert_eq!(top.attrs.nlink, 2, "a new directory: its name and its own .");
    let mut stamps = vec![client.dir_attrs(top.id).await.unwrap()];
    // Entries land on every server: changes on other servers than top's move its times too.
    for i in 0..6 {
        let name = format!("sub{i}");
        client.mkdir(top.id, name.as_bytes(), mkdir_options(1, 0)).await.unwrap();
        let now = client.dir_attrs(top.id).await.unwrap();
        assert_eq!(now.nlink, 3 + i, "after mkdir {name}");
        assert!(now.mtime_ns > stamps.last().unwrap().mtime_ns, "mkdir {name} moves mtime");
        assert!(now.ctime_ns >= now.mtime_ns);
        stamps.push(now);
    }
    for step in ["create", "link", "unlink", "rename", "rmdir"] {
        let before = client.dir_attrs(top.id).await.unwrap();
        match step {
            "create" => drop(client.create(top.id, b"f", FileKind::File, owner()).await.unwrap()),
            "link" => {
                let f = client.lookup(top.id, b"f").await.unwrap();
                client.link(f.id, top.id, b"f2").await.unwrap();
            }
            "unlink" => drop(client.unlink(top.id, b"f2").await.unwrap()),
            "rename" => drop(client.rename(top.id, b"f", top.id, b"g").await.unwrap()),
            _ => client.rmdir(top.id, b"sub0").await.unwrap(),
        }
        let after = client.dir_attrs(top.id).await.unwrap();
        assert!(
            after.mtime_ns > before.mtime_ns && after.ctime_ns > before.ctime_ns,
            "{step} moves mtime and ctime"
        );
    }
    assert_eq!(client.dir_attrs(top.id).await.unwrap().nlink, 7, "six subdirectories, one removed");
    // A subdirectory moved elsewhere counts there; the renamed object's ctime moves.
    let moved = client.lookup(top.id, b"sub1").await.unwrap();
    client.rename(top.id, b"sub1", root, b"moved").await.unwrap();
    assert_eq!(client.dir_attrs(top.id).await.unwrap().nlink, 6);
    assert_eq!(client.dir_attrs(root).await.unwrap().nlink, 4, "top and moved");
    assert!(client.dir_attrs(moved.id).await.unwrap().ctime_ns > moved.attrs.ctime_ns);
    // An explicitly set mtime stays until the next change.
    let past = SetAttrs { mtime_ns: Some(1_000_000_000), ..SetAttrs::default() };
    client.set_attrs(top.id, past).await.unwrap();
    assert_eq!(client.dir_attrs(top.id).await.unwrap().mtime_ns, 1_000_000_000);
    client.create(top.id, b"later", FileKind::File, owner()).await.unwrap();
    assert!(client.dir_attrs(top.id).await.unwrap().mtime_ns > 1_000_000_000);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_abandoned_link_is_settled_and_its_late_entry_refused() {
    let cluster = TestCluster::start(3, 3, 0).await;
    let client = cluster.client();
    let dir = client.mkdir(client.root(), b"d", mkdir_options(3, 0)).await.unwrap().id;
    let file = client.create(dir, b"f", FileKind::File, owner()).await.unwrap();
    let home = home_server(file.id);
    // A client counted a new name, then died before making its entry.
    let name = name_where(&client, dir, home, false, "lost-").await;
    let mut inode_server = raw(&cluster, home).await;
    let added = inode_server
        .add_link(AddLinkRequest { id: file.id, dir, name: name.clone() })
        .await
        .unwrap()
        .into_inner();
    assert_eq!(added.object.unwrap().attrs.unwrap().nlink, 2);
    assert_eq!(nlink(&client, dir, b"f").await, 2, "counted while in progress");
    // fsck settles it: the name's partition never got the entry, so it is uncounted.
    let report = fsck::run(&client, false).await.unwrap();
    assert!(report.findings.problems.is_empty(), "{:?}", report.findings.problems);
    assert_eq!(nlink(&client, dir, b"f").await, 1);
    // The dead client's create, arriving late, is refused.
    let placement = client.locate(dir, &name).await.unwrap();
    let late = CreateRequest {
        at: Some(PartitionRef { dir, partition: placement.partition }),
        name: name.clone(),
        attrs: Some(Attrs { kind: Kind::File as i32, ..Attrs::default() }),
        id: file.id,
        link_intent: added.intent,
        ..CreateRequest::default()
    };
    let refused = raw(&cluster, placement.server).await.create(late).await.unwrap().into_inner();
    assert_eq!(refused.failure.map(|f| f.kind()), Some(canopy_dirsvc::proto::FailureKind::Changed));
    assert_eq!(client.lookup(dir, &name).await.unwrap_err().kind, ErrorKind::NotFound);

    // A link whose entry was made but whose settlement was lost is settled as made.
    let made = name_where(&client, dir, home, false, "made-").await;
    let added = inode_server
        .add_link(AddLinkRequest { id: file.id, dir, name: made.clone() })
        .await
        .unwrap()
        .into_inner();
    let placement = client.locate(dir, &made).await.unwrap();
    let create = CreateRequest {
        at: Some(PartitionRef { dir, partition: placement.partition }),
        name: made.clone(),
        attrs: Some(Attrs { kind: Kind::File as i32, ..Attrs::default() }),
        id: file.id,
        link_intent: added.intent,
        ..CreateRequest::default()
    };
    raw(&cluster, placement.server).await.create(create).await.unwrap();
    inode_server.settle(SettleRequest {}).await.unwrap();
    assert_eq!(nlink(&client, dir, &made).await, 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fsck_finds_and_repairs_wrong_link_counts() {
    let cluster = TestCluster::start(2, 2, 0).await;
    let client = cluster.client();
    let dir = client.mkdir(client.root(), b"d", mkdir_options(2, 0)).await.unwrap().id;
    let file = client.create(dir, b"f", FileKind::File, owner()).await.unwrap();
    let ghost = client.create(dir, b"ghost", FileKind::File, owner()).await.unwrap();
    client.write_data(ghost.id, 0, b"leaked".to_vec()).await.unwrap();
    // What a crash could leave: a count too high, and a file counted with no name left.
    for (id, from, to) in [(file.id, 1, 3), (ghost.id, 1, 2)] {
        let action = Action::LinkCount(SetLinkCount { id, from, to });
        raw(&cluster, home_server(id)).await.repair(RepairRequest { action: Some(action) }).await.unwrap();
    }
    client.unlink(dir, b"ghost").await.unwrap();
    let check = fsck::run(&client, false).await.unwrap();
    assert_eq!(check.findings.problems.len(), 2, "{:?}", check.findings.problems);
    assert_eq!((check.repaired, check.exit_code()), (0, 4));
    assert_eq!(nlink(&client, dir, b"f").await, 3, "a check alone changes nothing");
    let repair = fsck::run(&client, true).await.unwrap();
    assert_eq!((repair.repaired, repair.exit_code()), (2, 1), "{:?}", repair.not_repaired);
    assert_eq!(nlink(&client, dir, b"f").await, 1);
    assert_eq!(
        client.object(ghost.id).await.unwrap_err().kind,
        ErrorKind::NotFound,
        "the leaked inode is gone"
    );
    assert_eq!(fsck::run(&client, false).await.unwrap().exit_code(), 0);
}

/// Creating a file opened by a session, as a mount's O_CREAT does.
trait CreateOpened {
    async fn object_opened_by_create(&self, dir: u64, name: &[u8], session: u64) -> u64;
}

impl CreateOpened for Client {
    async fn object_opened_by_create(&self, dir: u64, name: &[u8], session: u64) -> u64 {
        let node =
            canopy_dirsvc::client::NewNode { kind: FileKind::File, owner: owner(), rdev: 0, target: &[] };
        self.create_node(dir, name, &node, session).await.unwrap().id
    }
}

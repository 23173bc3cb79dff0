//! The cluster secret over real gRPC: requests without it or with the wrong one are refused with
//! a clear error and change nothing.

mod common;

use canopy_dirsvc::client::{Client, FileKind};
use canopy_dirsvc::error::ErrorKind;
use canopy_dirsvc::proto::metadata_client::MetadataClient;
use canopy_dirsvc::proto::{Attrs, CreateRequest, Kind, PartitionRef};
use common::{TestCluster, mkdir_options, owner};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_without_the_right_secret_are_refused_and_change_nothing() {
    let cluster = TestCluster::start(2, 2, 0).await;
    let good = cluster.client();
    let root = good.root();
    let before = good.read_dir(root).await.unwrap();

    let mut wrong_cluster = cluster.cluster.clone();
    wrong_cluster.secret = "0".repeat(64);
    let wrong = Client::connect(&wrong_cluster);
    let refused = wrong.create(root, b"intruder", FileKind::File, owner()).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Unauthenticated);
    assert!(refused.message.contains("wrong cluster secret"), "{refused}");
    let refused = wrong.mkdir(root, b"intruder-dir", mkdir_options(1, 0)).await.unwrap_err();
    assert_eq!(refused.kind, ErrorKind::Unauthenticated);

    // A plain gRPC client that presents nothing at all.
    let address = format!("http://{}", cluster.cluster.config.servers[0]);
    let mut anonymous = MetadataClient::connect(address).await.unwrap();
    for partition in 0..2 {
        let request = CreateRequest {
            at: Some(PartitionRef { dir: root, partition }),
            name: b"anonymous".to_vec(),
            attrs: Some(Attrs { kind: Kind::File as i32, ..Attrs::default() }),
            id: 0,
            replace_id: 0,
            target: Vec::new(),
        };
        let status = anonymous.create(request).await.unwrap_err();
        assert_eq!(status.code(), tonic::Code::Unauthenticated);
        assert!(status.message().contains("missing cluster secret"), "{}", status.message());
    }

    assert_eq!(good.read_dir(root).await.unwrap(), before);
    let counts: u64 = good.partition_stats(root).await.unwrap().iter().map(|p| p.entries).sum();
    assert_eq!(counts, 0);
    // The right secret works.
    good.create(root, b"welcome", FileKind::File, owner()).await.unwrap();
}

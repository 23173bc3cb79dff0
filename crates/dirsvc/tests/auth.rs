//! The cluster secret over real gRPC: requests without it or with the wrong one are refused with
//! a clear error and change nothing; so are requests that do not decode, and the removal of the
//! root.

mod common;

use canopy_dirsvc::auth::PresentSecret;
use canopy_dirsvc::client::{Client, FileKind};
use canopy_dirsvc::error::ErrorKind;
use canopy_dirsvc::proto::metadata_client::MetadataClient;
use canopy_dirsvc::proto::{
    Attrs, CreateRequest, DirRequest, EntryReply, Kind, PartitionRef, PingReply, SealRequest,
};
use common::{TestCluster, mkdir_options, owner};
use tonic::codegen::http::uri::PathAndQuery;
use tonic::service::interceptor::InterceptedService;

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
            ..CreateRequest::default()
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undecodable_requests_are_invalid_arguments_and_the_root_cannot_be_removed() {
    let cluster = TestCluster::start(2, 2, 0).await;
    let good = cluster.client();
    let root = good.root();
    good.create(root, b"kept", FileKind::File, owner()).await.unwrap();
    let address = format!("http://{}", cluster.cluster.config.servers[0]);
    let channel = tonic::transport::Endpoint::from_shared(address).unwrap().connect().await.unwrap();
    let channel = InterceptedService::new(channel, PresentSecret::new(&cluster.cluster.secret));

    // Field 2 of a Create request is the name (bytes); this message has a number there.
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready().await.unwrap();
    let malformed = PingReply { servers: 5, ..PingReply::default() };
    let codec = tonic_prost::ProstCodec::<PingReply, EntryReply>::default();
    let path = PathAndQuery::from_static("/canopy.dirsvc.v1.Metadata/Create");
    let status = grpc.unary(tonic::Request::new(malformed), path, codec).await.unwrap_err();
    assert_eq!(status.code(), tonic::Code::InvalidArgument, "{}", status.message());
    assert!(status.message().contains("undecodable"), "{}", status.message());

    let mut client = MetadataClient::new(channel);
    let removed = client.remove_dir(DirRequest { dir: root }).await.unwrap_err();
    assert_eq!(removed.code(), tonic::Code::InvalidArgument);
    assert!(removed.message().contains("root directory cannot be removed"), "{}", removed.message());
    let sealed =
        client.seal_partition(SealRequest { at: Some(PartitionRef { dir: root, partition: 0 }), seal: true });
    assert_eq!(sealed.await.unwrap_err().code(), tonic::Code::InvalidArgument);
    assert_eq!(good.rmdir(root, b"..").await.unwrap_err().kind, ErrorKind::Invalid);
    // The root is intact and still takes entries.
    assert_eq!(good.lookup(root, b"kept").await.unwrap().attrs.kind, FileKind::File);
    good.create(root, b"after", FileKind::File, owner()).await.unwrap();
}

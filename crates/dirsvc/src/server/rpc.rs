//! The gRPC face of a server: each method unwraps the request and hands it to `Core`; the stream
//! of deliveries from another server goes to `deliver_stream.rs`.

use std::sync::Arc;

use tokio::sync::watch;
use tonic::{Request, Response, Status, Streaming};

use super::core::Core;
use super::deliver_stream;
use crate::proto::metadata_server::Metadata;
use crate::proto::*;

pub struct Service {
    pub core: Arc<Core>,
    /// Set when the server stops: it ends the delivery streams other servers hold open to it.
    pub stopped: watch::Receiver<bool>,
}

macro_rules! handlers {
    ($($method:ident($request:ty) -> $reply:ty;)*) => {
        #[tonic::async_trait]
        impl Metadata for Service {
            $(
                async fn $method(&self, request: Request<$request>) -> Result<Response<$reply>, Status> {
                    self.core.$method(request.into_inner()).await.map(Response::new)
                }
            )*

            async fn ping(&self, _request: Request<PingRequest>) -> Result<Response<PingReply>, Status> {
                Ok(Response::new(self.core.ping()))
            }

            type DeliverStream = deliver_stream::Replies;

            async fn deliver(
                &self,
                request: Request<Streaming<DeliverRequest>>,
            ) -> Result<Response<Self::DeliverStream>, Status> {
                let replies =
                    deliver_stream::answer(Arc::clone(&self.core), request.into_inner(), self.stopped.clone());
                Ok(Response::new(replies))
            }
        }
    };
}

handlers! {
    create(CreateRequest) -> EntryReply;
    lookup(LookupRequest) -> EntryReply;
    unlink(UnlinkRequest) -> EntryReply;
    rename(RenameRequest) -> EntryReply;
    read_partition(ReadPartitionRequest) -> ReadPartitionReply;
    fence_link(FenceLinkRequest) -> EntryReply;
    create_dir(CreateDirRequest) -> DirMetaReply;
    get_dir(DirRequest) -> DirMetaReply;
    remove_dir(DirRequest) -> DirMetaReply;
    init_partitions(InitPartitionsRequest) -> Ack;
    seal_partition(SealRequest) -> Ack;
    drop_partition(PartitionRef) -> Ack;
    partition_stats(DirRequest) -> PartitionStatsReply;
    install_split(InstallSplitRequest) -> Ack;
    merge_bitmap(MergeBitmapRequest) -> DirMetaReply;
    get_objects(ObjectsRequest) -> ObjectsReply;
    set_object_attr(SetObjectAttrRequest) -> ObjectReply;
    close(CloseRequest) -> Ack;
    keep_open(SessionRequest) -> Ack;
    add_link(AddLinkRequest) -> AddLinkReply;
    abort_link(AbortLinkRequest) -> Ack;
    write_data(WriteDataRequest) -> ObjectReply;
    read_data(ReadDataRequest) -> ReadDataReply;
    usage(UsageRequest) -> UsageReply;
    scan(ScanRequest) -> ScanReply;
    repair(RepairRequest) -> Ack;
    settle(SettleRequest) -> Ack;
}

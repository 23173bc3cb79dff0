//! The gRPC face of a server: each method unwraps the request and hands it to `Core`.

use std::sync::Arc;

use tonic::{Request, Response, Status};

use super::core::Core;
use crate::proto::metadata_server::Metadata;
use crate::proto::*;

pub struct Service {
    pub core: Arc<Core>,
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
    deliver(DeliverRequest) -> DeliverReply;
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

//! Handlers of objects by id — attributes, opens and closes, hard links, file data — and of what
//! other servers and `fsck` send: deliveries of effects and touches, scans, repairs.

use std::sync::Arc;

use tonic::Status;

use super::core::{Core, Handled, ack, failure_of, internal};
use super::inline::read_inode;
use super::mutation::{Mutation, Outcome};
use super::objects::{inode_object, read_object};
use super::repair::scan;
use super::resolver;
use super::validate;
use crate::ids::home_server;
use crate::proto::{
    AbortLinkRequest, Ack, AddLinkReply, AddLinkRequest, CloseRequest, DeliverReply, DeliverRequest,
    FailureKind, ObjectReply, ObjectsReply, ObjectsRequest, ReadDataReply, ReadDataRequest, RepairRequest,
    ScanReply, ScanRequest, ScanTable, SessionRequest, SetObjectAttrRequest, SettleRequest, WriteDataRequest,
};

impl Core {
    /// Objects by id; with `open_session`, the mount is opening them (they outlive their last name
    /// until it closes them).
    pub async fn get_objects(&self, request: ObjectsRequest) -> Result<ObjectsReply, Status> {
        let ids = validate::ids(&request.ids)?;
        let session = request.open_session;
        let mut objects = Vec::with_capacity(ids.len());
        for id in ids {
            if home_server(id) != self.index {
                continue;
            }
            // Registered before reading, so a concurrent removal sees the open (open_refs.rs).
            if session != 0 && !self.opens.open(id, session) {
                continue;
            }
            let object = read_object(&self.store, &self.touches, &self.inline, id).map_err(internal)?;
            match object {
                Some(object) => objects.push(object),
                None if session != 0 => {
                    self.opens.close(id, session);
                }
                None => {}
            }
        }
        Ok(ObjectsReply { objects })
    }

    pub async fn set_object_attr(&self, request: SetObjectAttrRequest) -> Result<ObjectReply, Status> {
        let id = validate::id(request.id)?;
        let change = validate::change(request.change.as_ref())?;
        object_reply(self.submit(Mutation::SetObjectAttr { id, change }).await)
    }

    /// A mount closed files (or ended): those without a name and now without an opener go.
    pub async fn close(&self, request: CloseRequest) -> Result<Ack, Status> {
        if request.session == 0 {
            return Err(validate::invalid("session 0 opens nothing"));
        }
        let released = if request.everything {
            self.opens.close_session(request.session)
        } else {
            validate::ids(&request.ids)?
                .into_iter()
                .filter(|&id| self.opens.close(id, request.session))
                .collect()
        };
        if released.is_empty() {
            return Ok(Ack::default());
        }
        ack(self.submit(Mutation::Reclaim { ids: released }).await)
    }

    pub async fn keep_open(&self, request: SessionRequest) -> Result<Ack, Status> {
        self.opens.renew(request.session);
        Ok(Ack::default())
    }

    /// Closes the opens of sessions not heard from for `lease` (their mounts died); the files
    /// without a name among them go.
    pub async fn close_lapsed(&self, lease: std::time::Duration) {
        for session in self.opens.lapsed(lease) {
            let released = self.opens.close_session(session);
            if !released.is_empty() {
                let _ = self.submit(Mutation::Reclaim { ids: released }).await;
            }
        }
    }

    pub async fn add_link(&self, request: AddLinkRequest) -> Result<AddLinkReply, Status> {
        let id = validate::id(request.id)?;
        let dir = validate::id(request.dir)?;
        validate::name(&request.name)?;
        Ok(match self.submit(Mutation::AddLink { id, dir, name: request.name }).await? {
            Ok(Outcome::Linked(intent, object)) => {
                AddLinkReply { intent, object: Some(object), failure: None }
            }
            Ok(other) => return Err(Status::internal(format!("unexpected outcome {other:?}"))),
            Err(failure) => AddLinkReply { failure: Some(failure), ..AddLinkReply::default() },
        })
    }

    pub async fn abort_link(&self, request: AbortLinkRequest) -> Result<Ack, Status> {
        let id = validate::id(request.id)?;
        ack(self.submit(Mutation::SettleLink { id, intent: request.intent, made: false }).await)
    }

    pub async fn write_data(&self, request: WriteDataRequest) -> Result<ObjectReply, Status> {
        validate::data_range(request.file, request.offset, request.data.len() as u64)?;
        let mutation = Mutation::WriteData { file: request.file, offset: request.offset, data: request.data };
        object_reply(self.submit(mutation).await)
    }

    pub async fn read_data(&self, request: ReadDataRequest) -> Result<ReadDataReply, Status> {
        validate::data_range(request.file, request.offset, u64::from(request.length))?;
        let (snapshot, inode) = read_inode(&self.store, &self.inline, request.file).map_err(internal)?;
        let Some(inode) = inode else {
            let failure = failure_of(FailureKind::NotFound, format!("no file with id {:#x}", request.file));
            return Ok(ReadDataReply { data: Vec::new(), failure: Some(failure) });
        };
        let attrs = inode_object(request.file, inode, &self.touches).attrs;
        let size = attrs.map_or(0, |a| a.size);
        let (offset, length) = (request.offset, u64::from(request.length));
        let data = super::data::read(&snapshot, &self.store, request.file, offset, length, size)
            .map_err(internal)?;
        self.accessed(request.file, attrs);
        Ok(ReadDataReply { data, failure: None })
    }

    /// Effects and touches from another server (`effects.rs`): one message of its `Deliver`
    /// stream (`deliver_stream.rs`).
    pub async fn deliver(&self, request: DeliverRequest) -> Result<DeliverReply, Status> {
        if request.from >= self.servers || request.from == self.index {
            return Err(validate::invalid(format!(
                "delivery from server {} to server {}",
                request.from, self.index
            )));
        }
        if let Some(stranger) = request.touches.iter().find(|t| home_server(t.id) != self.index) {
            return Err(validate::invalid(format!(
                "a touch of object {:#x}, which is not here",
                stranger.id
            )));
        }
        validate::effects(&request.effects, self.index)?;
        self.touched(&request.touches);
        if request.effects.is_empty() {
            return Ok(DeliverReply::default());
        }
        let mutation = Mutation::ApplyEffects { from: request.from, effects: request.effects };
        match self.submit(mutation).await? {
            Ok(Outcome::Applied(applied_through)) => Ok(DeliverReply { applied_through }),
            other => Err(Status::internal(format!("applying effects: {other:?}"))),
        }
    }

    pub async fn scan(&self, request: ScanRequest) -> Result<ScanReply, Status> {
        let table = ScanTable::try_from(request.table)
            .ok()
            .filter(|t| *t != ScanTable::ScanUnspecified)
            .ok_or_else(|| validate::invalid(format!("unknown table {}", request.table)))?;
        let limit = validate::page_limit(request.limit)?;
        let snapshot = self.store.snapshot();
        scan(&snapshot, &self.store, &self.opens, table, &request.after, limit).map_err(internal)
    }

    pub async fn repair(&self, request: RepairRequest) -> Result<Ack, Status> {
        let action = request.action.ok_or_else(|| validate::invalid("a repair without an action"))?;
        ack(self.submit(Mutation::Repair(action)).await)
    }

    /// Settles every link intent now (`fsck` on an idle cluster).
    pub async fn settle(self: &Arc<Self>, _request: SettleRequest) -> Result<Ack, Status> {
        let client = self.client.get().ok_or_else(|| Status::unavailable("the server is starting"))?;
        resolver::settle(self, client, std::time::Duration::ZERO)
            .await
            .map_err(|e| Status::unavailable(format!("settling link intents: {e}")))?;
        Ok(Ack::default())
    }
}

fn object_reply(result: Handled) -> Result<ObjectReply, Status> {
    Ok(match result? {
        Ok(Outcome::Object(object)) => ObjectReply { object: Some(object), failure: None },
        Ok(other) => return Err(Status::internal(format!("unexpected outcome {other:?}"))),
        Err(failure) => ObjectReply { object: None, failure: Some(failure) },
    })
}

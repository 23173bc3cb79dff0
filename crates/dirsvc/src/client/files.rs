//! Objects by id, on the server in their id: attributes (of inodes and of directories' metadata
//! objects), opens and closes by mount sessions, file data, and usage. What a file system mount
//! needs beyond the namespace.

use std::collections::BTreeMap;

use super::{Attributes, Client, DirEntry, Listed, SetAttrs, Usage};
use crate::error::{Error, ErrorKind, Result};
use crate::ids::home_server;
use crate::proto::{
    Ack, CloseRequest, Entry, Object, ObjectReply, ObjectsRequest, ReadDataRequest, SessionRequest,
    SetObjectAttrRequest, UsageRequest, WriteDataRequest,
};

/// An object's attributes and (for a symlink) target, as its server holds them now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObjectAttrs {
    pub attrs: Attributes,
    pub target: Vec<u8>,
}

impl ObjectAttrs {
    pub(super) fn from_proto(object: Object) -> Result<Self> {
        Ok(Self { attrs: Attributes::from_proto(object.attrs.as_ref())?, target: object.target })
    }
}

impl Client {
    /// An entry with its object's attributes: as answered when the answering server holds the
    /// object, else from the object's server.
    pub(super) async fn complete(&self, entry: Entry) -> Result<DirEntry> {
        if let Some(complete) = DirEntry::from_proto(&entry)? {
            return Ok(complete);
        }
        let object = self.object(entry.id).await?;
        Ok(DirEntry { name: entry.name, id: entry.id, attrs: object.attrs, target: object.target })
    }

    /// Listed entries with their objects' attributes (one request per server holding any).
    pub async fn with_attributes(&self, listed: Vec<Listed>) -> Result<Vec<DirEntry>> {
        let mut by_server: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for entry in &listed {
            by_server.entry(home_server(entry.id)).or_default().push(entry.id);
        }
        let mut found = std::collections::HashMap::new();
        for (server, ids) in by_server {
            for chunk in ids.chunks(crate::server::MAX_IDS) {
                for object in self.objects_on(server, chunk.to_vec(), 0).await? {
                    found.insert(object.id, ObjectAttrs::from_proto(object)?);
                }
            }
        }
        // An entry whose object is gone meanwhile (removed since the listing) is left out.
        Ok(listed
            .into_iter()
            .filter_map(|entry| {
                let object = found.remove(&entry.id)?;
                Some(DirEntry { name: entry.name, id: entry.id, attrs: object.attrs, target: object.target })
            })
            .collect())
    }

    /// Object `id`'s attributes (stat by inode number).
    pub async fn object(&self, id: u64) -> Result<ObjectAttrs> {
        self.object_opened(id, 0).await
    }

    /// Object `id`'s attributes; with `open_session`, the mount session opens it: the file
    /// outlives its last name until the session closes it.
    pub async fn object_opened(&self, id: u64, open_session: u64) -> Result<ObjectAttrs> {
        let object =
            self.objects_on(home_server(id), vec![id], open_session).await?.pop().ok_or_else(|| {
                Error::new(ErrorKind::NotFound, format!("object {id:#x} does not exist (removed meanwhile)"))
            })?;
        ObjectAttrs::from_proto(object)
    }

    async fn objects_on(&self, server: u32, ids: Vec<u64>, open_session: u64) -> Result<Vec<Object>> {
        let request = ObjectsRequest { ids, open_session };
        let reply =
            self.rpc(server)?.get_objects(request).await.map_err(|s| self.status_error(server, &s))?;
        Ok(reply.into_inner().objects)
    }

    /// Mount session `session` closed these files (or, with `everything`, all it had open): a file
    /// without a name left goes once nobody has it open.
    pub async fn close(&self, session: u64, ids: &[u64]) -> Result<()> {
        let mut by_server: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for &id in ids {
            by_server.entry(home_server(id)).or_default().push(id);
        }
        for (server, ids) in by_server {
            let request = CloseRequest { session, ids, everything: false };
            let ack = self.rpc(server)?.close(request).await.map_err(|s| self.status_error(server, &s))?;
            ack_result(&ack.into_inner())?;
        }
        Ok(())
    }

    /// Mount session `session` is alive: every server keeps its opens (see `SESSION_LEASE`).
    /// Every server is told, also when one of them fails (the first failure is returned).
    pub async fn keep_open(&self, session: u64) -> Result<()> {
        let mut first_failure = Ok(());
        for server in 0..self.server_count() {
            let request = SessionRequest { session };
            let renewed =
                self.rpc(server)?.keep_open(request).await.map_err(|s| self.status_error(server, &s));
            if let (Err(e), Ok(())) = (renewed, &first_failure) {
                first_failure = Err(e);
            }
        }
        first_failure
    }

    /// Mount session `session` ended: everything it had open is closed, on every server.
    pub async fn close_session(&self, session: u64) -> Result<()> {
        for server in 0..self.server_count() {
            let request = CloseRequest { session, ids: Vec::new(), everything: true };
            let ack = self.rpc(server)?.close(request).await.map_err(|s| self.status_error(server, &s))?;
            ack_result(&ack.into_inner())?;
        }
        Ok(())
    }

    /// Changes object `id`'s attributes (chmod, chown, utimes; a file's size, dropping data past it).
    pub async fn set_attrs(&self, id: u64, change: SetAttrs) -> Result<Attributes> {
        let server = home_server(id);
        let request = SetObjectAttrRequest { id, change: Some(change.to_proto()) };
        let reply =
            self.rpc(server)?.set_object_attr(request).await.map_err(|s| self.status_error(server, &s))?;
        let object = object_of(reply.into_inner())?;
        if object.attrs.as_ref().is_some_and(|a| a.kind() == crate::proto::Kind::Directory) {
            self.forget_dir(id);
        }
        Attributes::from_proto(object.attrs.as_ref())
    }

    /// A directory's attributes fresh from its metadata object (its cached information too).
    pub async fn dir_attrs(&self, dir: u64) -> Result<Attributes> {
        Ok(self.fetch_dir(dir).await?.attrs)
    }

    /// Writes `data` at `offset` of file `file`; durable when it returns, with the file's new size
    /// and mtime (its attributes afterwards are returned).
    pub async fn write_data(&self, file: u64, offset: u64, data: Vec<u8>) -> Result<Attributes> {
        let server = home_server(file);
        let request = WriteDataRequest { file, offset, data };
        let reply = self.rpc(server)?.write_data(request).await.map_err(|s| self.status_error(server, &s))?;
        Attributes::from_proto(object_of(reply.into_inner())?.attrs.as_ref())
    }

    /// Bytes `offset..offset + length` of file `file` (shorter at its end).
    pub async fn read_data(&self, file: u64, offset: u64, length: u32) -> Result<Vec<u8>> {
        let server = home_server(file);
        let request = ReadDataRequest { file, offset, length };
        let reply = self.rpc(server)?.read_data(request).await.map_err(|s| self.status_error(server, &s))?;
        let reply = reply.into_inner();
        match reply.failure {
            Some(failure) => Err(Error::from_failure(&failure)),
            None => Ok(reply.data),
        }
    }

    /// Space on the servers' stores and the entries they hold, summed over every server.
    pub async fn usage(&self) -> Result<Usage> {
        let mut total = Usage::default();
        for server in 0..self.server_count() {
            let reply =
                self.rpc(server)?.usage(UsageRequest {}).await.map_err(|s| self.status_error(server, &s))?;
            let reply = reply.into_inner();
            total.total_bytes += reply.total_bytes;
            total.free_bytes += reply.free_bytes;
            total.available_bytes += reply.available_bytes;
            total.entries += reply.entries;
        }
        Ok(total)
    }
}

fn object_of(reply: ObjectReply) -> Result<Object> {
    match (reply.object, reply.failure) {
        (_, Some(failure)) => Err(Error::from_failure(&failure)),
        (Some(object), None) => Ok(object),
        (None, None) => Err(Error::new(ErrorKind::Protocol, "reply without object")),
    }
}

pub(super) fn ack_result(ack: &Ack) -> Result<()> {
    match &ack.failure {
        Some(failure) => Err(Error::from_failure(failure)),
        None => Ok(()),
    }
}

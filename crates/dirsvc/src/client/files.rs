//! File data, attribute changes of directories, removal with or without data, and usage: what a
//! file system mount needs beyond the namespace. A file's data lives on the server that allocated
//! its id (`home_server`); its size lives in its entry.

use std::sync::Arc;

use super::{Client, DirEntry, DirInfo, FileKind, Routed, SetAttrs, Usage};
use crate::error::{Error, ErrorKind, Result};
use crate::ids::home_server;
use crate::proto::{
    Ack, ReadDataRequest, SetDirAttrRequest, TruncateDataRequest, UsageRequest, WriteDataRequest,
};

impl Client {
    /// Removes a non-directory entry. Unless `keep_data` (the caller still has the file open and
    /// drops the data later with `truncate_data(id, 0)`), a file's data goes with it: in the same
    /// transaction when its partition's server holds the data, otherwise right after.
    pub async fn unlink_keeping_data(&self, dir: u64, name: &[u8], keep_data: bool) -> Result<DirEntry> {
        let op = Routed::Unlink { expect_id: 0, directory: false, keep_data };
        let reply = self.route(dir, name, &op).await?;
        if !keep_data {
            self.drop_remote_data(&reply.entry, reply.server).await;
        }
        Ok(reply.entry)
    }

    /// Drops the data of a file whose name `server` just removed or replaced, when another server
    /// holds it. Best effort: the name is gone already, so a failure leaves unreachable data, not a
    /// wrong file.
    pub(super) async fn drop_remote_data(&self, removed: &DirEntry, server: u32) {
        if removed.attrs.kind == FileKind::File && home_server(removed.id) != server {
            let _ = self.truncate_data(removed.id, 0).await;
        }
    }

    /// Changes a directory's attributes on its metadata object (where they are authoritative),
    /// then the copy in its parent's entry (best effort: listings show it).
    pub async fn set_dir_attr(
        &self,
        dir: u64,
        name_in_parent: Option<&[u8]>,
        change: SetAttrs,
    ) -> Result<Arc<DirInfo>> {
        let server = home_server(dir);
        let request = SetDirAttrRequest { dir, change: Some(change.to_proto()) };
        let reply = self
            .rpc(server)?
            .set_dir_attr(request)
            .await
            .map_err(|s| self.status_error(server, &s))?
            .into_inner();
        if let Some(failure) = reply.failure {
            return Err(Error::from_failure(&failure));
        }
        let meta = reply.meta.ok_or_else(|| Error::new(ErrorKind::Protocol, "reply without metadata"))?;
        let info = self.remember(DirInfo::from_meta(&meta)?);
        if let Some(name) = name_in_parent {
            let _ = self.set_attr(info.parent, name, dir, change).await;
        }
        Ok(info)
    }

    /// Writes `data` at `offset` of file `file`, whose size before this write is `valid_size`
    /// (stored bytes beyond it, left by a write whose size update was lost, are dropped first).
    /// Update the entry's size afterwards with `set_attr`.
    pub async fn write_data(&self, file: u64, offset: u64, data: Vec<u8>, valid_size: u64) -> Result<()> {
        let server = home_server(file);
        let request = WriteDataRequest { file, offset, data, valid_size };
        let ack = self.rpc(server)?.write_data(request).await.map_err(|s| self.status_error(server, &s))?;
        ack_result(&ack.into_inner())
    }

    /// Bytes `offset..offset + length` of a file of `size` bytes (shorter at the end of the file).
    pub async fn read_data(&self, file: u64, offset: u64, length: u32, size: u64) -> Result<Vec<u8>> {
        let server = home_server(file);
        let request = ReadDataRequest { file, offset, length, size };
        let reply = self.rpc(server)?.read_data(request).await.map_err(|s| self.status_error(server, &s))?;
        Ok(reply.into_inner().data)
    }

    /// Drops a file's bytes at and beyond `size` (all its data for 0).
    pub async fn truncate_data(&self, file: u64, size: u64) -> Result<()> {
        let server = home_server(file);
        let request = TruncateDataRequest { file, size };
        let ack =
            self.rpc(server)?.truncate_data(request).await.map_err(|s| self.status_error(server, &s))?;
        ack_result(&ack.into_inner())
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

fn ack_result(ack: &Ack) -> Result<()> {
    match &ack.failure {
        Some(failure) => Err(Error::from_failure(failure)),
        None => Ok(()),
    }
}

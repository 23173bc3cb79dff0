//! The operations that touch several servers: mkdir, rmdir, rename and link. Their order is chosen
//! so that an interruption leaves at worst unreachable garbage (an object no entry names, which
//! `fsck` removes), a directory that refuses new entries until rmdir is retried, or a file with one
//! name more (an interrupted rename) — never an entry pointing nowhere, never a link count below
//! the names that exist.

use super::files::{ObjectAttrs, ack_result};
use super::{Client, CreateFields, DirEntry, Listed, MkdirOptions, Routed};
use crate::error::{Error, ErrorKind, Result};
use crate::ids::{ROOT_ID, home_server};
use crate::mapping::name_hash;
use crate::names::validate_name;
use crate::proto::{
    AbortLinkRequest, AddLinkRequest, Attrs, CreateDirRequest, DirMeta, DirRequest, FailureKind,
    InitPartitionsRequest, Kind, PartitionRef, RenameRequest, SealRequest,
};

/// Deepest directory nesting `rename` walks when checking a directory is not moved into itself.
const MAX_DEPTH: usize = 4096;

impl Client {
    /// Creates directory `name` in `parent`: the metadata object goes to the server of the
    /// partition that will hold the name, every server creates its partition, then the name is
    /// linked. If linking fails (say the name exists) the new objects are removed again.
    pub async fn mkdir(&self, parent: u64, name: &[u8], options: MkdirOptions) -> Result<DirEntry> {
        validate_name(name)?;
        let parent_info = self.dir_info(parent).await?;
        let partition = parent_info.bitmap.partition_for(name_hash(name));
        let meta_server = parent_info.servers[partition as usize];
        let attrs = Attrs {
            kind: Kind::Directory as i32,
            mode: options.owner.mode,
            uid: options.owner.uid,
            gid: options.owner.gid,
            ..Attrs::default()
        };
        let request = CreateDirRequest {
            parent,
            attrs: Some(attrs),
            initial_partitions: options.initial_partitions,
            split_threshold: options.split_threshold.unwrap_or(self.cluster.config.split_threshold),
        };
        let reply = self
            .rpc(meta_server)?
            .create_dir(request)
            .await
            .map_err(|s| self.status_error(meta_server, &s))?
            .into_inner();
        if let Some(failure) = reply.failure {
            return Err(Error::from_failure(&failure));
        }
        let meta =
            reply.meta.ok_or_else(|| Error::new(ErrorKind::Protocol, "mkdir reply without metadata"))?;
        let info = super::DirInfo::from_meta(&meta)?;
        let linked = match self.init_partitions(&meta).await {
            Ok(()) => {
                let attrs = Attrs { kind: Kind::Directory as i32, ..Attrs::default() };
                let fields = CreateFields { attrs, id: meta.id, ..CreateFields::default() };
                self.route(parent, name, &Routed::Create(fields)).await
            }
            Err(e) => Err(e),
        };
        match linked {
            Ok(entry) => {
                self.remember(info);
                self.complete(entry).await
            }
            Err(e) => {
                // Best effort: what is left is unreachable, since no entry names it.
                let _ = self.destroy(meta.id, &meta.servers).await;
                Err(e)
            }
        }
    }

    /// Removes empty directory `name` from `parent`: seal every partition (each refuses if it
    /// holds entries, and from then on refuses new ones), unlink the name, drop the partitions,
    /// and only then the metadata object.
    pub async fn rmdir(&self, parent: u64, name: &[u8]) -> Result<()> {
        let entry = self.lookup_name(parent, name).await?;
        if !entry.is_dir() {
            return Err(Error::new(
                ErrorKind::NotDirectory,
                format!("{} is not a directory", entry.name_lossy()),
            ));
        }
        if entry.id == ROOT_ID {
            return Err(Error::new(ErrorKind::Busy, "the root directory cannot be removed"));
        }
        let info = self.fetch_dir(entry.id).await?;
        self.seal_all(entry.id, &info.servers).await?;
        let op = Routed::Unlink { expect_id: entry.id, directory: true };
        if let Err(e) = self.route(parent, name, &op).await {
            self.unseal_all(entry.id, &info.servers).await;
            return Err(e);
        }
        self.destroy(entry.id, &info.servers).await
    }

    /// A new name `name` in `dir` for file `id` (a hard link), with the file's attributes counting it.
    pub async fn link(&self, id: u64, dir: u64, name: &[u8]) -> Result<DirEntry> {
        validate_name(name)?;
        let object = self.link_entry(id, (dir, name), 0).await?;
        Ok(DirEntry { name: name.to_vec(), id, attrs: object.attrs, target: object.target })
    }

    /// Makes (`dir`, `name`) name file `id`, replacing `replace_id` (0: nothing) there: the file's
    /// server counts the name first (a link intent), then the name's partition makes the entry and
    /// settles the intent. A definitive refusal uncounts it; an unknown outcome (a server that
    /// did not answer) is settled by the file's server later.
    async fn link_entry(&self, id: u64, (dir, name): (u64, &[u8]), replace_id: u64) -> Result<ObjectAttrs> {
        let server = home_server(id);
        let request = AddLinkRequest { id, dir, name: name.to_vec() };
        let reply = self.rpc(server)?.add_link(request).await.map_err(|s| self.status_error(server, &s))?;
        let reply = reply.into_inner();
        if let Some(failure) = reply.failure {
            return Err(Error::from_failure(&failure));
        }
        let object =
            reply.object.ok_or_else(|| Error::new(ErrorKind::Protocol, "link reply without object"))?;
        let kind = object.attrs.as_ref().map_or(0, |a| a.kind);
        let fields = CreateFields {
            attrs: Attrs { kind, ..Attrs::default() },
            id,
            replace_id,
            link_intent: reply.intent,
            ..CreateFields::default()
        };
        match self.route(dir, name, &Routed::Create(fields)).await {
            Ok(_) => ObjectAttrs::from_proto(object),
            Err(e) => {
                if !e.may_have_happened() {
                    let abort = AbortLinkRequest { id, intent: reply.intent };
                    if let Ok(ack) = self.rpc(server)?.abort_link(abort).await {
                        let _ = ack_result(&ack.into_inner());
                    }
                }
                Err(e)
            }
        }
    }

    /// Renames `src_name` in `src_dir` to `dst_name` in `dst_dir`, replacing a destination of
    /// the same type (an empty directory for a directory). When both names live on one server
    /// the move is one atomic transaction there; otherwise a file is linked under the new name
    /// first and unlinked from the old one after (an interruption leaves it with both names and a
    /// link count of 2), and a directory likewise (both names lead to it until `fsck`).
    pub async fn rename(
        &self,
        src_dir: u64,
        src_name: &[u8],
        dst_dir: u64,
        dst_name: &[u8],
    ) -> Result<Listed> {
        validate_name(src_name)?;
        validate_name(dst_name)?;
        let source = self.lookup_name(src_dir, src_name).await?;
        if src_dir == dst_dir && src_name == dst_name {
            return Ok(source);
        }
        if source.is_dir() && src_dir != dst_dir {
            self.check_not_inside(source.id, dst_dir).await?;
        }
        let target = match self.lookup_name(dst_dir, dst_name).await {
            Ok(target) => Some(target),
            Err(e) if e.kind == ErrorKind::NotFound => None,
            Err(e) => return Err(e),
        };
        let mut victim = None;
        if let Some(target) = &target {
            if target.id == source.id {
                // Two names of one file: rename(2) does nothing.
                return Ok(source);
            }
            match (source.is_dir(), target.is_dir()) {
                (true, false) => {
                    return Err(Error::new(
                        ErrorKind::NotDirectory,
                        format!("cannot replace non-directory {} with a directory", target.name_lossy()),
                    ));
                }
                (false, true) => {
                    return Err(Error::new(
                        ErrorKind::IsDirectory,
                        format!("cannot replace directory {} with a non-directory", target.name_lossy()),
                    ));
                }
                (true, true) => {
                    let info = self.fetch_dir(target.id).await?;
                    self.seal_all(target.id, &info.servers).await?;
                    victim = Some((target.id, info.servers.clone()));
                }
                (false, false) => {}
            }
        }
        let replace_id = target.as_ref().map_or(0, |t| t.id);
        if let Err(e) = self.move_entry((src_dir, src_name), (dst_dir, dst_name), &source, replace_id).await {
            if let Some((id, servers)) = &victim {
                self.unseal_all(*id, servers).await;
            }
            return Err(e);
        }
        if let Some((id, servers)) = victim {
            self.destroy(id, &servers).await?;
        }
        if source.is_dir() {
            self.forget_dir(source.id);
        }
        Ok(Listed { name: dst_name.to_vec(), ..source })
    }

    async fn move_entry(
        &self,
        (src_dir, src_name): (u64, &[u8]),
        (dst_dir, dst_name): (u64, &[u8]),
        source: &Listed,
        replace_id: u64,
    ) -> Result<()> {
        let mut probes = 0;
        loop {
            let from = self.dir_info(src_dir).await?;
            let to = self.dir_info(dst_dir).await?;
            let from_partition = from.bitmap.partition_for(name_hash(src_name));
            let to_partition = to.bitmap.partition_for(name_hash(dst_name));
            let server = from.servers[from_partition as usize];
            if server != to.servers[to_partition as usize] {
                return self
                    .move_across_servers((src_dir, src_name), (dst_dir, dst_name), source, replace_id)
                    .await;
            }
            probes += 1;
            let request = RenameRequest {
                from: Some(PartitionRef { dir: src_dir, partition: from_partition }),
                from_name: src_name.to_vec(),
                to: Some(PartitionRef { dir: dst_dir, partition: to_partition }),
                to_name: dst_name.to_vec(),
                expect_id: source.id,
                replace_id,
            };
            let reply = self
                .rpc(server)?
                .rename(request)
                .await
                .map_err(|s| self.status_error(server, &s))?
                .into_inner();
            match reply.failure {
                None => {
                    self.stats.record(probes);
                    return Ok(());
                }
                Some(failure) if failure.kind() == FailureKind::WrongPartition => {
                    if probes >= super::MAX_PROBES {
                        return Err(Error::new(ErrorKind::Busy, "rename kept being redirected"));
                    }
                    // The redirect does not say which of the two names moved: refresh both.
                    self.stats.record_refresh();
                    self.fetch_dir(src_dir).await?;
                    if dst_dir != src_dir {
                        self.fetch_dir(dst_dir).await?;
                    }
                }
                Some(failure) => {
                    self.stats.record(probes);
                    return Err(Error::from_failure(&failure));
                }
            }
        }
    }

    /// The new name first (a file: as a hard link; a directory: its entry, which moves its
    /// parent pointer), then the old name goes. If the old name was removed or replaced meanwhile
    /// by someone else, the move is done all the same.
    async fn move_across_servers(
        &self,
        (src_dir, src_name): (u64, &[u8]),
        (dst_dir, dst_name): (u64, &[u8]),
        source: &Listed,
        replace_id: u64,
    ) -> Result<()> {
        if source.is_dir() {
            let attrs = Attrs { kind: Kind::Directory as i32, ..Attrs::default() };
            let fields = CreateFields { attrs, id: source.id, replace_id, ..CreateFields::default() };
            self.route(dst_dir, dst_name, &Routed::Create(fields)).await?;
        } else {
            self.link_entry(source.id, (dst_dir, dst_name), replace_id).await?;
        }
        let unlink = Routed::Unlink { expect_id: source.id, directory: source.is_dir() };
        match self.route(src_dir, src_name, &unlink).await {
            Err(e) if matches!(e.kind, ErrorKind::NotFound | ErrorKind::Changed) => Ok(()),
            other => other.map(drop),
        }
    }

    /// Refuses to move directory `moving` under `dst_dir` when `dst_dir` is inside it.
    async fn check_not_inside(&self, moving: u64, dst_dir: u64) -> Result<()> {
        let mut cursor = dst_dir;
        for _ in 0..MAX_DEPTH {
            if cursor == moving {
                return Err(Error::invalid("cannot move a directory inside itself"));
            }
            if cursor == ROOT_ID {
                return Ok(());
            }
            cursor = self.fetch_dir(cursor).await?.parent;
        }
        Err(Error::invalid("directory nesting deeper than 4096 levels"))
    }

    async fn init_partitions(&self, meta: &DirMeta) -> Result<()> {
        for server in 0..self.server_count() {
            let request = InitPartitionsRequest { meta: Some(meta.clone()) };
            let ack = self
                .rpc(server)?
                .init_partitions(request)
                .await
                .map_err(|s| self.status_error(server, &s))?
                .into_inner();
            if let Some(failure) = ack.failure {
                return Err(Error::from_failure(&failure));
            }
        }
        Ok(())
    }

    async fn seal(&self, server: u32, dir: u64, partition: u32, seal: bool) -> Result<()> {
        let request = SealRequest { at: Some(PartitionRef { dir, partition }), seal };
        let ack = self
            .rpc(server)?
            .seal_partition(request)
            .await
            .map_err(|s| self.status_error(server, &s))?
            .into_inner();
        match ack.failure {
            Some(failure) => Err(Error::from_failure(&failure)),
            None => Ok(()),
        }
    }

    /// Seals every partition of `dir`, or none: a refusal unseals what was sealed.
    async fn seal_all(&self, dir: u64, servers: &[u32]) -> Result<()> {
        for (partition, &server) in servers.iter().enumerate() {
            if let Err(e) = self.seal(server, dir, partition as u32, true).await {
                self.unseal_all(dir, &servers[..partition]).await;
                return Err(e);
            }
        }
        Ok(())
    }

    async fn unseal_all(&self, dir: u64, servers: &[u32]) {
        for (partition, &server) in servers.iter().enumerate() {
            let _ = self.seal(server, dir, partition as u32, false).await;
        }
    }

    /// Drops every partition, then the metadata object (partitions first, as OrangeFS does).
    pub(crate) async fn destroy(&self, dir: u64, servers: &[u32]) -> Result<()> {
        for (partition, &server) in servers.iter().enumerate() {
            let at = PartitionRef { dir, partition: partition as u32 };
            // A partition never created (an interrupted mkdir) has nothing to drop.
            match self.seal(server, dir, partition as u32, true).await {
                Err(e) if e.kind != ErrorKind::NotFound => return Err(e),
                _ => {}
            }
            let ack = self
                .rpc(server)?
                .drop_partition(at)
                .await
                .map_err(|s| self.status_error(server, &s))?
                .into_inner();
            if let Some(failure) = ack.failure {
                return Err(Error::from_failure(&failure));
            }
        }
        let server = home_server(dir);
        let reply = self
            .rpc(server)?
            .remove_dir(DirRequest { dir })
            .await
            .map_err(|s| self.status_error(server, &s))?
            .into_inner();
        self.forget_dir(dir);
        match reply.failure {
            Some(failure) if failure.kind() != FailureKind::NotFound => Err(Error::from_failure(&failure)),
            _ => Ok(()),
        }
    }
}

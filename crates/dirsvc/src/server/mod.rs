//! One metadata server: a fjall store, a group-commit writer, the split driver and the gRPC
//! service, all behind the cluster secret.

mod apply;
mod attrs;
pub mod core;
mod data;
mod mutation;
mod rpc;
mod split;
pub mod store;
mod validate;
mod writer;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tonic::transport::server::TcpIncoming;

use self::core::Core;
use self::split::Splitter;
use self::store::Store;
use self::writer::{Writer, WriterEvents};
use crate::auth::CheckSecret;
use crate::cluster::Cluster;
use crate::error::{Error, Result};
use crate::proto::metadata_server::MetadataServer;
use crate::transport::{REQUEST_TIMEOUT, connect_lazy};

pub use self::data::CHUNK;
pub use self::writer::CommitStats;

pub struct ServerOptions {
    pub cluster: Cluster,
    pub index: u32,
    /// Where the store lives; by default `CLUSTER/server-INDEX/store`.
    pub store_dir: PathBuf,
}

impl ServerOptions {
    pub fn new(cluster: Cluster, index: u32) -> Self {
        let store_dir = cluster.server_dir(index).join("store");
        Self { cluster, index, store_dir }
    }
}

pub struct RunningServer {
    pub addr: SocketAddr,
    pub core: Arc<Core>,
    stop: Option<(oneshot::Sender<()>, watch::Sender<bool>)>,
    serving: tokio::task::JoinHandle<std::result::Result<(), tonic::transport::Error>>,
}

impl RunningServer {
    /// Stops accepting requests, lets requests in flight finish, and stops splitting.
    pub async fn stop(mut self) -> Result<()> {
        if let Some((stop_serving, stop_splitting)) = self.stop.take() {
            let _ = stop_splitting.send(true);
            let _ = stop_serving.send(());
        }
        match (&mut self.serving).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::io(format!("server {}: {e}", self.addr))),
            Err(e) => Err(Error::io(format!("server {}: {e}", self.addr))),
        }
    }

    /// Waits until the server stops by itself (it only does on a transport failure).
    pub async fn wait(mut self) -> Result<()> {
        match (&mut self.serving).await {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) => Err(Error::io(format!("server {}: {e}", self.addr))),
            Err(e) => Err(Error::io(format!("server {}: {e}", self.addr))),
        }
    }
}

/// Opens the store (formatting it on first start), resumes interrupted splits and serves on the
/// cluster's address for this index, or on `listener` when given (tests bind port 0 first).
pub async fn start(options: &ServerOptions, listener: Option<TcpListener>) -> Result<RunningServer> {
    let config = &options.cluster.config;
    let servers = config.server_count();
    let index = options.index;
    let Some(&configured) = config.servers.get(index as usize) else {
        return Err(Error::invalid(format!(
            "server index {index} out of range: the cluster has {servers} servers"
        )));
    };
    let (core, candidates, interrupted) = open_core(&options.store_dir, index, servers)?;
    let core = Arc::new(core);

    core.format(config.root_partitions, config.split_threshold).await?;

    let peers = config
        .servers
        .iter()
        .map(|&addr| connect_lazy(addr, &options.cluster.secret, REQUEST_TIMEOUT))
        .collect();
    let (stop_splitting, splitting_stopped) = watch::channel(false);
    Splitter::spawn(Arc::clone(&core), peers, candidates, interrupted, splitting_stopped);

    let listener = match listener {
        Some(listener) => listener,
        None => TcpListener::bind(configured)
            .await
            .map_err(|e| Error::io(format!("cannot listen on {configured}: {e}")))?,
    };
    let addr = listener.local_addr().map_err(|e| Error::io(format!("listener address: {e}")))?;
    let service = tonic::service::interceptor::InterceptedService::new(
        MetadataServer::new(rpc::Service { core: Arc::clone(&core) })
            .max_decoding_message_size(16 << 20)
            .max_encoding_message_size(16 << 20),
        CheckSecret::new(&options.cluster.secret),
    );
    let (stop_serving, stopped) = oneshot::channel::<()>();
    let incoming = TcpIncoming::from(listener).with_nodelay(Some(true));
    let serving =
        tokio::spawn(tonic::transport::Server::builder().add_service(service).serve_with_incoming_shutdown(
            incoming,
            async {
                let _ = stopped.await;
            },
        ));
    Ok(RunningServer { addr, core, stop: Some((stop_serving, stop_splitting)), serving })
}

/// Runs server `options.index` until SIGTERM or SIGINT: what `canopy dirsvc serve` does.
pub fn serve_blocking(options: &ServerOptions) -> Result<()> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async {
        let server = start(options, None).await?;
        let pid_file = crate::launcher::write_pid_file(&options.cluster, options.index)?;
        eprintln!(
            "dirsvc server {} of {} listening on {} (store {})",
            options.index,
            options.cluster.config.servers.len(),
            server.addr,
            options.store_dir.display()
        );
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| Error::io(format!("cannot handle SIGTERM: {e}")))?;
        let result = tokio::select! {
            _ = terminate.recv() => server.stop().await,
            _ = tokio::signal::ctrl_c() => server.stop().await,
        };
        let _ = std::fs::remove_file(pid_file);
        eprintln!("dirsvc server {} stopped", options.index);
        result
    })
}

type Opened = (Core, mpsc::UnboundedReceiver<mutation::PartKey>, Vec<mutation::SplitPlan>);

/// The store, its writer thread and the handlers, without any network (also used by the fuzz
/// tests of request decoding).
pub fn open_core(store_dir: &Path, index: u32, servers: u32) -> Result<Opened> {
    std::fs::create_dir_all(store_dir)
        .map_err(|e| Error::io(format!("cannot create {}: {e}", store_dir.display())))?;
    let store = Store::open(store_dir)
        .map_err(|e| Error::io(format!("cannot open store {}: {e}", store_dir.display())))?;
    let interrupted = store::all_partitions(&store.snapshot(), &store)
        .map_err(|e| Error::io(e.to_string()))?
        .into_iter()
        .filter(|record| record.splitting_to != 0)
        .map(|record| apply::split_plan(&record))
        .collect::<std::result::Result<Vec<_>, _>>()
        .map_err(|refusal| Error::io(format!("resuming splits: {refusal:?}")))?;
    let (split_candidates, candidates) = mpsc::unbounded_channel();
    let (splits_finished, finished) = watch::channel(0);
    let (stats_sender, stats) = watch::channel(CommitStats::default());
    let events = WriterEvents { split_candidates, splits_finished };
    let (writer, _thread) =
        Writer::spawn(store.clone(), index, events, stats_sender).map_err(|e| Error::io(e.to_string()))?;
    let core = Core::new(index, servers, store, writer, finished, stats, store_dir.to_path_buf());
    Ok((core, candidates, interrupted))
}

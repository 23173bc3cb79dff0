//! One metadata server: a fjall store, a group-commit writer, the split driver and the gRPC
//! service, all behind the cluster secret.

mod apply;
mod attrs;
pub mod core;
mod data;
mod deliver;
mod deliver_stream;
mod effects;
mod entries;
mod inline;
mod log;
mod mutation;
mod object_rpcs;
mod objects;
mod open_refs;
mod repair;
mod resolver;
mod rpc;
mod split;
pub mod store;
mod touches;
mod validate;
mod writer;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, watch};
use tonic::transport::server::TcpIncoming;

use self::core::{Core, CoreParts};
use self::deliver::Outbound;
use self::deliver_stream::DeliverStream;
use self::inline::InlineIndex;
use self::open_refs::OpenRefs;
use self::split::Splitter;
use self::store::Store;
use self::touches::Touches;
use self::writer::{Writer, WriterEvents, WriterShared};
use crate::auth::CheckSecret;
use crate::client::Client;
use crate::cluster::ClusterDir;
use crate::error::{Error, Result};
use crate::proto::metadata_server::MetadataServer;
use crate::transport::{REQUEST_TIMEOUT, connect_lazy};

pub use self::data::CHUNK;
pub use self::objects::LINK_MAX;
pub use self::resolver::{GRACE as LINK_INTENT_GRACE, SESSION_LEASE};
pub use self::validate::MAX_IDS;
pub use self::writer::CommitStats;

/// How long an answer waits for its effects to reach other servers (one that is down gets them
/// when it is back; the answer goes out meanwhile).
const EFFECT_WAIT: Duration = Duration::from_secs(1);
/// How long opening the delivery stream to another server, or an answer on it, may take before
/// the delivery is retried.
const DELIVERY_TIMEOUT: Duration = Duration::from_secs(5);

pub struct ServerOptions {
    pub cluster: ClusterDir,
    pub index: u32,
    /// Where the store lives; by default `CLUSTER/server-INDEX/store`.
    pub store_dir: PathBuf,
}

impl ServerOptions {
    pub fn new(cluster: ClusterDir, index: u32) -> Self {
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
    /// Stops accepting requests, lets requests in flight finish, ends the delivery streams other
    /// servers hold open to it, and stops splitting and delivering.
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
    let opened = open_core(&options.store_dir, index, servers)?;
    let core = Arc::new(opened.core);

    core.format(config.root_partitions, config.split_threshold).await?;

    let peers = |timeout| -> Vec<_> {
        config.servers.iter().map(|&addr| connect_lazy(addr, &options.cluster.secret, timeout)).collect()
    };
    let (stop_splitting, splitting_stopped) = watch::channel(false);
    opened
        .outbound
        .start_delivery(
            index,
            peers(DELIVERY_TIMEOUT)
                .into_iter()
                .map(|peer| DeliverStream::new(peer, DELIVERY_TIMEOUT))
                .collect(),
            core.store.clone(),
            core.writer.clone(),
            splitting_stopped.clone(),
        )
        .map_err(|e| Error::io(format!("reading the outbox: {e}")))?;
    let client = Arc::new(Client::connect(&options.cluster));
    let _ = core.client.set(Arc::clone(&client));
    resolver::spawn(Arc::clone(&core), client, splitting_stopped.clone());
    Splitter::spawn(
        Arc::clone(&core),
        peers(REQUEST_TIMEOUT),
        opened.candidates,
        opened.interrupted,
        splitting_stopped.clone(),
    );

    let listener = match listener {
        Some(listener) => listener,
        None => TcpListener::bind(configured)
            .await
            .map_err(|e| Error::io(format!("cannot listen on {configured}: {e}")))?,
    };
    let addr = listener.local_addr().map_err(|e| Error::io(format!("listener address: {e}")))?;
    let service = tonic::service::interceptor::InterceptedService::new(
        MetadataServer::new(rpc::Service { core: Arc::clone(&core), stopped: splitting_stopped })
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

/// Runs server `options.index` until SIGTERM or SIGINT: what `canopy dirsvc serve` does. A client
/// that hangs up costs its connection only (SIGPIPE ignored: its EPIPE is handled there).
pub fn serve_blocking(options: &ServerOptions) -> Result<()> {
    canopy_fusekit::signals::ignore_sigpipe()
        .map_err(|e| Error::io(format!("cannot ignore SIGPIPE: {e}")))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::io(format!("cannot start the runtime: {e}")))?;
    runtime.block_on(async {
        // Before the server answers: whoever saw it answer finds its pid file (`stop`, `status`).
        let pid_file = crate::launcher::write_pid_file(&options.cluster, options.index)?;
        let server = match start(options, None).await {
            Ok(server) => server,
            Err(e) => {
                let _ = std::fs::remove_file(&pid_file);
                return Err(e);
            }
        };
        log::line(
            options.index,
            &format!(
                "listening on {} as server {} of {} (store {})",
                server.addr,
                options.index,
                options.cluster.config.servers.len(),
                options.store_dir.display()
            ),
        );
        let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
            .map_err(|e| Error::io(format!("cannot handle SIGTERM: {e}")))?;
        let result = tokio::select! {
            _ = terminate.recv() => server.stop().await,
            _ = tokio::signal::ctrl_c() => server.stop().await,
        };
        let _ = std::fs::remove_file(pid_file);
        log::line(options.index, "stopped");
        result
    })
}

/// A server before it is on the network.
pub struct Opened {
    pub core: Core,
    pub candidates: mpsc::UnboundedReceiver<mutation::PartKey>,
    pub interrupted: Vec<mutation::SplitPlan>,
    outbound: Arc<Outbound>,
}

/// The store, its writer thread and the handlers, without any network (also used by the fuzz
/// tests of request decoding). Call it inside a tokio runtime.
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
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| Error::io("a server needs a tokio runtime to run in"))?;
    let outbound = Arc::new(Outbound::new(index, servers, EFFECT_WAIT));
    let inline = InlineIndex::load(&store)
        .map_err(|e| Error::io(format!("indexing the inodes inline in entries: {e}")))?;
    let shared = WriterShared {
        opens: Arc::new(OpenRefs::default()),
        touches: Arc::new(Touches::default()),
        inline: Arc::new(inline),
        outbound: Arc::clone(&outbound),
        runtime,
    };
    let (writer, _thread) = Writer::spawn(store.clone(), index, events, stats_sender, shared.clone())
        .map_err(|e| Error::io(e.to_string()))?;
    let parts = CoreParts {
        store,
        writer,
        splits_finished: finished,
        commit_stats: stats,
        store_dir: store_dir.to_path_buf(),
        opens: shared.opens,
        touches: shared.touches,
        inline: shared.inline,
    };
    Ok(Opened { core: Core::new(index, servers, parts), candidates, interrupted, outbound })
}

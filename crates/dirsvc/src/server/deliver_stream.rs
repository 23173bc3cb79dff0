//! The long-lived `Deliver` stream from one server to another. A delivery task (`deliver.rs`)
//! sends each batch of effects and touches as one message on it and waits for its one answer: an
//! HTTP/2 data frame each way, where a unary call per batch cost a request with its headers, the
//! secret's check, a response and trailers. The receiving end answers the messages in order.
//!
//! A stream found broken when a batch is sent (the peer restarted, the connection dropped) is
//! reopened at once and the batch sent again on the new one: deliveries are idempotent (touches
//! keep the later time; effects at or below the receiver's mark are skipped). Opening a stream to a
//! peer that is down, or a peer that does not answer within the timeout, is an error for the
//! delivery task, which retries with its backoff as it did for a failed call. A server that stops
//! ends the streams it receives, so a graceful stop does not wait for its peers to hang up.

use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;

use futures_util::Stream;
use tokio::sync::{mpsc, watch};
use tonic::{Status, Streaming};

use super::core::Core;
use crate::proto::{DeliverReply, DeliverRequest};
use crate::transport::RpcClient;

/// The answers a server sends back on a stream it receives.
pub type Replies = Pin<Box<dyn Stream<Item = Result<DeliverReply, Status>> + Send>>;

/// The sending end: one per destination server, opened on first use and after a failure.
pub struct DeliverStream {
    peer: RpcClient,
    /// How long opening the stream and each answer may take.
    timeout: Duration,
    open: Option<Open>,
}

struct Open {
    requests: mpsc::Sender<DeliverRequest>,
    replies: Streaming<DeliverReply>,
}

impl DeliverStream {
    pub fn new(peer: RpcClient, timeout: Duration) -> Self {
        Self { peer, timeout, open: None }
    }

    /// Sends one batch and waits for its answer. After an error the stream is closed: the next
    /// batch opens a new one.
    pub async fn deliver(&mut self, request: &DeliverRequest) -> Result<DeliverReply, Status> {
        let reused = self.open.is_some();
        match self.exchange(request).await {
            // Broken since the last batch, most likely by a restart of the peer: once more, on a
            // new stream, so a restart costs no backoff.
            Err(_) if reused => self.exchange(request).await,
            answered => answered,
        }
    }

    async fn exchange(&mut self, request: &DeliverRequest) -> Result<DeliverReply, Status> {
        let timeout = self.timeout;
        tokio::time::timeout(timeout, self.send(request)).await.unwrap_or_else(|_| {
            Err(Status::deadline_exceeded(format!("no answer on the delivery stream within {timeout:?}")))
        })
    }

    /// The stream is taken out while in use and put back only after an answer, so an error or a
    /// timeout drops it.
    async fn send(&mut self, request: &DeliverRequest) -> Result<DeliverReply, Status> {
        let mut open = match self.open.take() {
            Some(open) => open,
            None => self.connect().await?,
        };
        open.requests
            .send(request.clone())
            .await
            .map_err(|_| Status::unavailable("the delivery stream is closed"))?;
        let reply = open
            .replies
            .message()
            .await?
            .ok_or_else(|| Status::unavailable("the receiving server ended the delivery stream"))?;
        self.open = Some(open);
        Ok(reply)
    }

    async fn connect(&mut self) -> Result<Open, Status> {
        let (requests, outgoing) = mpsc::channel(1);
        let outgoing = futures_util::stream::unfold(outgoing, |mut outgoing| async move {
            outgoing.recv().await.map(|request| (request, outgoing))
        });
        let replies = self.peer.deliver(outgoing).await?.into_inner();
        Ok(Open { requests, replies })
    }
}

/// The receiving end of a stream from another server: each message is handled by
/// `Core::deliver` and answered in order, until the sender closes the stream, it breaks, a message
/// is refused (the refusal ends it), or this server stops.
pub fn answer(
    core: Arc<Core>,
    inbound: Streaming<DeliverRequest>,
    stopped: watch::Receiver<bool>,
) -> Replies {
    Box::pin(futures_util::stream::unfold(Some((core, inbound, stopped)), |state| async move {
        let (core, mut inbound, mut stopped) = state?;
        let received = tokio::select! {
            received = inbound.message() => received,
            _ = stopped.wait_for(|&stopped| stopped) => return None,
        };
        let Ok(Some(request)) = received else {
            return None;
        };
        match core.deliver(request).await {
            Ok(reply) => Some((Ok(reply), Some((core, inbound, stopped)))),
            Err(refused) => Some((Err(refused), None)),
        }
    }))
}

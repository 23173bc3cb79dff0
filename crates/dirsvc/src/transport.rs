//! gRPC channels to servers: HTTP/2 over TCP, one lazily connected channel per server, every
//! request carrying the cluster secret and bounded by a timeout.

use std::net::SocketAddr;
use std::time::Duration;

use tonic::service::interceptor::InterceptedService;
use tonic::transport::{Channel, Endpoint};

use crate::auth::PresentSecret;
use crate::proto::metadata_client::MetadataClient;

pub type RpcClient = MetadataClient<InterceptedService<Channel, PresentSecret>>;

/// How long one request may take before the caller sees `Unavailable` (a split can hold a request
/// for up to 30 s, so stay above that).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(45);
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(3);

/// A channel whose requests fail as unavailable after `timeout`.
pub fn connect_lazy(addr: SocketAddr, secret: &str, timeout: Duration) -> RpcClient {
    let endpoint = Endpoint::from_shared(format!("http://{addr}"))
        .expect("a socket address is a valid URI authority")
        .connect_timeout(CONNECT_TIMEOUT.min(timeout))
        .timeout(timeout)
        .tcp_nodelay(true);
    MetadataClient::with_interceptor(endpoint.connect_lazy(), PresentSecret::new(secret))
        .max_decoding_message_size(16 << 20)
        .max_encoding_message_size(16 << 20)
}

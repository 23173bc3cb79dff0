//! The cluster's shared secret on the wire: clients (and servers talking to each other) present it
//! in the `authorization` header of every request; servers refuse requests without it before any
//! decoding or handling happens, so an unauthenticated request changes nothing.

use std::sync::Arc;

use tonic::metadata::{AsciiMetadataValue, MetadataValue};
use tonic::service::Interceptor;
use tonic::{Request, Status};

const HEADER: &str = "authorization";
const SCHEME: &str = "Bearer ";

/// Server side: rejects requests that do not carry the cluster secret.
#[derive(Clone)]
pub struct CheckSecret {
    expected: Arc<Vec<u8>>,
}

impl CheckSecret {
    pub fn new(secret: &str) -> Self {
        Self { expected: Arc::new(format!("{SCHEME}{secret}").into_bytes()) }
    }
}

impl Interceptor for CheckSecret {
    fn call(&mut self, request: Request<()>) -> Result<Request<()>, Status> {
        match request.metadata().get(HEADER) {
            None => Err(Status::unauthenticated(
                "missing cluster secret: clients must present the secret stored in the cluster \
                 directory (file `secret`)",
            )),
            Some(value) if constant_time_eq(value.as_bytes(), &self.expected) => Ok(request),
            Some(_) => Err(Status::unauthenticated(
                "wrong cluster secret: this server belongs to a different cluster, or the secret \
                 file was replaced",
            )),
        }
    }
}

/// Client side: attaches the cluster secret to every request.
#[derive(Clone)]
pub struct PresentSecret {
    value: AsciiMetadataValue,
}

impl PresentSecret {
    pub fn new(secret: &str) -> Self {
        let value = MetadataValue::try_from(format!("{SCHEME}{secret}"))
            .unwrap_or_else(|_| MetadataValue::from_static("Bearer invalid"));
        Self { value }
    }
}

impl Interceptor for PresentSecret {
    fn call(&mut self, mut request: Request<()>) -> Result<Request<()>, Status> {
        request.metadata_mut().insert(HEADER, self.value.clone());
        Ok(request)
    }
}

/// Compares without an early exit, so response timing does not reveal how much of a guess matched.
fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_right_secret_passes() {
        let mut check = CheckSecret::new("abc123");
        let mut right = PresentSecret::new("abc123");
        let mut wrong = PresentSecret::new("abc124");
        assert!(check.call(right.call(Request::new(())).unwrap()).is_ok());
        let refused = check.call(wrong.call(Request::new(())).unwrap()).unwrap_err();
        assert_eq!(refused.code(), tonic::Code::Unauthenticated);
        assert!(refused.message().contains("wrong cluster secret"));
        let missing = check.call(Request::new(())).unwrap_err();
        assert!(missing.message().contains("missing cluster secret"));
    }
}

//! The gRPC codec: prost's, except that a message that does not decode is refused with
//! INVALID_ARGUMENT, as the protocol documents (prost's codec answers INTERNAL, which blames the
//! server for a sender's malformed request).

use prost::Message;
use tonic::Status;
use tonic::codec::{BufferSettings, Codec, DecodeBuf, Decoder};
use tonic_prost::{ProstCodec, ProstDecoder, ProstEncoder};

#[derive(Debug, Clone)]
pub struct StrictCodec<T, U> {
    prost: ProstCodec<T, U>,
}

impl<T, U> Default for StrictCodec<T, U> {
    fn default() -> Self {
        Self { prost: ProstCodec::default() }
    }
}

impl<T, U> Codec for StrictCodec<T, U>
where
    T: Message + Send + 'static,
    U: Message + Default + Send + 'static,
{
    type Encode = T;
    type Decode = U;
    type Encoder = ProstEncoder<T>;
    type Decoder = StrictDecoder<U>;

    fn encoder(&mut self) -> Self::Encoder {
        self.prost.encoder()
    }

    fn decoder(&mut self) -> Self::Decoder {
        StrictDecoder(self.prost.decoder())
    }
}

#[derive(Debug)]
pub struct StrictDecoder<U>(ProstDecoder<U>);

impl<U: Message + Default> Decoder for StrictDecoder<U> {
    type Item = U;
    type Error = Status;

    fn decode(&mut self, buf: &mut DecodeBuf<'_>) -> Result<Option<U>, Status> {
        self.0.decode(buf).map_err(|status| match status.code() {
            tonic::Code::Internal => {
                Status::invalid_argument(format!("undecodable message: {}", status.message()))
            }
            _ => status,
        })
    }

    fn buffer_settings(&self) -> BufferSettings {
        self.0.buffer_settings()
    }
}

//! Generates the gRPC protocol code with the vendored protoc, so no system protobuf compiler is needed.
fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut config = tonic_prost_build::Config::new();
    config.protoc_executable(protoc_bin_vendored::protoc_bin_path()?);
    // Undecodable requests are INVALID_ARGUMENT, not prost's INTERNAL (see src/codec.rs).
    tonic_prost_build::configure().codec_path("crate::codec::StrictCodec").compile_with_config(
        config,
        &["proto/dirsvc.proto"],
        &["proto"],
    )?;
    Ok(())
}

//! Compiles our `.proto` subsets of Ozone's wire protocols into Rust with
//! `protox` (pure Rust), so building needs no system `protoc`.

use std::path::Path;

const PROTO_DIR: &str = "src/ozone/proto";
const PROTOS: [&str; 6] = [
    "hdds.proto",
    "security.proto",
    "om.proto",
    "datanode.proto",
    "ratis.proto",
    "ratis_grpc.proto",
];

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let files: Vec<_> = PROTOS
        .iter()
        .map(|f| Path::new(PROTO_DIR).join(f))
        .collect();
    for file in &files {
        println!("cargo:rerun-if-changed={}", file.display());
    }
    let descriptors = protox::compile(&files, [PROTO_DIR])?;
    tonic_prost_build::configure()
        .build_server(false)
        .build_transport(false)
        // Chunk data decodes as `Bytes` views into the received frame: no copy.
        .bytes(".hadoop.hdds.datanode")
        // Ratis message contents are large (a chunk of data): no copy either.
        .bytes(".ratis.common")
        .include_file("ozone_protos.rs")
        .compile_fds(descriptors)?;
    Ok(())
}

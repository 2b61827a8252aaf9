# The s3-gateway image: one static binary (musl) on an empty base, run as
# UID/GID 65532. scripts/build-image builds the same image without Docker
# (umoci), and its test boots it; keep the two in step.
#   docker build -t s3-gateway:0.1.0 .
#   docker run -p 9878:9878 s3-gateway:0.1.0

FROM rust:1.95-bookworm AS build
# ring compiles C: musl-gcc for the static target.
RUN rustup target add x86_64-unknown-linux-musl \
    && apt-get update \
    && apt-get install -y --no-install-recommends musl-tools \
    && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN cargo build --release --locked --target x86_64-unknown-linux-musl -p s3-gateway \
    && install -D -m 0555 target/x86_64-unknown-linux-musl/release/s3-gateway /out/s3-gateway \
    && install -d -m 0750 -o 65532 -g 65532 /out/data

FROM scratch
COPY --from=build /out/s3-gateway /s3-gateway
# The default data directory (mount a volume here); nothing else is writable.
COPY --from=build --chown=65532:65532 /out/data /data
USER 65532:65532
EXPOSE 9878
ENTRYPOINT ["/s3-gateway"]
# Replaced by any arguments given (the Helm chart passes --config).
CMD ["--listen", "0.0.0.0:9878", "--data-dir", "/data"]

# syntax=docker/dockerfile:1
# Build stage: the Swift toolchain image, with the two C libraries' headers.
ARG SWIFT_VERSION=6.3
FROM swift:${SWIFT_VERSION}-bookworm AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd-dev libsqlite3-dev zlib1g-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY Package.swift ./
COPY Sources ./Sources
COPY bench/swift ./bench/swift
COPY Tests ./Tests
COPY openapi.yaml ./
RUN swift build -c release --product cartograph --static-swift-stdlib \
 && install -D -m 0755 "$(swift build -c release --show-bin-path)/cartograph" /out/cartograph

# Runtime stage: slim Debian with only the runtime libraries, a non-root user and a data volume.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends libmicrohttpd12 libsqlite3-0 zlib1g ca-certificates curl \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --system --gid 10001 cartograph \
 && useradd --system --uid 10001 --gid cartograph --home-dir /data --shell /usr/sbin/nologin cartograph \
 && mkdir -p /data && chown cartograph:cartograph /data
COPY --from=build /out/cartograph /usr/local/bin/cartograph
USER 10001:10001
ENV CARTOGRAPH_DATA_DIR=/data \
    CARTOGRAPH_PORT=8080
VOLUME ["/data"]
EXPOSE 8080
HEALTHCHECK --interval=10s --timeout=3s --start-period=10s --retries=3 \
  CMD curl -fsS http://127.0.0.1:8080/healthz || exit 1
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/local/bin/cartograph"]
CMD ["serve"]

# Builds rankscope from source on Debian 12 (used by docker-compose.yml).
FROM debian:12
RUN apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
      build-essential pkg-config libnng-dev libuv1-dev liblmdb-dev libprotobuf-c-dev \
      protobuf-c-compiler libjansson-dev libcurl4-openssl-dev node-llhttp zlib1g-dev python3 \
      libmbedtls-dev openssl curl ca-certificates && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN make -j"$(nproc)" all && make install PREFIX=/usr/local

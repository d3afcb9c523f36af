# sharq: a Kafka-compatible broker in one static binary.
#   docker build -t sharq .
#   docker run -p 9092:9092 sharq
# Without access to the base images: bash docker/build.sh sharq (the same
# image from this checkout, offline). cmd/sharq/dockerfile_test.go checks
# these instructions, builds the binary with the same `go build` line and
# checks that docker/build.sh makes the same layout; docs/docker.md says why
# the image is laid out as it is.
#
# Build stage: a static binary (no cgo), stripped, and the file system
# docker/rootfs.sh lays out around it with Debian's static busybox (the
# shell userland the stock Testcontainers modules' start scripts need). The
# Go version is the one in go.mod, pinned to the exact patch release.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
# The schema formats are built without inlining: 0.2 MB off the binary (the
# image stays under 24 MB) for a slower schema parse, which only a
# registration or a compatibility check pays, never a produce or a fetch.
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -gcflags=sharq/schema/avro=-l -gcflags=sharq/schema/jsonschema=-l -gcflags=sharq/schema/protobuf=-l -o /out/sharq ./cmd/sharq
RUN apt-get update -q && apt-get download -q busybox-static \
 && dpkg-deb -x busybox-static_*.deb /tmp/busybox-static && rm busybox-static_*.deb \
 && sh docker/rootfs.sh /out /out/sharq /tmp/busybox-static/bin/busybox

# Run stage: the binary and busybox, as a non-root user (numeric, as
# Kubernetes' runAsNonRoot wants it). The directories the user writes are
# its own: the data volume, the start scripts the modules edit, the working
# directory.
FROM scratch
COPY --from=build /out/rootfs/ /
COPY --from=build --chown=65532:65532 /out/owned/var/lib/sharq /var/lib/sharq
COPY --from=build --chown=65532:65532 /out/owned/etc/confluent/docker /etc/confluent/docker
COPY --from=build --chown=65532:65532 /out/owned/home/sharq /home/sharq
# The configuration is in the apache/kafka image's KAFKA_* convention, each
# variable a default of its own, so that a compose file or a Testcontainers
# module written for Kafka's images replaces exactly what it sets (SHARQ_*
# variables win over KAFKA_* ones). Two listeners, because a Kafka client
# connects to what the broker advertises, not to what it dialled first:
#   PLAINTEXT :9092  for the host (docker run -p 9092:9092), advertised as
#                    localhost:9092; set KAFKA_ADVERTISED_LISTENERS when
#                    the host port or name differs.
#   DOCKER    :29092 for other containers on the same network, advertised
#                    as sharq:29092 (name the container or its network
#                    alias "sharq").
ENV PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
    KAFKA_LOG_DIRS=/var/lib/sharq \
    KAFKA_LISTENERS=PLAINTEXT://0.0.0.0:9092,DOCKER://0.0.0.0:29092 \
    KAFKA_LISTENER_SECURITY_PROTOCOL_MAP=PLAINTEXT:PLAINTEXT,DOCKER:PLAINTEXT \
    KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://localhost:9092,DOCKER://sharq:29092 \
    KAFKA_SCHEMA_REGISTRY_LISTENERS=http://0.0.0.0:8081 \
    KAFKA_SCHEMA_REGISTRY_TOPIC_REPLICATION_FACTOR=1
# The schema registry is on, as in Redpanda's dev container: Confluent's REST
# API on port 8081 (docker run -p 8081:8081; http://sharq:8081 from the
# network). KAFKA_SCHEMA_REGISTRY_LISTENERS= (empty) turns it off.
VOLUME /var/lib/sharq
EXPOSE 9092 29092 8081
WORKDIR /home/sharq
USER 65532:65532
ENTRYPOINT ["/docker-entrypoint.sh"]

# sharq: a Kafka-compatible broker in one static binary.
#   docker build -t sharq .
#   docker run -p 9092:9092 sharq
# cmd/sharq/dockerfile_test.go checks these instructions and builds the
# binary with the same `go build` line.
#
# Build stage: a static binary (no cgo), stripped. The Go version is the one
# in go.mod, pinned to the exact patch release.
FROM golang:1.26.8-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/sharq ./cmd/sharq \
 && mkdir -p /out/data

# Run stage: nothing but the binary, as a non-root user (numeric: scratch
# has no /etc/passwd).
FROM scratch
COPY --from=build /out/sharq /sharq
COPY --from=build --chown=65532:65532 /out/data /var/lib/sharq
# Two listeners, because a Kafka client connects to what the broker
# advertises, not to what it dialled first:
#   PLAINTEXT :9092  for the host (docker run -p 9092:9092), advertised as
#                    localhost:9092; set SHARQ_ADVERTISED_LISTENERS when
#                    the host port or name differs.
#   DOCKER    :29092 for other containers on the same network, advertised
#                    as sharq:29092 (name the container or its network
#                    alias "sharq").
ENV SHARQ_LOG_DIRS=/var/lib/sharq \
    SHARQ_LISTENERS=PLAINTEXT://0.0.0.0:9092,DOCKER://0.0.0.0:29092 \
    SHARQ_LISTENER_SECURITY_PROTOCOL_MAP=PLAINTEXT:PLAINTEXT,DOCKER:PLAINTEXT \
    SHARQ_ADVERTISED_LISTENERS=PLAINTEXT://localhost:9092,DOCKER://sharq:29092
VOLUME /var/lib/sharq
EXPOSE 9092 29092
USER 65532:65532
ENTRYPOINT ["/sharq"]

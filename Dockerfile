# sharq: a Kafka-compatible broker in one static binary.
#   docker build -t sharq .
#   docker run -p 9092:9092 sharq
# Build stage: a static binary (no cgo), stripped.
FROM golang:1.26-bookworm AS build
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
ENV SHARQ_LOG_DIRS=/var/lib/sharq \
    SHARQ_LISTENERS=PLAINTEXT://0.0.0.0:9092 \
    SHARQ_ADVERTISED_LISTENERS=PLAINTEXT://localhost:9092
VOLUME /var/lib/sharq
EXPOSE 9092
USER 65532:65532
ENTRYPOINT ["/sharq"]

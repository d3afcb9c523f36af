#!/usr/bin/env bash
# build.sh TAG: build sharq's image offline from this checkout, the image the
# Dockerfile builds for those who can pull its base images:
#   - the binary with the Dockerfile's `go build` line and the host's Go
#     toolchain (cmd/sharq/dockerfile_test.go checks the two lines match);
#   - Debian's busybox-static, fetched with `apt-get download` into a cache
#     outside the repo (${SHARQ_DOCKER_CACHE:-$HOME/.cache/sharq-docker}), or
#     the static busybox named by SHARQ_BUSYBOX;
#   - docker/rootfs.sh lays out the file system, as in the Dockerfile;
#   - the Dockerfile's final stage (FROM scratch ...) with its sources read
#     from that layout instead of the build stage, so nothing is pulled.
#
#   build.sh --context DIR    writes that build context (rootfs, Dockerfile)
#                             into DIR and builds no image (the layout test)
set -euo pipefail

usage() { echo "usage: docker/build.sh TAG | --context DIR" >&2; exit 2; }
[ $# -eq 1 ] || [ $# -eq 2 ] || usage
context="" tag=""
if [ "$1" = "--context" ]; then
	[ $# -eq 2 ] || usage
	context=$2
else
	[ $# -eq 1 ] || usage
	tag=$1
fi

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cache=${SHARQ_DOCKER_CACHE:-$HOME/.cache/sharq-docker}
die() { echo "build.sh: $*" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
if [ -z "$context" ]; then
	context=$work/context
fi
mkdir -p "$context"

# The binary: the Dockerfile's line, written to the build context.
(cd "$repo" && GOOS=linux CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -gcflags=sharq/schema/avro=-l -gcflags=sharq/schema/jsonschema=-l -gcflags=sharq/schema/protobuf=-l -o "$work/sharq" ./cmd/sharq)

# busybox-static, as the Dockerfile's build stage gets it.
busybox=${SHARQ_BUSYBOX:-}
if [ -z "$busybox" ]; then
	mkdir -p "$cache"
	deb=$(ls "$cache"/busybox-static_*.deb 2>/dev/null | tail -n 1 || true)
	if [ -z "$deb" ]; then
		command -v apt-get >/dev/null 2>&1 || die "no apt-get: set SHARQ_BUSYBOX to a static busybox"
		(cd "$cache" && apt-get download -q busybox-static >&2) ||
			die "apt-get download busybox-static failed (apt-get update first?)"
		deb=$(ls "$cache"/busybox-static_*.deb | tail -n 1)
	fi
	dpkg-deb -x "$deb" "$work/busybox-static"
	busybox=$work/busybox-static/bin/busybox
fi

sh "$repo/docker/rootfs.sh" "$context" "$work/sharq" "$busybox"

# The final stage, reading from the context instead of the build stage.
awk '/^FROM /{stage=$0} stage ~ /^FROM scratch/' "$repo/Dockerfile" |
	sed '/^COPY /{s#--from=build ##;s# /out/# #;}' >"$context/Dockerfile"
grep -q '^FROM scratch' "$context/Dockerfile" || die "the Dockerfile's final stage is not FROM scratch"

if [ -n "$tag" ]; then
	docker build -q -t "$tag" "$context" >/dev/null
	echo "$tag"
fi

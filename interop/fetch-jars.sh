#!/usr/bin/env bash
# fetch-jars.sh - resolve the Apache Kafka jars the interop suite runs into a
# cache outside the repo (nothing downloaded is committed):
#
#   ${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}/kafka-4.4.0/lib          broker + tools + clients
#   ${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}/kafka-clients-4.1.2/lib  Java clients only
#   ${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}/mirror-4.3.1/lib         MirrorMaker 2 (4.3.1)
#
# Idempotent: a set is skipped when its lib/ holds a .complete marker written
# for the current pom.xml; a set is copied into a temp dir and renamed into
# place, so an interrupted run never leaves a half-filled lib/ behind.
# Needs java and mvn; Maven's own local repository (~/.m2) is reused.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}"

die() { echo "fetch-jars.sh: $*" >&2; exit 1; }
command -v mvn >/dev/null 2>&1 || die "mvn not found (apt-get install maven)"
command -v java >/dev/null 2>&1 || die "java not found (apt-get install openjdk-17-jdk-headless)"

mkdir -p "$cache"
stamp="$(sha256sum "$here/pom.xml" | cut -d' ' -f1)"

# Two runs (e.g. two test binaries) must not copy into the same dir at once.
exec 9>"$cache/.fetch.lock"
flock 9

fetch() { # fetch PROFILE DIRNAME
  local profile="$1" dest="$cache/$2/lib"
  if [ -f "$dest/.complete" ] && [ "$(cat "$dest/.complete")" = "$stamp" ]; then
    return 0
  fi
  local tmp
  tmp="$(mktemp -d "$cache/.$2.XXXXXX")"
  echo "fetch-jars.sh: resolving $profile into $dest" >&2
  # Maven 3.8 prints bare colour resets even in batch mode; strip them.
  if ! mvn -q -B --no-transfer-progress -f "$here/pom.xml" -P "$profile" \
      dependency:copy-dependencies -DoutputDirectory="$tmp" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2; then
    rm -rf "$tmp"
    die "mvn failed for profile $profile"
  fi
  ls "$tmp"/*.jar >/dev/null 2>&1 || { rm -rf "$tmp"; die "profile $profile copied no jars"; }
  echo "$stamp" >"$tmp/.complete"
  rm -rf "$dest"
  mkdir -p "$(dirname "$dest")"
  mv "$tmp" "$dest"
}

fetch kafka-4.4.0 kafka-4.4.0
fetch clients-4.1.2 kafka-clients-4.1.2
fetch mirror-4.3.1 mirror-4.3.1
echo "$cache"

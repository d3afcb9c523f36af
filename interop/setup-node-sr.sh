#!/usr/bin/env bash
# setup-node-sr.sh - Confluent's JavaScript schema registry client for the
# schema registry scenario (schema_registry_client.mjs), outside the repo:
#
#   ${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}/node-sr/node_modules
#
# Idempotent: reused while its .complete marker names the pinned version;
# otherwise installed from scratch (the marker is written last, so an
# interrupted run is redone next time). Prints the directory.
set -euo pipefail

pin="@confluentinc/schemaregistry@1.10.1"

cache="${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}"
dir="$cache/node-sr"
die() { echo "setup-node-sr.sh: $*" >&2; exit 1; }
command -v npm >/dev/null 2>&1 || die "npm not found"

mkdir -p "$cache"
exec 9>"$cache/.node-sr.lock"
flock 9

if [ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$pin" ] && [ -d "$dir/node_modules/@confluentinc/schemaregistry" ]; then
  echo "$dir"
  exit 0
fi
echo "setup-node-sr.sh: installing $pin into $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
cd "$dir"
echo '{"name":"sharq-node-sr","private":true,"type":"module"}' >package.json
npm install --no-audit --no-fund --loglevel=error "$pin" >&2 || { rm -rf "$dir"; die "npm install $pin failed"; }
node -e 'require("@confluentinc/schemaregistry")' || { rm -rf "$dir"; die "@confluentinc/schemaregistry does not load"; }
echo "$pin" >"$dir/.complete"
echo "$dir"

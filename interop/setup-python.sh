#!/usr/bin/env bash
# setup-python.sh - the Python virtual environment for the librdkafka scenario
# (rdkafka_client.py), outside the repo:
#
#   ${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}/venv
#
# confluent-kafka ships librdkafka inside its wheel, so no C library or
# compiler is needed. Idempotent: the venv is reused while its .complete
# marker names the pinned version; otherwise it is rebuilt from scratch (the
# marker is written last, so an interrupted run is redone next time).
# Prints the venv's python.
set -euo pipefail

# Pinned after checking it installs here and ships a share consumer
# (confluent_kafka.ShareConsumer, librdkafka 2.16.0). The extras bring the
# schema registry client and its Avro, JSON Schema and Protobuf serializers
# (fastavro, jsonschema, protobuf, httpx) for schema_registry_client.py.
pin="confluent-kafka[avro,json,protobuf,schemaregistry]==2.16.1"

cache="${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}"
venv="$cache/venv"
die() { echo "setup-python.sh: $*" >&2; exit 1; }
py="${PYTHON:-python3}"
command -v "$py" >/dev/null 2>&1 || die "$py not found"

mkdir -p "$cache"
exec 9>"$cache/.venv.lock"
flock 9

if [ -f "$venv/.complete" ] && [ "$(cat "$venv/.complete")" = "$pin" ] && [ -x "$venv/bin/python" ]; then
  echo "$venv/bin/python"
  exit 0
fi
echo "setup-python.sh: installing $pin into $venv" >&2
# A venv records its own path in its scripts, so it is built at its final
# path; the marker is written last and only then is it used.
rm -rf "$venv"
"$py" -m venv "$venv" || die "python3 -m venv failed (apt-get install python3-venv)"
"$venv/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: "$pin" >&2 ||
  { rm -rf "$venv"; die "pip install $pin failed"; }
"$venv/bin/python" -c 'import confluent_kafka, confluent_kafka.schema_registry.avro, confluent_kafka.schema_registry.json_schema, confluent_kafka.schema_registry.protobuf' ||
  { rm -rf "$venv"; die "confluent_kafka (with its schema registry serializers) does not import"; }
echo "$pin" >"$venv/.complete"
echo "$venv/bin/python"

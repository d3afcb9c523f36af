#!/usr/bin/env bash
# Runs franz-go's own kgo integration tests (pkg/kgo of the franz-go version
# in go.mod, from the module cache) against a fresh sharq and a fresh Apache
# Kafka 4.4, with KGO_SEEDS and KGO_TEST_RF=1, and prints the pass counts.
# Slow (minutes per broker): not part of .ci/test.
#
#   interop/kgo-suite.sh            # both brokers
#   interop/kgo-suite.sh sharq      # one
#   interop/kgo-suite.sh kafka '^Test848RegexBrokerResolves$'   # one test
set -euo pipefail
cd "$(dirname "$0")/.."
target="${1:-both}"
export SHARQ_KGO_SUITE_RUN="${2:-}"
out="$(mktemp)"
SHARQ_KGO_SUITE=1 SHARQ_INTEROP_TARGET="$target" SHARQ_KGO_SUITE_OUT="$out" \
	go test ./interop -run '^TestKgoSuite$' -count=1 -v -timeout 75m >&2 || true
cat "$out"
rm -f "$out"

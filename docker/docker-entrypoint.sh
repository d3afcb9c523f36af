#!/bin/sh
# The image's entry point. Kafka's images have none: the stock Testcontainers
# modules replace their command with `sh -c "..."`. So a command runs as
# given, and everything else is sharq's: no arguments, flags (--override
# k=v, --check-config, --help), subcommands (config, version) or a config
# file (/etc/sharq/server.properties, as kafka-server-start.sh takes it).
case "${1-}" in
"" | -*) exec /sharq "$@" ;;
*/*) if [ -f "$1" ] && [ -x "$1" ]; then exec "$@"; fi ;;
*) if command -v "$1" >/dev/null 2>&1; then exec "$@"; fi ;;
esac
exec /sharq "$@"

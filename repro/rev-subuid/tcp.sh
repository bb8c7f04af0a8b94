#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# tcp.sh BUILD [NUIDS] - the per-user TCP port cap (256) is still per
# uid: NUIDS (default 12) uids of ONE subordinate range
# ("nobody:200000:65536", --subuid) each hold 256 TCP ports, together
# the daemon's whole --max-tcp-ports (3072), and another user (uid
# 65533, no range) is refused with ENOSPC.  As root after make; two
# namespaces (scripts/netns.sh), unetctl attach in skb mode in b; every
# holder keeps its ports at most 30 s and is killed at the end.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 2
N=${2:-12}
# shellcheck source=../../scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=../lib.sh
source "$ROOT/repro/lib.sh"
DIR=$(mktemp -d /tmp/rev-subuid-tcp.XXXXXX)
chmod 755 "$DIR"
DAEMON='' PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	[[ -n $DAEMON ]] && kill "$DAEMON" 2>/dev/null
	wait 2>/dev/null
	unet_netns_cleanup
	rm -rf "$DIR"
}
trap cleanup EXIT
unet_netns_setup "rt$$" || exit 1
in_b "$BUILD/unetctl" attach "$IF_B" --mode skb >/dev/null || exit 1
printf 'nobody:200000:65536\n' >"$DIR/subuid"
chmod 644 "$DIR/subuid"
repro_unetd "default kinds emulated tags 1-4000 udp 7000-12999 endpoints 4" --subuid "$DIR/subuid"
as() { ip netns exec "$NS_B" setpriv --reuid="$1" --regid="$1" --clear-groups \
	env UNET_DAEMON_SOCKET="$DIR/unetd.sock" timeout -k 2 40 "${@:2}"; }
total=0
for ((i = 0; i < N; i++)); do
	uid=$((200000 + i))
	as "$uid" "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" $((7000 + i * 400)) 2 200 30 \
		>"$DIR/h$i.log" 2>&1 &
	PIDS+=($!)
	for ((k = 0; k < 100; k++)); do
		grep -q '^held' "$DIR/h$i.log" && break
		sleep 0.1
	done
	h=$(sed -nE 's/^held ([0-9]+).*/\1/p' "$DIR/h$i.log")
	echo "uid $uid (nobody's range): $(grep '^held' "$DIR/h$i.log" || tail -2 "$DIR/h$i.log")"
	total=$((total + ${h:-0}))
done
echo "one range owner's uids hold $total TCP ports (one user may hold 256)"
out=$(as 65533 "$BUILD/tools/unet-tcp-ports" "$IF_B" "$IP_B" 12500 1 10 0 2>&1)
echo "uid 65533 (another user): $out"
[[ $out == *"held 10 "* ]] && exit 0
exit 3

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# run.sh BUILD SCENARIO [K] - the request-cost review's reproducers
# (README.md here).  As root from the source tree after make.  Two
# namespaces a/b (scripts/netns.sh), unetd in b serving 65533 (honest)
# and 65534 (attacker); the attacker gets K (default 8) user+network
# namespaces of its own, each with a veth uq0.  SCENARIO: lockout, reap,
# hangup, connflood, capflood, all, rtnl (not in all) (tool.py's scenarios; "all" runs them in that
# order, reap and hangup each with fresh namespaces).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$(cd "${1:-build}" && pwd) || exit 2
SC=${2:-all}
K=${3:-8}
# shellcheck source=../../scripts/netns.sh
source "$ROOT/scripts/netns.sh"
# shellcheck source=../lib.sh
source "$ROOT/repro/lib.sh"
HERE=$ROOT/repro/rev-cost
DIR=$(mktemp -d /tmp/rev-cost.XXXXXX)
chmod 755 "$DIR"
DAEMON='' HOLDERS=()
cleanup() {
	[[ -n $DAEMON ]] && kill "$DAEMON" 2>/dev/null
	((${#HOLDERS[@]})) && kill "${HOLDERS[@]}" 2>/dev/null
	unet_netns_cleanup
	rm -rf "$DIR"
}
trap cleanup EXIT
unet_netns_setup "rc$$" || exit 1
repro_unetd "user 65534 kinds emulated tags 1-100
user 65533 kinds emulated tags 1-100"
# holders K: K namespaces of 65534's, their /proc paths in NSP
holders() {
	local j i pid
	NSP=()
	for ((j = 0; j < $1; j++)); do
		# shellcheck disable=SC2016
		in_b setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn sh -c '
			ip link add uq0 type veth peer name uq1 && ip link set uq0 up &&
			ip link set uq1 up && echo $$ && exec sleep 60' >"$DIR/h$j.log" 2>&1 &
		HOLDERS+=($!)
		for ((i = 0; i < 100; i++)); do
			pid=$(grep -xE '[0-9]+' "$DIR/h$j.log") && break
			sleep 0.05
		done
		NSP+=("/proc/$pid/ns/net")
	done
}
T=(python3 "$HERE/tool.py" --socket "$DIR/unetd.sock" --daemon-pid "$DAEMON")
case $SC in
lockout | all)
	echo "== lockout: honest 65533, EP_CREATE on $IF_B (daemon's namespace)"
	for r in 1 2 3; do in_b "${T[@]}" lockout --iface "$IF_B"; sleep 0.2; done
	;;&
reap | all)
	holders "$K"
	echo "== reap: attacker 65534 with $K namespaces hangs up throttled; honest 65533 EP_CREATE on $IF_B"
	in_b "${T[@]}" reap --iface "$IF_B" --attacker-netns "${NSP[@]}"
	sleep 2
	echo "-- the same honest request again, nothing pending"
	in_b "${T[@]}" lockout --iface "$IF_B"
	kill "${HOLDERS[@]}" 2>/dev/null
	HOLDERS=()
	sleep 1.5
	;;&
hangup | all)
	holders "$K"
	echo "== hangup: attacker 65534 with $K namespaces hangs up throttled; daemon CPU after"
	in_b "${T[@]}" hangup --attacker-netns "${NSP[@]}"
	kill "${HOLDERS[@]}" 2>/dev/null
	HOLDERS=()
	sleep 3
	;;&
connflood | all)
	echo "== connflood: attacker 65534 connects and hangs up, 1500 a second for 5 s, no request"
	in_b "${T[@]}" connflood --seconds 5 --rate 1500 --after 8
	echo "-- the same from uid 65532, which the policy grants nothing"
	in_b "${T[@]}" connflood --attacker 65532 --seconds 3 --rate 1500 --after 4
	;;&
capflood | all)
	echo "== capflood: attacker 65534 holds 256 connections (its cap), then connects and hangs up as fast as it can for 5 s"
	in_b "${T[@]}" connflood --hold 256 --seconds 5 --after 3
	;;
rtnl)
	echo "== rtnl: honest 65533's EP_CREATE on $IF_B, idle, then while 65534 churns devices in a namespace of its own (RTNL is one lock for all namespaces)"
	in_b "${T[@]}" lockout --iface "$IF_B" >/dev/null
	for r in 1 2; do in_b "${T[@]}" lockout --iface "$IF_B"; sleep 0.3; done
	# shellcheck disable=SC2016
	in_b setpriv --reuid=65534 --regid=65534 --clear-groups unshare -Urn sh -c '
		i=0; while [ $i -lt 1500 ]; do
			echo "link add v$i type veth peer name w$i"; i=$((i + 1))
		done >/tmp/rc-churn.$$; timeout 20 ip -batch /tmp/rc-churn.$$; rm -f /tmp/rc-churn.$$
		echo created; exit 0' >"$DIR/churn.log" 2>&1 &
	CHURN=$!
	HOLDERS+=("$CHURN")
	sleep 0.3
	for r in 1 2 3 4; do in_b "${T[@]}" lockout --iface "$IF_B"; sleep 0.3; done
	wait "$CHURN"
	echo "churn: $(cat "$DIR/churn.log"); the namespace (1500 veth pairs) dies now"
	sleep 0.05
	for r in 1 2 3; do in_b "${T[@]}" lockout --iface "$IF_B"; sleep 0.1; done
	;;
esac
grep -c 'not served any more' "$DIR/unetd.log" | sed 's/^/interfaces freed (log): /'

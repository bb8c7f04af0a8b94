#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# demo.sh BUILD_DIR - `make demo`: U-Net over XDP between two network
# namespaces joined by veth.  Attaches the XDP program on both ends (native
# mode, else skb), measures round trips with examples/pingpong (spinning,
# then blocking), one-way bandwidth with examples/stream, the kernel's own
# path for context, and prints a results table and `unetctl stats`.
# Needs root.  Every process is bounded in time; everything created is
# removed on exit, even on failure.
set -uo pipefail

BUILD=${1:-build}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT" || exit 1
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"

PP_COUNT=${PP_COUNT:-10000}	# round trips per pingpong run
PP_SIZE=${PP_SIZE:-64}		# bytes per ping
ST_COUNT=${ST_COUNT:-200000}	# stream messages
ST_SIZE=${ST_SIZE:-1400}	# bytes per stream message

UNETCTL="$BUILD/unetctl"
PINGPONG="$BUILD/examples/pingpong"
STREAM="$BUILD/examples/stream"

die() {
	echo "demo: $*" >&2
	exit 1
}

for b in "$UNETCTL" "$PINGPONG" "$STREAM"; do
	[[ -x $b ]] || die "missing $b: run 'make all' first"
done
[[ $(id -u) -eq 0 ]] || die "needs root (namespaces, XDP, AF_XDP)"
[[ -r scripts/netns.sh ]] || die "missing scripts/netns.sh"
# shellcheck source=scripts/netns.sh
source scripts/netns.sh

LOGS=$(mktemp -d /tmp/unet-demo.XXXXXX) || die "mktemp failed"
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	unet_netns_cleanup
	rm -rf "$LOGS"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# show_log FILE - the tail of a log, indented, for error reports.
show_log() {
	[[ -s $1 ]] && sed 's/^/    /' "$1" | tail -n 20 >&2
	return 0
}

# kv LINE KEY - the value of KEY=VALUE in LINE.
kv() { sed -n "s/.*[[:space:]]$2=\([^[:space:]]*\).*/\1/p" <<<"$1"; }

# wait_for_line FILE PATTERN PID SECONDS - until FILE has PATTERN, PID
# lives and SECONDS have not passed.
wait_for_line() {
	local i
	for ((i = 0; i < $4 * 20; i++)); do
		grep -q "$2" "$1" 2>/dev/null && return 0
		kill -0 "$3" 2>/dev/null || return 1
		sleep 0.05
	done
	return 1
}

echo "demo: setting up namespaces and veth"
unet_netns_setup "udemo$$" || die "namespace setup failed"
echo "demo: $NS_A/$IF_A ($MAC_A) <-> $NS_B/$IF_B ($MAC_B), pins under $UNET_PIN_ROOT"

# Attach in native (driver) mode, falling back to generic (skb) mode.
# attach MODE - attach the XDP program on both ends in MODE.
attach() {
	in_a "$UNETCTL" attach "$IF_A" --mode "$1" >"$LOGS/attach" 2>&1 &&
		in_b "$UNETCTL" attach "$IF_B" --mode "$1" >>"$LOGS/attach" 2>&1
}
XDP_MODE=native
if ! attach native; then
	echo "demo: native XDP attach failed ($(tail -n 1 "$LOGS/attach")); falling back to skb mode"
	in_a "$UNETCTL" detach "$IF_A" >/dev/null 2>&1
	in_b "$UNETCTL" detach "$IF_B" >/dev/null 2>&1
	XDP_MODE=skb
	attach skb || { show_log "$LOGS/attach"; die "XDP attach in skb mode failed"; }
fi
echo "demo: XDP program attached on both ends in $XDP_MODE mode"

# start_b LOG READY CMD... - start CMD in namespace b, wait for READY in
# its output; leaves the pid in BPID.  Returns 1 if it did not start.
start_b() {
	local log=$1 ready=$2
	shift 2
	unet_bg_b "$@" >"$log" 2>&1
	BPID=$UNET_BG_PID
	wait_for_line "$log" "$ready" "$BPID" 10
}

# run_a LOG SECONDS CMD... - run CMD in namespace a, at most SECONDS.
run_a() {
	local log=$1 secs=$2
	shift 2
	timeout -k 2 "$secs" ip netns exec "$NS_A" "$@" >"$log" 2>&1
}

# run_pingpong MODE - server on b (tag 2), client on a (tag 1); leaves the
# client's rtt_us line in PP_<MODE>.
run_pingpong() {
	local mode=$1 log_s="$LOGS/pp-server-$1" log_c="$LOGS/pp-client-$1" line
	echo "demo: pingpong, $PP_COUNT round trips of $PP_SIZE bytes, $mode"
	start_b "$log_s" "server on" "$PINGPONG" server "$IF_B" --tag 2 --peer "$MAC_A" \
		--peer-tag 1 --count "$PP_COUNT" --"$mode" --timeout 90 ||
		{ show_log "$log_s"; die "pingpong server ($mode) did not start"; }
	run_a "$log_c" 90 "$PINGPONG" client "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 \
		--count "$PP_COUNT" --size "$PP_SIZE" --"$mode" --timeout 60 ||
		{ show_log "$log_c"; show_log "$log_s"; die "pingpong client ($mode) failed"; }
	unet_bg_wait "$BPID" 10 || { show_log "$log_s"; die "pingpong server ($mode) failed"; }
	line=$(grep '^rtt_us' "$log_c") || { show_log "$log_c"; die "no result from pingpong ($mode)"; }
	printf -v "PP_${mode^^}" '%s' "$line"
	sed 's/^/    /' "$log_c"
}
run_pingpong spin
run_pingpong block

echo "demo: stream, $ST_COUNT messages of $ST_SIZE bytes"
start_b "$LOGS/st-recv" "receiving" "$STREAM" recv "$IF_B" --tag 4 --peer "$MAC_A" \
	--peer-tag 3 --timeout 60 ||
	{ show_log "$LOGS/st-recv"; die "stream receiver did not start"; }
run_a "$LOGS/st-send" 60 "$STREAM" send "$IF_A" --tag 3 --peer "$MAC_B" --peer-tag 4 \
	--count "$ST_COUNT" --size "$ST_SIZE" --timeout 50 ||
	{ show_log "$LOGS/st-send"; die "stream sender failed"; }
unet_bg_wait "$BPID" 70 || { show_log "$LOGS/st-recv"; die "stream receiver failed"; }
ST=$(grep '^bw' "$LOGS/st-recv") || { show_log "$LOGS/st-recv"; die "no result from stream"; }
sed 's/^/    /' "$LOGS/st-send" "$LOGS/st-recv"

# The kernel's path between the same namespaces, for context.
KPING=""
echo "demo: kernel ICMP echo (ping), 1000 round trips of $PP_SIZE bytes"
if timeout -k 2 30 ip netns exec "$NS_A" ping -c 1000 -i 0 -q -s "$PP_SIZE" -W 1 "$IP_B" \
	>"$LOGS/ping" 2>&1; then
	# rtt min/avg/max/mdev = 0.021/0.030/0.120/0.010 ms
	KPING=$(sed -n 's|.*= \([0-9.]*\)/\([0-9.]*\)/\([0-9.]*\)/.*|\1 \2 \3|p' "$LOGS/ping")
else
	echo "demo: ping failed (kernel reference omitted)"
	show_log "$LOGS/ping"
fi
KUDP=""
if command -v sockperf >/dev/null 2>&1; then
	echo "demo: kernel UDP round trips (sockperf ping-pong, 3 s)"
	unet_bg_b sockperf server -i "$IP_B" -p 11111 >"$LOGS/sockperf-s" 2>&1
	spid=$UNET_BG_PID
	sleep 0.5
	if timeout -k 2 20 ip netns exec "$NS_A" sockperf ping-pong -i "$IP_B" -p 11111 -t 3 \
		-m "$PP_SIZE" --full-rtt >"$LOGS/sockperf" 2>&1; then
		pct() { sed -n "s/.*$1 = *\([0-9.]*\).*/\1/p" "$LOGS/sockperf" | head -n 1; }
		KUDP="$(pct '<MIN> observation') $(pct 'percentile 50.000') $(pct 'percentile 99.000')"
	else
		echo "demo: sockperf failed (kernel UDP reference omitted)"
		show_log "$LOGS/sockperf"
	fi
	kill -TERM "$spid" 2>/dev/null || true
	unet_bg_wait "$spid" 3 >/dev/null 2>&1 || true
fi

echo
echo "== unet-xdp demo: veth between two namespaces, XDP $XDP_MODE mode =="
printf '%-34s %9s %9s %9s\n' "round trip, $PP_SIZE-byte messages" "min us" "p50 us" "p99 us"
for m in SPIN BLOCK; do
	v="PP_$m"
	printf '%-34s %9s %9s %9s\n' "U-Net, ${m,,}" "$(kv "${!v}" min)" \
		"$(kv "${!v}" p50)" "$(kv "${!v}" p99)"
done
if [[ -n $KUDP ]]; then
	read -r a b c <<<"$KUDP"
	printf '%-34s %9s %9s %9s\n' "kernel UDP (sockperf)" "$a" "$b" "$c"
else
	printf '%-34s %s\n' "kernel UDP" "(sockperf not installed: omitted)"
fi
if [[ -n $KPING ]]; then
	# ping timestamps its replies on arrival in the kernel and prints ms
	# with three decimals: an ICMP echo answered inside the kernel, at
	# 1-us resolution, with no user-level receiver on the far side.
	read -r a b c <<<"$KPING"
	us() { awk -v x="$1" 'BEGIN { printf "%.0f", x * 1000 }'; }
	printf '%-34s min %s, avg %s, max %s us (echo answered by the kernel)\n' \
		"kernel ICMP echo (ping)" "$(us "$a")" "$(us "$b")" "$(us "$c")"
fi
echo
printf 'bandwidth, %s-byte messages: %s Gbit/s, %s msgs/s (received %s of %s, lost %s)\n' \
	"$ST_SIZE" "$(kv "$ST" gbit_s)" "$(kv "$ST" msgs_per_s)" "$(kv "$ST" msgs)" \
	"$(kv "$ST" sent)" "$(kv "$ST" lost)"
echo
echo "unetctl stats $IF_B (receiving side):"
in_b "$UNETCTL" stats "$IF_B" 2>&1 | sed 's/^/    /' || die "unetctl stats failed"
echo "demo: done"
exit 0

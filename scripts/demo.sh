#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# demo.sh BUILD_DIR - `make demo`: U-Net over XDP between two network
# namespaces joined by veth.  Attaches the XDP program on both ends (native
# mode, else skb), measures round trips with examples/pingpong (spinning,
# then blocking), then blocking again with the client run as user nobody
# over an emulated endpoint that unetd serves, one-way bandwidth with
# examples/stream, the kernel's own path for context, and prints a results
# table and `unetctl stats`.
# Needs root.  Every process is bounded in time; everything created is
# removed on exit, even on failure.  The programs run from a copy of the
# build that user nobody can reach (scripts/stage.sh), so the clone may
# sit anywhere, root's 0700 home included.
set -uo pipefail
# What we create for the run (namespaces' /run/netns, pin roots, logs
# other users' programs write beside) gets ordinary modes, whatever the
# caller's umask (077 is common for root).
umask 022

BUILD=${1:-build}
HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
cd "$ROOT" || exit 1
[[ $BUILD = /* ]] || BUILD="$ROOT/$BUILD"

PP_COUNT=${PP_COUNT:-10000}	# round trips per pingpong run
PP_SIZE=${PP_SIZE:-64}		# bytes per ping
ST_COUNT=${ST_COUNT:-200000}	# stream messages
ST_SIZE=${ST_SIZE:-1400}	# bytes per stream message
SP_SECS=${SP_SECS:-3}		# seconds of kernel UDP round trips (sockperf)

NOBODY=65534	# the unprivileged user of the unetd run

die() {
	echo "demo: $*" >&2
	exit 1
}

for b in unetctl unetd examples/pingpong examples/stream unet-bench; do
	[[ -x $BUILD/$b ]] || die "missing $BUILD/$b: run 'make all' first"
done
[[ $(id -u) -eq 0 ]] || die "needs root (namespaces, XDP, AF_XDP)"
for f in scripts/netns.sh scripts/stage.sh; do
	[[ -r $f ]] || die "missing $f"
done
# shellcheck source=scripts/netns.sh
source scripts/netns.sh
# shellcheck source=scripts/stage.sh
source scripts/stage.sh

LOGS=$(mktemp -d /tmp/unet-demo.XXXXXX) || die "mktemp failed"
UNETD_DIR=""	# unetd's socket and policy (made by run_pingpong_unetd)
# shellcheck disable=SC2317 # called from the EXIT trap
cleanup() {
	unet_netns_cleanup	# also stops unetd if it still runs (started with unet_bg_b)
	rm -rf "$LOGS"
	[[ -n $UNETD_DIR ]] && rm -rf "$UNETD_DIR"
	unet_stage_remove
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# Another demo at the same time works (its namespaces, pins and sockets
# are its own) but shares the CPUs: say so beside the figures.
exec {DEMO_LOCK}>>/run/unet-demo.lock
BUSY=""
flock -n "$DEMO_LOCK" || BUSY="another demo ran at the same time: these figures share its CPUs"
[[ -n $BUSY ]] && echo "demo: note: $BUSY"

unet_stage "$BUILD" || die "cannot copy the programs where user nobody can run them"
UNETCTL="$UNET_STAGE/unetctl"
UNETD="$UNET_STAGE/unetd"
PINGPONG="$UNET_STAGE/examples/pingpong"
STREAM="$UNET_STAGE/examples/stream"

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

# run_pingpong_unetd - the blocking pingpong again, its client in b run
# as user nobody: not root, so the library asks unetd for an emulated
# endpoint (same program, same API).  unetd runs in b with a policy of
# its own that grants nobody emulated endpoints and the demo's tags; its
# socket sits in a fresh root-owned 0755 directory, which unetd requires
# and nobody can reach.  Leaves the client's rtt_us line in PP_UNETD and
# stops the daemon.
run_pingpong_unetd() {
	local log_d="$LOGS/unetd" log_s="$LOGS/pp-server-unetd" log_c="$LOGS/pp-client-unetd"
	local line dpid rc
	echo "demo: pingpong, $PP_COUNT round trips of $PP_SIZE bytes, block, client as uid $NOBODY over unetd"
	UNETD_DIR=$(mktemp -d /tmp/unet-demo-unetd.XXXXXX) || die "mktemp failed"
	chmod 755 "$UNETD_DIR"
	printf '%s\n' "# the demo's: uid $NOBODY gets emulated endpoints and tags 1-4" \
		"user $NOBODY kinds emulated tags 1-4 endpoints 2 segment 16M" >"$UNETD_DIR/policy"
	chmod 644 "$UNETD_DIR/policy"
	start_b "$log_d" "unetd: info: ready" "$UNETD" --foreground --socket "$UNETD_DIR/unetd.sock" \
		--policy "$UNETD_DIR/policy" --pin-root "$UNET_PIN_ROOT" ||
		{ show_log "$log_d"; die "unetd did not start"; }
	dpid=$BPID
	unet_bg_a "$PINGPONG" server "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 \
		--count "$PP_COUNT" --block --timeout 90 >"$log_s" 2>&1
	wait_for_line "$log_s" "server on" "$UNET_BG_PID" 10 ||
		{ show_log "$log_s"; die "pingpong server (unetd run) did not start"; }
	timeout -k 2 90 ip netns exec "$NS_B" setpriv --reuid="$NOBODY" --regid="$NOBODY" \
		--clear-groups env UNET_DAEMON_SOCKET="$UNETD_DIR/unetd.sock" \
		"$PINGPONG" client "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 \
		--count "$PP_COUNT" --size "$PP_SIZE" --block --timeout 60 >"$log_c" 2>&1 ||
		{ show_log "$log_c"; show_log "$log_s"; show_log "$log_d"; die "pingpong client as uid $NOBODY failed"; }
	unet_bg_wait "$UNET_BG_PID" 10 || { show_log "$log_s"; die "pingpong server (unetd run) failed"; }
	line=$(grep '^rtt_us' "$log_c") || { show_log "$log_c"; die "no result from pingpong over unetd"; }
	PP_UNETD=$line
	sed 's/^/    /' "$log_c"
	kill -TERM "$dpid" 2>/dev/null
	unet_bg_wait "$dpid" 5
	rc=$?
	((rc == 0)) || { show_log "$log_d"; die "unetd did not stop cleanly on SIGTERM (exit $rc)"; }
	grep -q 'unetd: info: stopped' "$log_d" || { show_log "$log_d"; die "unetd did not say it stopped"; }
	echo "demo: unetd stopped"
}
run_pingpong_unetd

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
	echo "demo: kernel UDP round trips (sockperf ping-pong, $SP_SECS s)"
	unet_bg_b sockperf server -i "$IP_B" -p 11111 >"$LOGS/sockperf-s" 2>&1
	spid=$UNET_BG_PID
	# Until its socket is bound (the client's first message would be lost).
	for ((i = 0; i < 100; i++)); do
		[[ -n $(ip netns exec "$NS_B" ss -Hlun 'sport = :11111') ]] && break
		kill -0 "$spid" 2>/dev/null || break
		sleep 0.05
	done
	if timeout -k 2 $((SP_SECS + 17)) ip netns exec "$NS_A" sockperf ping-pong -i "$IP_B" -p 11111 -t "$SP_SECS" \
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
printf '%-34s %9s %9s %9s\n' "U-Net, block, nobody via unetd" "$(kv "$PP_UNETD" min)" \
	"$(kv "$PP_UNETD" p50)" "$(kv "$PP_UNETD" p99)"
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

# TCP over U-Net beside the kernel's TCP (docs/tcp.md): unet-bench's
# unet-tcp transport (lwIP on both ends' endpoints) against its tcp one
# (kernel sockets), same framing, same loop: a 64-byte round trip and a
# bulk transfer over one connection.
BENCH="$UNET_STAGE/unet-bench"
tcp_args() { # TRANSPORT SIDE
	local ip=$IP_A port=7301 ifn=$IF_A
	[[ $2 == b ]] && ip=$IP_B port=7300 ifn=$IF_B
	[[ $1 == unet-tcp ]] && echo "--iface $ifn --xdp-mode $XDP_MODE --local $ip:$port" ||
		echo "--local $ip:$port"
}
declare -A TCP_RES
for t in unet-tcp tcp; do
	echo "demo: TCP ($t): $PP_COUNT round trips of 64 bytes, spinning; then a bulk transfer"
	# shellcheck disable=SC2046
	start_b "$LOGS/tcp-echo-$t" "ready" "$BENCH" echo --transport "$t" $(tcp_args "$t" b) \
		--mode spin --timeout 60 || { show_log "$LOGS/tcp-echo-$t"; die "TCP echo ($t) did not start"; }
	# shellcheck disable=SC2046
	run_a "$LOGS/tcp-pp-$t" 60 "$BENCH" pingpong --transport "$t" $(tcp_args "$t" a) \
		--remote "$IP_B:7300" --mode spin --size 64 --count "$PP_COUNT" --timeout 50 ||
		{ show_log "$LOGS/tcp-pp-$t"; die "TCP pingpong ($t) failed"; }
	unet_bg_wait "$BPID" 10 || true
	TCP_RES[$t,p50]=$(grep '^{' "$LOGS/tcp-pp-$t" | jq -r 'select(.test == "pingpong") | .p50_us')
	# shellcheck disable=SC2046
	start_b "$LOGS/tcp-sink-$t" "ready" "$BENCH" sink --transport "$t" $(tcp_args "$t" b) \
		--mode spin --size 1400 --idle-ms 2000 --timeout 60 ||
		{ show_log "$LOGS/tcp-sink-$t"; die "TCP sink ($t) did not start"; }
	# shellcheck disable=SC2046
	run_a "$LOGS/tcp-src-$t" 60 "$BENCH" source --transport "$t" $(tcp_args "$t" a) \
		--remote "$IP_B:7300" --mode spin --size 1400 --count "$ST_COUNT" --timeout 50 ||
		{ show_log "$LOGS/tcp-src-$t"; die "TCP source ($t) failed"; }
	unet_bg_wait "$BPID" 20 || { show_log "$LOGS/tcp-sink-$t"; die "TCP sink ($t) failed"; }
	TCP_RES[$t,gbit]=$(grep '^{' "$LOGS/tcp-sink-$t" | jq -r 'select(.test == "rate") | .gbit_s' | tail -1)
done
echo
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b + 0 > 0) printf "%.2fx", a / b; else print "-" }'; }
printf 'TCP round trip, 64 B, spin, p50: U-Net %s us, kernel %s us (%s)\n' "${TCP_RES[unet-tcp,p50]}" \
	"${TCP_RES[tcp,p50]}" "$(ratio "${TCP_RES[unet-tcp,p50]}" "${TCP_RES[tcp,p50]}")"
printf 'TCP bulk, one connection: U-Net %s Gbit/s, kernel %s Gbit/s (%s; U-Net: 64 KiB window, 1500-byte frames)\n' \
	"${TCP_RES[unet-tcp,gbit]}" "${TCP_RES[tcp,gbit]}" "$(ratio "${TCP_RES[unet-tcp,gbit]}" "${TCP_RES[tcp,gbit]}")"
echo
echo "unetctl stats $IF_B (receiving side):"
in_b "$UNETCTL" stats "$IF_B" 2>&1 | sed 's/^/    /' || die "unetctl stats failed"
[[ -n $BUSY ]] && echo "demo: note: $BUSY"
echo "demo: done"
exit 0

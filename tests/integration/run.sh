#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
#
# run.sh - the unet-xdp namespace test suite.
#
#   tests/integration/run.sh [--build DIR] [--mode native|skb|both] [--list] [NAME...]
#
# Every test runs in its own pair of network namespaces joined by a veth
# (scripts/netns.sh), with its own bpffs pin root, in its own process
# session with a time limit; whatever happens, the namespaces, mounts and
# processes it made are removed.  Tests that exercise the data path run
# once per XDP mode (NAME/native, NAME/skb).  NAME selects a test in every
# selected mode ("integrity") or one mode ("integrity/skb").
#
# Output: one "PASS name", "FAIL name: reason" or "SKIP name: reason"
# line per test (with the log's tail on failure) and a last line
# "N passed, N failed, N skipped".  Exit 1 if any failed, 2 on usage
# errors.  A test that lacks a kernel feature is skipped, never passed.
#
# Environment: UNET_FLOOD_RATE (flood100k messages/s, default 50000),
# UNET_TEST_KEEP_LOGS=1 (keep the per-test logs, path printed at the end).

set -u

SELF=$(readlink -f "${BASH_SOURCE[0]}")
ROOT=$(cd "$(dirname "$SELF")/../.." && pwd)
# shellcheck source=../../scripts/netns.sh
source "$ROOT/scripts/netns.sh"

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS=(
	"integrity|xdp|120|every payload size 1..max_payload (MTU 1500), both directions, byte for byte"
	"flood100k|xdp|120|100000 paced messages each way at once, none lost or duplicated"
	"isolation|xdp|90|two endpoints in two processes of one namespace get only their own channels"
	"spoof|xdp|90|spoofed MAC/tag, unknown tag, bad version, truncated/bad length: dropped and counted"
	"multiqueue|xdp|120|4-queue veth, a sender per queue, the 4-socket receiver gets everything"
	"sigkill|xdp|90|SIGKILLed owner: channel stale, tag reusable, unetctl reclaim cleans up"
	"arp_ping|xdp|60|ping and ARP work with the program attached; pass counter moves"
	"cli_errors|-|90|unetctl one-line errors with exit 1; --help exits 0"
	"api_errors|-|90|public API rejects invalid arguments (build/tests/test_api_errors)"
	"datapath|xdp|120|send/recv/free queues, wait, poll fd, upcalls, admin channels, destroy (test_datapath)"
	"core_hardening|xdp|180|racing slot claims over a dead owner, oversize payloads, handler closing its channel, interface deleted, unsafe and swapped pins (test_core_hardening)"
	"uam|xdp|150|Active Messages: 100k requests at 10% loss (+5% dup/reorder), 64 MiB store+get at 5% loss, stalled receiver, SIGKILLed peer (test_uam)"
	"uam_kv|-|60|examples/kv: put/get over UAM between two namespaces at 10% injected loss"
	"bench_smoke|-|180|unet-bench --quick: output has the expected form"
	"udp_sizes|xdp|150|U-Net UDP <-> kernel UDP, every size 1..1472 both ways byte for byte, with and without tx checksum offload (partial checksums)"
	"udp_ports|xdp|120|UDP ports on one host each reach their own endpoint (disjoint queues); other ports, ping still reach the kernel; unetctl udp list/del"
	"udp_arp|xdp|90|U-Net-owned address: the endpoint answers ARP; cache expiry re-resolves; kernel-owned address: the kernel answers"
	"udp_bad|xdp|90|bad IP/UDP checksums, truncated headers, fragments, filtered sources: never delivered as data, each counted"
	"udp_sigkill|xdp|60|SIGKILLed UDP owner: port stale, reclaimed, the kernel gets the port back"
)

usage() {
	echo "usage: $0 [--build DIR] [--mode native|skb|both] [--list] [NAME[/MODE]...]"
}

# ---- helpers used inside a test (they run in the test's own shell) --------

# fail MSG: end the test as failed.
fail() {
	echo "FAIL: $*"
	echo "$*" >"$T_DIR/reason"
	exit 1
}

# skip MSG: end the test as skipped (a missing kernel feature, not a pass).
skip() {
	echo "SKIP: $*"
	echo "$*" >"$T_DIR/reason"
	exit 77
}

# note MSG: a line in the test's log.
note() { echo "--- $*"; }

# Extra cleanup steps of a test, run before the namespaces go.
T_CLEANUP=()
t_cleanup() {
	local c
	for c in "${T_CLEANUP[@]}"; do
		eval "$c" || true
	done
	T_CLEANUP=()
	unet_netns_cleanup
}

# setup_ns [NQUEUES]: the namespaces of this test.
setup_ns() {
	grep -qw bpf /proc/filesystems || skip "this kernel has no bpffs"
	unet_netns_setup "u$$" "${1:-1}" || fail "namespace setup failed"
	note "namespaces $NS_A/$NS_B, $IF_A ($MAC_A) <-> $IF_B ($MAC_B), pin root $UNET_PIN_ROOT"
}

ctl_a() { in_a "$UNETCTL" "$@"; }
ctl_b() { in_b "$UNETCTL" "$@"; }

# attach SIDE: attach the program to that side's interface in $T_MODE and
# check that status reports that mode.  Skips when the mode is missing.
attach() {
	local side=$1 ifname out rc mode
	[[ $side == a ]] && ifname=$IF_A || ifname=$IF_B
	out=$(in_"$side" "$UNETCTL" attach "$ifname" --mode "$T_MODE" 2>&1)
	rc=$?
	echo "$out"
	if ((rc != 0)); then
		if grep -qiE 'not supported|EOPNOTSUPP' <<<"$out"; then
			skip "XDP $T_MODE mode not supported on veth here: $out"
		fi
		fail "unetctl attach $ifname --mode $T_MODE failed (rc $rc): $out"
	fi
	mode=$(in_"$side" "$UNETCTL" --json status "$ifname" |
		jq -r '[.. | objects | select(has("mode")) | .mode] | first // empty')
	[[ $mode == "$T_MODE" ]] || fail "status of $ifname says mode '$mode', want $T_MODE"
}

# counter SIDE NAME: one interface counter from `unetctl --json stats`.
counter() {
	local side=$1 name=$2 ifname v
	[[ $side == a ]] && ifname=$IF_A || ifname=$IF_B
	v=$(in_"$side" "$UNETCTL" --json stats "$ifname" |
		jq -r --arg k "$name" '[.. | objects | select(has($k)) | .[$k]] | first // empty')
	[[ $v =~ ^[0-9]+$ ]] || fail "unetctl --json stats $ifname has no counter '$name' (got '$v')"
	echo "$v"
}

# expect_stat SIDE NAME VALUE: the counter reaches VALUE within 3 s and
# stays there (not above).
expect_stat() {
	local side=$1 name=$2 want=$3 v i
	for ((i = 0; i < 30; i++)); do
		v=$(counter "$side" "$name") || exit 1
		((v >= want)) && break
		sleep 0.1
	done
	((v == want)) || fail "counter $name on side $side is $v, want $want"
	note "counter $name on side $side = $v"
}

# channel_json SIDE: `unetctl --json channel list` of that side, as an
# array of channel objects.
channel_json() {
	local side=$1 ifname
	[[ $side == a ]] && ifname=$IF_A || ifname=$IF_B
	in_"$side" "$UNETCTL" --json channel list "$ifname" |
		jq -c '[.. | objects | select(has("tag") and has("peer_tag"))]' ||
		fail "unetctl --json channel list $ifname failed"
}

# chan_field SIDE TAG FIELD: FIELD of channel TAG ("" if there is none).
chan_field() {
	channel_json "$1" | jq -r --argjson t "$2" --arg f "$3" \
		'[.[] | select(.tag == $t)] | first | if . == null then "" else (.[$f] | tostring) end'
}

# endpoint_json SIDE: `unetctl --json endpoint list`, as an array.
endpoint_json() {
	local side=$1 ifname
	[[ $side == a ]] && ifname=$IF_A || ifname=$IF_B
	in_"$side" "$UNETCTL" --json endpoint list "$ifname" |
		jq -c '[.. | objects | select(has("id") and has("pid") and has("comm"))
			| .nqueues = (.nqueues // .queues)]' ||
		fail "unetctl --json endpoint list $ifname failed"
}

# wait_ready LOG PID [TIMEOUT]: wait for the tool's "ready" line; print
# its endpoint id.
wait_ready() {
	local log=$1 pid=$2 t=${3:-15} i
	for ((i = 0; i < t * 20; i++)); do
		if grep -q '^ready ' "$log" 2>/dev/null; then
			sed -n 's/^ready endpoint=\([0-9]*\).*/\1/p' "$log" | head -1
			return 0
		fi
		if ! kill -0 "$pid" 2>/dev/null; then
			echo "--- $log:" >&2
			cat "$log" >&2
			fail "process $pid exited before it was ready (see above)"
		fi
		sleep 0.05
	done
	cat "$log" >&2
	fail "process $pid not ready after ${t}s"
}

# finish PID LOG TIMEOUT WHAT: wait for a background tool, fail if it did
# not exit 0.
finish() {
	local pid=$1 log=$2 t=$3 what=$4 rc
	unet_bg_wait "$pid" "$t"
	rc=$?
	echo "--- $what ($log), exit $rc:"
	cat "$log"
	((rc == 0)) || fail "$what exited with $rc"
}

# stop PID LOG WHAT: SIGTERM a holding tool and require exit 0.
stop() {
	kill -TERM "$1" 2>/dev/null
	finish "$1" "$2" 10 "$3"
}

# ---- the tests ------------------------------------------------------------

t_integrity() {
	setup_ns
	attach a
	attach b
	local dir pid log want=1492 max
	# A -> B -> A, then B -> A -> B, on fresh channels each time.
	for dir in ab ba; do
		local s=a e=b st=1 et=2
		[[ $dir == ba ]] && { s=b e=a st=4 et=3; }
		local smac emac
		local sif eif
		if [[ $s == a ]]; then
			smac=$MAC_A emac=$MAC_B sif=$IF_A eif=$IF_B
		else
			smac=$MAC_B emac=$MAC_A sif=$IF_B eif=$IF_A
		fi
		log=$T_DIR/echo_$dir.log
		unet_bg_"$e" "$PEER" echo "$eif" --tag "$et" --peer "$smac" --peer-tag "$st" \
			--xdp-mode "$T_MODE" --timeout 90 >"$log" 2>&1
		pid=$UNET_BG_PID
		wait_ready "$log" "$pid" >/dev/null
		max=$(sed -n 's/^ready .*max_payload=\([0-9]*\).*/\1/p' "$log")
		[[ $max == "$want" ]] || fail "max_payload is '$max', want $want for MTU 1500"
		in_"$s" "$PEER" sizes "$sif" --tag "$st" --peer "$emac" --peer-tag "$et" \
			--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/sizes_$dir.log" 2>&1
		local rc=$?
		cat "$T_DIR/sizes_$dir.log"
		((rc == 0)) || fail "sizes $s -> $e exited with $rc"
		grep -qx "sizes ok 1..$want" "$T_DIR/sizes_$dir.log" ||
			fail "sizes $s -> $e did not report 'sizes ok 1..$want'"
		stop "$pid" "$log" "echo on $e"
		grep -qx "echo echoed=$want foreign=0" "$log" || fail "echo on $e did not echo exactly $want"
	done
	# Each side received want messages in each round.
	expect_stat a delivered $((2 * want))
	expect_stat b delivered $((2 * want))
	local c
	for c in drop_malformed drop_version drop_unknown_tag drop_wrong_src drop_no_socket; do
		expect_stat a "$c" 0
		expect_stat b "$c" 0
	done
}

# Queues on veth.  The kernel allows one UMEM per queue, so two processes
# with endpoints on one interface bind disjoint queues, and a frame must
# arrive on a queue of its channel's endpoint.  On veth a frame sent on tx
# queue q arrives on rx queue q of the peer in native mode, but on rx
# queue max(q-1, 0) in skb mode (veth_xmit leaves skb->queue_mapping as
# the tx queue, which generic XDP reads as "recorded rx queue + 1").  The
# layouts below work with both: each receiver binds both queues a frame
# may land on.

t_flood100k() {
	# a: receiver on queues 0-1, sender on 2 (sends on tx queue 2,
	#    arriving on b's queue 2 or 1);
	# b: receiver on queues 1-2, sender on 0 (tx queue 0 -> a's queue 0).
	setup_ns 3
	attach a
	attach b
	local n=100000 rate=${UNET_FLOOD_RATE:-50000} t
	t=$((n / rate + 30))
	unet_bg_b "$PEER" recv "$IF_B" --tag 21 --peer "$MAC_A" --peer-tag 11 --count $n \
		--queue-mask 0x6 --xdp-mode "$T_MODE" --timeout $((t + 10)) >"$T_DIR/recv_b.log" 2>&1
	local rb=$UNET_BG_PID
	unet_bg_a "$PEER" recv "$IF_A" --tag 12 --peer "$MAC_B" --peer-tag 22 --count $n \
		--queue-mask 0x3 --xdp-mode "$T_MODE" --timeout $((t + 10)) >"$T_DIR/recv_a.log" 2>&1
	local ra=$UNET_BG_PID
	wait_ready "$T_DIR/recv_b.log" "$rb" >/dev/null
	wait_ready "$T_DIR/recv_a.log" "$ra" >/dev/null
	unet_bg_a "$PEER" send "$IF_A" --tag 11 --peer "$MAC_B" --peer-tag 21 --count $n \
		--queue-mask 0x4 --queue 2 --rate "$rate" --size 64 --xdp-mode "$T_MODE" \
		--timeout $t >"$T_DIR/send_a.log" 2>&1
	local sa=$UNET_BG_PID
	unet_bg_b "$PEER" send "$IF_B" --tag 22 --peer "$MAC_A" --peer-tag 12 --count $n \
		--queue-mask 0x1 --queue 0 --rate "$rate" --size 64 --xdp-mode "$T_MODE" \
		--timeout $t >"$T_DIR/send_b.log" 2>&1
	local sb=$UNET_BG_PID
	finish "$sa" "$T_DIR/send_a.log" $((t + 5)) "sender a"
	finish "$sb" "$T_DIR/send_b.log" $((t + 5)) "sender b"
	finish "$rb" "$T_DIR/recv_b.log" $((t + 15)) "receiver b"
	finish "$ra" "$T_DIR/recv_a.log" $((t + 15)) "receiver a"
	grep -q "^recv received=$n lost=0 dup=0 bad=0 foreign=0 " "$T_DIR/recv_b.log" ||
		fail "receiver b did not get exactly $n"
	grep -q "^recv received=$n lost=0 dup=0 bad=0 foreign=0 " "$T_DIR/recv_a.log" ||
		fail "receiver a did not get exactly $n"
	expect_stat a delivered $n
	expect_stat b delivered $n
	expect_stat a drop_no_socket 0
	expect_stat b drop_no_socket 0
}

t_isolation() {
	# One UMEM per queue: endpoints of different processes on one
	# interface bind disjoint queues: p1 queue 0, p3 queue 1, p2 queues
	# 2-3 (p2's traffic is sent on tx queue 3: see "Queues on veth").
	setup_ns 4
	attach a
	attach b
	local n=2000 k=200
	# Two receivers and a bystander, all in namespace b.
	unet_bg_b "$PEER" recv "$IF_B" --channels "10:110:$MAC_A,11:111:$MAC_A" --count $n \
		--queue-mask 0x1 --xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/p1.log" 2>&1
	local p1=$UNET_BG_PID
	unet_bg_b "$PEER" recv "$IF_B" --channels "20:120:$MAC_A,21:121:$MAC_A" --count $n \
		--queue-mask 0xc --xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/p2.log" 2>&1
	local p2=$UNET_BG_PID
	unet_bg_b "$PEER" hold "$IF_B" --tag 30 --peer "$MAC_A" --peer-tag 130 --expect-none \
		--queue-mask 0x2 --xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/p3.log" 2>&1
	local p3=$UNET_BG_PID
	local e1 e2 e3
	e1=$(wait_ready "$T_DIR/p1.log" "$p1") || exit 1
	e2=$(wait_ready "$T_DIR/p2.log" "$p2") || exit 1
	e3=$(wait_ready "$T_DIR/p3.log" "$p3") || exit 1
	note "endpoints: p1=$e1 p2=$e2 p3=$e3"
	[[ $e1 != "$e2" && $e1 != "$e3" && $e2 != "$e3" ]] || fail "endpoint ids not distinct: $e1 $e2 $e3"
	# The maps say who owns what.
	local tag want
	for tag in 10 11 20 21 30; do
		case $tag in 1?) want=$e1 ;; 2?) want=$e2 ;; *) want=$e3 ;; esac
		[[ $(chan_field b $tag endpoint) == "$want" ]] ||
			fail "channel $tag owned by endpoint '$(chan_field b $tag endpoint)', want $want"
	done
	# Frames for p2's channel that arrive on p1's queue must not reach
	# p1: the program drops them (drop_no_socket).
	in_a "$PEER" send "$IF_A" --channels "120:20:$MAC_B/0" --count $k --rate 20000 \
		--xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/send0.log" 2>&1 ||
		{ cat "$T_DIR/send0.log"; fail "misrouting sender failed"; }
	cat "$T_DIR/send0.log"
	expect_stat b drop_no_socket $k
	expect_stat b delivered 0
	[[ $(chan_field b 20 drop_no_socket) == "$k" ]] ||
		fail "channel 20 drop_no_socket is '$(chan_field b 20 drop_no_socket)', want $k"
	# One sender in a feeds the four channels of p1 and p2, each on the
	# queue of its receiver.
	in_a "$PEER" send "$IF_A" \
		--channels "110:10:$MAC_B/0,111:11:$MAC_B/0,120:20:$MAC_B/3,121:21:$MAC_B/3" \
		--count $n --rate 20000 --xdp-mode "$T_MODE" --timeout 30 >"$T_DIR/send.log" 2>&1 ||
		{ cat "$T_DIR/send.log"; fail "sender failed"; }
	cat "$T_DIR/send.log"
	finish "$p1" "$T_DIR/p1.log" 30 "receiver p1"
	finish "$p2" "$T_DIR/p2.log" 30 "receiver p2"
	for tag in 10 11 20 21; do
		grep -q "^recv tag=$tag received=$n lost=0 dup=0 bad=0" "$T_DIR"/p[12].log ||
			fail "channel $tag did not get exactly $n"
	done
	[[ $(chan_field b 30 delivered) == 0 ]] || fail "bystander channel 30 delivered $(chan_field b 30 delivered)"
	stop "$p3" "$T_DIR/p3.log" "bystander p3"
	grep -qx "hold received=0 foreign=0" "$T_DIR/p3.log" || fail "bystander received something"
	expect_stat b delivered $((4 * n))
	expect_stat b drop_no_socket $k
}

t_spoof() {
	setup_ns
	attach b
	local k=5 bogus=02:00:5e:00:53:99
	unet_bg_b "$PEER" hold "$IF_B" --tag 10 --peer "$MAC_A" --peer-tag 110 --expect 1 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/hold.log" 2>&1
	local h=$UNET_BG_PID
	wait_ready "$T_DIR/hold.log" "$h" >/dev/null
	inj() { in_a "$INJECT" "$IF_A" --dst-mac "$MAC_B" "$@" || fail "unet-inject $* failed"; }

	note "spoofed source MAC"
	inj --src-mac $bogus --dst-tag 10 --src-tag 110 --count $k
	expect_stat b drop_wrong_src $k
	note "spoofed source tag"
	inj --dst-tag 10 --src-tag 111 --count $k
	expect_stat b drop_wrong_src $((2 * k))
	[[ $(chan_field b 10 drop_wrong_src) == $((2 * k)) ]] ||
		fail "channel 10 drop_wrong_src is '$(chan_field b 10 drop_wrong_src)', want $((2 * k))"
	note "unknown tag"
	inj --dst-tag 999 --src-tag 110 --count $k
	expect_stat b drop_unknown_tag $k
	note "bad version"
	inj --version 2 --dst-tag 10 --src-tag 110 --count $k
	expect_stat b drop_version $k
	note "truncated header"
	inj --dst-tag 10 --src-tag 110 --truncate 18 --count $k
	expect_stat b drop_malformed $k
	note "length field beyond the frame"
	inj --dst-tag 10 --src-tag 110 --len 32 --hdr-len 1400 --count $k
	expect_stat b drop_malformed $((2 * k))
	expect_stat b delivered 0
	[[ $(chan_field b 10 delivered) == 0 ]] || fail "channel 10 delivered a spoofed frame"
	grep -q '^got ' "$T_DIR/hold.log" && fail "the endpoint received a spoofed frame"

	note "control: one well-formed frame is delivered"
	inj --dst-tag 10 --src-tag 110 --len 32
	expect_stat b delivered 1
	[[ $(chan_field b 10 delivered) == 1 ]] || fail "channel 10 delivered '$(chan_field b 10 delivered)', want 1"
	local i
	for ((i = 0; i < 40; i++)); do
		grep -q '^got ' "$T_DIR/hold.log" && break
		sleep 0.05
	done
	stop "$h" "$T_DIR/hold.log" "holder"
	grep -qx "got tag=10 len=32" "$T_DIR/hold.log" || fail "the control frame did not arrive as 32 bytes on tag 10"
	# Nothing else moved.
	expect_stat b drop_wrong_src $((2 * k))
	expect_stat b drop_unknown_tag $k
	expect_stat b drop_version $k
	expect_stat b drop_malformed $((2 * k))
}

t_multiqueue() {
	setup_ns 4
	attach a
	attach b
	local n=5000 q chans="" senders=()
	for q in 0 1 2 3; do
		chans+="${chans:+,}$((200 + q)):$((100 + q)):$MAC_A"
	done
	unet_bg_b "$PEER" recv "$IF_B" --channels "$chans" --count $n --queues 4 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/recv.log" 2>&1
	local r=$UNET_BG_PID e
	e=$(wait_ready "$T_DIR/recv.log" "$r") || exit 1
	local nq
	nq=$(endpoint_json b | jq -r --argjson id "$e" '[.[] | select(.id == $id)] | first | .nqueues // empty')
	[[ $nq == 4 ]] || fail "endpoint list shows receiver endpoint $e with nqueues '$nq', want 4"
	for q in 0 1 2 3; do
		unet_bg_a "$PEER" send "$IF_A" --tag $((100 + q)) --peer "$MAC_B" --peer-tag $((200 + q)) \
			--queue-mask $((1 << q)) --queue $q --count $n --rate 10000 --xdp-mode "$T_MODE" --timeout 30 \
			>"$T_DIR/send$q.log" 2>&1
		senders+=("$UNET_BG_PID")
	done
	for q in 0 1 2 3; do
		finish "${senders[q]}" "$T_DIR/send$q.log" 40 "sender on queue $q"
	done
	finish "$r" "$T_DIR/recv.log" 40 "receiver"
	grep -q "^recv received=$((4 * n)) lost=0 dup=0 bad=0 foreign=0 " "$T_DIR/recv.log" ||
		fail "receiver did not get exactly $((4 * n))"
	expect_stat b delivered $((4 * n))
	expect_stat b drop_no_socket 0
	if [[ $T_MODE == native ]]; then
		# veth counts XDP redirects per receive queue in native mode:
		# the frames really came in on all four queues.
		in_b ethtool -S "$IF_B" | grep -E 'rx_queue_[0-3]_xdp_redirect'
		for q in 0 1 2 3; do
			local v
			v=$(in_b ethtool -S "$IF_B" | sed -n "s/^ *rx_queue_${q}_xdp_redirect: *//p")
			[[ $v =~ ^[0-9]+$ ]] && ((v >= n)) || fail "queue $q redirected '$v' frames, want >= $n"
		done
	fi
}

t_sigkill() {
	setup_ns
	attach b
	unet_bg_b "$PEER" hold "$IF_B" --tag 10 --peer "$MAC_A" --peer-tag 110 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/h1.log" 2>&1
	local h1=$UNET_BG_PID e1
	e1=$(wait_ready "$T_DIR/h1.log" "$h1") || exit 1
	channel_json b
	[[ $(chan_field b 10 stale) == false ]] || fail "live channel 10 not shown as live"
	[[ $(chan_field b 10 pid) == "$h1" ]] || fail "channel 10 pid '$(chan_field b 10 pid)', want $h1"
	kill -KILL "$h1"
	wait "$h1" 2>/dev/null
	note "killed $h1"
	channel_json b
	[[ $(chan_field b 10 stale) == true ]] || fail "channel 10 of the killed process not shown stale"
	[[ $(endpoint_json b | jq -r --argjson id "$e1" '[.[] | select(.id == $id)] | first | .stale') == true ]] ||
		fail "endpoint $e1 of the killed process not shown stale"

	# A new process can take the tag over.
	unet_bg_b "$PEER" hold "$IF_B" --tag 10 --peer "$MAC_A" --peer-tag 110 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/h2.log" 2>&1
	local h2=$UNET_BG_PID
	wait_ready "$T_DIR/h2.log" "$h2" >/dev/null
	[[ $(chan_field b 10 pid) == "$h2" && $(chan_field b 10 stale) == false ]] ||
		fail "channel 10 not owned by the new process $h2: $(channel_json b)"
	kill -KILL "$h2"
	wait "$h2" 2>/dev/null
	note "killed $h2"
	[[ $(chan_field b 10 stale) == true ]] || fail "channel 10 not stale after the second kill"

	ctl_b reclaim "$IF_B" || fail "unetctl reclaim failed"
	channel_json b
	endpoint_json b
	[[ -z $(chan_field b 10 tag) ]] || fail "channel 10 still listed after reclaim"
	[[ $(endpoint_json b | jq 'length') == 0 ]] || fail "endpoints still listed after reclaim"
}

t_arp_ping() {
	setup_ns
	attach a
	attach b
	in_a ip neigh flush dev "$IF_A"
	in_b ip neigh flush dev "$IF_B"
	in_a ping -c 3 -W 1 -i 0.2 "$IP_B" || fail "ping a -> b failed"
	in_b ping -c 3 -W 1 -i 0.2 "$IP_A" || fail "ping b -> a failed"
	in_a ip neigh show "$IP_B" dev "$IF_A" | grep -qi "lladdr $MAC_B" || fail "a has no ARP entry for b"
	in_b ip neigh show "$IP_A" dev "$IF_B" | grep -qi "lladdr $MAC_A" || fail "b has no ARP entry for a"
	local side v
	for side in a b; do
		v=$(counter $side pass) || exit 1
		((v >= 6)) || fail "pass counter on $side is $v, want >= 6 (3 echo + ARP)"
		note "pass on $side = $v"
		expect_stat $side delivered 0
		expect_stat $side drop_malformed 0
		expect_stat $side drop_unknown_tag 0
	done
}

# expect_err WHAT REGEX CMD...: CMD exits 1 with exactly one stderr line
# "unetctl: ..." matching REGEX (case-insensitive), nothing on stdout.
expect_err() {
	local what=$1 re=$2 rc out err n
	shift 2
	out=$("$@" 2>"$T_DIR/stderr")
	rc=$?
	err=$(cat "$T_DIR/stderr")
	n=$(wc -l <"$T_DIR/stderr")
	echo "[$what] rc=$rc stderr: $err"
	((rc == 1)) || fail "$what: exit $rc, want 1 (stderr: $err)"
	((n == 1)) || fail "$what: $n stderr lines, want 1: $err"
	[[ $err == "unetctl: "* ]] || fail "$what: error does not start with 'unetctl: ': $err"
	grep -qiE "$re" <<<"$err" || fail "$what: error does not match /$re/: $err"
	[[ -z $out ]] || fail "$what: unexpected stdout: $out"
}

t_cli_errors() {
	setup_ns
	T_MODE=skb
	# unetctl where the nobody user can run it.
	local priv
	priv=$(mktemp -d /tmp/unet-cli.XXXXXX) || fail "mktemp"
	T_CLEANUP+=("rm -rf '$priv'")
	install -m 755 "$UNETCTL" "$priv/unetctl"
	local nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)

	expect_err "unknown subcommand" "unknown|command|usage" ctl_a frobnicate
	expect_err "no such interface" "no such|not found|nosuch|exist" ctl_a attach nosuchif0
	expect_err "not attached" "attach" ctl_a stats "$IF_A"
	expect_err "not root" "permi|root|privileg|allowed|capab" in_a "${nobody[@]}" "$priv/unetctl" attach "$IF_A"

	local tmpfs
	tmpfs=$(mktemp -d /tmp/unet-tmpfs.XXXXXX) || fail "mktemp"
	echo "mount $tmpfs" >>"$UNET_NETNS_RECORD"
	mount -t tmpfs tmpfs "$tmpfs" || fail "cannot mount a tmpfs"
	T_CLEANUP+=("umount '$tmpfs'; rmdir '$tmpfs'")
	expect_err "no bpffs" "bpf" ctl_a --pin-root "$tmpfs" attach "$IF_A"

	attach a
	unet_bg_a "$PEER" hold "$IF_A" --tag 10 --peer "$MAC_B" --peer-tag 20 --xdp-mode skb \
		--timeout 60 >"$T_DIR/hold.log" 2>&1
	local h=$UNET_BG_PID e
	e=$(wait_ready "$T_DIR/hold.log" "$h") || exit 1
	expect_err "tag in use" "in use" ctl_a channel add "$IF_A" --endpoint "$e" --tag 10 \
		--peer "$MAC_B" --peer-tag 21
	expect_err "bad MAC" "mac|address" ctl_a channel add "$IF_A" --endpoint "$e" --tag 11 \
		--peer zz:zz:zz:zz:zz:zz --peer-tag 21
	expect_err "unknown channel" "no channel|no such|not found|exist|unknown" ctl_a channel del "$IF_A" 4242
	# The same add with good arguments works, and shows up.
	ctl_a channel add "$IF_A" --endpoint "$e" --tag 11 --peer "$MAC_B" --peer-tag 21 ||
		fail "a valid channel add failed"
	[[ $(chan_field a 11 endpoint) == "$e" ]] || fail "added channel 11 not listed for endpoint $e"
	ctl_a channel del "$IF_A" 11 || fail "channel del 11 failed"
	[[ -z $(chan_field a 11 tag) ]] || fail "channel 11 still listed after del"
	stop "$h" "$T_DIR/hold.log" "holder"

	local cmd
	for cmd in "" attach detach status stats reclaim "channel list" "endpoint list"; do
		# shellcheck disable=SC2086
		ctl_a $cmd --help >"$T_DIR/help.out" 2>&1 || fail "unetctl $cmd --help: exit $?"
		[[ -s $T_DIR/help.out ]] || fail "unetctl $cmd --help printed nothing"
	done
}

t_api_errors() {
	local bin=$BUILD/tests/test_api_errors
	[[ -x $bin ]] || fail "$bin not built"
	setup_ns 2
	T_MODE=skb
	attach a
	in_a env UNET_TEST_IFACE="$IF_A" UNET_TEST_PEER_MAC="$MAC_B" UNET_PIN_ROOT="$UNET_PIN_ROOT" \
		"$bin" >"$T_DIR/api.log" 2>&1
	local rc=$?
	cat "$T_DIR/api.log"
	((rc == 0)) || fail "test_api_errors exited with $rc"
	local passed
	passed=$(sed -n 's/^\[  PASSED  \] \([0-9]*\) test.*/\1/p' "$T_DIR/api.log" | tail -1)
	[[ ${passed:-0} -gt 0 ]] || skip "test_api_errors passed no test (all skipped)"
	grep -q '^\[  SKIPPED \]' "$T_DIR/api.log" && fail "test_api_errors skipped tests with an interface given"
	return 0
}

# run_pair_cmocka NAME NTESTS: build/tests/NAME on a veth pair inside
# namespace a, both ends driven by one process; it must pass all NTESTS
# cmocka tests and skip none.  Leaves the pair's first end in PAIR_X.
run_pair_cmocka() {
	local name=$1 ntests=$2 bin=$BUILD/tests/$1 y
	[[ -x $bin ]] || fail "$bin not built"
	setup_ns 1
	PAIR_X="${IF_A}x" y="${IF_A}y"
	in_a ip link add "$PAIR_X" type veth peer name "$y" || fail "cannot create veth $PAIR_X/$y"
	in_a ip link set "$PAIR_X" up && in_a ip link set "$y" up || fail "cannot bring up $PAIR_X/$y"
	in_a env UNET_TEST_IFACE_A="$PAIR_X" UNET_TEST_IFACE_B="$y" UNET_TEST_XDP_MODE="$T_MODE" \
		UNET_PIN_ROOT="$UNET_PIN_ROOT" "$bin" >"$T_DIR/$name.log" 2>&1
	local rc=$?
	cat "$T_DIR/$name.log"
	((rc == 0)) || fail "$name exited with $rc"
	grep -q '^\[  SKIPPED \]' "$T_DIR/$name.log" && fail "$name skipped tests with interfaces given"
	grep -q "^\\[  PASSED  \\] $ntests test" "$T_DIR/$name.log" ||
		fail "$name did not pass all $ntests tests"
}

# The raw data path between two endpoints of one process.
t_datapath() {
	local mode
	run_pair_cmocka test_datapath 9
	mode=$(in_a "$UNETCTL" --json status "$PAIR_X" |
		jq -r '[.. | objects | select(has("mode")) | .mode] | first // empty')
	[[ $mode == "$T_MODE" ]] || fail "endpoint creation attached $PAIR_X in mode '$mode', want $T_MODE"
}

# Regressions of the core against hostile peers and racing processes.
t_core_hardening() {
	run_pair_cmocka test_core_hardening 7
}

# scripts/bench.sh --quick: the form of its output, no timing asserted.
# It makes its own namespaces (recorded for the supervisor's rescue
# through UNET_NETNS_RECORD, which it inherits).
t_bench_smoke() {
	local out=$T_DIR/bench rc t m f
	[[ -x $BUILD/unet-bench ]] || skip "$BUILD/unet-bench is not built (bench/ sources, 'make bench')"
	command -v gnuplot >/dev/null || fail "gnuplot is missing (scripts/install-deps.sh installs gnuplot-nox)"
	bash "$ROOT/scripts/bench.sh" --quick --out "$out" "$BUILD" >"$T_DIR/bench.out" 2>"$T_DIR/bench.err"
	rc=$?
	echo "--- bench.sh stderr:"
	cat "$T_DIR/bench.err"
	echo "--- bench.sh stdout:"
	cat "$T_DIR/bench.out"
	((rc == 0)) || fail "bench.sh --quick exited with $rc: $(grep -m1 FAILED "$T_DIR/bench.err")"
	f=$out/results.json
	[[ -s $f ]] || fail "no $f"
	jq -e '.machine.kernel and .machine.nproc and .machine.date and .machine.xdp_mode
		and (.results | type == "array" and length > 0)' "$f" >/dev/null ||
		fail "results.json does not parse or lacks machine/results"
	for t in unet udp packet; do
		for m in spin block; do
			jq -e --arg t "$t" --arg m "$m" 'any(.results[]; .kind == "pingpong" and
				.transport == $t and .mode == $m and .size == 64 and .status == "ok" and
				(.p50_us | type) == "number" and .p50_us > 0)' "$f" >/dev/null ||
				fail "results.json has no 64-byte pingpong for $t $m with p50_us > 0"
		done
	done
	for t in unet udp udp-mmsg packet; do
		jq -e --arg t "$t" 'any(.results[]; .kind == "rate" and .transport == $t and
			.status == "ok" and (.msgs_per_s | type) == "number" and .msgs_per_s > 0)' \
			"$f" >/dev/null || fail "results.json has no rate entry for $t with msgs_per_s > 0"
	done
	jq -e '[.results[] | select(.kind == "demux-pingpong" and .status == "ok")] | length >= 2' \
		"$f" >/dev/null || fail "results.json lacks the demux entries (1 and 16 channels)"
	# The table: ratio columns, and ratios on the rows.
	grep -q 'x udp' "$T_DIR/bench.out" || fail "the table has no ratio column 'x udp'"
	grep -q 'x mmsg' "$T_DIR/bench.out" || fail "the table has no ratio column 'x mmsg'"
	grep -Eq '^unet +spin +64 +[0-9.]+ [0-9.]+x' "$T_DIR/bench.out" ||
		fail "the table's unet spin 64-byte row has no ratio to udp"
	grep -Eq '^unet +64 .* [0-9.]+x +[0-9.]+x' "$T_DIR/bench.out" ||
		fail "the table's unet 64-byte rate row has no ratios"
	for p in latency bandwidth; do
		[[ -s $out/$p.png ]] || fail "no $out/$p.png"
		[[ $(head -c 8 "$out/$p.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] ||
			fail "$out/$p.png is not a PNG file"
	done
	note "results.json: $(jq '.results | length' "$f") records; plots are PNG"
}

# U-Net Active Messages over a veth pair inside namespace a, both ends
# driven by one process (the peer-killed case forks).
t_uam() {
	run_pair_cmocka test_uam 5
}

# The key-value example between the two namespaces, with loss on both
# interfaces: every put is read back.
t_uam_kv() {
	local kv=$BUILD/examples/kv
	[[ -x $kv ]] || fail "$kv not built"
	setup_ns
	T_MODE=skb
	attach a
	attach b
	ctl_a fault "$IF_A" --drop-ppm 100000 || fail "unetctl fault $IF_A failed"
	ctl_b fault "$IF_B" --drop-ppm 100000 || fail "unetctl fault $IF_B failed"
	unet_bg_b "$kv" server "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 --seconds 40 \
		>"$T_DIR/server.log" 2>&1
	local s=$UNET_BG_PID i
	for ((i = 0; i < 100; i++)); do
		grep -q '^ready' "$T_DIR/server.log" && break
		kill -0 "$s" 2>/dev/null || { cat "$T_DIR/server.log"; fail "kv server exited"; }
		sleep 0.05
	done
	in_a "$kv" client "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --count 2000 \
		>"$T_DIR/client.log" 2>&1
	local rc=$?
	cat "$T_DIR/client.log"
	((rc == 0)) || fail "kv client exited with $rc"
	grep -q '^kv ok puts=2000 gets=2000' "$T_DIR/client.log" || fail "kv client did not verify 2000 puts"
	local d
	d=$(counter a drop_injected) || exit 1
	((d > 0)) || fail "no frames dropped by the injected loss on a"
	note "drop_injected on a = $d"
	stop "$s" "$T_DIR/server.log" "kv server"
}

# ---- the runner -------------------------------------------------------------

# Run one test (internal: in its own session, see run_test).
# ---- UDP/IPv4 over U-Net (docs/udp.md) -------------------------------------

# udpstat LOG KEY: a counter from the "udpstats" line unet-udp printed.
udpstat() {
	sed -n "s/^udpstats.* $2=\([0-9]*\).*/\1/p" "$1" | tail -1
}

# One round of udp_sizes: $1 = on|off, tx checksum offload of b (the
# kernel side).  With it on, b's kernel sends CHECKSUM_PARTIAL datagrams
# over veth; off, complete ones.
udp_sizes_round() {
	local off=$1 max=1472 pid
	in_b ethtool -K "$IF_B" tx "$off" >/dev/null 2>&1 || fail "ethtool -K $IF_B tx $off"
	in_a ethtool -K "$IF_A" tx "$off" >/dev/null 2>&1 || true
	# kernel client on b -> U-Net echo on a
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --xdp-mode "$T_MODE" --timeout 100 \
		>"$T_DIR/uecho_$off.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/uecho_$off.log" "$pid" >/dev/null
	grep -q "max_payload=$max" "$T_DIR/uecho_$off.log" || fail "U-Net UDP max payload is not $max"
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$IP_A:7000" --max $max --timeout 90 \
		>"$T_DIR/ksizes_$off.log" 2>&1
	cat "$T_DIR/ksizes_$off.log"
	grep -qx "sizes ok 1..$max" "$T_DIR/ksizes_$off.log" || fail "kernel client -> U-Net echo failed (tx $off)"
	stop "$pid" "$T_DIR/uecho_$off.log" "U-Net echo"
	grep -qx "echo echoed=$max" "$T_DIR/uecho_$off.log" || fail "U-Net echo did not echo exactly $max"
	local partial
	partial=$(udpstat "$T_DIR/uecho_$off.log" partial)
	note "tx $off: partial checksums accepted = $partial"
	if [[ $off == on ]]; then
		((partial > 0)) || fail "tx offload on, but no partial checksum was seen (the test would not notice breakage)"
	else
		((partial == 0)) || fail "tx offload off, yet $partial partial checksums"
	fi
	[[ $(udpstat "$T_DIR/uecho_$off.log" bad_udp_csum) == 0 ]] || fail "bad UDP checksums counted"
	# U-Net client on a -> kernel echo on b
	unet_bg_b "$KUDP" echo --local "$IP_B:7100" --timeout 100 >"$T_DIR/kecho_$off.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho_$off.log" "$pid" >/dev/null
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7101" --remote "$IP_B:7100" --max $max \
		--xdp-mode "$T_MODE" --timeout 90 >"$T_DIR/usizes_$off.log" 2>&1
	cat "$T_DIR/usizes_$off.log"
	grep -qx "sizes ok 1..$max" "$T_DIR/usizes_$off.log" || fail "U-Net client -> kernel echo failed (tx $off)"
	stop "$pid" "$T_DIR/kecho_$off.log" "kernel echo"
	grep -qx "echo echoed=$max" "$T_DIR/kecho_$off.log" || fail "kernel echo did not echo exactly $max"
}

t_udp_sizes() {
	setup_ns
	attach a
	udp_sizes_round on
	udp_sizes_round off
	expect_stat a udp_delivered $((4 * 1472))
	local c
	for c in drop_udp_filter drop_ip_fragment drop_ip_malformed drop_no_socket; do
		expect_stat a "$c" 0
	done
	# Partial checksums refused on request: nothing gets through.
	in_b ethtool -K "$IF_B" tx on >/dev/null 2>&1
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --partial reject --xdp-mode "$T_MODE" \
		--timeout 30 >"$T_DIR/reject.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/reject.log" "$pid" >/dev/null
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$IP_A:7000" --max 3 --timeout 10 \
		>"$T_DIR/ksizes_rej.log" 2>&1 && fail "datagrams with partial checksums got through --partial reject"
	stop "$pid" "$T_DIR/reject.log" "U-Net echo (reject)"
	grep -qx "echo echoed=0" "$T_DIR/reject.log" || fail "reject: something was echoed"
	(($(udpstat "$T_DIR/reject.log" partial_refused) >= 3)) || fail "reject: partial_refused not counted"
}

t_udp_ports() {
	# a has 3 queues; b's kernel sends from tx queue 0 (CPU 0) or 2
	# (CPU 1) by XPS, arriving on a's queue 0, or 2 (native) / 1 (skb).
	# Endpoint 1 binds queue 0, endpoint 2 queues 1-2.
	setup_ns 3
	attach a
	local ncpu
	ncpu=$(nproc)
	((ncpu >= 2)) || skip "needs 2 CPUs to steer kernel UDP onto two queues (XPS)"
	in_b sh -c "echo 1 > /sys/class/net/$IF_B/queues/tx-0/xps_cpus; echo 0 > /sys/class/net/$IF_B/queues/tx-1/xps_cpus; echo 2 > /sys/class/net/$IF_B/queues/tx-2/xps_cpus" ||
		skip "cannot set XPS on $IF_B"
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --ports 4 --queue-mask 0x1 \
		--xdp-mode "$T_MODE" --timeout 100 >"$T_DIR/ep1.log" 2>&1
	local p1=$UNET_BG_PID
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7100" --ports 4 --queue-mask 0x6 \
		--xdp-mode "$T_MODE" --timeout 100 >"$T_DIR/ep2.log" 2>&1
	local p2=$UNET_BG_PID
	# and a kernel socket on the same host, another port
	unet_bg_a "$KUDP" echo --local "$IP_A:7200" --timeout 100 >"$T_DIR/kern_a.log" 2>&1
	local p3=$UNET_BG_PID
	local e1 e2
	e1=$(wait_ready "$T_DIR/ep1.log" "$p1") || exit 1
	e2=$(wait_ready "$T_DIR/ep2.log" "$p2") || exit 1
	wait_ready "$T_DIR/kern_a.log" "$p3" >/dev/null
	note "endpoints $e1 (ports 7000-7003) and $e2 (ports 7100-7103)"
	local list
	list=$(in_a "$UNETCTL" --json udp list "$IF_A") || fail "unetctl udp list failed"
	echo "$list"
	local port want
	for port in 7000 7001 7002 7003 7100 7101 7102 7103; do
		((port < 7100)) && want=$e1 || want=$e2
		[[ $(jq -r --argjson p $port '[.. | objects | select(has("port") and .port == $p)] | first | .endpoint' <<<"$list") == "$want" ]] ||
			fail "UDP port $port not owned by endpoint $want"
	done
	in_a "$UNETCTL" udp list "$IF_A" | grep -q "7103" || fail "text listing lacks port 7103"
	# Each port from a client pinned to the CPU whose XPS queue reaches
	# its endpoint; 50 datagrams of every size class.
	for port in 7000 7001 7002 7003; do
		in_b taskset -c 0 "$KUDP" sizes --local "$IP_B:$((port + 1000))" --remote "$IP_A:$port" --max 50 --timeout 20 \
			>"$T_DIR/c$port.log" 2>&1 || { cat "$T_DIR/c$port.log"; fail "port $port (endpoint $e1) did not echo"; }
	done
	for port in 7100 7101 7102 7103; do
		in_b taskset -c 1 "$KUDP" sizes --local "$IP_B:$((port + 1000))" --remote "$IP_A:$port" --max 50 --timeout 20 \
			>"$T_DIR/c$port.log" 2>&1 || { cat "$T_DIR/c$port.log"; fail "port $port (endpoint $e2) did not echo"; }
	done
	# A kernel socket on a still gets its port, ping still works.
	in_b "$KUDP" sizes --local "$IP_B:9000" --remote "$IP_A:7200" --max 50 --timeout 20 \
		>"$T_DIR/ck.log" 2>&1 || { cat "$T_DIR/ck.log"; fail "kernel socket on a lost its traffic"; }
	in_b ping -c 2 -W 1 -i 0.2 "$IP_A" >/dev/null || fail "ping to a failed with U-Net UDP ports"
	stop "$p1" "$T_DIR/ep1.log" "endpoint 1"
	stop "$p2" "$T_DIR/ep2.log" "endpoint 2"
	stop "$p3" "$T_DIR/kern_a.log" "kernel echo on a"
	grep -qx "echo echoed=200" "$T_DIR/ep1.log" || fail "endpoint 1 did not echo exactly 200"
	grep -qx "echo echoed=200" "$T_DIR/ep2.log" || fail "endpoint 2 did not echo exactly 200"
	grep -qx "echo echoed=50" "$T_DIR/kern_a.log" || fail "kernel echo on a did not echo exactly 50"
	expect_stat a udp_delivered 400
	expect_stat a drop_no_socket 0
	# Closed sockets leave the map; udp del of a missing port fails.
	[[ $(in_a "$UNETCTL" --json udp list "$IF_A" | jq '[.. | objects | select(has("port"))] | length') == 0 ]] ||
		fail "ports left in the map after their endpoints closed"
	in_a "$UNETCTL" udp del "$IF_A" "$IP_A:7000" 2>"$T_DIR/del.err" && fail "udp del of a missing port succeeded"
	grep -q "^unetctl: " "$T_DIR/del.err" || fail "udp del error is not one unetctl: line"
}

t_udp_arp() {
	setup_ns
	attach a
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	local uaddr=10.201.0.3
	in_b ip neigh flush dev "$IF_B"
	# U-Net-owned address (a's kernel does not have it): the endpoint
	# answers b's ARP, b's kernel client reaches it.
	unet_bg_a "$UUDP" echo "$IF_A" --local "$uaddr:7000" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/own.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/own.log" "$pid" >/dev/null
	in_a "$UNETCTL" --json udp list "$IF_A" | jq -e '[.. | objects | select(has("port"))] | first | .arp == true' >/dev/null ||
		fail "U-Net-owned address not listed as answering ARP"
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$uaddr:7000" --max 20 --timeout 20 \
		>"$T_DIR/c1.log" 2>&1 || { cat "$T_DIR/c1.log"; fail "kernel client could not reach the U-Net-owned address"; }
	in_b ip neigh show "$uaddr" dev "$IF_B" | grep -qi "lladdr $MAC_A" || fail "b did not learn $uaddr -> $MAC_A from the endpoint's ARP reply"
	stop "$pid" "$T_DIR/own.log" "U-Net echo"
	(($(udpstat "$T_DIR/own.log" arp_rep) >= 1)) || fail "the endpoint sent no ARP reply"
	expect_stat a arp_delivered "$(counter a arp_delivered)"
	(($(counter a arp_delivered) >= 1)) || fail "arp_delivered did not move"
	# A U-Net client resolving b from the U-Net-owned address with an
	# ARP TTL of 300 ms, 5 datagrams 400 ms apart: every one finds its
	# entry expired and resolves again (>= 5 requests).
	unet_bg_b "$KUDP" echo --local "$IP_B:7100" --timeout 60 >"$T_DIR/kecho.log" 2>&1
	local kp=$UNET_BG_PID
	wait_ready "$T_DIR/kecho.log" "$kp" >/dev/null
	sleep 0.4
	in_a "$UUDP" sizes "$IF_A" --local "$uaddr:7101" --remote "$IP_B:7100" --max 5 --arp-ttl-ms 300 \
		--gap-ms 400 --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/u1.log" 2>&1 || { cat "$T_DIR/u1.log"; fail "U-Net client from the U-Net address failed"; }
	cat "$T_DIR/u1.log"
	(($(udpstat "$T_DIR/u1.log" arp_req) >= 5)) || fail "expired ARP entries were not resolved again (want >= 5 requests)"
	# With the default TTL the same exchange needs at most one.
	in_a "$UUDP" sizes "$IF_A" --local "$uaddr:7101" --remote "$IP_B:7100" --max 5 \
		--gap-ms 100 --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/u1b.log" 2>&1 || { cat "$T_DIR/u1b.log"; fail "U-Net client (default TTL) failed"; }
	(($(udpstat "$T_DIR/u1b.log" arp_req) <= 1)) || fail "a fresh ARP entry was resolved again"
	# Kernel-owned address: a's kernel answers ARP (nothing to the
	# endpoint), the endpoint still learns b's MAC from the reply.
	local before
	before=$(counter a arp_delivered)
	in_b ip neigh flush dev "$IF_B"
	in_a ip neigh flush dev "$IF_A"
	sleep 0.4 # older than the TTL below: what the map learnt before does not count
	in_a "$UUDP" sizes "$IF_A" --local "$IP_A:7102" --remote "$IP_B:7100" --max 5 --arp-ttl-ms 300 \
		--xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/u2.log" 2>&1 || { cat "$T_DIR/u2.log"; fail "U-Net client from the kernel's address failed"; }
	cat "$T_DIR/u2.log"
	(($(udpstat "$T_DIR/u2.log" arp_req) >= 1)) || fail "no ARP request from the kernel-owned address"
	[[ $(udpstat "$T_DIR/u2.log" arp_rx) == 0 ]] || fail "ARP for the kernel's address reached the endpoint"
	expect_stat a arp_delivered "$before"
	in_b ping -c 1 -W 1 "$IP_A" >/dev/null || fail "a's kernel no longer answers ARP/ping"
	stop "$kp" "$T_DIR/kecho.log" "kernel echo"
}

t_udp_bad() {
	setup_ns
	attach a
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/echo.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$pid" >/dev/null
	local inj=("$KUDP" inject "$IF_B" --dst-mac "$MAC_A" --local "$IP_B:7001" --remote "$IP_A:7000")
	in_b "${inj[@]}" --kind bad-ip-csum --count 5 || fail "inject failed"
	in_b "${inj[@]}" --kind bad-udp-csum --count 6 || fail "inject failed"
	in_b "${inj[@]}" --kind truncated --len 100 --count 7 || fail "inject failed"
	in_b "${inj[@]}" --kind short-udp --count 3 || fail "inject failed"
	in_b "${inj[@]}" --kind frag-first --len 200 --count 4 || fail "inject failed"
	in_b "${inj[@]}" --kind frag-rest --len 200 --count 2 || fail "inject failed"
	in_b "${inj[@]}" --kind good --count 1 || fail "inject failed"
	expect_stat a drop_ip_malformed 10
	expect_stat a drop_ip_fragment 4
	# checksums are the library's job: 5 + 6 + 1 reach the endpoint
	expect_stat a udp_delivered 12
	sleep 0.3
	stop "$pid" "$T_DIR/echo.log" "U-Net echo"
	grep -qx "echo echoed=1" "$T_DIR/echo.log" || fail "something other than the one good datagram was echoed"
	[[ $(udpstat "$T_DIR/echo.log" bad_ip_csum) == 5 ]] || fail "bad IP checksums not counted 5"
	[[ $(udpstat "$T_DIR/echo.log" bad_udp_csum) == 6 ]] || fail "bad UDP checksums not counted 6"
	[[ $(udpstat "$T_DIR/echo.log" rx) == 1 ]] || fail "more than one datagram reached the application"
	# A connected socket: only b:7777 may talk to it.
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7500" --remote "$IP_B:7777" \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/conn.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/conn.log" "$pid" >/dev/null
	in_b "$KUDP" inject "$IF_B" --dst-mac "$MAC_A" --local "$IP_B:7001" --remote "$IP_A:7500" --kind good --count 8 ||
		fail "inject failed"
	in_b "$KUDP" inject "$IF_B" --dst-mac "$MAC_A" --local "$IP_B:7777" --remote "$IP_A:7500" --kind good --count 1 ||
		fail "inject failed"
	expect_stat a drop_udp_filter 8
	expect_stat a udp_delivered 13
	sleep 0.3
	stop "$pid" "$T_DIR/conn.log" "connected socket"
	grep -qx "echo echoed=1" "$T_DIR/conn.log" || fail "the connected socket did not hear exactly its peer once"
	[[ $(in_a "$UNETCTL" --json udp list "$IF_A" | jq '[.. | objects | select(has("port"))] | length') == 0 ]] ||
		fail "ports left after close"
}

t_udp_sigkill() {
	setup_ns
	attach a
	in_b ethtool -K "$IF_B" tx off >/dev/null 2>&1
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7000" --xdp-mode "$T_MODE" --timeout 60 \
		>"$T_DIR/echo.log" 2>&1
	local pid=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$pid" >/dev/null
	kill -KILL "$pid"
	unet_bg_wait "$pid" 5
	[[ $(in_a "$UNETCTL" --json udp list "$IF_A" | jq -r '[.. | objects | select(has("port"))] | first | .stale') == true ]] ||
		fail "the dead owner's port is not listed stale"
	local r
	r=$(in_a "$UNETCTL" --json reclaim "$IF_A" | jq -r '.removed') || fail "reclaim failed"
	((r >= 2)) || fail "reclaim removed $r entries, want >= 2 (endpoint + port)"
	[[ $(in_a "$UNETCTL" --json udp list "$IF_A" | jq '[.. | objects | select(has("port"))] | length') == 0 ]] ||
		fail "the port survived reclaim"
	# The kernel has the port back.
	unet_bg_a "$KUDP" echo --local "$IP_A:7000" --timeout 30 >"$T_DIR/k.log" 2>&1
	local kp=$UNET_BG_PID
	wait_ready "$T_DIR/k.log" "$kp" >/dev/null
	in_b "$KUDP" sizes --local "$IP_B:7001" --remote "$IP_A:7000" --max 10 --timeout 10 \
		>"$T_DIR/c.log" 2>&1 || { cat "$T_DIR/c.log"; fail "the kernel did not get the port back"; }
	stop "$kp" "$T_DIR/k.log" "kernel echo"
	# A new endpoint can take a port a dead owner held (without reclaim).
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7001" --xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/e2.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/e2.log" "$pid" >/dev/null
	kill -KILL "$pid"
	unet_bg_wait "$pid" 5
	unet_bg_a "$UUDP" echo "$IF_A" --local "$IP_A:7001" --xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/e3.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/e3.log" "$pid" >/dev/null
	stop "$pid" "$T_DIR/e3.log" "second owner"
}

internal_run() {
	local id=$1 name mode fn
	name=${id%%/*}
	mode=${id#*/}
	[[ $mode == "$id" ]] && mode=""
	fn=t_$name
	export T_MODE=$mode
	trap t_cleanup EXIT
	trap 'exit 143' TERM
	trap 'exit 130' INT
	note "test $id"
	"$fn"
	exit 0
}

# run_test ID TIMEOUT: run one test in a new session with a time limit,
# print its result line, count it.
run_test() {
	local id=$1 t=$2 dir pid rc start elapsed reason
	dir=$WORK/${id//\//_}
	mkdir -p "$dir"
	start=$SECONDS
	: >"$dir/log"
	# Append mode: the supervisor adds lines to the same log.
	T_DIR=$dir UNET_NETNS_RECORD=$dir/resources \
		setsid bash "$SELF" --build "$BUILD" --internal-run "$id" >>"$dir/log" 2>&1 </dev/null &
	pid=$!
	local killed=0
	while kill -0 "$pid" 2>/dev/null; do
		if ((SECONDS - start > t)); then
			killed=1
			echo "=== time limit of ${t}s reached: SIGTERM" >>"$dir/log"
			kill -TERM -- -"$pid" 2>/dev/null
			local i
			for ((i = 0; i < 100; i++)); do
				kill -0 "$pid" 2>/dev/null || break
				sleep 0.1
			done
			kill -KILL -- -"$pid" 2>/dev/null
			break
		fi
		sleep 0.1
	done
	{ wait "$pid"; } 2>/dev/null
	rc=$?
	# Whatever the test left (it may have been SIGKILLed).
	kill -KILL -- -"$pid" 2>/dev/null
	unet_netns_rescue "$dir/resources"
	elapsed=$((SECONDS - start))
	reason=$(cat "$dir/reason" 2>/dev/null)
	if ((killed)); then
		reason="timed out after ${t}s"
		rc=1
	fi
	if ((rc == 0)); then
		echo "PASS $id (${elapsed}s)"
		((n_pass++))
	elif ((rc == 77)); then
		echo "SKIP $id: ${reason:-skipped}"
		((n_skip++))
	else
		echo "FAIL $id: ${reason:-exit $rc} (${elapsed}s)"
		echo "    --- last lines of the log ($id):"
		tail -n 40 "$dir/log" | sed 's/^/    /'
		((n_fail++))
	fi
}

main() {
	BUILD=build
	local mode=both list=0 internal="" sel=()
	while (($#)); do
		case $1 in
		--build) BUILD=${2:?--build needs a directory}; shift 2 ;;
		--mode) mode=${2:?--mode needs native, skb or both}; shift 2 ;;
		--list) list=1; shift ;;
		--internal-run) internal=${2:?}; shift 2 ;;
		-h | --help) usage; exit 0 ;;
		-*) echo "run.sh: unknown option $1" >&2; usage >&2; exit 2 ;;
		*) sel+=("$1"); shift ;;
		esac
	done
	case $mode in native) modes=(native) ;; skb) modes=(skb) ;; both) modes=(native skb) ;;
	*) echo "run.sh: bad --mode '$mode'" >&2; exit 2 ;; esac
	[[ $BUILD == /* ]] || BUILD=$PWD/$BUILD
	UNETCTL=$BUILD/unetctl
	PEER=$BUILD/tools/unet-peer
	INJECT=$BUILD/tools/unet-inject
	UUDP=$BUILD/tools/unet-udp
	KUDP=$BUILD/tools/udp-kern
	export BUILD UNETCTL PEER INJECT UUDP KUDP

	if [[ -n $internal ]]; then
		internal_run "$internal"
	fi

	# Expand the table into test ids with timeouts.
	local ids=() tos=() descs=() entry name kind to desc m
	for entry in "${TESTS[@]}"; do
		IFS='|' read -r name kind to desc <<<"$entry"
		if [[ $kind == xdp ]]; then
			for m in "${modes[@]}"; do
				ids+=("$name/$m")
				tos+=("$to")
				descs+=("$desc")
			done
		else
			ids+=("$name")
			tos+=("$to")
			descs+=("$desc")
		fi
	done
	local i
	if ((list)); then
		for i in "${!ids[@]}"; do
			printf '%-22s %s\n' "${ids[i]}" "${descs[i]}"
		done
		exit 0
	fi
	# Select.
	local run=() s found
	if ((${#sel[@]})); then
		for s in "${sel[@]}"; do
			found=0
			for i in "${!ids[@]}"; do
				if [[ ${ids[i]} == "$s" || ${ids[i]%%/*} == "$s" ]]; then
					run+=("$i")
					found=1
				fi
			done
			((found)) || { echo "run.sh: no test named '$s' (see --list)" >&2; exit 2; }
		done
	else
		run=("${!ids[@]}")
	fi

	n_pass=0 n_fail=0 n_skip=0
	if [[ $(id -u) -ne 0 ]]; then
		for i in "${run[@]}"; do
			echo "SKIP ${ids[i]}: needs root"
			((n_skip++))
		done
		echo "$n_pass passed, $n_fail failed, $n_skip skipped"
		exit 0
	fi
	local missing=()
	for s in "$UNETCTL" "$PEER" "$INJECT"; do
		[[ -x $s ]] || missing+=("$s")
	done
	command -v jq >/dev/null || missing+=(jq)
	WORK=$(mktemp -d /tmp/unet-it.XXXXXX) || exit 1
	export WORK
	# Interrupted runs must not leave their logs behind either.
	if [[ ${UNET_TEST_KEEP_LOGS:-0} != 1 ]]; then
		trap 'rm -rf "$WORK"' EXIT
		trap 'exit 130' INT
		trap 'exit 143' TERM
	fi
	for i in "${run[@]}"; do
		if ((${#missing[@]})); then
			echo "FAIL ${ids[i]}: missing ${missing[*]}"
			((n_fail++))
			continue
		fi
		run_test "${ids[i]}" "${tos[i]}"
	done
	if [[ ${UNET_TEST_KEEP_LOGS:-0} == 1 ]]; then
		echo "logs in $WORK"
	else
		rm -rf "$WORK"
	fi
	echo "$n_pass passed, $n_fail failed, $n_skip skipped"
	((n_fail == 0))
}

main "$@"

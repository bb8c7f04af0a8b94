# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_core.sh - the raw U-Net data path: integrity, flood, isolation between
# processes, spoofed frames, multi-queue, SIGKILLed owners, the kernel's
# own traffic beside the program, the datapath cmocka suite.  Sourced by
# run.sh (see lib.sh for the helpers).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"integrity|xdp|120|every payload size 1..max_payload (MTU 1500), both directions, byte for byte"
	"flood100k|xdp|120|100000 paced messages each way at once (50 000 a second; 25 000 under the sanitizers), none lost or duplicated"
	"isolation|xdp|90|two endpoints in two processes of one namespace get only their own channels"
	"spoof|xdp|90|spoofed MAC/tag, unknown tag, bad version, truncated/bad length: dropped and counted"
	"multiqueue|xdp|120|4-queue veth, a sender per queue, the 4-socket receiver gets everything (native: on all 4 queues; skb: on queues 0-2, see queue_map)"
	"sigkill|xdp|90|SIGKILLed owner: channel stale, tag reusable, unetctl reclaim cleans up"
	"pidns|xdp|60|an endpoint owner in its own pid namespace (a container with its own /proc) is live to everyone: reclaim keeps it; once killed, stale and reclaimed"
	"arp_ping|xdp|60|ping and ARP work with the program attached; pass counter moves"
	"queue_map|xdp|90|4-queue veth: which rx queue a frame sent on tx queue q reaches (native: q; skb: max(q-1, 0)), per channel counters"
	"datapath|xdp|120|send/recv/free queues, a batch beyond the kernel's per-kick budget in one call, wait, poll fd, upcalls, admin channels, destroy (test_datapath)"
	"wait|xdp|60|adaptive wait: a message within the spin budget is taken without sleeping, no budget sleeps, an idle wait costs no CPU, the spin is bounded and within the timeout, dispatch and uam_call spin too (test_wait)"
	"core_hardening|xdp|180|racing slot claims over a dead owner, oversize payloads, handler closing its channel, interface deleted, unsafe and swapped pins, a device of the same name in another network namespace under the same pin root, queue counts from the caller's namespace (test_core_hardening)"
)

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
# may land on.  The test queue_map checks this mapping.

t_flood100k() {
	# a: receiver on queues 0-1, sender on 2 (sends on tx queue 2,
	#    arriving on b's queue 2 or 1);
	# b: receiver on queues 1-2, sender on 0 (tx queue 0 -> a's queue 0).
	setup_ns 3
	attach a
	attach b
	# Paced for the plain build; the sanitized one (2-3x the CPU a
	# message, four processes on two CPUs) at half the pace, or a
	# receiver starved past its 4096 free buffers drops for want of them
	# (rx_fill_empty: once in a fresh-clone make check's ASan pass).
	local n=100000 rate=${UNET_FLOOD_RATE:-50000} t
	[[ ${UNET_SANITIZED:-0} == 1 && -z ${UNET_FLOOD_RATE:-} ]] && rate=25000
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

# Liveness must not rest on pids: an owner in another pid namespace (with
# its own /proc, as in a container) has a pid that names some other
# process, or none, here.  pid+starttime liveness reclaimed its slot.
t_pidns() {
	setup_ns
	attach b
	# sh is pid 1 of the new namespace, the peer pid 2 (the ': ' keeps sh
	# from exec'ing it); --kill-child takes the peer down with unshare.
	unet_bg_b unshare --pid --fork --mount-proc --kill-child=KILL sh -c \
		'"$0" hold "$1" --tag 10 --peer "$2" --peer-tag 110 --xdp-mode "$3" --timeout 60; :' \
		"$PEER" "$IF_B" "$MAC_A" "$T_MODE" >"$T_DIR/h.log" 2>&1
	local h=$UNET_BG_PID e removed
	e=$(wait_ready "$T_DIR/h.log" "$h") || exit 1
	[[ $(endpoint_json b | jq -r --argjson id "$e" '[.[] | select(.id == $id)] | first | .stale') == false ]] ||
		fail "endpoint $e of the live owner in its own pid namespace shown stale: $(endpoint_json b)"
	removed=$(ctl_b --json reclaim "$IF_B" | jq -r '.. | .removed? // empty' | head -1)
	note "reclaim removed '${removed:-?}'"
	[[ $(endpoint_json b | jq -r --argjson id "$e" '[.[] | select(.id == $id)] | length') == 1 ]] ||
		fail "reclaim removed the live endpoint $e of a process in another pid namespace"
	channel_json b
	[[ $(chan_field b 10 stale) == false ]] || fail "its channel 10 shown stale"
	kill -KILL "$h"
	wait "$h" 2>/dev/null
	local i
	for ((i = 0; i < 50; i++)); do
		[[ $(endpoint_json b | jq -r --argjson id "$e" '[.[] | select(.id == $id)] | first | .stale') == true ]] && break
		sleep 0.1
	done
	((i < 50)) || fail "endpoint $e not stale after its owner was killed"
	ctl_b reclaim "$IF_B" || fail "unetctl reclaim failed"
	[[ $(endpoint_json b | jq 'length') == 0 ]] || fail "endpoint still listed after reclaim"
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

# The raw data path between two endpoints of one process.
t_datapath() {
	local mode
	run_pair_cmocka test_datapath 10
	mode=$(in_a "$UNETCTL" --json status "$PAIR_X" |
		jq -r '[.. | objects | select(has("mode")) | .mode] | first // empty')
	[[ $mode == "$T_MODE" ]] || fail "endpoint creation attached $PAIR_X in mode '$mode', want $T_MODE"
}

t_wait() {
	run_pair_cmocka test_wait 9
}

# Which receive queue does a frame sent on tx queue q arrive on?  Four
# holders in b, one per queue k (queue mask 1<<k), own channels 10+k; for
# each q a sender in a bound to queue q sends N frames on each channel,
# all on tx queue q.  Channel 10+k delivers them iff they arrived on queue
# k (else drop_no_socket).  The mapping found is printed as
# "queue_map MODE tx=q rx=k" and checked against docs/platform.md.
t_queue_map() {
	setup_ns 4
	attach a
	attach b
	local n=20 q k pids=() got want map=""
	for k in 0 1 2 3; do
		unet_bg_b "$PEER" hold "$IF_B" --tag $((10 + k)) --peer "$MAC_A" --peer-tag $((110 + k)) \
			--queue-mask $((1 << k)) --xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/h$k.log" 2>&1
		pids+=("$UNET_BG_PID")
	done
	for k in 0 1 2 3; do
		wait_ready "$T_DIR/h$k.log" "${pids[k]}" >/dev/null
	done
	for q in 0 1 2 3; do
		local chans=""
		for k in 0 1 2 3; do
			chans+="${chans:+,}$((110 + k)):$((10 + k)):$MAC_B/$q"
		done
		local before=()
		for k in 0 1 2 3; do
			before[k]=$(chan_field b $((10 + k)) delivered)
		done
		in_a "$PEER" send "$IF_A" --channels "$chans" --queue-mask $((1 << q)) --count $n \
			--rate 2000 --xdp-mode "$T_MODE" --timeout 20 >"$T_DIR/send$q.log" 2>&1 ||
			{ cat "$T_DIR/send$q.log"; fail "sender on queue $q failed"; }
		expect_stat b rx $((4 * n * (q + 1)))
		got=""
		for k in 0 1 2 3; do
			(($(chan_field b $((10 + k)) delivered) - before[k] == n)) && got+="$k"
		done
		note "queue_map $T_MODE tx=$q rx=${got:-none}"
		map+="$got"
	done
	for k in 0 1 2 3; do
		stop "${pids[k]}" "$T_DIR/h$k.log" "holder on queue $k"
	done
	# veth: native XDP runs in veth's NAPI, which records the rx queue
	# (= the tx queue); generic XDP reads skb->queue_mapping, still the
	# tx queue, as "recorded rx queue + 1".
	[[ $T_MODE == native ]] && want=0123 || want=0012
	[[ $map == "$want" ]] || fail "$T_MODE: tx queues 0-3 reached rx queues '$map', want '$want'"
}

# Regressions of the core against hostile peers and racing processes.
t_core_hardening() {
	run_pair_cmocka test_core_hardening 10
}

# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_unetd_fair.sh - unetd under load and under attack: fair service
# between emulated endpoints (a flood beside a ping-pong, two floods, a
# client that does not drain its receive queue) and a client that
# rewrites its shared region at random while it sends.  Sourced by run.sh;
# uses start_unetd, stop_unetd, as_nobody, as_user_cmd, wait_line and stat_a from
# t_unetd.sh.  The daemon runs in namespace b; its clients there run as
# nobody; their peers in a are root's own endpoints.
#
# Why the latency property is counted in frames: the time a message
# waits beside a flood depends on how the kernel shares two CPUs between
# the daemon, the flood and the peers, and a machine busy with anything
# else doubles it; the daemon's order (whose frame goes out after whose)
# does not change with load.  The round-trip figures themselves are
# measured by make bench (docs/performance.md).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"unetd_fair_latency|-|180|an emulated client's message waits behind at most one round of another client's flood, counted in frames on the wire (median over 500 pings), while the flood has a median 1024 or more frames queued"
	"unetd_fair_share|-|120|two emulated clients flooding at full rate: each gets within 20% of an equal share of what the daemon sends (per-channel counts at the receiver in namespace a)"
	"unetd_fair_slow_rx|-|90|an emulated client that never drains its receive queue loses only its own messages: another client on the same interface receives every one, the slow one's rx_dropped counts the rest"
	"unetd_hostile|-|120|a client rewriting its send ring, frames and ring indices at random while it sends: the daemon lives, keeps serving another client without loss, and only well-formed frames of the client's own channel reach the peer (no drop_* counter moves in namespace a)"
)

FAIR_POLICY="user 65534 kinds emulated tags 1-100 endpoints 4"

# fair_flood TAG PEER_TAG LOG [CPU]: nobody's (or FAIR_UID's) unet-bench source, unpaced,
# batches of 32, until killed (bounded: 60 s, 10^9 messages).  Its
# endpoint has 8192-entry rings and a 16 MiB segment: 4096 frames queued
# are 10 ms or more of the daemon's work, longer than the kernel's time
# slice, so the flood stays backlogged at the daemon even while the
# flooding process waits for a CPU.  Sets FAIR_FLOOD to its pid.
fair_flood() {
	local AS
	as_user_cmd "${FAIR_UID:-65534}"
	"${AS[@]}" taskset -c "${4:-0-$(($(nproc) - 1))}" "$BUILD/unet-bench" source --transport unet --iface "$IF_B" --tag "$1" \
		--peer "$MAC_A" --peer-tag "$2" --size 64 --count 1000000000 --batch 32 \
		--segment 16777216 --ring 8192 \
		--timeout 60 >"$3.out" 2>"$3.err" &
	FAIR_FLOOD=$!
	_UNET_BG_PIDS+=("$FAIR_FLOOD")
}

# delivered_a TAG: frames namespace a's XDP program delivered on channel TAG.
delivered_a() {
	local v
	v=$(in_a "$UNETCTL" --json channel list "$IF_A" |
		jq -r --argjson t "$1" '[.. | objects | select(.tag? == $t) | .delivered] | first // empty')
	[[ $v =~ ^[0-9]+$ ]] || fail "no delivered counter for channel $1 on $IF_A (got '$v')"
	echo "$v"
}

# fair_both_flowing N: channels 4 and 6 of namespace a have each been
# delivered at least N frames (false while either is missing).
fair_both_flowing() {
	in_a "$UNETCTL" --json channel list "$IF_A" | jq -e --argjson n "$1" \
		'[.. | objects | select(.tag? == 4 or .tag? == 6) | .delivered] | length == 2 and all(. >= $n)'
}

t_unetd_fair_latency() {
	T_MODE=${T_MODE:-skb}
	local probe sink p50 p90 lost backlog
	setup_ns
	attach a
	start_unetd "$FAIR_POLICY"
	# Root's sink in a holds both channels on one endpoint: it sees the
	# frames in the order the daemon sent them.
	unet_bg_a "$BUILD/tools/unet-fair" sink "$IF_A" --peer "$MAC_B" --flood-tag 4 --flood-peer-tag 3 \
		--ping-tag 2 --ping-peer-tag 1 --count 500 --timeout 100 >"$T_DIR/sink.out" 2>"$T_DIR/sink.err"
	sink=$UNET_BG_PID
	wait_line "$T_DIR/sink.err" '^ready$' "$sink"
	# nobody's two emulated endpoints in b: one flooding with its send
	# queue kept full, one sending a ping now and then.
	local AS
	as_user_cmd 65534
	"${AS[@]}" timeout 110 "$BUILD/tools/unet-fair" probe "$IF_B" --peer "$MAC_A" --flood-tag 3 \
		--flood-peer-tag 4 --ping-tag 1 --ping-peer-tag 2 --count 500 --gap-us 200 --timeout 90 \
		>"$T_DIR/probe.out" 2>"$T_DIR/probe.err" &
	probe=$!
	_UNET_BG_PIDS+=("$probe")
	unet_bg_wait "$probe" 120 || { cat "$T_DIR/probe.err"; fail "the probe as nobody failed"; }
	unet_bg_wait "$sink" 30 || { cat "$T_DIR/sink.err" "$T_DIR/sink.out"; fail "the sink in $NS_A failed"; }
	note "probe: $(cat "$T_DIR/probe.out")"
	note "sink: $(cat "$T_DIR/sink.out")"
	backlog=$(jq -r '.backlog_p50' <"$T_DIR/probe.out")
	p50=$(jq -r '.wait_p50' <"$T_DIR/sink.out")
	p90=$(jq -r '.wait_p90' <"$T_DIR/sink.out")
	lost=$(jq -r '.lost' <"$T_DIR/sink.out")
	[[ $backlog =~ ^[0-9]+$ && $p50 =~ ^[0-9]+$ && $p90 =~ ^[0-9]+$ && $lost =~ ^[0-9]+$ ]] ||
		fail "unreadable results"
	# A flood that is not one proves nothing: half the pings or more
	# found at least 1024 of its frames queued.
	((backlog >= 1024)) || fail "the flood was not backlogged (median of its queue at a ping: $backlog)"
	((lost <= 50)) || fail "$lost of 500 pings lost on the way"
	# Deficit round robin with the light served first: a ping waits for
	# no flood frame it finds queued; at most one round of the flood's
	# quantum (DEFICIT_ROUNDS + 1 quanta of 4 frames) when it arrives
	# mid-round.  Served in queue order it would wait behind the backlog.
	((p50 <= 24)) || fail "a ping waited behind $p50 flood frames (median; the flood had a median $backlog queued)"
	note "a ping waited behind $p50 flood frames (median), $p90 (p90), with a median $backlog of the flood queued"
	stop_unetd
}

t_unetd_fair_share() {
	T_MODE=${T_MODE:-skb}
	local f1 f2 a0 b0 a1 b1 da db tot p
	(($(nproc) >= 2)) || skip "needs 2 CPUs (the daemon on one, the floods on the other)"
	setup_ns
	attach a
	start_unetd "$FAIR_POLICY"
	# The daemon has CPU 0 to itself, the two floods and their receiver
	# share CPU 1: each flood can then queue far faster than the daemon
	# sends, both send rings stay full, and what each gets is the
	# daemon's choice, not the kernel's (left to itself, the kernel would
	# share two CPUs between four busy processes in time slices, and the
	# rings would drain in turns).
	taskset -pc 0 "$UNETD_PID" >/dev/null || fail "cannot pin the daemon to CPU 0"
	unet_bg_a taskset -c 1 "$PEER" hold "$IF_A" --tag 4 --peer "$MAC_B" --peer-tag 3 --tag 6 \
		--peer "$MAC_B" --peer-tag 5 --quiet --timeout 100 >"$T_DIR/hold.log" 2>&1
	wait_ready "$T_DIR/hold.log" "$UNET_BG_PID" >/dev/null
	fair_flood 3 4 "$T_DIR/flood1" 1
	f1=$FAIR_FLOOD
	fair_flood 5 6 "$T_DIR/flood2" 1
	f2=$FAIR_FLOOD
	# Both floods under way (each past 10 000 frames: its rings set up and
	# full), then 2 s counted (about 400 000 frames a second here, each
	# share within a percent of half).
	wait_until 15 "both floods under way" fair_both_flowing 10000
	a0=$(delivered_a 4)
	b0=$(delivered_a 6)
	sleep 2
	a1=$(delivered_a 4)
	b1=$(delivered_a 6)
	for p in "$f1" "$f2"; do
		kill -0 "$p" 2>/dev/null || { cat "$T_DIR"/flood*.err; fail "a flooding client ended early"; }
	done
	kill -TERM "$f1" "$f2"
	da=$((a1 - a0)) db=$((b1 - b0)) tot=$((da + db))
	note "in 2 s: client 1 sent $da, client 2 sent $db (total $tot, $((tot / 2)) msgs/s)"
	((tot >= 20000)) || fail "the two floods together sent only $tot frames in 2 s"
	awk -v a="$da" -v b="$db" 'BEGIN { h = (a + b) / 2; d1 = a - h; if (d1 < 0) d1 = -d1
		exit !(d1 <= 0.2 * h) }' ||
		fail "unfair: $da and $db frames, one more than 20% off the equal share $((tot / 2))"
	note "shares $(awk -v a="$da" -v b="$db" 'BEGIN { printf "%.3f / %.3f", a / (a + b), b / (a + b) }') (each within 0.400..0.600)"
	stop_unetd
}

t_unetd_fair_slow_rx() {
	T_MODE=${T_MODE:-skb}
	local r s rc line dl dr n=20000
	setup_ns
	attach a
	start_unetd "$FAIR_POLICY"
	local AS
	as_user_cmd 65534
	"${AS[@]}" "$PEER" recv "$IF_B" --tag 20 --peer "$MAC_A" --peer-tag 10 --count "$n" \
		--timeout 40 >"$T_DIR/recv.log" 2>&1 &
	r=$!
	_UNET_BG_PIDS+=("$r")
	wait_ready "$T_DIR/recv.log" "$r" >/dev/null
	"${AS[@]}" "$BUILD/tools/unet-forge" "$IF_B" --tag 21 --peer "$MAC_A" --peer-tag 11 \
		--stall 60 >"$T_DIR/stall.log" 2>&1 &
	s=$!
	_UNET_BG_PIDS+=("$s")
	wait_ready "$T_DIR/stall.log" "$s" >/dev/null
	# Both channels in turn, paced so that a draining receiver keeps up
	# (at 40000/s it fell behind once, in a make check on a loaded machine).
	in_a "$PEER" send "$IF_A" --tag 10 --peer "$MAC_B" --peer-tag 20 --tag 11 --peer "$MAC_B" \
		--peer-tag 21 --count "$n" --size 64 --rate 20000 --timeout 30 >"$T_DIR/send.log" 2>&1 ||
		{ cat "$T_DIR/send.log"; fail "the sender in $NS_A failed"; }
	unet_bg_wait "$r" 20
	rc=$?
	cat "$T_DIR/recv.log"
	((rc == 0)) || fail "the draining client did not get all $n messages (rc $rc) beside a stalled one"
	kill -TERM "$s"
	unet_bg_wait "$s" 10
	cat "$T_DIR/stall.log"
	line=$(grep '^stall ' "$T_DIR/stall.log") || fail "the stalled client printed no counters"
	dl=$(sed -n 's/.*rx_delivered=\([0-9]*\).*/\1/p' <<<"$line")
	dr=$(sed -n 's/.*rx_dropped=\([0-9]*\).*/\1/p' <<<"$line")
	((dr > 0 && dl < n)) || fail "the stalled client lost nothing ($line): the test did not fill its queue"
	((dl + dr == n)) || fail "the stalled client's delivered + dropped = $((dl + dr)), want $n"
	note "stalled client: $dl delivered (its free buffers), $dr dropped and counted; the other got all $n"
	stop_unetd
}

t_unetd_hostile() {
	T_MODE=${T_MODE:-skb}
	local names=(drop_wrong_src drop_unknown_tag drop_malformed drop_version pass) before=() k i
	local e c rc d0 d1 line
	setup_ns
	attach a
	in_a sysctl -qw "net.ipv6.conf.$IF_A.disable_ipv6=1"
	in_b sysctl -qw "net.ipv6.conf.$IF_B.disable_ipv6=1"
	start_unetd "$FAIR_POLICY"
	# One echo in a (a queue has one endpoint) for both clients: the
	# hostile one's channel 1/2, so that the daemon also delivers into its
	# (scribbled) free queue, and the honest neighbour's ping-pong, 3/4.
	unet_bg_a "$PEER" echo "$IF_A" --tag 1 --peer "$MAC_B" --peer-tag 2 --tag 3 --peer "$MAC_B" \
		--peer-tag 4 --timeout 100 >"$T_DIR/echo.log" 2>&1
	e=$UNET_BG_PID
	wait_ready "$T_DIR/echo.log" "$e" >/dev/null
	for k in "${names[@]}"; do
		before+=("$(stat_a "$k")")
	done
	d0=$(delivered_a 1)
	local AS
	as_user_cmd 65534
	"${AS[@]}" timeout 60 "$BUILD/unet-bench" pingpong --transport unet --iface "$IF_B" --tag 4 \
		--peer "$MAC_A" --peer-tag 3 --size 64 --count 20000 --warmup 100 --mode block \
		--timeout 50 >"$T_DIR/pp.out" 2>"$T_DIR/pp.err" &
	c=$!
	_UNET_BG_PIDS+=("$c")
	"${AS[@]}" timeout 30 "$BUILD/tools/unet-forge" "$IF_B" --tag 2 --peer "$MAC_A" --peer-tag 1 \
		--hostile 5 --count 2000000 --seed 0x5eed >"$T_DIR/hostile.log" 2>&1
	rc=$?
	cat "$T_DIR/hostile.log"
	((rc == 0)) || fail "the hostile tool itself failed (rc $rc)"
	line=$(grep '^hostile ' "$T_DIR/hostile.log") || fail "the hostile tool printed no summary"
	kill -0 "$UNETD_PID" 2>/dev/null || { tail -20 "$T_DIR/unetd.log"; fail "the daemon died under the hostile region"; }
	grep -qE 'AddressSanitizer|UndefinedBehaviorSanitizer|runtime error' "$T_DIR/unetd.log" &&
		{ cat "$T_DIR/unetd.log"; fail "the sanitizers complained about the daemon"; }
	unet_bg_wait "$c" 60
	rc=$?
	cat "$T_DIR/pp.err"
	((rc == 0)) || fail "the honest client's ping-pong failed while the other client was hostile (rc $rc)"
	jq -e '.lost == 0' <"$T_DIR/pp.out" >/dev/null || fail "the honest client lost round trips: $(cat "$T_DIR/pp.out")"
	sleep 0.3
	d1=$(delivered_a 1)
	note "frames of the hostile client's channel that reached $IF_A: $((d1 - d0))"
	((d1 > d0)) || fail "none of the hostile client's honest messages got through: the test proves nothing"
	for i in "${!names[@]}"; do
		k=$(stat_a "${names[$i]}")
		note "${names[$i]}: ${before[$i]} -> $k"
		((k == before[i])) || fail "${names[$i]} rose by $((k - before[i])) on $IF_A: the daemon let a bad frame out"
	done
	kill "$e" 2>/dev/null
	# Still alive, and it exits cleanly (under the sanitizers: no report).
	stop_unetd
}

# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_rchan.sh - routable channels (U-Net inside UDP/IPv4) across a router:
# the next hop from the kernel's routing and neighbour tables, followed
# when the route changes; Active Messages on them.  The fixture is
# t_routed.sh's setup_routed, with U-Net attached on c as well (and, in
# rchan_routed's plain pass, on both of the router's interfaces: a host
# that forwards runs U-Net too).  Sourced by run.sh (lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"rchan_routed|-|90|a routable channel across a router (its gateway's MAC resolved by the kernel on request): every size 1..max_payload both ways byte for byte, with U-Net attached on the router's interfaces too and an endpoint there whose channel matches a's frames by all but their destination (none taken by it: passed, forwarded), and a wildcard U-Net UDP listener on the router that leaves transit UDP to its port to be forwarded; a route mtu 1200 bounds max_payload (1164 go, 1165 EMSGSIZE); frames forged by the router from another address, another source port, and with the right address and port but another tag are never delivered and count drop_wrong_src; a next hop that never answers ARP and a peer routed by another interface are refused, saying why"
	"rchan_uam|-|90|Active Messages on a routable channel across a router at 10% injected loss on both ends: a medium call of every size the channel takes, stores and gets up to 256 KiB around the fragment edges, byte for byte; the default route moves to a second gateway mid-run (the first stops forwarding) with an MTU of 1300, and the calls go on through it in frames that fit it"
)

# attach_c: the program on c's interface, in $T_MODE.
attach_c() {
	local out
	out=$(ip netns exec "$NS_C" "$UNETCTL" attach "$IF_C" --mode "$T_MODE" 2>&1) || {
		grep -qiE 'not supported|EOPNOTSUPP' <<<"$out" && skip "XDP $T_MODE mode not supported on veth here: $out"
		fail "unetctl attach $IF_C failed: $out"
	}
}

unet_bg_c() {
	ip netns exec "$NS_C" "$@" &
	UNET_BG_PID=$!
	_UNET_BG_PIDS+=("$UNET_BG_PID")
}

# ctl_rc_stat NAME: one counter of the router's interface toward c.
ctl_rc_stat() {
	local v
	v=$(in_b "$UNETCTL" --json stats "$IF_RC" |
		jq -r --arg k "$1" '[.. | objects | select(has($k)) | .[$k]] | first // empty')
	[[ $v =~ ^[0-9]+$ ]] || fail "unetctl --json stats $IF_RC has no counter '$1' (got '$v')"
	echo "$v"
}

# router_transit_setup: U-Net on both of the router's interfaces, as on a
# host that forwards and runs U-Net itself, and on $IF_B an endpoint whose
# channel matches a's frames to c by everything they carry but their
# destination address: tag 2, a's address, a's source port, peer tag 1.
# Before the destination was checked it took every one of them (the sizes
# run failed: nothing reached c).  Sets RT_HOLD (its pid).
router_transit_setup() {
	local out
	note "U-Net on the router too, and an endpoint there with a channel that matches a's frames to c"
	attach b >/dev/null
	out=$(in_b "$UNETCTL" attach "$IF_RC" --mode "$T_MODE" 2>&1) ||
		fail "unetctl attach $IF_RC on the router failed: $out"
	unet_bg_b "$PEER" hold "$IF_B" --tag 2 --peer-ip "$IP_A" --peer-tag 1 --expect-none \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/rhold.log" 2>&1
	RT_HOLD=$UNET_BG_PID
	wait_ready "$T_DIR/rhold.log" "$RT_HOLD" >/dev/null
}

# router_transit_check N: the channel traffic of the sizes run (N sizes)
# crossed the router's U-Net interfaces as transit: passed, none taken
# by its endpoint, nothing delivered or dropped as a channel's; then a
# wildcard UDP listener on the router, on U-Net by unet-run, does not
# take transit UDP to its port, while its own datagrams reach it.
router_transit_check() {
	local n=$1 pass kpid upid
	[[ $(chan_field b 2 delivered) == 0 && $(chan_field b 2 drop_wrong_src) == 0 ]] ||
		fail "the router's channel 2 counted a transit frame: $(channel_json b)"
	stop "$RT_HOLD" "$T_DIR/rhold.log" "holder on the router"
	grep -qx "hold received=0 foreign=0" "$T_DIR/rhold.log" ||
		{ cat "$T_DIR/rhold.log"; fail "the router's endpoint took transit frames"; }
	[[ $(counter b chan_delivered) == 0 ]] || fail "the router delivered channel frames"
	pass=$(counter b pass) || exit 1
	((pass >= n)) || fail "the router's $IF_B passed $pass frames, fewer than the $n sizes a sent"
	[[ $(ctl_rc_stat chan_delivered) == 0 ]] || fail "the router delivered channel frames on $IF_RC"
	pass=$(ctl_rc_stat pass)
	((pass >= n)) || fail "the router's $IF_RC passed $pass frames, fewer than the $n echoes"

	note "a wildcard U-Net UDP listener on the router leaves transit UDP to its port alone"
	unet_bg_a "$KUDP" echo --local "$IP_A:7200" --timeout 60 >"$T_DIR/kecho_a.log" 2>&1
	kpid=$UNET_BG_PID
	wait_ready "$T_DIR/kecho_a.log" "$kpid" >/dev/null
	# shellcheck disable=SC2046
	unet_bg_b env $(unet_run_env) UNET_PIN_ROOT="$UNET_PIN_ROOT" "$BUILD/unet-run" --iface "$IF_RC" \
		--log "$T_DIR/rlisten.log" "$KUDP" echo --local 0.0.0.0:7200 --timeout 60 \
		>"$T_DIR/rlisten.out" 2>&1
	upid=$UNET_BG_PID
	wait_ready "$T_DIR/rlisten.out" "$upid" >/dev/null
	grep -q "udp bind 0\.0\.0\.0:7200: U-Net" "$T_DIR/rlisten.log" ||
		{ cat "$T_DIR/rlisten.log"; fail "the router's wildcard listener is not on U-Net"; }
	in_c "$KUDP" sizes --local "$IP_C:7201" --remote "$IP_A:7200" --max 100 --timeout 30 \
		>"$T_DIR/ktransit.log" 2>&1
	grep -qx "sizes ok 1..100" "$T_DIR/ktransit.log" ||
		{ cat "$T_DIR/ktransit.log"; fail "UDP from c to a's port 7200 did not cross the router"; }
	in_c "$KUDP" sizes --local "$IP_C:7202" --remote 10.202.0.1:7200 --max 20 --timeout 30 \
		>"$T_DIR/krouter.log" 2>&1
	grep -qx "sizes ok 1..20" "$T_DIR/krouter.log" ||
		{ cat "$T_DIR/krouter.log"; fail "UDP from c to the router's listener failed"; }
	stop "$kpid" "$T_DIR/kecho_a.log" "kernel echo on a"
	stop "$upid" "$T_DIR/rlisten.out" "U-Net listener on the router"
	grep -qx "echo echoed=100" "$T_DIR/kecho_a.log" || { cat "$T_DIR/kecho_a.log"; fail "a did not echo exactly 100"; }
	grep -qx "echo echoed=20" "$T_DIR/rlisten.out" || { cat "$T_DIR/rlisten.out"; fail "the router's listener did not echo exactly its own 20"; }
	[[ $(ctl_rc_stat udp_delivered) == 20 ]] ||
		fail "the router's $IF_RC delivered $(ctl_rc_stat udp_delivered) datagrams to U-Net, want its own 20"
}

# One XDP mode: the routable checks are the same code in both, and
# chan_integrity and chan_spoof (t_chan.sh) run them in each.
t_rchan_routed() {
	local pid log max port sport id out k=5 transit=0
	T_MODE=skb
	setup_routed
	attach_c
	# the XDP program's own checks: no need to watch them under the sanitizers
	[[ ${UNET_SANITIZED:-0} == 1 ]] || transit=1
	((transit)) && router_transit_setup
	log=$T_DIR/echo.log
	unet_bg_c "$PEER" echo "$IF_C" --tag 2 --peer-ip "$IP_A" --peer-tag 1 \
		--xdp-mode "$T_MODE" --timeout 60 >"$log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$log" "$pid" >/dev/null
	in_a "$PEER" sizes "$IF_A" --tag 1 --peer-ip "$IP_C" --peer-tag 2 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/sizes.log" 2>&1 ||
		{ cat "$T_DIR/sizes.log"; fail "sizes a -> c across the router failed"; }
	max=$(sed -n 's/^ready .*max_payload=\([0-9]*\).*/\1/p' "$T_DIR/sizes.log")
	grep -qx "sizes ok 1..1464" "$T_DIR/sizes.log" || { cat "$T_DIR/sizes.log"; fail "sizes did not report 'sizes ok 1..1464' (max_payload $max)"; }
	stop "$pid" "$log" "echo on c"
	grep -qx "echo echoed=1464 foreign=0" "$log" || fail "echo on c did not echo exactly 1464"
	((transit)) && router_transit_check 1464

	note "a route mtu of 1200 bounds the channel's max_payload"
	ip -n "$NS_A" route replace default via "$GW1" mtu 1200 || fail "route mtu"
	unet_bg_c "$PEER" echo "$IF_C" --tag 2 --peer-ip "$IP_A" --peer-tag 1 \
		--xdp-mode "$T_MODE" --timeout 60 >"$log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$log" "$pid" >/dev/null
	in_a "$PEER" sizes "$IF_A" --tag 1 --peer-ip "$IP_C" --peer-tag 2 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/sizes_mtu.log" 2>&1 ||
		{ cat "$T_DIR/sizes_mtu.log"; fail "sizes a -> c under a route mtu of 1200 failed"; }
	grep -qx "sizes ok 1..1164" "$T_DIR/sizes_mtu.log" || { cat "$T_DIR/sizes_mtu.log"; fail "under a route mtu of 1200, sizes did not stop at 1164"; }
	stop "$pid" "$log" "echo on c"
	ip -n "$NS_A" route replace default via "$GW1" || fail "route back"

	note "frames forged by the router"
	port=$(ctl_a --json status "$IF_A" | jq -r '[.. | objects | select(has("chan_port")) | .chan_port] | first // empty')
	[[ $port =~ ^[0-9]+$ ]] || fail "status of $IF_A shows no chan_port"
	sport=$(chan_sport 110)
	unet_bg_a "$PEER" hold "$IF_A" --tag 10 --peer-ip "$IP_C" --peer-tag 110 --expect 1 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/hold.log" 2>&1
	pid=$UNET_BG_PID
	id=$(wait_ready "$T_DIR/hold.log" "$pid")

	note "a next hop that never answers ARP, a peer routed by another interface"
	in_a sysctl -qw "net.ipv4.neigh.$IF_A.retrans_time_ms=100" >/dev/null || fail "retrans_time_ms"
	ip -n "$NS_A" route add 10.204.0.0/24 via 10.201.0.77 || fail "a route through a silent gateway"
	out=$(ctl_a channel add "$IF_A" --endpoint "$id" --tag 20 --peer-ip 10.204.0.9 --peer-tag 21 2>&1) &&
		fail "a channel through a silent gateway was added: $out"
	grep -q "did not answer ARP" <<<"$out" || fail "the silent gateway was not explained: $out"
	local dummy="${NS_A%a}d0"
	{ ip -n "$NS_A" link add "$dummy" type veth peer name "${dummy%0}1" &&
		ip -n "$NS_A" addr add 10.203.0.1/24 dev "$dummy" &&
		ip -n "$NS_A" link set "$dummy" up; } || fail "a second interface on a"
	out=$(ctl_a channel add "$IF_A" --endpoint "$id" --tag 20 --peer-ip 10.203.0.9 --peer-tag 21 2>&1) &&
		fail "a channel to a peer routed by another interface was added: $out"
	grep -q "the kernel does not route it by $IF_A" <<<"$out" || fail "ENETUNREACH was not explained: $out"
	[[ -z $(chan_field a 20 tag) ]] || fail "a refused channel left an entry"

	local before
	before=$(counter a drop_wrong_src) || exit 1
	forge() { in_b "$CHAN_FORGE" "$IF_B" "$MAC_A" "$@" >/dev/null || fail "chan-forge $* failed"; }
	forge 10.202.0.9 "$IP_A" "$sport" "$port" 10 110 $k
	expect_stat a drop_wrong_src $((before + k))
	forge "$IP_C" "$IP_A" $((sport ^ 1)) "$port" 10 110 $k
	expect_stat a drop_wrong_src $((before + 2 * k))
	forge "$IP_C" "$IP_A" "$sport" "$port" 10 111 $k
	expect_stat a drop_wrong_src $((before + 3 * k))
	[[ $(chan_field a 10 drop_wrong_src) == $((3 * k)) ]] ||
		fail "channel 10 drop_wrong_src is '$(chan_field a 10 drop_wrong_src)', want $((3 * k))"
	grep -q '^got ' "$T_DIR/hold.log" && fail "the endpoint received a forged frame"
	note "control: the right address, port and tags from the router are delivered"
	local delivered
	delivered=$(counter a chan_delivered) || exit 1
	forge "$IP_C" "$IP_A" "$sport" "$port" 10 110 1
	expect_stat a chan_delivered $((delivered + 1))
	wait_until 5 "the control frame in $T_DIR/hold.log" grep -q '^got ' "$T_DIR/hold.log"
	stop "$pid" "$T_DIR/hold.log" "holder on a"
	grep -qx "got tag=10 len=32" "$T_DIR/hold.log" || fail "the control frame did not arrive as 32 bytes on tag 10"
}

# gw2_took N BEFORE: the second gateway has received N frames since BEFORE.
gw2_took() {
	(($(rx_packets "$NS_B" "$GW2") - $2 >= $1))
}

t_rchan_uam() {
	local UAM_TOOL=$BUILD/tools/uam-peer pid log until g2_before g2_after d
	T_MODE=skb
	setup_routed
	attach_c
	ctl_a fault "$IF_A" --drop-ppm 100000 || fail "unetctl fault $IF_A failed"
	ip netns exec "$NS_C" "$UNETCTL" fault "$IF_C" --drop-ppm 100000 || fail "unetctl fault $IF_C failed"
	unet_bg_c "$UAM_TOOL" serve "$IF_C" --tag 2 --peer-ip "$IP_A" --peer-tag 1 --timeout 60 \
		>"$T_DIR/serve.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/serve.log" "$pid" >/dev/null
	log=$T_DIR/run.log
	until=$T_DIR/route-moved
	unet_bg_a "$UAM_TOOL" run "$IF_A" --tag 1 --peer-ip "$IP_C" --peer-tag 2 --until "$until" \
		--timeout 60 >"$log" 2>&1
	local run=$UNET_BG_PID
	wait_until 40 "medium calls and stores across the router ($log)" grep -qx "bulk ok" "$log"
	grep -qx "medium ok 1..1436" "$log" || { cat "$log"; fail "medium calls did not stop at 1436 bytes (the channel's 1464 less the 20-byte header and one argument)"; }

	note "the default route moves to the second gateway mid-run, with an MTU of 1300"
	g2_before=$(rx_packets "$NS_B" "$GW2")
	ip -n "$NS_A" route replace default via "$GW2_IP" mtu 1300 || fail "moving the default route"
	in_b sysctl -qw "net.ipv4.conf.$IF_B.forwarding=0" >/dev/null || fail "forwarding off on $IF_B"
	# bounded: the channel asks the kernel again within about a second
	wait_until 10 "200 frames through the second gateway" gw2_took 200 "$g2_before"
	# 1300 - 36 bytes of headers = 1264 per frame, 1236 of it a medium
	# payload with one argument: UAM's frames follow the route's MTU
	wait_log 10 "$log" "^medium max now 1236$"
	g2_after=$(rx_packets "$NS_B" "$GW2")
	note "second gateway received $((g2_after - g2_before)) frames"
	touch "$until"
	finish "$run" "$log" 30 "uam-peer run on a"
	grep -q "^calls ok [1-9]" "$log" || fail "no calls after the route change"
	stop "$pid" "$T_DIR/serve.log" "uam-peer serve on c"
	d=$(counter a drop_injected) || exit 1
	((d > 0)) || fail "no frames dropped by the injected loss on a"
	note "drop_injected on a = $d"
}

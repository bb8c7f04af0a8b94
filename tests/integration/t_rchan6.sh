# shellcheck shell=bash
# SPDX-License-Identifier: BSD-2-Clause
#
# t_rchan6.sh - routable channels over IPv6 (U-Net inside UDP/IPv6): on
# the link and across a router whose address the routes name by its
# link-local address; Active Messages on them; forged frames.  The
# fixture is t_routed.sh's setup_routed with IPv6 addresses added (below).
# Sourced by run.sh (lib.sh).

# name|modes (xdp: once per mode, -: once)|timeout s|what it checks
TESTS+=(
	"rchan6|-|120|a routable IPv6 channel on the link (by global and by link-local addresses) and across a router named by its link-local address: every size 1..max_payload both ways byte for byte (across the router with U-Net attached there and an endpoint whose channel matches a's frames by all but their destination: none taken); a route mtu 1280 bounds max_payload; unetctl channel add/list with an IPv6 --peer-ip, bad addresses refused; frames forged by the router from another address, another source port, with another tag, without a checksum and with a wrong one are never delivered and each is counted (drop_wrong_src, drop_chan_csum; the wrong sum by the library); Active Messages across the router at 10% injected loss on both ends, the route moved to a second gateway mid-run; a router advertisement from a host on the link (a new address, first in the list) does not change the source a channel sends from (the kernel's choice); an IPv4 channel's source port cannot be bound by another user on IPv4 or IPv6"
)

# The IPv6 of the fixture: a fd01::1 --- b fd01::2 (and fe80::b2, the
# gateway a's route names; fe80::b4 on $GW2, the second gateway, its own
# MAC), b fd02::1 (and fe80::b3) --- c fd02::2 (and fe80::c1, which its
# neighbour solicitations come from).  On the link a and b also talk by
# fe80::a1 and fe80::b1.
IP6_A=fd01::1
IP6_B=fd01::2
IP6_C=fd02::2

# setup_routed6: setup_routed, U-Net on c too, IPv6 on (v6_enable,
# t_udp6.sh: no DAD, the addresses answer at once), the addresses of the
# link; the routes and the gateways' link-local addresses come with
# route_via_b (so that until then b's interface has one link-local
# address, the one its link-local channel is from).  No address of the
# kernel's making (addr_gen_mode 1): the channels' sources are the ones
# named here.
setup_routed6() {
	local ns dev
	setup_routed
	attach_c
	for ns in "$NS_A:$IF_A" "$NS_B:$IF_B" "$NS_B:$IF_RC" "$NS_B:$GW2" "$NS_C:$IF_C"; do
		dev=${ns#*:}
		ip netns exec "${ns%%:*}" sysctl -qw "net.ipv6.conf.$dev.addr_gen_mode=1" >/dev/null ||
			fail "addr_gen_mode on $dev"
	done
	v6_enable "$NS_A" "$IF_A"
	v6_enable "$NS_B" "$IF_B" "$IF_RC" "$GW2"
	v6_enable "$NS_C" "$IF_C"
	in_b sysctl -qw net.ipv6.conf.all.forwarding=1 >/dev/null || fail "IPv6 forwarding on b"
	{ ip -n "$NS_A" addr add "$IP6_A/64" dev "$IF_A" nodad &&
		ip -n "$NS_B" addr add "$IP6_B/64" dev "$IF_B" nodad &&
		ip -n "$NS_A" addr add fe80::a1/64 dev "$IF_A" nodad &&
		ip -n "$NS_B" addr add fe80::b1/64 dev "$IF_B" nodad &&
		ip -n "$NS_B" addr add fd02::1/64 dev "$IF_RC" nodad &&
		ip -n "$NS_C" addr add "$IP6_C/64" dev "$IF_C" nodad &&
		ip -n "$NS_C" addr add fe80::c1/64 dev "$IF_C" nodad; } ||
		fail "addressing the fixture for IPv6"
}

route_via_b() {
	{ ip -n "$NS_B" addr add fe80::b2/64 dev "$IF_B" nodad &&
		ip -n "$NS_B" addr add fe80::b3/64 dev "$IF_RC" nodad &&
		ip -n "$NS_B" addr add fe80::b4/64 dev "$GW2" nodad &&
		ip -n "$NS_A" -6 route add fd02::/64 via fe80::b2 dev "$IF_A" &&
		ip -n "$NS_C" -6 route add default via fe80::b3 dev "$IF_C"; } ||
		fail "IPv6 routes through b"
}

# sizes6 FROM_SIDE TO_ADDR ECHO_SIDE ECHO_IF ECHO_PEER MAX: an echo on
# ECHO_SIDE, sizes 1..MAX from a to TO_ADDR through it, both byte for byte.
sizes6() {
	local side=$1 to=$2 eif=$3 epeer=$4 max=$5 log=$T_DIR/echo6-$1.log pid
	ip netns exec "$(eval echo "\$NS_${side^^}")" "$PEER" echo "$eif" --tag 2 --peer-ip "$epeer" \
		--peer-tag 1 --xdp-mode "$T_MODE" --timeout 60 >"$log" 2>&1 &
	pid=$!
	_UNET_BG_PIDS+=("$pid")
	wait_ready "$log" "$pid" >/dev/null
	# The kernels on the way resolve their neighbours first (the
	# sizes run sends each size once: a first frame that waited on a
	# router's neighbour discovery was lost now and then).
	in_a ping -6 -c 1 -W 5 -I "$IF_A" "$to" >/dev/null || fail "a cannot ping $to"
	in_a "$PEER" sizes "$IF_A" --tag 1 --peer-ip "$to" --peer-tag 2 --xdp-mode "$T_MODE" \
		--timeout 60 >"$T_DIR/sizes6-$side.log" 2>&1 ||
		{ cat "$T_DIR/sizes6-$side.log"; fail "sizes a -> $to failed"; }
	grep -qx "sizes ok 1..$max" "$T_DIR/sizes6-$side.log" ||
		{ cat "$T_DIR/sizes6-$side.log"; fail "sizes to $to did not report 'sizes ok 1..$max'"; }
	stop "$pid" "$log" "echo on $side"
	grep -qx "echo echoed=$max foreign=0" "$log" || fail "echo on $side did not echo exactly $max"
}

# transit_hold6: on b, an endpoint with a channel (tag 2, peer a's
# address, peer tag 1) that a's frames to c match in all but their
# destination address.  Before the destination was checked it took them
# all and nothing reached c.  Sets RT_HOLD, RT_DELIVERED.
transit_hold6() {
	RT_DELIVERED=$(counter b chan_delivered) || exit 1
	unet_bg_b "$PEER" hold "$IF_B" --tag 2 --peer-ip "$IP6_A" --peer-tag 1 --expect-none \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/rhold6.log" 2>&1
	RT_HOLD=$UNET_BG_PID
	wait_ready "$T_DIR/rhold6.log" "$RT_HOLD" >/dev/null
}

transit_hold6_check() {
	[[ $(chan_field b 2 delivered) == 0 && $(chan_field b 2 drop_wrong_src) == 0 ]] ||
		fail "the router's channel 2 counted a transit frame: $(channel_json b)"
	stop "$RT_HOLD" "$T_DIR/rhold6.log" "holder on the router"
	grep -qx "hold received=0 foreign=0" "$T_DIR/rhold6.log" ||
		{ cat "$T_DIR/rhold6.log"; fail "the router's endpoint took transit frames"; }
	[[ $(counter b chan_delivered) == "$RT_DELIVERED" ]] || fail "the router delivered transit channel frames"
}

t_rchan6() {
	local pid id out port sport before k=3
	T_MODE=skb
	[[ ${UNET_SANITIZED:-0} == 1 ]] && skip "runs in the plain pass of make check (the receive path is fuzzed under ASan in test_wire_udp)"
	setup_routed6

	note "a router advertisement from b (any host on the link) adds a's newest address"
	in_b /usr/bin/python3 "$ROOT/tests/tools/ra6.py" "$IF_B" fd66:: >/dev/null ||
		fail "sending the router advertisement"
	wait_until 5 "a's address from the advertisement" \
		sh -c "ip -n '$NS_A' -6 addr show dev '$IF_A' | grep -q 'inet6 fd66:'"
	note "on the link: a <-> b (U-Net on b for this part), 1500 - 48 - 8 = 1444; a sends"
	note "from the kernel's choice for b, fd01::1, not the advertised address (b would drop it)"
	attach b
	sizes6 b "$IP6_B" "$IF_B" "$IP6_A" 1444
	note "on the link by link-local addresses"
	sizes6 b fe80::b1 "$IF_B" fe80::a1 1444

	note "across the router (its link-local address the next hop): a -> c, U-Net still on b,"
	note "and an endpoint there whose channel matches a's frames to c but their destination"
	route_via_b
	transit_hold6
	sizes6 c "$IP6_C" "$IF_C" "$IP6_A" 1444
	transit_hold6_check
	ctl_b detach "$IF_B" >/dev/null || fail "detach $IF_B"
	note "a route mtu of 1280 bounds max_payload: 1280 - 56 = 1224"
	ip -n "$NS_A" -6 route replace fd02::/64 via fe80::b2 dev "$IF_A" mtu 1280 || fail "route mtu"
	sizes6 c "$IP6_C" "$IF_C" "$IP6_A" 1224
	ip -n "$NS_A" -6 route replace fd02::/64 via fe80::b2 dev "$IF_A" || fail "route back"

	note "unetctl: an IPv6 --peer-ip, listed; bad ones refused"
	unet_bg_a "$PEER" hold "$IF_A" --tag 10 --peer-ip "$IP6_C" --peer-tag 110 --expect 1 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/hold.log" 2>&1
	pid=$UNET_BG_PID
	id=$(wait_ready "$T_DIR/hold.log" "$pid")
	ctl_a channel add "$IF_A" --endpoint "$id" --tag 20 --peer-ip "$IP6_C" --peer-tag 21 >/dev/null ||
		fail "unetctl channel add with an IPv6 --peer-ip failed"
	[[ $(chan_field a 20 transport) == udp6 && $(chan_field a 20 peer_ip) == "$IP6_C" ]] ||
		fail "channel list shows tag 20 as '$(chan_field a 20 transport)' to '$(chan_field a 20 peer_ip)'"
	[[ $(chan_field a 10 peer_ip) == "$IP6_C" ]] || fail "channel list does not show the holder's IPv6 peer"
	ctl_a channel del "$IF_A" 20 >/dev/null || fail "channel del 20"
	for bad in fd02::2::1 ff02::1 ::1 :: ::ffff:10.202.0.2; do
		out=$(ctl_a channel add "$IF_A" --endpoint "$id" --tag 20 --peer-ip "$bad" --peer-tag 21 2>&1) &&
			fail "--peer-ip $bad was taken"
		grep -q "^unetctl: .*$bad" <<<"$out" || fail "--peer-ip $bad: no clear error: $out"
	done

	note "frames forged by the router"
	port=$(ctl_a --json status "$IF_A" | jq -r '[.. | objects | select(has("chan_port")) | .chan_port] | first // empty')
	[[ $port =~ ^[0-9]+$ ]] || fail "status of $IF_A shows no chan_port"
	sport=$(chan_sport 110)
	before=$(counter a drop_wrong_src) || exit 1
	forge() { in_b "$CHAN_FORGE" "$IF_B" "$MAC_A" "$@" >/dev/null || fail "chan-forge $* failed"; }
	forge fd02::9 "$IP6_A" "$sport" "$port" 10 110 $k
	expect_stat a drop_wrong_src $((before + k))
	forge fd02::2:0:0 "$IP6_A" "$sport" "$port" 10 110 $k # same first 64 bits as c's
	expect_stat a drop_wrong_src $((before + 2 * k))
	forge "$IP6_C" "$IP6_A" $((sport ^ 1)) "$port" 10 110 $k
	expect_stat a drop_wrong_src $((before + 3 * k))
	forge "$IP6_C" "$IP6_A" "$sport" "$port" 10 111 $k
	expect_stat a drop_wrong_src $((before + 4 * k))
	[[ $(chan_field a 10 drop_wrong_src) == $((4 * k)) ]] ||
		fail "channel 10 drop_wrong_src is '$(chan_field a 10 drop_wrong_src)', want $((4 * k))"
	before=$(counter a drop_chan_csum) || exit 1
	forge "$IP6_C" "$IP6_A" "$sport" "$port" 10 110 $k --csum 0
	expect_stat a drop_chan_csum $((before + k))
	# a wrong (non-zero) checksum passes XDP; the library refuses it
	before=$(counter a chan_delivered) || exit 1
	forge "$IP6_C" "$IP6_A" "$sport" "$port" 10 110 $k --csum 4660
	expect_stat a chan_delivered $((before + k))
	grep -q '^got ' "$T_DIR/hold.log" && fail "the endpoint received a forged frame"
	note "control: the right address, port and tags from the router are delivered"
	forge "$IP6_C" "$IP6_A" "$sport" "$port" 10 110 1
	wait_until 5 "the control frame in $T_DIR/hold.log" grep -q '^got ' "$T_DIR/hold.log"
	stop "$pid" "$T_DIR/hold.log" "holder on a"
	grep -qx "got tag=10 len=32" "$T_DIR/hold.log" || fail "the control frame did not arrive as 32 bytes on tag 10"
	grep -c '^got ' "$T_DIR/hold.log" | grep -qx 1 || fail "more than the control frame arrived"

	note "an IPv4 channel's source port is held on IPv6 too: another user cannot send as its tag"
	local h4
	unet_bg_a "$PEER" hold "$IF_A" --tag 30 --peer-ip "$IP_C" --peer-tag 31 \
		--xdp-mode "$T_MODE" --timeout 60 >"$T_DIR/hold4.log" 2>&1
	h4=$UNET_BG_PID
	wait_ready "$T_DIR/hold4.log" "$h4" >/dev/null
	out=$(in_a setpriv --reuid 65534 --regid 65534 --clear-groups /usr/bin/python3 -c '
import socket, sys
for fam, addr, v6only in ((socket.AF_INET6, "::", 1), (socket.AF_INET6, "::", 0),
                          (socket.AF_INET, "0.0.0.0", 0)):
    s = socket.socket(fam, socket.SOCK_DGRAM)
    if fam == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, v6only)
    try:
        s.bind((addr, int(sys.argv[1])))
        print("bound", addr, v6only)
    except OSError as e:
        print("refused", addr, v6only, e.errno)
' "$(chan_sport 30)" 2>&1)
	[[ $(grep -c "^refused .* 98$" <<<"$out") == 3 ]] ||
		fail "user nobody could bind the IPv4 channel's source port $(chan_sport 30): $out"
	stop "$h4" "$T_DIR/hold4.log" "IPv4 holder on a"

	note "Active Messages across the router at 10% injected loss on both ends"
	local UAM_TOOL=$BUILD/tools/uam-peer log=$T_DIR/uam.log
	ctl_a fault "$IF_A" --drop-ppm 100000 || fail "unetctl fault $IF_A failed"
	ip netns exec "$NS_C" "$UNETCTL" fault "$IF_C" --drop-ppm 100000 || fail "unetctl fault $IF_C failed"
	unet_bg_c "$UAM_TOOL" serve "$IF_C" --tag 2 --peer-ip "$IP6_A" --peer-tag 1 --timeout 60 \
		>"$T_DIR/serve.log" 2>&1
	pid=$UNET_BG_PID
	wait_ready "$T_DIR/serve.log" "$pid" >/dev/null
	local until=$T_DIR/route-moved g2_before run
	unet_bg_a "$UAM_TOOL" run "$IF_A" --tag 1 --peer-ip "$IP6_C" --peer-tag 2 --until "$until" \
		--timeout 60 >"$log" 2>&1
	run=$UNET_BG_PID
	wait_until 40 "medium calls and stores across the router ($log)" grep -qx "bulk ok" "$log"
	# 1444 less the 20-byte header and one argument
	grep -qx "medium ok 1..1416" "$log" || { cat "$log"; fail "medium calls did not stop at 1416 bytes"; }
	# Without loss from here: a frame in flight larger than the new MTU
	# and then lost would end the run (-ETIMEDOUT, docs/uam.md), by
	# design; what is checked now is only that the route is followed.
	note "the route moves to the second gateway (fe80::b4) mid-run"
	ctl_a fault "$IF_A" --drop-ppm 0 >/dev/null || fail "unetctl fault $IF_A 0 failed"
	ip netns exec "$NS_C" "$UNETCTL" fault "$IF_C" --drop-ppm 0 >/dev/null || fail "unetctl fault $IF_C 0 failed"
	g2_before=$(rx_packets "$NS_B" "$GW2")
	# The same MTU: a smaller one would strand a call already sent at
	# the old size (UAM resends what it sent: -ETIMEDOUT ends the run,
	# docs/uam.md); the route MTU's bound is checked by sizes above.
	ip -n "$NS_A" -6 route replace fd02::/64 via fe80::b4 dev "$IF_A" || fail "moving the route"
	wait_until 10 "100 frames through the second gateway" gw2_took 100 "$g2_before"
	touch "$until"
	finish "$run" "$log" 30 "uam-peer run on a"
	grep -q "^calls ok [1-9]" "$log" || fail "no calls after the route change"
	stop "$pid" "$T_DIR/serve.log" "uam-peer serve on c"
	(($(counter a drop_injected) > 0)) || fail "no frames dropped by the injected loss on a"
	note "drop_injected on a = $(counter a drop_injected), second gateway took $(($(rx_packets "$NS_B" "$GW2") - g2_before)) frames"
}
